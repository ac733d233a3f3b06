module msgbench/scripts/kafka-client-cpu

go 1.24.0

require (
	github.com/segmentio/kafka-go v0.4.51
	github.com/twmb/franz-go v1.20.7
	github.com/twmb/franz-go/pkg/kmsg v1.12.0
)

require (
	github.com/klauspost/compress v1.18.4 // indirect
	github.com/pierrec/lz4/v4 v4.1.25 // indirect
)
