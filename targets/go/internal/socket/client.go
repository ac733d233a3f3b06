package socket

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"time"

	"msgbench/kits/go/measure"
	"msgbench/kits/go/peer"
	"msgbench/kits/go/protocol"
	"msgbench/targets/go/internal/histogram"
)

// Options are a variant's choices.
type Options struct {
	// BufferedFlow (tuned): in flow, frames go through a bufio.Writer of
	// writeBufferBytes, so small frames leave in one write(2) per buffer
	// rather than one per frame. Every frame is still written; echo is
	// unchanged (each message must leave at once anyway).
	BufferedFlow bool
}

// writeBufferBytes is the BufferedFlow writer's buffer.
const writeBufferBytes = 64 << 10

// Outcome is what one run measured and counted.
type Outcome struct {
	Elapsed []time.Duration // per socket: first write to last echo (echo) or to the ack (flow)
	Wall    time.Duration   // release of all clients to the last one done
	// Counted by the client goroutines while they worked (all sockets).
	Sent, SentBytes         int64
	Received, ReceivedBytes int64 // echo: echoes back at the client
	Mismatches              int64
	// The server's served line: what arrived there (all sockets).
	Served, ServedBytes int64
	// Open loop: every round trip from its intended send time (all sockets).
	Latency histogram.Histogram
}

// Measure runs the workload for the protocol: the worker's request in (it is
// passed on to the server), result out.
func Measure(req protocol.Request) (protocol.Result, error) {
	p, opt, err := Parse(req)
	if err != nil {
		return protocol.Result{}, err
	}
	cfg, err := peerFromEnv(p)
	if err != nil {
		return protocol.Result{}, err
	}
	out, err := RunWithPeer(req, p, opt, cfg)
	if err != nil {
		return protocol.Result{}, err
	}
	peak, err := measure.PeakRSSBytes()
	if err != nil {
		return protocol.Result{}, err
	}
	return report(p, out, peak), nil
}

// RunWithPeer starts the server from cfg, runs the sequence on p.Sockets
// connections to it and collects the server's count.
func RunWithPeer(req protocol.Request, p Params, opt Options, cfg PeerConfig) (Outcome, error) {
	fixed, perSocket := clientMemory(p, opt)
	if err := checkMemory(p, fixed, perSocket, "client"); err != nil {
		return Outcome{}, err
	}
	frames := NewFrames(p.Size, p.Messages())
	request, err := json.Marshal(req)
	if err != nil {
		return Outcome{}, err
	}
	server, err := peer.Start(who, cfg.Argv, cfg.Cwd, request)
	if err != nil {
		return Outcome{}, err
	}
	defer server.Stop()
	line, err := server.Next("listening", listeningWithin)
	if err != nil {
		return Outcome{}, err
	}
	var listening listeningLine
	if err := line.Decode(&listening); err != nil {
		return Outcome{}, err
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(listening.Port))
	out, lost, err := run(p, opt, addr, frames)
	if err != nil {
		if lost {
			if why := server.Explanation(explainWithin); why != nil {
				return out, why
			}
		}
		return out, err
	}
	line, err = server.Next("served", servedWithin)
	if err != nil {
		return out, err
	}
	var served servedLine
	if err := line.Decode(&served); err != nil {
		return out, err
	}
	out.Served, out.ServedBytes = served.Messages, served.Bytes
	return out, server.AwaitExit(peer.ExitWithin)
}

// client is one socket's client goroutine's state.
type client struct {
	k      int // 1-based, as in messages
	conn   *net.TCPConn
	reader *bufio.Reader
	// Counted while working.
	sent, sentBytes, received, receivedBytes, mismatches int64
	elapsed                                              time.Duration
	// Open loop only: the latencies the reader recorded, and when the last
	// echo arrived.
	latency  histogram.Histogram
	lastEcho time.Time
}

