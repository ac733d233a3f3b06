package resp

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestAppendPublish(t *testing.T) {
	got := string(AppendPublish([]byte("x"), "msgbench.3", []byte("hi\r\n")))
	want := "x*3\r\n$7\r\nPUBLISH\r\n$10\r\nmsgbench.3\r\n$4\r\nhi\r\n\r\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := string(AppendCommand(nil, []byte("PING"))); got != "*1\r\n$4\r\nPING\r\n" {
		t.Fatalf("PING: %q", got)
	}
}

func TestAppendPublishDoesNotAllocateOnceGrown(t *testing.T) {
	buf := make([]byte, 0, 4096)
	msg := make([]byte, 100)
	if n := testing.AllocsPerRun(100, func() { buf = AppendPublish(buf[:0], "msgbench.0", msg) }); n != 0 {
		t.Fatalf("%v allocations per publish", n)
	}
}

func reader(s string) *Reader { return NewReader(strings.NewReader(s), 64) }

func TestReadReplies(t *testing.T) {
	r := reader(":3\r\n+PONG\r\n-ERR wrong\r\n:x\r\n")
	if n, err := r.ReadInteger(); n != 3 || err != nil {
		t.Fatalf("integer: %d %v", n, err)
	}
	if s, err := r.ReadSimple(); s != "PONG" || err != nil {
		t.Fatalf("simple: %q %v", s, err)
	}
	var rerr Error
	if _, err := r.ReadInteger(); !errors.As(err, &rerr) || string(rerr) != "ERR wrong" {
		t.Fatalf("error reply: %v", err)
	}
	if _, err := r.ReadInteger(); !errors.Is(err, ErrProtocol) {
		t.Fatalf("not a number: %v", err)
	}
}

func TestReadPushes(t *testing.T) {
	payload := strings.Repeat("p", 200) // longer than the 64-byte read buffer
	stream := "*3\r\n$9\r\nsubscribe\r\n$10\r\nmsgbench.0\r\n:1\r\n" +
		"*3\r\n$7\r\nmessage\r\n$10\r\nmsgbench.0\r\n$200\r\n" + payload + "\r\n" +
		"*3\r\n$7\r\nmessage\r\n$10\r\nmsgbench.1\r\n$0\r\n\r\n"
	r := reader(stream)
	p, err := r.ReadPush()
	if err != nil || p.Kind != "subscribe" || p.Channel != "msgbench.0" || p.Count != 1 {
		t.Fatalf("subscribe: %+v %v", p, err)
	}
	p, err = r.ReadPush()
	if err != nil || p.Kind != "message" || string(p.Payload) != payload {
		t.Fatalf("message: %+v %v", p, err)
	}
	p, err = r.ReadPush()
	if err != nil || p.Kind != "message" || len(p.Payload) != 0 {
		t.Fatalf("empty message: %+v %v", p, err)
	}
	if _, err = r.ReadPush(); !errors.Is(err, io.EOF) {
		t.Fatalf("at the end: %v", err)
	}
}

func TestMalformed(t *testing.T) {
	for _, s := range []string{
		"*2\r\n$7\r\nmessage\r\n$1\r\nx\r\n",               // not three elements
		"*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$3\r\nabcd\r\n", // payload longer than said
		"*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$-5\r\n",        // negative length
		"*3\n",   // no \r
		":1\r\n", // not an array
	} {
		if _, err := reader(s).ReadPush(); !errors.Is(err, ErrProtocol) {
			t.Errorf("%q: %v", s, err)
		}
	}
	// A cut stream is an I/O error, not a protocol one.
	if _, err := reader("*3\r\n$7\r\nmess").ReadPush(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut: %v", err)
	}
}

func TestReadMessageDoesNotAllocate(t *testing.T) {
	one := "*3\r\n$7\r\nmessage\r\n$10\r\nmsgbench.0\r\n$16\r\n0123456789abcdef\r\n"
	r := NewReader(bytes.NewReader([]byte(strings.Repeat(one, 200))), 4096)
	if _, err := r.ReadPush(); err != nil { // sizes the bulk buffer
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := r.ReadPush(); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per message", n)
	}
}
