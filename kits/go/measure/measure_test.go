package measure

import (
	"strings"
	"testing"
	"time"
)

func TestMarksMeasureWallAndCPU(t *testing.T) {
	begin := Now()
	time.Sleep(20 * time.Millisecond)
	if wall := begin.WallSince(Now()); wall < 20*time.Millisecond {
		t.Errorf("wall %v across a 20ms sleep", wall)
	}
	// Burn CPU until the process has used 10ms more; on a loaded machine
	// that can take far longer in wall time, hence the generous deadline.
	const burn = 10 * time.Millisecond
	start := Now()
	deadline := time.Now().Add(10 * time.Second)
	for CPUTime()-start.cpu < burn && time.Now().Before(deadline) {
	}
	if cpu := start.CPUSince(Now()); cpu < burn {
		t.Errorf("cpu %v after burning %v", cpu, burn)
	}
}

func TestPeakRSS(t *testing.T) {
	peak, err := PeakRSSBytes()
	if err != nil || peak <= 0 {
		t.Fatalf("PeakRSSBytes = %d, %v", peak, err)
	}
}

func TestParseVmHWM(t *testing.T) {
	got, err := parseVmHWM(strings.NewReader("Name:\tx\nVmPeak:\t  9 kB\nVmHWM:\t    1234 kB\n"))
	if err != nil || got != 1234*1024 {
		t.Fatalf("got %d, %v", got, err)
	}
	if _, err := parseVmHWM(strings.NewReader("Name:\tx\n")); err == nil {
		t.Fatal("no VmHWM line: want an error")
	}
	if _, err := parseVmHWM(strings.NewReader("VmHWM:\t12 MB\n")); err == nil {
		t.Fatal("unexpected unit: want an error")
	}
}

func TestAvailableBytes(t *testing.T) {
	avail, err := AvailableBytes()
	if err != nil || avail <= 0 {
		t.Fatalf("AvailableBytes = %d, %v", avail, err)
	}
	got, err := parseKB(strings.NewReader("MemTotal: 10 kB\nMemAvailable:    7 kB\n"), "MemAvailable:")
	if err != nil || got != 7*1024 {
		t.Fatalf("got %d, %v", got, err)
	}
}
