// Command msgbench-jetstream is the jetstream target of msgbench's pubsub
// workload: NATS JetStream on a file store through nats.go's jetstream package
// (targets/jetstream/README.md).
package main

import (
	"msgbench/kits/pubsub"
	"msgbench/targets/jetstream/internal/jssys"
)

func main() {
	pubsub.Main("jetstream", pubsub.ModuleVersion("github.com/nats-io/nats.go"), jssys.System{})
}
