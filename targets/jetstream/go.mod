module msgbench/targets/jetstream

go 1.22

require (
	github.com/nats-io/nats.go v1.37.0
	msgbench/kits/go v0.0.0 // indirect, through the pubsub kit
	msgbench/kits/pubsub v0.0.0
)

require (
	github.com/klauspost/compress v1.17.2 // indirect
	github.com/nats-io/nkeys v0.4.7 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	golang.org/x/crypto v0.18.0 // indirect
	golang.org/x/sys v0.25.0 // indirect
	golang.org/x/text v0.14.0 // indirect
)

replace msgbench/kits/pubsub => ../../kits/pubsub

replace msgbench/kits/go => ../../kits/go
