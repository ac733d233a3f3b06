// Command msgbench-kafka is the kafka target of msgbench's pubsub workload:
// Apache Kafka through franz-go (targets/kafka/README.md).
package main

import (
	"msgbench/kits/pubsub"
	"msgbench/targets/kafka/internal/kafkasys"
)

func main() {
	pubsub.Main("kafka", pubsub.ModuleVersion("github.com/twmb/franz-go"), kafkasys.System{})
}
