module msgbench/targets/go

go 1.22

require msgbench/kits/go v0.0.0

require github.com/gorilla/websocket v1.5.3

replace msgbench/kits/go => ../../kits/go
