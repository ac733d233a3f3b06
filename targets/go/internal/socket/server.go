package socket

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"msgbench/kits/go/protocol"
)

// Workload is this workload's name in requests.
const Workload = "socket"

// ServeStream is the server half as a process: it reads the worker's request
// line from in, serves it and
// writes its lines ({"type":"listening"}, then {"type":"served"} or
// {"type":"error"}) to out. It stops with an error as soon as in closes:
// the worker is gone or gave up. It returns an error only when out cannot be
// written.
func ServeStream(in io.Reader, out io.Writer) error {
	w := protocol.NewWriter(out)
	br := bufio.NewReader(in)
	line, err := br.ReadBytes('\n')
	if len(bytes.TrimSpace(line)) == 0 {
		if err == nil {
			err = errors.New("an empty line")
		}
		return w.Error(protocol.Errorf(protocol.Internal, "the server read no request on its stdin: %v", err))
	}
	req, err := protocol.ReadRequest(bytes.NewReader(line))
	if err != nil {
		return w.Error(err)
	}
	if req.Workload != Workload {
		return w.Error(protocol.Errorf(protocol.Unsupported,
			"the server half serves workload %q only, not %q", Workload, req.Workload))
	}
	p, _, err := Parse(req) // the options are the client's to apply
	if err != nil {
		return w.Error(err)
	}
	stdinClosed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, br) // until EOF (or a read error: the same)
		close(stdinClosed)
	}()
	if err := Serve(p, w, stdinClosed); err != nil {
		return w.Error(err)
	}
	return nil
}

// Serve listens on 0.0.0.0:p.Port, writes the listening line, accepts
// exactly p.Sockets connections and serves each on its own goroutine (echo:
// read a frame, write it back; flow: read and discard, ack at the end), then
// writes the served line. It returns an error, without the served line, when
// a connection fails, a wait passes its limit or stop is closed.
func Serve(p Params, w *protocol.Writer, stop <-chan struct{}) error {
	if err := checkMemory(p, 0, serverMemory(p), "server"); err != nil {
		return err
	}
	ln, err := net.Listen("tcp4", net.JoinHostPort("0.0.0.0", strconv.Itoa(p.Port)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return protocol.Errorf(protocol.Resource,
				"port %d is in use (%v): give another port, or port = 0 for any free one", p.Port, err)
		}
		return protocol.Errorf(protocol.Resource, "the server cannot listen on port %d: %v", p.Port, err)
	}
	listener := ln.(*net.TCPListener)
	defer listener.Close()
	if err := w.Line(listeningLine{Type: "listening", Port: listener.Addr().(*net.TCPAddr).Port}); err != nil {
		return err
	}

	type served struct {
		messages, bytes int64
		err             error
	}
	results := make(chan served, p.Sockets)
	acceptFailed := make(chan error, 1)
	var mu sync.Mutex
	var conns []*net.TCPConn
	closeAll := func() {
		listener.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}
	go func() {
		if err := listener.SetDeadline(time.Now().Add(acceptWithin)); err != nil {
			acceptFailed <- err
			return
		}
		for k := 1; k <= p.Sockets; k++ {
			c, err := listener.AcceptTCP()
			if err != nil {
				if isTimeout(err) {
					err = fmt.Errorf("the server accepted %d of %d connections within %v", k-1, p.Sockets, acceptWithin)
				}
				acceptFailed <- err
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				m, b, err := serveConn(k, c, p)
				results <- served{m, b, err}
			}()
		}
		listener.Close() // all accepted: no more connections
	}()

	var messages, bytes int64
	for done := 0; done < p.Sockets; done++ {
		select {
		case r := <-results:
			if r.err != nil {
				closeAll()
				return protocol.Errorf(protocol.Internal, "%v", r.err)
			}
			messages += r.messages
			bytes += r.bytes
		case err := <-acceptFailed:
			closeAll()
			return protocol.Errorf(protocol.Internal, "%v", err)
		case <-stop:
			closeAll()
			return protocol.Errorf(protocol.Internal,
				"the server's stdin closed before its work was done (%d of %d connections finished)", done, p.Sockets)
		}
	}
	return w.Line(servedLine{Type: "served", Messages: messages, Bytes: bytes})
}

