// Package resp is the lean RESP2 codec of the redis target's tuned variant:
// exactly what a PUBLISH source and a SUBSCRIBE receiver need, with no
// per-message allocation. go-redis builds a []interface{} of arguments, boxes
// each one, and parses every reply into a command object: about 0.4 µs of CPU
// per message on the 2-core dev machine, four times redis-benchmark's cost,
// which made msgbench's client, not Redis, the bottleneck at small payloads
// (issue 13). The wire format is Redis's (https://redis.io/docs/latest/develop/reference/protocol-spec/).
package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// AppendCommand appends a command (an array of bulk strings) to b.
func AppendCommand(b []byte, args ...[]byte) []byte {
	b = appendHeader(b, '*', len(args))
	for _, a := range args {
		b = AppendBulk(b, a)
	}
	return b
}

// AppendPublish appends PUBLISH channel msg to b: the source's hot path, no
// allocation once b has grown to a batch.
func AppendPublish(b []byte, channel string, msg []byte) []byte {
	b = append(b, "*3\r\n$7\r\nPUBLISH\r\n"...)
	b = appendHeader(b, '$', len(channel))
	b = append(b, channel...)
	b = append(b, '\r', '\n')
	return AppendBulk(b, msg)
}

// AppendBulk appends one bulk string.
func AppendBulk(b []byte, s []byte) []byte {
	b = appendHeader(b, '$', len(s))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func appendHeader(b []byte, kind byte, n int) []byte {
	b = append(b, kind)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// Error is a Redis error reply (-ERR ...).
type Error string

func (e Error) Error() string { return "redis: " + string(e) }

// ErrProtocol is a reply that is not what the protocol allows here.
var ErrProtocol = errors.New("redis protocol error")

// Reader reads replies and pushes from a connection.
type Reader struct {
	r    *bufio.Reader
	bulk []byte // the last bulk string read, reused
}

// NewReader reads from r through a buffer of size bytes.
func NewReader(r io.Reader, size int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, size)}
}

// line returns the next line without its \r\n; the slice is valid until the
// next read.
func (r *Reader) line() ([]byte, error) {
	l, err := r.r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: a line longer than the read buffer", ErrProtocol)
		}
		return nil, err
	}
	if len(l) < 3 || l[len(l)-2] != '\r' {
		return nil, fmt.Errorf("%w: line %q", ErrProtocol, l)
	}
	return l[:len(l)-2], nil
}

// header reads a line of kind (':', '*', '$') and its number. An error reply
// is returned as Error.
func (r *Reader) header(kind byte) (int64, error) {
	l, err := r.line()
	if err != nil {
		return 0, err
	}
	if l[0] == '-' {
		return 0, Error(l[1:])
	}
	if l[0] != kind {
		return 0, fmt.Errorf("%w: expected %q, got %q", ErrProtocol, kind, l)
	}
	n, err := strconv.ParseInt(string(l[1:]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not a number", ErrProtocol, l)
	}
	return n, nil
}

// ReadInteger reads an integer reply (PUBLISH answers with the number of
// subscribers that got the message).
func (r *Reader) ReadInteger() (int64, error) { return r.header(':') }

// ReadSimple reads a status reply (+OK, +PONG) and returns its text.
func (r *Reader) ReadSimple() (string, error) {
	l, err := r.line()
	if err != nil {
		return "", err
	}
	switch l[0] {
	case '+':
		return string(l[1:]), nil
	case '-':
		return "", Error(l[1:])
	}
	return "", fmt.Errorf("%w: expected a status, got %q", ErrProtocol, l)
}

// ReadArrayLen reads an array header.
func (r *Reader) ReadArrayLen() (int, error) {
	n, err := r.header('*')
	return int(n), err
}

// ReadBulk reads a bulk string. The slice is valid until the next ReadBulk.
func (r *Reader) ReadBulk() ([]byte, error) {
	n, err := r.header('$')
	if err != nil {
		return nil, err
	}
	if n < 0 || n > 512<<20 { // proto-max-bulk-len's default
		return nil, fmt.Errorf("%w: bulk string of %d bytes", ErrProtocol, n)
	}
	if cap(r.bulk) < int(n)+2 {
		r.bulk = make([]byte, n+2)
	}
	b := r.bulk[:n+2]
	if _, err := io.ReadFull(r.r, b); err != nil {
		return nil, err
	}
	if b[n] != '\r' || b[n+1] != '\n' {
		return nil, fmt.Errorf("%w: bulk string of %d bytes not ended by \\r\\n", ErrProtocol, n)
	}
	return b[:n], nil
}

// Push is a message pushed to a subscriber: Kind "message" (Payload set,
// valid until the next read; the channel is not kept: no allocation per
// message) or a subscription reply such as "subscribe" (Channel and Count set).
type Push struct {
	Kind    string
	Channel string
	Payload []byte
	Count   int64
}

// ReadPush reads the next push on a subscribed connection (RESP2: an array of
// three, its last element a bulk string for messages and an integer for
// (un)subscribe confirmations).
func (r *Reader) ReadPush() (Push, error) {
	n, err := r.ReadArrayLen()
	if err != nil {
		return Push{}, err
	}
	if n != 3 {
		return Push{}, fmt.Errorf("%w: a push of %d elements", ErrProtocol, n)
	}
	kind, err := r.ReadBulk()
	if err != nil {
		return Push{}, err
	}
	if string(kind) == "message" { // compared without a copy
		if _, err := r.ReadBulk(); err != nil { // the channel
			return Push{}, err
		}
		payload, err := r.ReadBulk()
		return Push{Kind: "message", Payload: payload}, err
	}
	p := Push{Kind: string(kind)}
	channel, err := r.ReadBulk()
	if err != nil {
		return Push{}, err
	}
	p.Channel = string(channel)
	p.Count, err = r.ReadInteger()
	return p, err
}
