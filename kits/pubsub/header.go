package pubsub

import "encoding/binary"

// HeaderBytes is the size of the header every message starts with
// (spec/workloads/pubsub.json): u32 source index, u32 sequence number from 1,
// u64 intended send time in CLOCK_MONOTONIC ns, all little-endian.
const HeaderBytes = 16

// Header is a message's header.
type Header struct {
	Source     uint32
	Seq        uint32
	IntendedNs int64
}

// encodeMessage writes the header into msg and fills the rest with the low
// byte of seq. The fill doubles a copy, so a large payload costs a memmove
// rather than a byte loop.
func encodeMessage(msg []byte, h Header) {
	binary.LittleEndian.PutUint32(msg[0:4], h.Source)
	binary.LittleEndian.PutUint32(msg[4:8], h.Seq)
	binary.LittleEndian.PutUint64(msg[8:16], uint64(h.IntendedNs))
	filler := msg[HeaderBytes:]
	if len(filler) == 0 {
		return
	}
	filler[0] = byte(h.Seq)
	for n := 1; n < len(filler); n *= 2 {
		copy(filler[n:], filler[:n])
	}
}

// decodeHeader reads msg's header; ok is false when msg is too short.
func decodeHeader(msg []byte) (h Header, ok bool) {
	if len(msg) < HeaderBytes {
		return h, false
	}
	h.Source = binary.LittleEndian.Uint32(msg[0:4])
	h.Seq = binary.LittleEndian.Uint32(msg[4:8])
	h.IntendedNs = int64(binary.LittleEndian.Uint64(msg[8:16]))
	return h, true
}

// EncodeMessage is encodeMessage for tests of the systems: a payloadBytes
// message of source, seq, stamped at intendedNs.
func EncodeMessage(payloadBytes int, source, seq uint32, intendedNs int64) []byte {
	msg := make([]byte, payloadBytes)
	encodeMessage(msg, Header{Source: source, Seq: seq, IntendedNs: intendedNs})
	return msg
}

// DecodeHeader is decodeHeader for tests of the systems: msg's header, ok
// false when msg is shorter than one.
func DecodeHeader(msg []byte) (h Header, ok bool) { return decodeHeader(msg) }
