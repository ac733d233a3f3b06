package worker

import (
	"runtime"
	"slices"

	"msgbench/targets/go/internal/chat"
	"msgbench/targets/go/internal/fanin"
	"msgbench/targets/go/internal/ring"
	"msgbench/targets/go/internal/socket"
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
	Chat       chat.Options
	Socket     socket.Options
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

// chatChannels bound every user's and client's inboxes and every group's at
// 16 messages: throughput still grows past it, but latency grows faster
// (README.md, "Chat: channel capacity").
var chatChannels = chat.Options{InboxCapacity: 16, GroupCapacity: 16}

// Variants are the variants by name.
var Variants = map[string]Variant{
	// The idiomatic Go program with Go's default GOMAXPROCS (the usable cores).
	"default": {
		Workloads: []string{"ring", "fanin", "chat", "socket"},
		Ring:      ringInbox,
		Fanin:     faninChannel,
		Chat:      chatChannels,
	},
	// One thread runs all goroutines: the analogue of erl +S 1.
	"single_thread": {
		GOMAXPROCS: 1,
		Workloads:  []string{"ring", "fanin", "chat", "socket"},
		Ring:       ringInbox,
		Fanin:      faninChannel,
		Chat:       chatChannels,
	},
	// Tuned: stress clients yield after every round, so the scheduler's
	// global run queue cannot starve anyone.
	"yield": {
		Workloads: []string{"chat"},
		Chat:      chat.Options{InboxCapacity: chatChannels.InboxCapacity, GroupCapacity: chatChannels.GroupCapacity, Yield: true},
	},
	// Tuned: socket flow writes its frames through a bufio.Writer, so small
	// frames share a write(2); echo is the default's.
	"buffered_flow": {
		Workloads: []string{"socket"},
		Socket:    socket.Options{BufferedFlow: true},
	},
	// Tuned: every send passes the one prepared payload by reference, no copy.
	"shared_payload": {
		Workloads: []string{"fanin"},
		Fanin:     fanin.Options{ChannelCapacity: faninChannel.ChannelCapacity, SharePayload: true},
	},
}
