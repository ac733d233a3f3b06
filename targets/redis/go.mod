module msgbench/targets/redis

go 1.22

require (
	github.com/redis/go-redis/v9 v9.7.0
	msgbench/kits/go v0.0.0 // indirect, through the pubsub kit
	msgbench/kits/pubsub v0.0.0
)

require (
	github.com/cespare/xxhash/v2 v2.2.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	golang.org/x/sys v0.25.0 // indirect
)

replace msgbench/kits/pubsub => ../../kits/pubsub

replace msgbench/kits/go => ../../kits/go
