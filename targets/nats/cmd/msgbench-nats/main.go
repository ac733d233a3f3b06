// Command msgbench-nats is the nats target of msgbench's pubsub workload:
// NATS core through nats.go (targets/nats/README.md).
package main

import (
	"msgbench/pubsubkit"
	"msgbench/targets/nats/internal/natssys"
)

func main() {
	pubsubkit.Main("nats", pubsubkit.ModuleVersion("github.com/nats-io/nats.go"), natssys.System{})
}