// run connects p.Sockets connections to addr, then releases one client
// goroutine per connection at once and waits for all of them. lost says
// that the failure, if any, is a broken connection.
func run(p Params, opt Options, addr string, frames *Frames) (out Outcome, lost bool, err error) {
	clients := make([]*client, 0, p.Sockets)
	closeAll := func() {
		for _, c := range clients {
			c.conn.Close()
		}
	}
	dialer := net.Dialer{Timeout: dialWithin}
	for k := 1; k <= p.Sockets; k++ {
		conn, err := dialer.Dial("tcp", addr)
		if err != nil {
			closeAll()
			return out, false, protocol.Errorf(protocol.Internal, "cannot connect socket %d of %d to the server at %s: %v",
				k, p.Sockets, addr, err)
		}
		tcp := conn.(*net.TCPConn)
		// Go's default already, said out loud: without it one message in
		// flight meets Nagle's algorithm and delayed ACKs (40 ms stalls).
		if err := tcp.SetNoDelay(true); err != nil {
			closeAll()
			return out, false, protocol.Errorf(protocol.Internal, "socket %d: TCP_NODELAY: %v", k, err)
		}
		clients = append(clients, &client{k: k, conn: tcp, reader: bufio.NewReaderSize(tcp, readBufferBytes)})
	}
	defer closeAll()

	var (
		wg       sync.WaitGroup
		failOnce sync.Once
		failure  error
	)
	release := make(chan struct{})
	messages := p.Messages()
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			var err error
			if p.Flow {
				err = c.flow(p, opt, messages, frames)
			} else if p.Rate > 0 {
				err = c.echoOpen(p, messages, frames)
			} else {
				err = c.echo(p, messages, frames)
			}
			if err != nil {
				// The first failure is the story; closing every
				// connection ends the others at once.
				failOnce.Do(func() {
					failure, lost = c.describe(err, messages, p.Flow)
					closeAll()
				})
			}
		}()
	}
	runtime.GC() // the buffers' garbage, not the sequence's
	start := time.Now()
	close(release)
	wg.Wait()
	wall := time.Since(start)
	if failure != nil {
		return out, lost, failure
	}
	out.Wall = wall
	for _, c := range clients {
		out.Elapsed = append(out.Elapsed, c.elapsed)
		out.Sent += c.sent
		out.SentBytes += c.sentBytes
		out.Received += c.received
		out.ReceivedBytes += c.receivedBytes
		out.Mismatches += c.mismatches
		out.Latency.Merge(&c.latency)
	}
	return out, false, nil
}

// describe words a client's failure: which socket, after how many messages
// (echo: round trips completed; flow: messages written). lost is true when
// the connection broke, which the server may explain better.
func (c *client) describe(err error, messages int64, flow bool) (described error, lost bool) {
	done := c.received
	if flow {
		done = c.sent
	}
	var perr *protocol.Error
	switch {
	case errors.As(err, &perr):
		return perr, false
	case isTimeout(err):
		return protocol.Errorf(protocol.Internal, "socket %d made no progress for %v after %d of %d messages (%v)",
			c.k, ioIdle, done, messages, err), false
	default:
		return protocol.Errorf(protocol.Internal, "the server closed socket %d after %d of %d messages (%v)",
			c.k, done, messages, err), true
	}
}

// echo sends one message at a time and reads its echo back whole before
// sending the next.
func (c *client) echo(p Params, messages int64, frames *Frames) error {
	var header [headerBytes]byte
	payload := make([]byte, p.Size)
	every := refreshEvery(p.Size)
	start := time.Now()
	for i := range messages {
		if i%every == 0 {
			if err := c.conn.SetDeadline(time.Now().Add(ioIdle)); err != nil {
				return err
			}
		}
		frame := frames.Frame(i)
		if _, err := c.conn.Write(frame); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		c.sent++
		c.sentBytes += p.Size
		if err := c.readEcho(i, header[:], payload); err != nil {
			return err
		}
		c.checkEcho(payload, frame[headerBytes:], p.CheckContent)
	}
	c.elapsed = time.Since(start)
	return nil
}

