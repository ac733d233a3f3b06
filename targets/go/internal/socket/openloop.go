package socket

import (
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"
)

// echoOpen is echo in open loop (rate > 0): a writer goroutine sends message
// i at its intended time whatever the echoes do, and this goroutine, the
// reader, takes the echoes in order, checks each as echo does and records
// its latency from the intended time, so that a client or server that falls
// behind is charged for the wait it caused.
func (c *client) echoOpen(p Params, messages int64, frames *Frames) error {
	start := time.Now()
	plan := newSchedule(start, p.Rate, p.Sockets)
	var stop atomic.Bool
	written := make(chan error, 1)
	go func() {
		err := c.writePaced(p, messages, frames, plan, &stop)
		if err != nil {
			c.conn.Close() // the reader would wait for echoes that never come
		}
		written <- err
	}()
	readErr := c.readEchoes(p, messages, frames, plan)
	if readErr != nil {
		stop.Store(true)
		c.conn.Close() // a writer blocked in Write returns
	} else {
		c.elapsed = c.lastEcho.Sub(start)
	}
	writeErr := <-written
	// A reader that found its connection closed under it was stopped by the
	// writer's failure, which is the story.
	if writeErr != nil && (readErr == nil || errors.Is(readErr, net.ErrClosed)) {
		return writeErr
	}
	return readErr
}

// writePaced sends every message at its intended time, at once when late,
// never skipping one, each frame with one plain Write as echo does.
func (c *client) writePaced(p Params, messages int64, frames *Frames, plan schedule, stop *atomic.Bool) error {
	// The thread ends with this goroutine (lockPreciseThread).
	lockPreciseThread()
	every := refreshEvery(p.Size)
	for i := range messages {
		if !sleepUntil(plan.at(i), stop) {
			return nil
		}
		if i%every == 0 {
			if err := c.conn.SetWriteDeadline(time.Now().Add(ioIdle)); err != nil {
				return err
			}
		}
		if _, err := c.conn.Write(frames.Frame(i)); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		c.sent++
		c.sentBytes += p.Size
	}
	return nil
}

// readEchoes reads the echoes of every message in order and records each
// one's latency: the arrival of its last byte minus its intended send time.
func (c *client) readEchoes(p Params, messages int64, frames *Frames, plan schedule) error {
	var header [headerBytes]byte
	payload := make([]byte, p.Size)
	every := refreshEvery(p.Size)
	for i := range messages {
		if i%every == 0 {
			// The echoes of this batch may not even be sent before their
			// intended times: the idle limit runs from the later of now
			// and the batch's last one.
			due := plan.at(min(i+every, messages) - 1)
			if err := c.conn.SetReadDeadline(later(time.Now(), due).Add(ioIdle)); err != nil {
				return err
			}
		}
		if err := c.readEcho(i, header[:], payload); err != nil {
			return err
		}
		c.lastEcho = time.Now()
		c.latency.Record(c.lastEcho.Sub(plan.at(i)).Nanoseconds())
		c.checkEcho(payload, frames.Frame(i)[headerBytes:], p.CheckContent)
	}
	return nil
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
