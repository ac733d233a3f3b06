'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { Peer, peerArgv } = require('../peer');

test('the peer command comes from MSGBENCH_PEER_COMMAND, else the worker\'s own', () => {
  const saved = process.env.MSGBENCH_PEER_COMMAND;
  try {
    delete process.env.MSGBENCH_PEER_COMMAND;
    assert.deepEqual(peerArgv(['own']), ['own']);
    process.env.MSGBENCH_PEER_COMMAND = '["ip", "netns", "exec", "x", "node"]';
    assert.deepEqual(peerArgv(['own']), ['ip', 'netns', 'exec', 'x', 'node']);
    for (const bad of ['node', '[]', '[""]', '[1]']) {
      process.env.MSGBENCH_PEER_COMMAND = bad;
      assert.throws(() => peerArgv(['own']), { kind: 'internal', message: /MSGBENCH_PEER_COMMAND/ });
    }
  } finally {
    if (saved === undefined) delete process.env.MSGBENCH_PEER_COMMAND;
    else process.env.MSGBENCH_PEER_COMMAND = saved;
  }
});

const script = (body) => [process.execPath, '-e', body];

test('a peer\'s lines arrive in order; its error line is relayed with its kind', async () => {
  const peer = new Peer('the test peer', script(`
    process.stdin.once('data', (d) => {
      const req = JSON.parse(d);
      console.log(JSON.stringify({ type: 'listening', port: req.port }));
      console.log(JSON.stringify({ type: 'error', kind: 'resource', message: 'port in use' }));
    });`), { port: 7 });
  assert.deepEqual(await peer.next('listening', 5000), { type: 'listening', port: 7 });
  await assert.rejects(peer.next('served', 5000), { kind: 'resource', message: /port in use/ });
  await peer.stop();
});

test('a peer that exits early, or stays silent, is an internal error saying which', async () => {
  const quitter = new Peer('the quitter', script('process.exit(3)'), {});
  await assert.rejects(quitter.next('listening', 5000), { kind: 'internal', message: /exited.*exit status 3/ });
  await quitter.stop();
  const silent = new Peer('the silent one', script('setInterval(() => {}, 1000)'), {});
  await assert.rejects(silent.next('listening', 100), { kind: 'internal', message: /did not say listening/ });
  await silent.stop(); // its stdin closed does not stop it: the group is killed after 5 s
});
