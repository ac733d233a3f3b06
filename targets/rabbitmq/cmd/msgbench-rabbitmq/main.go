// Command msgbench-rabbitmq is the rabbitmq target of msgbench's pubsub workload
// (targets/rabbitmq/README.md): the sources' worker, with --serve the receivers' peer.
package main

import (
	"msgbench/kits/pubsub"
	"msgbench/targets/rabbitmq/internal/rabbitsys"
)

func main() {
	pubsub.Main("rabbitmq", pubsub.ModuleVersion("github.com/rabbitmq/amqp091-go"), rabbitsys.System{})
}