// serveConn serves connection k (1-based) to its end and closes it.
func serveConn(k int, c *net.TCPConn, p Params) (messages, bytes int64, err error) {
	defer c.Close()
	if err := c.SetNoDelay(true); err != nil {
		return 0, 0, fmt.Errorf("socket %d: TCP_NODELAY: %v", k, err)
	}
	if p.Flow {
		messages, bytes, err = discard(c, p)
	} else {
		messages, bytes, err = echo(c, p)
	}
	if err != nil {
		what := "failed"
		if isTimeout(err) {
			what = fmt.Sprintf("made no progress for %v", ioIdle)
		}
		return messages, bytes, fmt.Errorf("socket %d %s after %d messages: %v", k, what, messages, err)
	}
	return messages, bytes, nil
}

// readHeader reads the next frame's header. done is true when the client has
// closed the connection between two frames: the sequence is over.
func readHeader(r *bufio.Reader, header []byte, size int64) (done bool, err error) {
	if _, err := io.ReadFull(r, header); err != nil {
		if err == io.EOF {
			return true, nil
		}
		return false, fmt.Errorf("reading a header: %w", err)
	}
	if n := binary.BigEndian.Uint32(header); int64(n) != size {
		return false, fmt.Errorf("a frame of %d bytes arrived; size is %d", n, size)
	}
	return false, nil
}

// echo reads each frame whole and writes it back with one Write.
func echo(c *net.TCPConn, p Params) (messages, bytes int64, err error) {
	r := bufio.NewReaderSize(c, readBufferBytes)
	frame := make([]byte, headerBytes+p.Size)
	every := refreshEvery(p.Size)
	for {
		if messages%every == 0 {
			if err := c.SetDeadline(time.Now().Add(ioIdle)); err != nil {
				return messages, bytes, err
			}
		}
		done, err := readHeader(r, frame[:headerBytes], p.Size)
		if done || err != nil {
			return messages, bytes, err
		}
		if _, err := io.ReadFull(r, frame[headerBytes:]); err != nil {
			return messages, bytes, fmt.Errorf("reading a payload: %w", err)
		}
		if _, err := c.Write(frame); err != nil {
			return messages, bytes, fmt.Errorf("echoing: %w", err)
		}
		messages++
		bytes += p.Size
	}
}

// discard reads frames and drops them until the client shuts its side down,
// then writes the one-byte ack that tells the client the last byte arrived.
func discard(c *net.TCPConn, p Params) (messages, bytes int64, err error) {
	r := bufio.NewReaderSize(c, readBufferBytes)
	var header [headerBytes]byte
	scratch := make([]byte, min(p.Size, discardChunk))
	every := refreshEvery(p.Size)
	for {
		if messages%every == 0 {
			if err := c.SetDeadline(time.Now().Add(ioIdle)); err != nil {
				return messages, bytes, err
			}
		}
		done, err := readHeader(r, header[:], p.Size)
		if err != nil {
			return messages, bytes, err
		}
		if done {
			break
		}
		for left := p.Size; left > 0; {
			n := min(left, int64(len(scratch)))
			if _, err := io.ReadFull(r, scratch[:n]); err != nil {
				return messages, bytes, fmt.Errorf("reading a payload: %w", err)
			}
			left -= n
		}
		messages++
		bytes += p.Size
	}
	if err := c.SetDeadline(time.Now().Add(ioIdle)); err != nil {
		return messages, bytes, err
	}
	if _, err := c.Write([]byte{ackByte}); err != nil {
		return messages, bytes, fmt.Errorf("writing the ack: %w", err)
	}
	return messages, bytes, nil
}

// ackByte is the flow server's answer once it has read everything.
const ackByte = 0x06
