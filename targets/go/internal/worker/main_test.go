package worker

import (
	"os"
	"testing"

	"msgbench/kits/go/peer"
)

// TestMain lets the test binary stand in for bin/msgbench-go --serve: a
// socket worker run without the harness's environment starts its own
// executable with that flag as its server half.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == peer.ServeFlag {
		if err := Serve(os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
