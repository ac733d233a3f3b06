// Command msgbench-zeromq is the zeromq target of msgbench's pubsub workload
// (targets/zeromq/README.md): the sources' worker, with --serve the receivers' peer.
package main

import (
	"msgbench/kits/pubsub"
	"msgbench/targets/zeromq/internal/zmqsys"
)

func main() {
	pubsub.Main("zeromq", pubsub.ModuleVersion("github.com/pebbe/zmq4")+", "+zmqsys.Library(), zmqsys.System{})
}
