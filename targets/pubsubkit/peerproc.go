package pubsubkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// The environment with which the harness says where the peer runs
// (spec/README.md, "Peers").
const (
	EnvPeerCommand = "MSGBENCH_PEER_COMMAND"
	EnvPeerCwd     = "MSGBENCH_PEER_CWD"
	EnvPeerHost    = "MSGBENCH_PEER_HOST"
	EnvServiceURL  = "MSGBENCH_SERVICE_URL"
)

// ServeFlag makes the binary the receivers' process (target.toml's serve).
const ServeFlag = "--serve"

const (
	listeningWithin = 30 * time.Second
	// exitWithin is how long a peer whose stdin closed may take to exit
	// before its process group is killed.
	exitWithin = 5 * time.Second
	// explainWithin is how long a worker that lost its connection waits for
	// the peer's own error line, which says more than a reset does.
	explainWithin = 2 * time.Second
)

// peerHandle is the worker's end of the peer: its stdin and its lines.
type peerHandle interface {
	// send writes one line to the peer's stdin.
	send(line []byte) error
	// next waits up to limit for the peer's next line, which must be of
	// type want; the peer's error line is returned as an error.
	next(want string, limit time.Duration) (peerLine, error)
	// explanation is the peer's error line if one arrives within limit.
	explanation(limit time.Duration) error
	// stop closes the peer's stdin, waits up to exitWithin for it to exit
	// and kills its process group if it has not.
	stop()
}

// peerStarter starts the peer and writes request (one line) to its stdin.
type peerStarter func(request []byte) (peerHandle, error)

// peerArgv is the peer's command: MSGBENCH_PEER_COMMAND, or this binary with
// --serve when the worker runs by hand.
func peerArgv() ([]string, error) {
	command := os.Getenv(EnvPeerCommand)
	if command == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, errorf(KindInternal, "cannot find this executable to start the receivers: %v", err)
		}
		return []string{self, ServeFlag}, nil
	}
	var argv []string
	if err := json.Unmarshal([]byte(command), &argv); err != nil || len(argv) == 0 || argv[0] == "" {
		return nil, errorf(KindInternal, "%s = %q is not a JSON array of strings naming a command", EnvPeerCommand, command)
	}
	return argv, nil
}

// processPeer is the peer as a child process in its own process group, so
// that stop can kill whatever the command started (a netns or ssh wrapper).
type processPeer struct {
	argv    []string
	cmd     *exec.Cmd
	stdin   *os.File
	lines   chan peerLine // closed at the end of the peer's stdout
	badLine chan string
	exited  chan struct{}
	waitErr error
}

func startProcessPeer(argv []string, cwd string) peerStarter {
	return func(request []byte) (peerHandle, error) {
		stdinR, stdinW, err := os.Pipe()
		if err != nil {
			return nil, errorf(KindResource, "cannot make a pipe for the receivers: %v", err)
		}
		stdoutR, stdoutW, err := os.Pipe()
		if err != nil {
			stdinR.Close()
			stdinW.Close()
			return nil, errorf(KindResource, "cannot make a pipe for the receivers: %v", err)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = cwd
		// *os.File ends go to the child as they are: no copying goroutines,
		// so Wait does not depend on the pipes.
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		err = cmd.Start()
		stdinR.Close()
		stdoutW.Close()
		if err != nil {
			stdinW.Close()
			stdoutR.Close()
			return nil, errorf(KindInternal, "cannot start the receivers %s: %v", quoteArgv(argv), err)
		}
		pp := &processPeer{argv: argv, cmd: cmd, stdin: stdinW, lines: make(chan peerLine, 4),
			badLine: make(chan string, 1), exited: make(chan struct{})}
		go func() {
			pp.waitErr = cmd.Wait()
			close(pp.exited)
		}()
		go readPeerLines(stdoutR, pp.lines, pp.badLine)
		// A peer that already exited makes this fail (EPIPE); its end of
		// output and exit status then say more.
		_ = pp.send(request)
		return pp, nil
	}
}

// readPeerLines parses the peer's stdout into lines until it ends.
func readPeerLines(stdout io.ReadCloser, lines chan<- peerLine, badLine chan<- string) {
	defer stdout.Close()
	defer close(lines)
	scanner := bufio.NewScanner(stdout)
	scanner.Buffer(make([]byte, 64<<10), 16<<20)
	for scanner.Scan() {
		text := bytes.TrimSpace(scanner.Bytes())
		if len(text) == 0 {
			continue
		}
		var line peerLine
		if err := json.Unmarshal(text, &line); err != nil || line.Type == "" {
			badLine <- string(text)
			return
		}
		lines <- line
	}
}

func (pp *processPeer) send(line []byte) error {
	if len(line) == 0 || line[len(line)-1] != '\n' {
		line = append(append([]byte{}, line...), '\n')
	}
	_, err := pp.stdin.Write(line)
	return err
}

func (pp *processPeer) next(want string, limit time.Duration) (peerLine, error) {
	return nextLine(pp.lines, pp.badLine, want, limit, func() string {
		return fmt.Sprintf("the receivers %s exited without saying %q (%s)", quoteArgv(pp.argv), want, pp.exitStatus())
	}, quoteArgv(pp.argv))
}

func (pp *processPeer) explanation(limit time.Duration) error {
	return explain(pp.lines, pp.badLine, limit)
}

func (pp *processPeer) exitStatus() string {
	select {
	case <-pp.exited:
		if pp.waitErr != nil {
			return pp.waitErr.Error()
		}
		return "exit status 0"
	case <-time.After(time.Second):
		return "still running"
	}
}

func (pp *processPeer) stop() {
	pp.stdin.Close()
	select {
	case <-pp.exited:
	case <-time.After(exitWithin):
		// The whole group: the command may be a wrapper around the peer.
		_ = syscall.Kill(-pp.cmd.Process.Pid, syscall.SIGKILL)
		<-pp.exited
	}
}

// nextLine is next for any source of peer lines.
func nextLine(lines <-chan peerLine, badLine <-chan string, want string, limit time.Duration,
	ended func() string, who string) (peerLine, error) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case line, ok := <-lines:
		switch {
		case !ok:
			return line, errorf(KindInternal, "%s", ended())
		case line.Type == "error":
			return line, line.asError()
		case line.Type != want:
			return line, errorf(KindInternal, "the receivers said %q where %q was due", line.Type, want)
		}
		return line, nil
	case text := <-badLine:
		return peerLine{}, errorf(KindInternal,
			"the receivers printed a line that is not a JSON object where %q was due: %.200q", want, text)
	case <-timer.C:
		return peerLine{}, errorf(KindInternal, "the receivers %s did not say %q within %v", who, want, limit)
	}
}

// explain waits up to limit for an error line from the peer.
func explain(lines <-chan peerLine, badLine <-chan string, limit time.Duration) error {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return nil
			}
			if line.Type == "error" {
				return line.asError()
			}
		case <-badLine:
			return nil
		case <-timer.C:
			return nil
		}
	}
}

func quoteArgv(argv []string) string {
	b, err := json.Marshal(argv)
	if err != nil {
		return fmt.Sprint(argv)
	}
	return string(b)
}
