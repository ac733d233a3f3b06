'use strict';
// One link of the ring (spec/workloads/ring.json), built as the seed builds it: each
// link starts the next, the last link's connect travels back to the root. A link is
// the same function whether it runs in a worker thread (threads: startNext spawns a
// Worker) or on the one event loop (event_loop: startNext calls link directly); the
// token moves over MessagePorts either way.

const { isMainThread, workerData, Worker, MessageChannel } = require('node:worker_threads');
const { LoopChannel } = require('./loop-channel');

// Counters the links add to themselves: [hops, links] in a SharedArrayBuffer.
const HOPS = 0;
const LINKS = 1;

// link is link number index of n (the root is 0). fromPred: the port to its
// predecessor (the token arrives on it, connect leaves on it); toRoot: the last link's
// port to the root, handed down the chain; counts: the shared counters.
function link({ index, n, fromPred, toRoot, counts, threads }) {
  const shared = new Int32Array(counts);
  Atomics.add(shared, LINKS, 1);
  let toSucc;
  if (index === n - 1) {
    toSucc = toRoot;
    fromPred.postMessage('connect');
  } else {
    const channel = threads ? new MessageChannel() : new LoopChannel();
    toSucc = channel.port1;
    toSucc.once('message', () => fromPred.postMessage('connect')); // the successor's connect
    startNext({ index: index + 1, n, fromPred: channel.port2, toRoot, counts, threads });
  }
  let hops = 0;
  fromPred.on('message', (token) => {
    hops += 1;
    if (token[0] === 1) {
      // The last lap: count before forwarding, so the root sees every hop once it
      // has the token back.
      Atomics.add(shared, HOPS, hops);
      toSucc.postMessage(token);
      fromPred.close();
      toSucc.close();
      return;
    }
    toSucc.postMessage(token);
  });
}

function startNext(data) {
  if (!data.threads) {
    setImmediate(link, data); // a spawn on the one loop: the next link starts on a later turn
    return;
  }
  new Worker(__filename, { workerData: data, transferList: [data.fromPred, data.toRoot] });
}

if (!isMainThread && workerData && workerData.index !== undefined) link(workerData);

module.exports = { link, startNext, HOPS, LINKS };
