package pubsub

import (
	"context"
	"testing"
	"time"
)

// A broker that stops delivering for longer than drain_ms while it still
// holds messages (RabbitMQ starved of CPU beside another run) is waited for:
// nothing it delivers late is counted as lost.
func TestDrainWaitsWhileTheBrokerHoldsMessages(t *testing.T) {
	begin := time.Now()
	_, verify, _ := runResult(t, newFakeSystem(), "stall",
		params(map[string]any{"sources": 2, "receivers": 2, "drain_ms": 200}))
	if took := time.Since(begin); took < stallFor {
		t.Errorf("the run took %s, less than the broker's stall (%s): it did not wait for it", took, stallFor)
	}
	if verify["published"] <= 100 || verify["received"] != verify["published"]*2 ||
		verify["lost"] != 0 || verify["undelivered"] != 0 {
		t.Fatalf("want every message received after the stall, none lost: %v", verify)
	}
}

// A broker that still holds messages when the drain's time limit passes:
// what it holds is undelivered, not lost, and the receiver gets everything
// the broker had already sent before Halt returns.
func TestHeldMessagesAreUndeliveredNotLost(t *testing.T) {
	sys := newFakeSystem()
	opts := Options{"fault": "stuck"}
	p := Params{PayloadBytes: 64, DurationS: 0.1, Sources: 2, SourceThreads: 1, Receivers: 2, DrainMs: 100}
	states := []*receiverState{newReceiverState(p), newReceiverState(p)}
	receivers := make([]Receiver, len(states))
	for i, st := range states {
		r, err := sys.Subscribe(context.Background(), Env{}, opts, p, i, st.deliver)
		if err != nil {
			t.Fatal(err)
		}
		receivers[i] = r
	}
	const perSource = 200
	for s := 0; s < p.Sources; s++ {
		src, _ := sys.Connect(context.Background(), Env{}, opts, p, s)
		for seq := uint32(1); seq <= perSource; seq++ {
			if err := src.Publish(EncodeMessage(p.PayloadBytes, uint32(s), seq, 0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	watches := newBacklogWatches(receivers)
	if watches[0] == nil || watches[1] != nil {
		t.Fatalf("only receiver 0's broker says what it holds: %v", watches)
	}
	total := int64(p.Sources * perSource)
	limit := time.Second
	begin := time.Now()
	awaitReceivers(states, watches, total, time.Duration(p.DrainMs)*time.Millisecond, limit, nil)
	if took := time.Since(begin); took < limit {
		t.Errorf("the drain ended after %s with messages held: want the limit, %s", took, limit)
	}
	undelivered := countUndelivered(states, watches, total)
	for _, r := range receivers {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Receiver 0 got each source's first 50; the broker holds the rest.
	if undelivered[0] != total-100 || undelivered[1] != 0 {
		t.Errorf("undelivered %v, want [%d 0]", undelivered, total-100)
	}
	served := servedLine{Receivers: []ReceiverReport{states[0].report(0, undelivered[0]), states[1].report(0, undelivered[1])}}
	v := measured{params: p, pub: publishing{counts: []int64{perSource, perSource}}, served: served}.result().Verify
	if v["received"] != total+100 || v["undelivered"] != total-100 || v["lost"] != 0 {
		t.Errorf("want received %d, undelivered %d, lost 0: %v", total+100, total-100, v)
	}
}

// A receiver whose system cannot say what it holds ends its drain after
// drain_ms of nothing, and what it lacks is lost, as before.
func TestWithoutBacklogWhatIsMissingIsLost(t *testing.T) {
	begin := time.Now()
	_, verify, _ := runResult(t, newFakeSystem(), "lossy", params(map[string]any{"drain_ms": 200}))
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("the run took %s", took)
	}
	if verify["lost"] == 0 || verify["undelivered"] != 0 {
		t.Fatalf("want the lossy fake's gaps as lost: %v", verify)
	}
}
