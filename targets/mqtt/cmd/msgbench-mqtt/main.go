// Command msgbench-mqtt is the mqtt target of msgbench's pubsub workload
// (targets/mqtt/README.md): the sources' worker, with --serve the receivers' peer.
package main

import (
	"msgbench/pubsubkit"
	"msgbench/targets/mqtt/internal/mqttsys"
)

func main() {
	pubsubkit.Main("mqtt", pubsubkit.ModuleVersion("github.com/eclipse/paho.mqtt.golang"), mqttsys.System{})
}
