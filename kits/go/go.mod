module msgbench/kits/go

go 1.22
