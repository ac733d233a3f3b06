'use strict';
// The chat server on its own (the conformance suite drives it with the load generator):
// joins, a delivery to the other member with its opcode, stats, a bad first frame refused.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');
const { once } = require('node:events');
const WebSocket = require('ws');

async function startServer() {
  const child = spawn(process.execPath, [path.join(__dirname, '../src/chat-server.js'), '--listen', '127.0.0.1:0'],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = await once(readline.createInterface({ input: child.stdout }), 'line');
  return { child, port: JSON.parse(line).listening };
}

async function open(port) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/any/path`);
  await once(ws, 'open');
  return ws;
}

const next = async (ws) => {
  const [data, isBinary] = await once(ws, 'message');
  return { text: data.toString(), isBinary };
};

test('two users join a group and a binary payload reaches the other, verbatim', async () => {
  const { child, port } = await startServer();
  try {
    const [a, b, stats] = await Promise.all([open(port), open(port), open(port)]);
    a.send(JSON.stringify({ join: { group: 0, user: 1, history: 2 } }));
    assert.deepEqual(JSON.parse((await next(a)).text), { joined: 1 });
    b.send(JSON.stringify({ join: { group: 0, user: 2, history: 2 } }));
    assert.deepEqual(JSON.parse((await next(b)).text), { joined: 2 });
    a.send(Buffer.from('payload'), { binary: true });
    assert.deepEqual(await next(b), { text: 'payload', isBinary: true });
    stats.send('{"stats": true}');
    const view = JSON.parse((await next(stats)).text);
    assert.equal(view.connections, 2);
    assert.ok(view.peak_rss_bytes >= view.rss_bytes && view.runtime.total_bytes > 0);
    [a, b, stats].forEach((ws) => ws.close());
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
});

test('a first frame that is neither join nor stats closes the connection, the server lives on', async () => {
  const { child, port } = await startServer();
  try {
    const ws = await open(port);
    ws.send('not json');
    const [code] = await once(ws, 'close');
    assert.equal(code, 1003);
    const again = await open(port);
    again.send('{"stats": true}');
    assert.equal(JSON.parse((await next(again)).text).connections, 0);
    again.close();
  } finally {
    child.stdin.end(); // its stdin closing stops it too
    await once(child, 'exit');
  }
});
