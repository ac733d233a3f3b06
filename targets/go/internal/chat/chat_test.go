package chat

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"
)

var testOptions = Options{InboxCapacity: 1, GroupCapacity: 16}

func small(groups, perGroup int) Params {
	return Params{Groups: groups, ClientsPerGroup: perGroup, Duration: 50 * time.Millisecond,
		History: 3, DrainTimeout: 5 * time.Second}
}

// checkDelivered checks the verify rules of the spec and what the users kept.
func checkDelivered(t *testing.T, p Params, out Outcome) {
	t.Helper()
	if out.Sent == 0 {
		t.Fatal("nothing sent")
	}
	if out.Received != out.Sent {
		t.Fatalf("received %d, sent %d", out.Received, out.Sent)
	}
	if out.CrossGroup != 0 || out.SelfDeliveries != 0 {
		t.Fatalf("cross_group %d, self_deliveries %d", out.CrossGroup, out.SelfDeliveries)
	}
	if out.Users != p.Users() || out.Processes != int64(p.Groups)+2*p.Users() {
		t.Fatalf("users %d, processes %d for %d groups of %d", out.Users, out.Processes, p.Groups, p.ClientsPerGroup)
	}
	// Every delivery passed through the peer user, which kept it.
	if out.Stored != out.Received {
		t.Fatalf("users stored %d messages, clients received %d", out.Stored, out.Received)
	}
	if out.MaxHeld > p.History || (p.History > 0 && out.MaxHeld == 0) {
		t.Fatalf("a user held %d messages with history %d", out.MaxHeld, p.History)
	}
	if out.Latency.Count() != uint64(out.Received) || out.Latency.Max() <= 0 {
		t.Fatalf("latency: %d samples, max %d ns", out.Latency.Count(), out.Latency.Max())
	}
	if out.ReceivedInWindow > out.Received || out.SendWindow < p.Duration || out.Drain < 0 {
		t.Fatalf("in window %d, send window %v, drain %v", out.ReceivedInWindow, out.SendWindow, out.Drain)
	}
}

