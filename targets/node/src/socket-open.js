'use strict';
// socket's open loop (echo at rate > 0), one connection: a writer sends message i at its
// intended time, start + i * interval (interval = sockets / rate), never waiting for
// echoes, while a reader takes the echoes in order, checks each as the closed loop does
// and records its latency from that intended time. A writer or server that falls behind
// is charged for the wait it caused (coordinated omission corrected); the reader knows
// message i's intended time from its index, so the framing is the closed loop's. Both
// are async loops on the one event loop.

const { once } = require('node:events');
const timers = require('node:timers/promises');
const { nowNs, Histogram, internal } = require('msgbench-kit');
const { FrameReader, HEADER_BYTES, sameEcho } = require('./frames');

// Timers count whole ms and fire a ms or so late, so the writer sleeps until SPIN_NS before
// the intended time and spins the rest, one setImmediate per turn so that I/O (the echoes)
// is handled between turns. Below 2 ms between messages (above 500 round trips/s per
// socket) it spins all the time and keeps the event loop, and so a core, busy.
const SPIN_NS = 2e6;

// intended is message i's intended send time (ns) when the first is due at start.
const intended = (start, intervalNs, i) => start + Math.round(i * intervalNs);

// waitUntil resolves once nowNs() >= due.
async function waitUntil(due) {
  for (let rest = due - nowNs(); rest > 0; rest = due - nowNs()) {
    if (rest >= SPIN_NS + 1e6) await timers.setTimeout(Math.floor((rest - SPIN_NS) / 1e6));
    else await timers.setImmediate();
  }
}

// write sends every message at its intended time, or at once when late (none is skipped);
// a full socket buffer is waited out, as a blocking write would be, and makes it late.
async function write(socket, frames, messages, start, intervalNs, failed) {
  const out = { sent: 0, sentBytes: 0 };
  for (let i = 0; i < messages; i += 1) {
    await waitUntil(intended(start, intervalNs, i));
    const frame = frames[i % frames.length];
    out.sent += 1;
    out.sentBytes += frame.length - HEADER_BYTES;
    if (!socket.write(frame)) await Promise.race([once(socket, 'drain'), failed]);
  }
  return out;
}

// read takes echo i, in order, and times it from message i's intended time.
async function read(socket, frames, messages, checkContent, start, intervalNs, failed) {
  const reader = new FrameReader(socket);
  const out = { received: 0, receivedBytes: 0, mismatches: 0, latency: new Histogram() };
  for (let i = 0; i < messages; i += 1) {
    const payload = await Promise.race([reader.next(), failed]);
    if (payload === null) throw internal(`the server closed the connection after ${out.received} echoes`);
    out.latency.record(nowNs() - intended(start, intervalNs, i));
    out.received += 1;
    out.receivedBytes += payload.length;
    if (!sameEcho(payload, frames[i % frames.length], checkContent)) out.mismatches += 1;
  }
  return out;
}

// openEcho runs one socket's open-loop sequence at intervalNs between messages: the
// closed loop's counts, with latency (a Histogram).
async function openEcho(socket, frames, messages, checkContent, intervalNs) {
  const failed = new Promise((_, reject) => socket.once('error', reject));
  failed.catch(() => {}); // raced by both loops; a failure reaches the caller through them
  const start = nowNs();
  const [written, echoed] = await Promise.all([
    write(socket, frames, messages, start, intervalNs, failed),
    read(socket, frames, messages, checkContent, start, intervalNs, failed).then((out) => {
      out.elapsedNs = nowNs() - start;
      return out;
    }),
  ]);
  socket.end();
  return { ...written, ...echoed };
}

module.exports = { openEcho, intended, waitUntil };
