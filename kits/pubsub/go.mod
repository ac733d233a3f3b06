module msgbench/kits/pubsub

go 1.22

require (
	golang.org/x/sys v0.25.0
	msgbench/kits/go v0.0.0
)

replace msgbench/kits/go => ../go
