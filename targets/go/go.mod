module msgbench/targets/go

go 1.22
