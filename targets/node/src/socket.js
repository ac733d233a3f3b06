'use strict';
// socket (spec/workloads/socket.json), the client half: starts the server half (the
// peer), opens `sockets` connections with net, and runs echo (one frame at a time, the
// next when its echo is back whole) or flow (write as fast as the socket takes frames,
// awaiting 'drain' when write() says the buffer is full, then shut down and wait for
// the server's ACK) on every connection at once, on the one event loop. Echo at rate > 0
// is the open loop (socket-open.js): a paced writer and a timed reader per connection.

const net = require('node:net');
const path = require('node:path');
const { once } = require('node:events');
const {
  nowNs, peakRssBytes, Histogram, Options, Peer, peerArgv, peerHost, unsupported, internal,
} = require('msgbench-kit');
const { makeFrames, FrameReader, sameEcho, ACK } = require('./frames');
const { openEcho } = require('./socket-open');

const LISTENING_WITHIN_MS = 30000;
const SERVED_WITHIN_MS = 30000;
const OWN_SERVER = [process.execPath, path.join(__dirname, 'socket-server.js')];

async function connect(host, port) {
  const socket = net.connect({ host, port, noDelay: true });
  await once(socket, 'connect');
  return socket;
}

async function echo(socket, frames, messages, checkContent) {
  const reader = new FrameReader(socket);
  const failed = new Promise((_, reject) => socket.once('error', reject));
  const out = { sent: 0, sentBytes: 0, received: 0, receivedBytes: 0, mismatches: 0 };
  const start = nowNs();
  for (let i = 0; i < messages; i += 1) {
    const frame = frames[i % frames.length];
    socket.write(frame);
    out.sent += 1;
    out.sentBytes += frame.length - 4;
    const payload = await Promise.race([reader.next(), failed]);
    if (payload === null) throw internal(`the server closed the connection after ${out.received} echoes`);
    out.received += 1;
    out.receivedBytes += payload.length;
    if (!sameEcho(payload, frame, checkContent)) out.mismatches += 1;
  }
  out.elapsedNs = nowNs() - start;
  socket.end();
  return out;
}

async function flow(socket, frames, messages) {
  const out = { sent: 0, sentBytes: 0, received: 0, receivedBytes: 0, mismatches: 0 };
  const failed = new Promise((_, reject) => socket.once('error', reject));
  const acked = new Promise((resolve) => socket.once('data', resolve));
  const start = nowNs();
  for (let i = 0; i < messages; i += 1) {
    const frame = frames[i % frames.length];
    out.sent += 1;
    out.sentBytes += frame.length - 4;
    if (!socket.write(frame)) await Promise.race([once(socket, 'drain'), failed]);
  }
  socket.end();
  const ack = await Promise.race([acked, failed]);
  out.elapsedNs = nowNs() - start;
  if (ack[0] !== ACK) throw internal(`the server acked with byte ${ack[0]}, not ${ACK}`);
  return out;
}

// withLatency adds the open loop's round trips from their intended times, all sockets together.
function withLatency(result, outs) {
  const latency = new Histogram();
  for (const o of outs) latency.merge(o.latency);
  result.measured.latency_max_ns = latency.max;
  result.histograms = { latency_ns: latency.sparse() };
  return result;
}

async function measure(request) {
  new Options(request.options).unknown();
  const p = request.params;
  if (p.data !== 'binary') throw unsupported(`data = ${p.data}: node sends Buffers only (binary)`);
  const flowMode = p.mode === 'flow';
  const messages = Math.max(1, Math.floor(p.total_bytes / p.size));
  const frames = makeFrames(p.size, messages);
  const peer = new Peer('the socket server', peerArgv(OWN_SERVER), request);
  try {
    const { port } = await peer.next('listening', LISTENING_WITHIN_MS);
    const host = peerHost();
    const sockets = [];
    for (let k = 0; k < p.sockets; k += 1) sockets.push(await connect(host, port));
    const t0 = nowNs();
    // rate is in the request only when > 0 (the spec's omit_at_default).
    const rate = p.rate || 0;
    const run = (s) => {
      if (flowMode) return flow(s, frames, messages);
      if (rate > 0) return openEcho(s, frames, messages, p.check_content === 1, (p.sockets * 1e9) / rate);
      return echo(s, frames, messages, p.check_content === 1);
    };
    const outs = await Promise.all(sockets.map(run));
    const wallNs = nowNs() - t0;
    const served = await peer.next('served', SERVED_WITHIN_MS);
    const sum = (key) => outs.reduce((total, o) => total + o[key], 0);
    const result = {
      measured: { elapsed_ns: outs.map((o) => o.elapsedNs), wall_ns: wallNs, peak_rss_bytes: peakRssBytes() },
      verify: {
        messages_sent: sum('sent'), bytes_sent: sum('sentBytes'),
        messages_received: flowMode ? served.messages : sum('received'),
        bytes_received: flowMode ? served.bytes : sum('receivedBytes'),
        content_mismatches: sum('mismatches'),
      },
    };
    return rate > 0 ? withLatency(result, outs) : result;
  } finally {
    await peer.stop();
  }
}

module.exports = { measure };
