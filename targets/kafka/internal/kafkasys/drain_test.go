package kafkasys

import (
	"testing"

	"msgbench/kits/pubsub"
	"msgbench/kits/pubsub/kittest"
)

// backlogCounted: a receiver that stops taking records leaves them in the
// broker's log, and Backlog says how many (its lag over every partition), across
// a halt (kittest.BacklogAcrossHalt).
func backlogCounted(t *testing.T, env pubsub.Env) {
	p := pubsub.Params{PayloadBytes: 64, Sources: 2, SourceThreads: 2, Receivers: 1}
	kittest.BacklogAcrossHalt(t, System{}, env, pubsub.Options{}, p, 3000)
}
