package socket

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"time"

	"msgbench/kits/go/measure"
	"msgbench/kits/go/protocol"
)

// Framing: every message is a 4-byte big-endian length followed by that many
// payload bytes, all of one value.
const headerBytes = 4

// Limits on every wait, so that nothing hangs.
const (
	// ioIdle is how long a connection may make no progress. The deadline
	// (read and write) is pushed ioIdle ahead every refreshBytes of frames,
	// not on every message: a deadline costs a runtime timer update, which
	// would show at small sizes.
	ioIdle       = 60 * time.Second
	refreshBytes = 1 << 20
	// acceptWithin bounds the server's wait for all its connections, and
	// dialWithin the client's wait for each one.
	acceptWithin = 60 * time.Second
	dialWithin   = 30 * time.Second
)

// refreshEvery is the number of messages between deadline updates: about
// refreshBytes of frames, at least every message.
func refreshEvery(size int64) int64 { return max(1, refreshBytes/(size+headerBytes)) }

// readBufferBytes is the bufio.Reader on each end's connection: a read takes
// what the kernel has, up to this much, in one read(2), and frames are cut
// out of it (as Erlang's inet driver does with {packet, 4}); frames this large
// or larger are read straight into their destination.
const readBufferBytes = 64 << 10

// discardChunk bounds the flow server's scratch buffer: it reads a large
// payload in pieces of at most this much and drops them.
const discardChunk = 1 << 20

// Frames are the prepared frames the clients send: header and payload, built
// before the timed section and only read afterwards, so every client shares
// them. Message i is frame i mod len(bufs), whose payload bytes are all
// byte(i mod len(bufs)); consecutive messages differ whenever there are two
// or more, so an echo that returns a stale message is caught.
type Frames struct {
	bufs [][]byte
}

// The fill value cycles through at most maxValues values (the brief's
// index mod 251), and the prepared frames take at most framesBudget bytes
// unless two frames alone need more.
const (
	maxValues    = 251
	framesBudget = 64 << 20
)

// frameCount is how many distinct frames NewFrames prepares.
func frameCount(size, messages int64) int64 {
	return min(messages, maxValues, max(2, framesBudget/(size+headerBytes)))
}

// NewFrames prepares the frames of size-byte messages.
func NewFrames(size, messages int64) *Frames {
	n := frameCount(size, messages)
	f := &Frames{bufs: make([][]byte, n)}
	for v := range f.bufs {
		buf := make([]byte, headerBytes+size)
		binary.BigEndian.PutUint32(buf, uint32(size))
		fill := byte(v)
		for j := headerBytes; j < len(buf); j++ {
			buf[j] = fill
		}
		f.bufs[v] = buf
	}
	return f
}

// Frame is message i's frame, header included.
func (f *Frames) Frame(i int64) []byte { return f.bufs[i%int64(len(f.bufs))] }

// checkMemory refuses a run whose buffers cannot fit in the memory available
// now: fixed bytes, plus perSocket for each socket. who names the process.
func checkMemory(p Params, fixed, perSocket int64, who string) error {
	available, err := measure.AvailableBytes()
	if err != nil {
		return nil // no /proc/meminfo: let the harness's estimate decide
	}
	need := fixed + int64(p.Sockets)*perSocket
	if need > available {
		const mib = 1 << 20
		return protocol.Errorf(protocol.Resource,
			"the %s needs about %d MiB of buffers for sockets = %d of size = %d (%s), more than the %d MiB available",
			who, need/mib, p.Sockets, p.Size, p.Mode(), available/mib)
	}
	return nil
}

// clientMemory is what the client allocates: the shared frames, and per
// socket a read buffer and (echo) a buffer for the echoed payload.
func clientMemory(p Params, opt Options) (fixed, perSocket int64) {
	fixed = frameCount(p.Size, p.Messages()) * (headerBytes + p.Size)
	perSocket = readBufferBytes
	if !p.Flow {
		perSocket += p.Size
	}
	if opt.BufferedFlow && p.Flow {
		perSocket += writeBufferBytes
	}
	return fixed, perSocket
}

// serverMemory is what the server allocates per socket: a read buffer and
// the frame (echo) or a scratch buffer (flow).
func serverMemory(p Params) (perSocket int64) {
	if p.Flow {
		return readBufferBytes + min(p.Size, discardChunk)
	}
	return readBufferBytes + headerBytes + p.Size
}

// isTimeout tells a deadline that passed from other failures.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
