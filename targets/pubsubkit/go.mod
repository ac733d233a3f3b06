module msgbench/pubsubkit

go 1.22

require (
	github.com/HdrHistogram/hdrhistogram-go v1.1.2
	golang.org/x/sys v0.25.0
)
