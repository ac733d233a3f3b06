'use strict';
// ring (spec/workloads/ring.json): the root builds the ring (phase 1), then passes the
// token m laps (phase 2), each phase timed in wall and whole-process CPU time.

const { MessageChannel } = require('node:worker_threads');
const { nowNs, cpuNs, peakRssBytes, Options } = require('msgbench-kit');
const { startNext, HOPS, LINKS } = require('./ring-link');
const { LoopChannel } = require('./loop-channel');

async function measure(request) {
  const options = new Options(request.options);
  const threads = options.oneOf('links', ['worker_threads', 'event_loop'], 'event_loop') === 'worker_threads';
  options.unknown('links');
  const { n, m, payload } = request.params;

  const counts = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT);
  const shared = new Int32Array(counts);
  Atomics.add(shared, LINKS, 1); // the root is a link too
  const Channel = threads ? MessageChannel : LoopChannel;
  const first = new Channel(); // root -> link 1 (connect comes back on it)
  const last = new Channel(); // the last link -> root
  const t0 = nowNs();
  const c0 = cpuNs();
  const connected = new Promise((resolve) => first.port1.once('message', resolve));
  startNext({ index: 1, n, fromPred: first.port2, toRoot: last.port2, counts, threads });
  await connected;
  const t1 = nowNs();
  const c1 = cpuNs();

  let hops = 0;
  let laps = 0;
  const toSucc = first.port1;
  const done = new Promise((resolve) => {
    last.port1.on('message', (token) => {
      hops += 1;
      laps += 1;
      if (token[0] === 1) {
        resolve();
        return;
      }
      toSucc.postMessage([token[0] - 1, token[1]]);
    });
  });
  toSucc.postMessage([m, payload]);
  await done;
  const t2 = nowNs();
  const c2 = cpuNs();
  first.port1.close();
  last.port1.close();
  return {
    measured: {
      create_wall_ns: t1 - t0, create_cpu_ns: c1 - c0, pass_wall_ns: t2 - t1, pass_cpu_ns: c2 - c1,
      peak_rss_bytes: peakRssBytes(),
    },
    verify: { hops: hops + Atomics.load(shared, HOPS), laps, links: Atomics.load(shared, LINKS) },
  };
}

module.exports = { measure };
