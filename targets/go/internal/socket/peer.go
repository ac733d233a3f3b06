package socket

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"msgbench/targets/go/internal/protocol"
)

// The environment with which the harness says where the server half runs
// (spec/README.md, "Peers").
const (
	EnvPeerCommand = "MSGBENCH_PEER_COMMAND"
	EnvPeerCwd     = "MSGBENCH_PEER_CWD"
	EnvPeerHost    = "MSGBENCH_PEER_HOST"
)

// ServeFlag is the argument that makes the worker binary the server half
// (target.toml's serve).
const ServeFlag = "--serve"

// Limits on the waits for the server's lines and its exit.
const (
	listeningWithin = 30 * time.Second
	servedWithin    = 30 * time.Second
	exitWithin      = 10 * time.Second
	// explainWithin is how long a client that lost a connection waits for
	// the server's own error line, which says more than a reset does.
	explainWithin = 2 * time.Second
)

// PeerConfig says how to start the server and where to connect to it.
type PeerConfig struct {
	Argv []string
	Cwd  string
	Host string
}

// peerFromEnv reads the harness's environment. Without it (a worker run by
// hand) the server is this very binary with ServeFlag, on this host.
func peerFromEnv(p Params) (PeerConfig, error) {
	cfg := PeerConfig{Cwd: os.Getenv(EnvPeerCwd), Host: os.Getenv(EnvPeerHost)}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	command := os.Getenv(EnvPeerCommand)
	if command == "" {
		if p.Remote {
			return cfg, protocol.Errorf(protocol.Unsupported,
				"placement = remote needs the harness to place the server (%s and %s are not set)",
				EnvPeerCommand, EnvPeerHost)
		}
		self, err := os.Executable()
		if err != nil {
			return cfg, protocol.Errorf(protocol.Internal, "cannot find this executable to start the server: %v", err)
		}
		cfg.Argv = []string{self, ServeFlag}
		return cfg, nil
	}
	if err := json.Unmarshal([]byte(command), &cfg.Argv); err != nil || len(cfg.Argv) == 0 || cfg.Argv[0] == "" {
		return cfg, protocol.Errorf(protocol.Internal,
			"%s = %q is not a JSON array of strings naming a command", EnvPeerCommand, command)
	}
	return cfg, nil
}

// peerLine is one line of the server's stdout.
type peerLine struct {
	Type     string `json:"type"`
	Port     int    `json:"port"`
	Messages int64  `json:"messages"`
	Bytes    int64  `json:"bytes"`
	Kind     string `json:"kind"`
	Message  string `json:"message"`
}

// peer is the running server process. Its stdin stays open until stop: the
// server exits when it closes.
type peer struct {
	cfg     PeerConfig
	cmd     *exec.Cmd
	stdin   *os.File
	lines   chan peerLine // closed at the end of the server's stdout
	badLine chan string   // a line that is not a JSON object
	exited  chan struct{} // closed once the process has been waited for
	waitErr error         // the exit status, once exited is closed
}

// startPeer starts the server and writes request (one JSON line) to it.
func startPeer(cfg PeerConfig, request []byte) (*peer, error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, protocol.Errorf(protocol.Resource, "cannot make a pipe for the server: %v", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, protocol.Errorf(protocol.Resource, "cannot make a pipe for the server: %v", err)
	}
	cmd := exec.Command(cfg.Argv[0], cfg.Argv[1:]...)
	cmd.Dir = cfg.Cwd
	// *os.File ends are handed to the child as they are: no copying
	// goroutines, so Wait does not depend on the pipes.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, os.Stderr
	err = cmd.Start()
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, protocol.Errorf(protocol.Internal, "cannot start the server %s: %v", quoteArgv(cfg.Argv), err)
	}
	s := &peer{cfg: cfg, cmd: cmd, stdin: stdinW, lines: make(chan peerLine, 4),
		badLine: make(chan string, 1), exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	go s.readLines(stdoutR)
	// A server that has already exited makes this write fail (EPIPE); its
	// end of output, with the exit status, then says more than that.
	_, _ = stdinW.Write(request)
	return s, nil
}

func (s *peer) readLines(stdout *os.File) {
	defer stdout.Close()
	defer close(s.lines)
	scanner := bufio.NewScanner(stdout)
	scanner.Buffer(make([]byte, 64<<10), 1<<20)
	for scanner.Scan() {
		text := strings.TrimSpace(scanner.Text())
		if text == "" {
			continue
		}
		var line peerLine
		if err := json.Unmarshal([]byte(text), &line); err != nil || line.Type == "" {
			s.badLine <- text
			return
		}
		s.lines <- line
	}
}

// next waits up to limit for the server's next line, which must be of type
// want; an error line is relayed as the worker's own error.
func (s *peer) next(want string, limit time.Duration) (peerLine, error) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case line, ok := <-s.lines:
		switch {
		case !ok:
			return line, protocol.Errorf(protocol.Internal, "the server %s exited without saying %q (%s)",
				quoteArgv(s.cfg.Argv), want, s.exitStatus())
		case line.Type == "error":
			return line, relay(line)
		case line.Type != want:
			return line, protocol.Errorf(protocol.Internal, "the server said %q where %q was due", line.Type, want)
		}
		return line, nil
	case text := <-s.badLine:
		return peerLine{}, protocol.Errorf(protocol.Internal,
			"the server printed a line that is not a JSON object where %q was due: %.200q", want, text)
	case <-timer.C:
		return peerLine{}, protocol.Errorf(protocol.Internal, "the server %s did not say %q within %v",
			quoteArgv(s.cfg.Argv), want, limit)
	}
}

// explanation is the server's error line if one comes within limit.
func (s *peer) explanation(limit time.Duration) error {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				return nil
			}
			if line.Type == "error" {
				return relay(line)
			}
		case <-s.badLine:
			return nil
		case <-timer.C:
			return nil
		}
	}
}

// relay turns the server's error line into the worker's.
func relay(line peerLine) error {
	kind := protocol.ErrorKind(line.Kind)
	switch kind {
	case protocol.Unsupported, protocol.Resource, protocol.Internal:
	default:
		kind = protocol.Internal
	}
	return protocol.Errorf(kind, "the server: %s", line.Message)
}

// exitStatus waits a moment for the process and describes how it ended.
func (s *peer) exitStatus() string {
	select {
	case <-s.exited:
		if s.waitErr != nil {
			return s.waitErr.Error()
		}
		return "exit status 0"
	case <-time.After(time.Second):
		return "still running"
	}
}

// awaitExit waits up to limit for the server to exit by itself.
func (s *peer) awaitExit(limit time.Duration) error {
	select {
	case <-s.exited:
		if s.waitErr != nil {
			return protocol.Errorf(protocol.Internal, "the server %s ended badly after serving: %v",
				quoteArgv(s.cfg.Argv), s.waitErr)
		}
		return nil
	case <-time.After(limit):
		return protocol.Errorf(protocol.Internal, "the server %s did not exit within %v of serving",
			quoteArgv(s.cfg.Argv), limit)
	}
}

// stop closes the server's stdin, which makes it exit, and kills it if it has
// not exited within exitWithin.
func (s *peer) stop() {
	s.stdin.Close()
	select {
	case <-s.exited:
	case <-time.After(exitWithin):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

func quoteArgv(argv []string) string {
	b, err := json.Marshal(argv)
	if err != nil {
		return fmt.Sprint(argv)
	}
	return string(b)
}
