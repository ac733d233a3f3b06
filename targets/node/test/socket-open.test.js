'use strict';
// The open loop's pacer and latency against an echo server in this process that can
// delay each echo.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { once } = require('node:events');
const { nowNs } = require('msgbench-kit');
const { makeFrames, FrameReader } = require('../src/frames');
const { openEcho, intended, waitUntil } = require('../src/socket-open');

// delayedEchoServer echoes every frame of one connection delayMs after it arrived, in
// order; resolves with its port and a close function.
async function delayedEchoServer(delayMs) {
  const server = net.createServer({ noDelay: true }, async (socket) => {
    const reader = new FrameReader(socket);
    for (let payload = await reader.next(); payload !== null; payload = await reader.next()) {
      const header = Buffer.alloc(4);
      header.writeUInt32BE(payload.length, 0);
      if (delayMs > 0) await new Promise((resolve) => { setTimeout(resolve, delayMs); });
      socket.write(Buffer.concat([header, payload]));
    }
    socket.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

// openRun: messages of 100 bytes on one socket at rate/s against a server delaying each echo.
async function openRun(messages, rate, delayMs) {
  const server = await delayedEchoServer(delayMs);
  const socket = net.connect({ host: '127.0.0.1', port: server.address().port, noDelay: true });
  await once(socket, 'connect');
  try {
    return await openEcho(socket, makeFrames(100, messages), messages, true, 1e9 / rate);
  } finally {
    socket.destroy();
    server.close();
  }
}

test('the open loop times every echo once and checks it', async () => {
  const out = await openRun(40, 2000, 0);
  assert.deepEqual([out.sent, out.received, out.sentBytes, out.receivedBytes, out.mismatches], [40, 40, 4000, 4000, 0]);
  assert.equal(out.latency.count, 40);
  const sparse = out.latency.sparse();
  assert.ok(out.latency.max > 0);
  assert.equal(sparse.reduce((n, [, count]) => n + count, 0), 40);
});

test("the open loop's writer keeps to the rate: 20 messages at 200/s take at least 95 ms", async () => {
  assert.ok((await openRun(20, 200, 0)).elapsedNs >= 95e6);
});

test('the open loop counts latency from the intended time: a slow server makes it grow', async () => {
  // 20 ms per echo, one message offered per ms: echo i returns about 19 * i ms after its
  // intended time, so the last about 380 ms; without the delay it stays far below. A
  // machine that stops the process for half a second makes a prompt server look slow, never
  // a slow one prompt: the prompt case has three tries.
  const slow = await openRun(20, 1000, 20);
  let fast = await openRun(20, 1000, 0);
  for (let tries = 1; tries < 3 && fast.latency.max >= 200e6; tries++) fast = await openRun(20, 1000, 0);
  assert.ok(slow.latency.max >= 380e6, `slow: ${slow.latency.max} ns`);
  assert.ok(fast.latency.max < 200e6, `fast: ${fast.latency.max} ns`);
});

test("the pacer's intended times and wait", async () => {
  assert.equal(intended(1000, 50, 7), 1350);
  assert.equal(intended(0, 333.3333333, 1000), 333333);
  for (const ahead of [-1000, 0, 50e3, 1.5e6, 5e6]) {
    const due = nowNs() + ahead;
    await waitUntil(due);
    assert.ok(nowNs() >= due);
  }
});
