module msgbench/targets/kafka

go 1.24.0

require (
	github.com/twmb/franz-go v1.20.7
	github.com/twmb/franz-go/pkg/kmsg v1.12.0
	msgbench/kits/go v0.0.0 // indirect, through the pubsub kit
	msgbench/kits/pubsub v0.0.0
)

require (
	github.com/klauspost/compress v1.18.4 // indirect
	github.com/pierrec/lz4/v4 v4.1.25 // indirect
	golang.org/x/sys v0.25.0 // indirect
)

replace msgbench/kits/pubsub => ../../kits/pubsub

replace msgbench/kits/go => ../../kits/go
