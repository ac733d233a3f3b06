// Command msgbench-rabbitmq is the rabbitmq target of msgbench's pubsub workload
// (targets/rabbitmq/README.md): the sources' worker, with --serve the receivers' peer.
package main

import (
	"msgbench/pubsubkit"
	"msgbench/targets/rabbitmq/internal/rabbitsys"
)

func main() {
	pubsubkit.Main("rabbitmq", pubsubkit.ModuleVersion("github.com/rabbitmq/amqp091-go"), rabbitsys.System{})
}
