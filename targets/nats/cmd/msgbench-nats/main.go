// Command msgbench-nats is the nats target of msgbench's pubsub workload:
// NATS core through nats.go (targets/nats/README.md).
package main

import (
	"msgbench/kits/pubsub"
	"msgbench/targets/nats/internal/natssys"
)

func main() {
	pubsub.Main("nats", pubsub.ModuleVersion("github.com/nats-io/nats.go"), natssys.System{})
}
