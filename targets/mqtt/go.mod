module msgbench/targets/mqtt

go 1.22

require (
	github.com/eclipse/paho.mqtt.golang v1.4.3
	msgbench/kits/go v0.0.0 // indirect, through the pubsub kit
	msgbench/kits/pubsub v0.0.0
)

require (
	github.com/gorilla/websocket v1.5.0 // indirect
	golang.org/x/net v0.8.0 // indirect
	golang.org/x/sync v0.1.0 // indirect
	golang.org/x/sys v0.25.0 // indirect
)

replace msgbench/kits/pubsub => ../../kits/pubsub

replace msgbench/kits/go => ../../kits/go
