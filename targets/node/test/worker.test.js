'use strict';
// The worker end to end through the protocol (the conformance suite drives every
// variant from the harness; these pin what the Node code itself promises).
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

function run(request) {
  const out = spawnSync(process.execPath, [path.join(__dirname, '../src/worker.js')],
    { input: `${JSON.stringify({ variant: 'default', options: {}, repetition: 1, ...request })}\n`, encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  const lines = out.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines[0].type, 'hello');
  return lines[lines.length - 1];
}

test('an event_loop ring counts every hop, lap and link', () => {
  const result = run({ workload: 'ring', params: { n: 50, m: 3, payload: 'BOO!' } });
  assert.deepEqual(result.verify, { hops: 150, laps: 3, links: 50 });
});

test('a worker_threads ring counts every hop, lap and link', () => {
  const result = run({ workload: 'ring', options: { links: 'worker_threads' }, params: { n: 4, m: 2, payload: '' } });
  assert.deepEqual(result.verify, { hops: 8, laps: 2, links: 4 });
});

test('fanin with exit signals is unsupported, naming them', () => {
  const mix = [{ percent: 50, kind: 'exit_signal', size: 1 }, { percent: 50, kind: 'message', size: 1 }];
  const result = run({ workload: 'fanin', params: { senders: 1, duration_ms: 10, mix, memory_limit_mb: 64 } });
  assert.equal(result.kind, 'unsupported');
  assert.match(result.message, /exit signals.*mix\[0\]/);
});

test('a mix of message sizes is received whole', () => {
  const mix = [{ percent: 50, kind: 'message', size: 1 }, { percent: 50, kind: 'message', size: 100 }];
  const result = run({ workload: 'fanin', params: { senders: 2, duration_ms: 50, mix, memory_limit_mb: 8192 } });
  assert.equal(result.verify.received_message, result.verify.sent_message);
  assert.ok(result.verify.sent_message > 0);
});

test('an option the worker does not know is refused by name', () => {
  const result = run({ workload: 'chat', options: { links: 'event_loop' }, params: {} });
  assert.equal(result.kind, 'internal');
  assert.match(result.message, /unknown option links/);
});

test('chat in process delivers every message within its group, never to the sender', () => {
  const result = run({
    workload: 'chat',
    params: { groups: 3, clients_per_group: 2, duration_s: 0.2, think_ms: 0, listener_delay_ms: 0, message: 'binary',
      history: 2, drain_timeout_s: 5 },
  });
  const v = result.verify;
  assert.ok(v.sent > 0 && v.received === v.sent);
  assert.equal(v.cross_group + v.self_deliveries, 0);
  assert.equal(v.users, 6);
});
