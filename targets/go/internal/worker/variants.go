package worker

import (
	"runtime"
	"slices"

	"msgbench/targets/go/internal/fanin"
	"msgbench/targets/go/internal/ring"
)

// Variant is one implementation style of the target (target.toml's
// [variants.*]).
type Variant struct {
	// GOMAXPROCS, when not 0, sets the number of threads running goroutines.
	// target.toml sets the GOMAXPROCS environment variable as well, so the
	// runtime starts that way; applying it here keeps a variant what it says
	// when the worker is run by hand.
	GOMAXPROCS int
	Workloads  []string
	Ring       ring.Options
	Fanin      fanin.Options
}

// Implements reports whether the variant implements the workload.
func (v Variant) Implements(workload string) bool { return slices.Contains(v.Workloads, workload) }

func (v Variant) apply() {
	if v.GOMAXPROCS != 0 {
		runtime.GOMAXPROCS(v.GOMAXPROCS)
	}
}

// ringInbox is every link's inbox: unbuffered, the plain idiom. A buffer of
// one measured no faster (README.md, "Ring: channel buffering").
var ringInbox = ring.Options{InboxCapacity: 0}

// faninChannel bounds the receiver's channel at 1024 signals: the smallest
// power of two past which throughput measured flat (README.md, "Fanin:
// channel capacity"). Each send carries its own copy of the payload.
var faninChannel = fanin.Options{ChannelCapacity: 1024}

// Variants are the variants by name.
var Variants = map[string]Variant{
	// The idiomatic Go program with Go's default GOMAXPROCS (the usable cores).
	"default": {
		Workloads: []string{"ring", "fanin"},
		Ring:      ringInbox,
		Fanin:     faninChannel,
	},
	// One thread runs all goroutines: the analogue of erl +S 1.
	"single_thread": {
		GOMAXPROCS: 1,
		Workloads:  []string{"ring", "fanin"},
		Ring:       ringInbox,
		Fanin:      faninChannel,
	},
	// Tuned: every send passes the one prepared payload by reference, no copy.
	"shared_payload": {
		Workloads: []string{"fanin"},
		Fanin:     fanin.Options{ChannelCapacity: faninChannel.ChannelCapacity, SharePayload: true},
	},
}
