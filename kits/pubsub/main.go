package pubsub

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"msgbench/kits/go/peer"
)

// Main is a pubsub target's whole main: with no argument the worker (the
// sources' process), with --serve the receivers' process (the worker's peer),
// with --version a line naming the system and its client library. name is the
// target's name (the hello line's "target"); version names the client library
// and its version (ModuleVersion). Main does not return.
func Main(name, version string, sys System) {
	args := os.Args[1:]
	env := Env{ServiceURL: os.Getenv(EnvServiceURL), ListenHost: os.Getenv(EnvListenHost)}
	switch {
	case len(args) == 1 && args[0] == "--version":
		fmt.Printf("%s %s (%s)\n", name, version, runtime.Version())
	case len(args) == 1 && args[0] == peer.ServeFlag:
		serve(os.Stdin, os.Stdout, serveConfig{sys: sys, env: env, orphaned: func() {
			// The worker is gone: wind down, but never linger.
			time.AfterFunc(orphanExit, func() { os.Exit(0) })
		}})
	case len(args) == 0:
		cfg := workerConfig{name: name, runtimeVersion: runtime.Version() + ", " + version, sys: sys,
			serviceURL: env.ServiceURL}
		argv, err := peer.Argv(who)
		if err != nil {
			cfg.startPeer = func([]byte) (peerHandle, error) { return nil, err }
		} else {
			cfg.startPeer = startProcessPeer(argv, os.Getenv(peer.EnvCwd))
		}
		work(os.Stdin, os.Stdout, cfg)
	default:
		fmt.Fprintf(os.Stderr, "usage: %s [--serve | --version]  (the request comes on stdin)\n", os.Args[0])
		os.Exit(2)
	}
	os.Exit(0)
}

// ModuleVersion is "<module path> <version>" of a module linked into this
// binary (from its build info), so --version and hello name exactly the
// client library that was built in.
func ModuleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == path {
				if dep.Replace != nil {
					return path + " " + dep.Version + " => " + dep.Replace.Path + " " + dep.Replace.Version
				}
				return path + " " + dep.Version
			}
		}
	}
	return path + " (version unknown)"
}
