'use strict';
// The socket workload's frames (spec/workloads/socket.json): a 4-byte big-endian length,
// then size bytes all of one value; the value changes from message to message (0..250,
// prepared once, as many as fit in 64 MiB) so a stale echo is caught.

const HEADER_BYTES = 4;
const MAX_VALUES = 251;
const FRAMES_BUDGET = 64 * 1024 * 1024;
const ACK = 0x06; // the flow server's one byte once it has read everything

function makeFrames(size, messages) {
  const count = Math.min(messages, MAX_VALUES, Math.max(2, Math.floor(FRAMES_BUDGET / (size + HEADER_BYTES))));
  return Array.from({ length: count }, (_, value) => {
    const frame = Buffer.alloc(HEADER_BYTES + size, value);
    frame.writeUInt32BE(size, 0);
    return frame;
  });
}

// FrameReader turns a socket's chunks into whole frames: next() resolves with the next
// frame's payload. Chunks are kept as they came and copied once per frame.
class FrameReader {
  constructor(socket) {
    this.chunks = [];
    this.buffered = 0;
    this.waiter = null;
    this.ended = false;
    socket.on('data', (chunk) => {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      this.wake();
    });
    socket.on('end', () => {
      this.ended = true;
      this.wake();
    });
  }

  wake() {
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = null;
      waiter();
    }
  }

  take(n) {
    const out = this.chunks.length === 1 && this.chunks[0].length === n ? this.chunks[0] : Buffer.concat(this.chunks);
    this.chunks = out.length > n ? [out.subarray(n)] : [];
    this.buffered -= n;
    return out.subarray(0, n);
  }

  async bytes(n) {
    while (this.buffered < n) {
      if (this.ended) return null;
      await new Promise((resolve) => { this.waiter = resolve; });
    }
    return this.take(n);
  }

  // next resolves with the next frame's payload, or null at the end of the stream.
  async next() {
    const header = await this.bytes(HEADER_BYTES);
    if (header === null) return null;
    return this.bytes(header.readUInt32BE(0));
  }
}

// sameEcho says whether an echoed payload is the frame that was sent: all of it with
// checkContent, else its length, first and last byte. It compares against the frame in
// place (no view of its payload per echo: both loops call it once per message).
function sameEcho(payload, frame, checkContent) {
  if (checkContent) return payload.compare(frame, HEADER_BYTES) === 0;
  const size = frame.length - HEADER_BYTES; // >= 1 (the spec's minimum)
  return payload.length === size && payload[0] === frame[HEADER_BYTES]
    && payload[size - 1] === frame[frame.length - 1];
}

module.exports = { makeFrames, FrameReader, sameEcho, HEADER_BYTES, ACK };
