module msgbench/targets/go

go 1.22

require msgbench/kits/go v0.0.0

replace msgbench/kits/go => ../../kits/go
