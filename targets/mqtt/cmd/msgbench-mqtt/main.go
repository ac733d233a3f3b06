// Command msgbench-mqtt is the mqtt target of msgbench's pubsub workload
// (targets/mqtt/README.md): the sources' worker, with --serve the receivers' peer.
package main

import (
	"msgbench/kits/pubsub"
	"msgbench/targets/mqtt/internal/mqttsys"
)

func main() {
	pubsub.Main("mqtt", pubsub.ModuleVersion("github.com/eclipse/paho.mqtt.golang"), mqttsys.System{})
}
