module msgbench/pubsubkit

go 1.22

require golang.org/x/sys v0.25.0