// readEcho reads the echo of message i whole: its header, which must frame
// the size sent (the payload buffer's length), then its payload.
func (c *client) readEcho(i int64, header, payload []byte) error {
	if _, err := io.ReadFull(c.reader, header); err != nil {
		return fmt.Errorf("reading the echo's header: %w", err)
	}
	if n := binary.BigEndian.Uint32(header); int(n) != len(payload) {
		return protocol.Errorf(protocol.Internal, "socket %d: the echo of message %d is framed as %d bytes, not %d",
			c.k, i+1, n, len(payload))
	}
	if _, err := io.ReadFull(c.reader, payload); err != nil {
		return fmt.Errorf("reading the echo's payload: %w", err)
	}
	return nil
}

// checkEcho counts an echo read whole and compares it with what was sent:
// every byte with checkContent, else its first and last.
func (c *client) checkEcho(payload, sent []byte, checkContent bool) {
	c.received++
	c.receivedBytes += int64(len(payload))
	last := len(sent) - 1
	if checkContent {
		if !bytes.Equal(payload, sent) {
			c.mismatches++
		}
	} else if payload[0] != sent[0] || payload[last] != sent[last] {
		c.mismatches++
	}
}

// flow writes every frame as fast as the connection takes them, shuts its
// side down and waits for the server's one-byte ack: the receiver has read
// the last byte.
func (c *client) flow(p Params, opt Options, messages int64, frames *Frames) error {
	var w io.Writer = c.conn // unbuffered: each Write goes straight to write(2)
	var buffered *bufio.Writer
	if opt.BufferedFlow {
		buffered = bufio.NewWriterSize(c.conn, writeBufferBytes)
		w = buffered
	}
	every := refreshEvery(p.Size)
	start := time.Now()
	for i := range messages {
		if i%every == 0 {
			if err := c.conn.SetDeadline(time.Now().Add(ioIdle)); err != nil {
				return err
			}
		}
		if _, err := w.Write(frames.Frame(i)); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		c.sent++
		c.sentBytes += p.Size
	}
	if buffered != nil {
		if err := buffered.Flush(); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	if err := c.conn.CloseWrite(); err != nil {
		return fmt.Errorf("shutdown(write): %w", err)
	}
	if err := c.conn.SetDeadline(time.Now().Add(ioIdle)); err != nil {
		return err
	}
	var ack [1]byte
	if _, err := io.ReadFull(c.reader, ack[:]); err != nil {
		return fmt.Errorf("waiting for the ack: %w", err)
	}
	c.elapsed = time.Since(start)
	if ack[0] != ackByte {
		return protocol.Errorf(protocol.Internal, "socket %d: the server acked with byte %d, not %d", c.k, ack[0], ackByte)
	}
	return nil
}

// report gives the raw facts: each socket's elapsed time and the wall time
// of the whole parallel sequence; the harness derives the seed's means over
// sockets and the rates. What was received is counted at the server in flow,
// back at the client in echo.
func report(p Params, out Outcome, peakRSS int64) protocol.Result {
	elapsed := make([]int64, len(out.Elapsed))
	for i, e := range out.Elapsed {
		elapsed[i] = e.Nanoseconds()
	}
	received, receivedBytes := out.Received, out.ReceivedBytes
	if p.Flow {
		received, receivedBytes = out.Served, out.ServedBytes
	}
	result := protocol.Result{
		Measured: map[string]any{
			"elapsed_ns":     elapsed,
			"wall_ns":        out.Wall.Nanoseconds(),
			"peak_rss_bytes": peakRSS,
		},
		Verify: map[string]int64{
			"messages_sent":      out.Sent,
			"messages_received":  received,
			"bytes_sent":         out.SentBytes,
			"bytes_received":     receivedBytes,
			"content_mismatches": out.Mismatches,
		},
	}
	if p.Rate > 0 {
		result.Measured["latency_max_ns"] = out.Latency.Max()
		result.Histograms = map[string][][2]int64{"latency_ns": out.Latency.Sparse()}
	}
	return result
}
