'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { errorLine, parseRequest, resource, WorkerError } = require('../protocol');
const { nowNs, cpuNs, peakRssBytes, rssBytes } = require('../measure');

const kit = path.join(__dirname, '..');

function runWorker(source, input) {
  const out = spawnSync(process.execPath, ['-e', source], { input, cwd: kit, encoding: 'utf8' });
  return { status: out.status, lines: out.stdout.trim().split('\n').map((l) => JSON.parse(l)) };
}

const worker = `require('./protocol').serve({target: 't', runtimeVersion: 'v1', workloads: {
  ok: async (req) => ({measured: {x: req.params.x}, verify: {n: 1}}),
  full: async () => { throw require('./protocol').resource('out of ports'); },
}})`;

test('serve says hello, then the result', () => {
  const { status, lines } = runWorker(worker, '{"workload":"ok","variant":"v","params":{"x":5},"repetition":1}\n');
  assert.equal(status, 0);
  assert.deepEqual(lines, [
    { type: 'hello', target: 't', runtime_version: 'v1', variant: 'v' },
    { type: 'result', measured: { x: 5 }, verify: { n: 1 } },
  ]);
});

test('a thrown WorkerError is its error line; an unknown workload is unsupported', () => {
  const full = runWorker(worker, '{"workload":"full","variant":"v","params":{},"repetition":1}\n');
  assert.deepEqual(full.lines[1], { type: 'error', kind: 'resource', message: 'out of ports' });
  const none = runWorker(worker, '{"workload":"nope","variant":"v","params":{},"repetition":1}\n');
  assert.equal(none.lines[1].kind, 'unsupported');
  assert.match(none.lines[1].message, /nope/);
});

test('a request that is not JSON is internal', () => {
  assert.throws(() => parseRequest('{oops'), { kind: 'internal' });
  assert.equal(errorLine(new Error('x')).kind, 'internal');
  assert.equal(errorLine(resource('y')).kind, 'resource');
  assert.throws(() => new WorkerError('bad_params', 'z'));
});

test('clocks move forward and memory is read', () => {
  const t0 = nowNs();
  const c0 = cpuNs();
  let s = 0;
  for (let i = 0; i < 1e6; i += 1) s += i;
  assert.ok(s > 0 && nowNs() > t0 && cpuNs() >= c0);
  const rss = rssBytes(); // read before the peak: the peak read after it is never smaller
  assert.ok(peakRssBytes() >= rss && rss > 1e6);
});

test('sampling emits now, on its interval, and once more when stopped', async () => {
  const { startSampling } = require('../sample');
  const seen = [];
  const stop = startSampling(() => ({ x_count: seen.length }), (t, values) => seen.push([t, values]), 20);
  await new Promise((resolve) => setTimeout(resolve, 70));
  stop();
  assert.ok(seen.length >= 3, `${seen.length} samples`);
  assert.ok(seen[0][0] >= 0 && seen.every(([t], i) => i === 0 || t >= seen[i - 1][0]));
});
