package kittest

import "syscall"

// procAttr: a process group of its own, killed with the test binary too.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
