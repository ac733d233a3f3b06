// Package peer is the worker's end of its peer (spec/README.md, "Peers"): the
// other half of a two-process workload (socket's server half, pubsub's
// receivers' process), started as a child process. The worker writes its
// request line to the peer's stdin and keeps stdin open; the peer answers with
// JSON lines on its stdout and exits when its work is done or its stdin
// closes. Each workload decodes the fields of its own lines (Line.Decode);
// this package knows only the "type" and the error line.
package peer

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

	"msgbench/kits/go/protocol"
)

// The environment with which the harness says where the peer runs.
const (
	// EnvCommand is the peer's argv as a JSON array of strings (target.toml's
	// serve, possibly wrapped, e.g. in a network namespace).
	EnvCommand = "MSGBENCH_PEER_COMMAND"
	// EnvCwd is the directory to start it in.
	EnvCwd = "MSGBENCH_PEER_CWD"
	// EnvHost is the host the worker reaches the peer at (socket).
	EnvHost = "MSGBENCH_PEER_HOST"
)

// ServeFlag is the argument that makes a worker binary its own peer
// (target.toml's serve).
const ServeFlag = "--serve"

// ExitWithin is how long a peer may take to exit: after its last line
// (AwaitExit), or once its stdin has closed (Stop), after which Stop kills its
// whole process group. A peer exits as soon as its stdin closes, so a healthy
// one needs milliseconds; the wait only bounds one that hangs (a client
// library that never lets go). targets/go waited 10 s and killed the one
// process, the pubsub kit 5 s and the group; the kit keeps the safer pair:
// 5 s holds the machine (a broker, ports, the next repetition) half as long
// after a failure, and the group takes along what a wrapper command started
// (ip netns exec, ssh, a shell), which killing its pid alone would leave
// running until the worker exits (the harness's supervisor then kills what
// the worker left behind; a worker run by hand has no such net).
const ExitWithin = 5 * time.Second

// maxLine bounds one line of the peer (a served line with a latency histogram
// and many receivers is the longest).
const maxLine = 16 << 20

// Argv is the peer's command: EnvCommand if the harness set it, else (a worker
// run by hand) this very executable with ServeFlag. who names the peer in
// errors ("the server", "the receivers").
func Argv(who string) ([]string, error) {
	command := os.Getenv(EnvCommand)
	if command == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, protocol.Errorf(protocol.Internal, "cannot find this executable to start %s: %v", who, err)
		}
		return []string{self, ServeFlag}, nil
	}
	var argv []string
	if err := json.Unmarshal([]byte(command), &argv); err != nil || len(argv) == 0 || argv[0] == "" {
		return nil, protocol.Errorf(protocol.Internal,
			"%s = %q is not a JSON array of strings naming a command", EnvCommand, command)
	}
	return argv, nil
}

// Line is one line of the peer's stdout: its type, and the whole line for
// the workload to decode its own fields from.
type Line struct {
	Type string
	Raw  json.RawMessage
}

// Decode fills v from the line's JSON.
func (l Line) Decode(v any) error {
	if err := json.Unmarshal(l.Raw, v); err != nil {
		return protocol.Errorf(protocol.Internal, "cannot decode the %q line %.200q: %v", l.Type, l.Raw, err)
	}
	return nil
}

// Lines is a stream of a peer's lines. Start makes one from a child's
// stdout; a test double can make one from any reader (NewLines).
type Lines struct {
	who     string
	argv    []string
	lines   chan Line   // closed at the end of the peer's output
	badLine chan string // a line that is not a JSON object with a type
	ended   func() string
}

// NewLines reads r until it ends (and closes it if it is an io.Closer), in a
// goroutine of its own. who names the peer in errors ("the server", "the
// receivers"), argv (if any) its command; ended, if not nil, says how the
// peer ended when its output ends before the line that was due ("exit status
// 1").
func NewLines(who string, argv []string, r io.Reader, ended func() string) *Lines {
	ls := &Lines{who: who, argv: argv, lines: make(chan Line, 4), badLine: make(chan string, 1), ended: ended}
	go ls.read(r)
	return ls
}

func (ls *Lines) read(r io.Reader) {
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	defer close(ls.lines)
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64<<10), maxLine)
	for scanner.Scan() {
		text := bytes.TrimSpace(scanner.Bytes())
		if len(text) == 0 {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(text, &head); err != nil || head.Type == "" {
			ls.badLine <- string(text)
			return
		}
		ls.lines <- Line{Type: head.Type, Raw: append(json.RawMessage(nil), text...)}
	}
}

// named is who with the command, if known: `the server ["bin/x","--serve"]`.
func (ls *Lines) named() string {
	if ls.argv == nil {
		return ls.who
	}
	return ls.who + " " + QuoteArgv(ls.argv)
}

// Next waits up to limit for the peer's next line, which must be of type
// want. The peer's error line is relayed as the worker's own error, its
// message prefixed with who said it ("the server: port 5000 is in use").
func (ls *Lines) Next(want string, limit time.Duration) (Line, error) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case line, ok := <-ls.lines:
		switch {
		case !ok:
			how := ""
			if ls.ended != nil {
				how = " (" + ls.ended() + ")"
			}
			return line, protocol.Errorf(protocol.Internal, "%s exited without saying %q%s", ls.named(), want, how)
		case line.Type == "error":
			return line, ls.relay(line)
		case line.Type != want:
			return line, protocol.Errorf(protocol.Internal, "%s said %q where %q was due", ls.who, line.Type, want)
		}
		return line, nil
	case text := <-ls.badLine:
		return Line{}, protocol.Errorf(protocol.Internal,
			"%s printed a line that is not a JSON object where %q was due: %.200q", ls.who, want, text)
	case <-timer.C:
		return Line{}, protocol.Errorf(protocol.Internal, "%s did not say %q within %v", ls.named(), want, limit)
	}
}

