// Command msgbench-tcp is the tcp target of msgbench's pubsub workload:
// brokerless direct TCP, the workload's ceiling (targets/tcp/README.md).
package main

import (
	"msgbench/kits/pubsub"
	"msgbench/targets/tcp/internal/tcpsys"
)

func main() {
	pubsub.Main("tcp", "Go standard library net", tcpsys.System{})
}
