module msgbench/targets/tcp

go 1.22

require msgbench/kits/pubsub v0.0.0

require (
	golang.org/x/sys v0.25.0 // indirect
	msgbench/kits/go v0.0.0 // indirect
)

replace msgbench/kits/pubsub => ../../kits/pubsub

replace msgbench/kits/go => ../../kits/go