// Explanation is the peer's error line, relayed, if one comes within limit;
// else nil. A worker whose connection broke asks for it: a peer's own error
// says more than a reset does.
func (ls *Lines) Explanation(limit time.Duration) error {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-ls.lines:
			if !ok {
				return nil
			}
			if line.Type == "error" {
				return ls.relay(line)
			}
		case <-ls.badLine:
			return nil
		case <-timer.C:
			return nil
		}
	}
}

// relay turns the peer's error line into the worker's error: the same kind
// (internal for one the protocol does not have), the message prefixed with
// who said it ("the server: port 5000 is in use").
func (ls *Lines) relay(line Line) *protocol.Error {
	var e struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(line.Raw, &e); err != nil {
		return protocol.Errorf(protocol.Internal, "%s sent an error line that does not decode: %.200q", ls.who, line.Raw)
	}
	kind := protocol.ErrorKind(e.Kind)
	if !kind.Known() {
		kind = protocol.Internal
	}
	return protocol.Errorf(kind, "%s: %s", ls.who, e.Message)
}

// Process is the peer as a child process, in a process group of its own so
// that Stop can kill whatever its command started (a wrapper such as ip netns
// exec or ssh, and the peer under it). Its stdin stays open until Stop.
type Process struct {
	*Lines
	cmd     *exec.Cmd
	stdin   *os.File
	exited  chan struct{} // closed once the process has been waited for
	waitErr error         // how it ended, once exited is closed
}

// Start starts argv in cwd ("" for this process's) and writes request (one
// line; the newline is added if missing) to its stdin. Its stderr is this
// process's stderr. who names it in errors ("the server", "the receivers").
func Start(who string, argv []string, cwd string, request []byte) (*Process, error) {
	p, stdout, err := Spawn(who, argv, cwd)
	if err != nil {
		return nil, err
	}
	p.Lines = NewLines(who, argv, stdout, p.ExitStatus)
	// A peer that has already exited makes this fail (EPIPE); the end of its
	// output, with its exit status, then says more.
	_ = p.Send(request)
	return p, nil
}

// Spawn starts argv in cwd as Start does, but writes nothing to its stdin
// and leaves its stdout to the caller (Lines is nil): for a peer whose
// output is not the peer protocol's lines (the chat server's
// {"listening": PORT}, docs/chat-server.md). Stop works as for Start's.
func Spawn(who string, argv []string, cwd string) (*Process, *os.File, error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, nil, protocol.Errorf(protocol.Resource, "cannot make a pipe for %s: %v", who, err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, nil, protocol.Errorf(protocol.Resource, "cannot make a pipe for %s: %v", who, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = cwd
	// *os.File ends go to the child as they are: no copying goroutines, so
	// Wait does not depend on the pipes.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, nil, protocol.Errorf(protocol.Internal, "cannot start %s %s: %v", who, QuoteArgv(argv), err)
	}
	p := &Process{cmd: cmd, stdin: stdinW, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, stdoutR, nil
}

// Pid is the peer's process id, which is also its process group's.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed once the peer has exited and been waited for.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Send writes one line to the peer's stdin (the newline is added if missing).
func (p *Process) Send(line []byte) error {
	if len(line) == 0 || line[len(line)-1] != '\n' {
		line = append(append([]byte{}, line...), '\n')
	}
	_, err := p.stdin.Write(line)
	return err
}

// ExitStatus waits a moment for the process and describes how it ended.
func (p *Process) ExitStatus() string {
	select {
	case <-p.exited:
		if p.waitErr != nil {
			return p.waitErr.Error()
		}
		return "exit status 0"
	case <-time.After(time.Second):
		return "still running"
	}
}

// AwaitExit waits up to limit for the peer to exit by itself after its last
// line; an exit status other than 0 is an internal error.
func (p *Process) AwaitExit(limit time.Duration) error {
	select {
	case <-p.exited:
		if p.waitErr != nil {
			return protocol.Errorf(protocol.Internal, "%s ended badly after serving: %v", p.named(), p.waitErr)
		}
		return nil
	case <-time.After(limit):
		return protocol.Errorf(protocol.Internal, "%s did not exit within %v of serving", p.named(), limit)
	}
}

// Stop closes the peer's stdin, which makes it exit, waits up to ExitWithin
// for it, then kills its whole process group, and returns once it has been
// waited for. It is safe to call more than once.
func (p *Process) Stop() {
	p.stdin.Close()
	p.stopWait()
}

// Terminate sends SIGTERM to the peer's process group and closes its stdin
// (a server that stops on either, docs/chat-server.md), then waits as Stop.
func (p *Process) Terminate() {
	select {
	case <-p.exited:
	default:
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	}
	p.Stop()
}

func (p *Process) stopWait() {
	select {
	case <-p.exited:
	case <-time.After(ExitWithin):
		// The whole group: the command may be a wrapper around the peer.
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

// QuoteArgv is argv as a JSON array, for messages.
func QuoteArgv(argv []string) string {
	b, err := json.Marshal(argv)
	if err != nil {
		return fmt.Sprint(argv)
	}
	return string(b)
}
