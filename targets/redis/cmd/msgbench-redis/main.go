// Command msgbench-redis is the redis target of msgbench's pubsub workload
// (targets/redis/README.md): the sources' worker, with --serve the receivers' peer.
package main

import (
	"msgbench/kits/pubsub"
	"msgbench/targets/redis/internal/redissys"
)

func main() {
	pubsub.Main("redis", pubsub.ModuleVersion("github.com/redis/go-redis/v9"), redissys.System{})
}
