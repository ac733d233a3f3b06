'use strict';
// One fanin sender, in a worker thread: waits for the release, then sends signals to
// the receiver's port as fast as it can, checking the deadline (release + T) after every send, and
// ends with a summary on the same port (so it arrives after its last signal).

const { workerData } = require('node:worker_threads');
const { nowNs } = require('msgbench-kit');

const { port, release, deadline, shares } = workerData;
// One payload per share, prepared before the release: postMessage copies it on every
// send (structured clone), as a BEAM send copies its term.
const payloads = shares.map(({ size }) => Array.from({ length: size }, (_, i) => i));
const cumulative = [];
shares.reduce((sum, { percent }) => {
  cumulative.push(sum + percent);
  return sum + percent;
}, 0);
const sent = shares.map(() => 0);

Atomics.wait(new Int32Array(release), 0, 0);
const deadlineNs = Number(Atomics.load(new BigInt64Array(deadline), 0));
const firstNs = nowNs();
let stopNs;
for (;;) {
  const roll = Math.random() * cumulative[cumulative.length - 1];
  let share = 0;
  while (share < cumulative.length - 1 && roll >= cumulative[share]) share += 1;
  port.postMessage(payloads[share]);
  sent[share] += 1;
  stopNs = nowNs();
  if (stopNs >= deadlineNs) break;
}
port.postMessage({ done: true, sent, firstNs, stopNs });
port.close();