func TestStressDeliversEveryMessage(t *testing.T) {
	for _, c := range []struct {
		groups, perGroup int
		delay            time.Duration
		binary           bool
		opt              Options
	}{
		{1, 2, 0, false, testOptions},
		{3, 4, 0, true, testOptions},
		{2, 5, time.Millisecond, false, testOptions},
		{4, 3, 0, false, Options{}}, // unbuffered everywhere: still no deadlock
	} {
		name := fmt.Sprintf("G=%d/CPG=%d/delay=%v/binary=%v/capacity=%d", c.groups, c.perGroup, c.delay, c.binary,
			c.opt.InboxCapacity)
		t.Run(name, func(t *testing.T) {
			p := small(c.groups, c.perGroup)
			p.ListenerDelay, p.Binary = c.delay, c.binary
			out, err := Run(p, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			checkDelivered(t, p, out)
			// Stress gives every user far more than its history holds.
			if out.MaxHeld != p.History {
				t.Fatalf("the fullest history held %d of %d", out.MaxHeld, p.History)
			}
		})
	}
}

func TestRealisticSendsOnSchedule(t *testing.T) {
	// Think 20 ms over T = 100 ms: every client's sends are due at phase,
	// phase + 20, ... phase + 80 ms, with the phase in [0, 20 ms): exactly
	// five each, however late the timers fire.
	p := small(3, 4)
	p.Duration, p.Think, p.History = 100*time.Millisecond, 20*time.Millisecond, 10
	out, err := Run(p, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	checkDelivered(t, p, out)
	if want := 5 * p.Users(); out.Sent != want {
		t.Fatalf("sent %d, want %d", out.Sent, want)
	}
}

func TestRealisticThinkBeyondT(t *testing.T) {
	// Think longer than T: only the clients whose phase falls in T send.
	p := small(4, 5)
	p.Think = 200 * time.Millisecond
	out, err := Run(p, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	if out.Sent > p.Users() || out.Received != out.Sent {
		t.Fatalf("sent %d, received %d for %d users", out.Sent, out.Received, p.Users())
	}
}

func TestHistoryKeepsTheLastMessages(t *testing.T) {
	for _, size := range []int{0, 1, 10} {
		u := user{history: make([]*message, size)}
		for i := range 25 {
			u.keep(&message{sentAt: int64(i)})
		}
		if u.stored != 25 || u.held() != size {
			t.Fatalf("history %d: stored %d, held %d", size, u.stored, u.held())
		}
		seen := map[int64]bool{}
		for _, m := range u.history {
			seen[m.sentAt] = true
		}
		for i := 25 - size; i < 25; i++ {
			if !seen[int64(i)] {
				t.Fatalf("history %d lacks message %d: %v", size, i, u.history)
			}
		}
	}
}

func TestDrainTimeoutZeroStillReports(t *testing.T) {
	p := small(2, 3)
	p.DrainTimeout = 0
	out, err := Run(p, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	if out.Sent == 0 || out.Received > out.Sent || out.Users != 6 {
		t.Fatalf("sent %d, received %d, users %d", out.Sent, out.Received, out.Users)
	}
}

func TestRunLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	p := small(5, 4)
	if _, err := Run(p, testOptions); err != nil {
		t.Fatal(err)
	}
	p.Think = 10 * time.Millisecond
	if _, err := Run(p, testOptions); err != nil {
		t.Fatal(err)
	}
	// Run waits for every goroutine it started: they are gone or on their
	// way out (past WaitGroup.Done).
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("%d goroutines left behind", after-before)
	}
}

func TestCrashIsReported(t *testing.T) {
	// A group that is sent a message for a member it does not have panics
	// (index out of range); the supervisor stand-in stops the run and says so.
	p := small(1, 3)
	sup := &supervisor{errs: make(chan error, 1), quit: make(chan struct{})}
	r := &session{p: p, base: time.Now(), ready: make(chan struct{}, 1), sup: sup}
	g := &group{inbox: make(chan *message, 1)}
	sup.wg.Add(1)
	go g.run(r, 7)
	g.inbox <- &message{to: 2}
	select {
	case err := <-sup.errs:
		if !strings.Contains(err.Error(), "group 7 crashed") {
			t.Fatalf("error %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no crash reported")
	}
	sup.wg.Wait()
}

func TestTextIsSharedBinaryIsNot(t *testing.T) {
	if !strings.Contains(Sentence, "years\u2014absolutely") || utf8.RuneCountInString(Sentence) != 48 ||
		len(Sentence) != 50 {
		t.Fatalf("sentence %q: %d characters, %d bytes", Sentence, utf8.RuneCountInString(Sentence), len(Sentence))
	}
	c := client{group: 0, index: 1, peers: 3, rng: newRand()}
	r := &session{}
	a, b := c.compose(r, 5), c.compose(r, 5)
	if a.body != Sentence || b.body != Sentence || a.to == 1 || a.to > 2 {
		t.Fatalf("text messages %+v %+v", a, b)
	}
	r.p.Binary = true
	a, b = c.compose(r, 5), c.compose(r, 6)
	if !strings.HasPrefix(a.body, Sentence) || len(a.body) != len(Sentence)+8 || a.body == b.body {
		t.Fatalf("binary messages %q %q", a.body, b.body)
	}
	if unsafePointer(a.body) == unsafePointer(c.compose(r, 5).body) {
		t.Fatal("two binary messages share a buffer")
	}
}

func TestPeersAreUniformAmongTheOthers(t *testing.T) {
	c := client{index: 2, peers: 5, rng: newRand()}
	r := &session{}
	var picked [5]int
	const draws = 40000
	for range draws {
		picked[c.compose(r, 0).to]++
	}
	if picked[2] != 0 {
		t.Fatalf("picked itself %d times", picked[2])
	}
	for i, n := range picked {
		if i != 2 && (n < draws/4*9/10 || n > draws/4*11/10) {
			t.Fatalf("peer %d picked %d of %d times: %v", i, n, draws, picked)
		}
	}
}

func TestEachMessageIsOneAllocation(t *testing.T) {
	// The message itself is the only allocation per message (text), plus
	// its buffer (binary): nothing else in the path allocates.
	for _, c := range []struct {
		binary bool
		per    int
	}{{false, 1}, {true, 2}} {
		per := int64(c.per)
		p := small(2, 4)
		p.Duration, p.Binary = 200*time.Millisecond, c.binary
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, err := Run(p, testOptions)
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		// Beyond those: the setup allocates a few objects per goroutine and
		// the histograms a few octaves per client (at most 100 per user), and
		// allow one more per 100 messages.
		extra := int64(after.Mallocs-before.Mallocs) - per*out.Sent
		if extra < 0 || extra > 100*p.Users()+out.Sent/100 {
			t.Fatalf("binary %v: %d allocations for %d messages", c.binary, after.Mallocs-before.Mallocs, out.Sent)
		}
	}
}

func unsafePointer(s string) *byte { return unsafe.StringData(s) }

// BenchmarkCapacity compares channel capacities in stress runs: run with
// -benchtime 1x.
func BenchmarkCapacity(b *testing.B) {
	for _, size := range [][2]int{{10, 5}, {750, 10}} {
		for _, inbox := range []int{0, 1, 4, 16, 64} {
			for _, groupCap := range []int{0, 16, 128} {
				name := fmt.Sprintf("G=%d/CPG=%d/inbox=%d/group=%d", size[0], size[1], inbox, groupCap)
				b.Run(name, func(b *testing.B) {
					p := small(size[0], size[1])
					p.Duration = time.Second
					out, err := Run(p, Options{InboxCapacity: inbox, GroupCapacity: groupCap})
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(out.ReceivedInWindow)/out.SendWindow.Seconds(), "received/s")
					b.ReportMetric(float64(out.Latency.Max())/1e3, "max-us")
				})
			}
		}
	}
}
