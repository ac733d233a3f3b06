module msgbench/targets/rabbitmq

go 1.22

require (
	github.com/rabbitmq/amqp091-go v1.10.0
	msgbench/kits/go v0.0.0 // indirect, through the pubsub kit
	msgbench/kits/pubsub v0.0.0
)

require (
	golang.org/x/sys v0.25.0 // indirect
)

replace msgbench/kits/pubsub => ../../kits/pubsub

replace msgbench/kits/go => ../../kits/go
