package kittest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary returns the first of names (a command on PATH or a path) that is
// installed, and skips t, saying how to install it, when none is.
func Binary(t testing.TB, install string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skipf("%s not installed (%s): skipping the test against a real server", filepath.Base(names[0]), install)
	return ""
}

// FreePort is a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	return FreePorts(t, 1)[0]
}

// FreePorts returns n distinct free ports of loopback. Their listeners stay
// open together while the kernel picks: a port just closed may be handed out
// again (msgbench's Kafka listener and controller once got the same one).
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// Start starts cmd in a process group of its own and kills the group (cmd and
// whatever it started) in Cleanup; stop does it earlier and may be called
// more than once.
func Start(t testing.TB, cmd *exec.Cmd) (stop func()) {
	t.Helper()
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
	}
	t.Cleanup(stop)
	return stop
}

// WaitListening waits up to limit until addr accepts a connection, and fails
// t otherwise, quoting the server's log from logPath when there is one.
func WaitListening(t testing.TB, addr string, limit time.Duration, logPath string) {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
	}
	log := ""
	if logPath != "" {
		text, _ := os.ReadFile(logPath)
		log = fmt.Sprintf("; log:\n%s", text)
	}
	t.Fatalf("nothing listening on %s within %s%s", addr, limit, log)
}

// Server is a server started for one test on 127.0.0.1.
type Server struct {
	Addr string // "127.0.0.1:port"
	Port int
	// Stop kills the server before the test ends (Cleanup does otherwise).
	Stop func()
}

// StartServer starts the server bin on a free loopback port with the
// arguments args returns for that port, and returns once the port accepts
// connections (within 10 s). The server is killed in Cleanup; its output
// goes to a log in a temporary directory that is shown if the test fails.
func StartServer(t testing.TB, bin string, args func(port int) []string) Server {
	t.Helper()
	port := FreePort(t)
	logPath := filepath.Join(t.TempDir(), filepath.Base(bin)+".log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // after the kill: Cleanups run last first
		log.Close()
		if text, _ := os.ReadFile(logPath); t.Failed() && len(text) > 0 {
			t.Logf("%s log:\n%s", bin, text)
		}
	})
	cmd := exec.Command(bin, args(port)...)
	cmd.Stdout, cmd.Stderr = log, log
	stop := Start(t, cmd)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	WaitListening(t, addr, 10*time.Second, logPath)
	return Server{Addr: addr, Port: port, Stop: stop}
}
