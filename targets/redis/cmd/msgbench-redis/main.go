// Command msgbench-redis is the redis target of msgbench's pubsub workload
// (targets/redis/README.md): the sources' worker, with --serve the receivers' peer.
package main

import (
	"msgbench/pubsubkit"
	"msgbench/targets/redis/internal/redissys"
)

func main() {
	pubsubkit.Main("redis", pubsubkit.ModuleVersion("github.com/redis/go-redis/v9"), redissys.System{})
}
