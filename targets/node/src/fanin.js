'use strict';
// fanin (spec/workloads/fanin.json): N worker threads send to one receiver, the main
// thread, each over its own MessagePort (a port has one owner, so fan-in is one port
// per sender). Exit signals are an Erlang notion: a mix with them is unsupported.

const path = require('node:path');
const { Worker, MessageChannel } = require('node:worker_threads');
const { nowNs, cpuNs, peakRssBytes, rssBytes, Options, unsupported, resource } = require('msgbench-kit');

const SENDER = path.join(__dirname, 'fanin-sender.js');
const WATCH_MS = 50; // how often the receiver looks at its memory

async function measure(request) {
  new Options(request.options).unknown();
  const { senders, duration_ms: durationMs, mix, memory_limit_mb: limitMb } = request.params;
  mix.forEach((share, i) => {
    if (share.kind !== 'message') {
      throw unsupported(`exit signals are an Erlang notion; node has no equivalent (mix[${i}].kind = ${share.kind})`);
    }
  });

  const release = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  const ports = [];
  const workers = [];
  const online = [];
  const deadline = new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT); // set at the release
  for (let i = 0; i < senders; i += 1) {
    const { port1, port2 } = new MessageChannel();
    ports.push(port1);
    const worker = new Worker(SENDER, {
      workerData: { port: port2, release, deadline, shares: mix },
      transferList: [port2],
    });
    online.push(new Promise((resolve) => worker.once('online', resolve)));
    workers.push(worker);
  }
  await Promise.all(online);
  return receive({ ports, workers, release, deadline, durationMs, limitBytes: limitMb * 1024 * 1024, mix });
}

function receive({ ports, workers, release, deadline, durationMs, limitBytes, mix }) {
  return new Promise((resolve, reject) => {
    let received = 0;
    let left = ports.length;
    const sent = mix.map(() => 0);
    let firstNs = Infinity;
    let stopNs = 0;
    const c0 = cpuNs();
    const watch = setInterval(() => {
      if (rssBytes() > limitBytes) {
        clearInterval(watch);
        workers.forEach((w) => w.terminate());
        reject(resource(`the receiver's backlog passed memory_limit_mb = ${limitBytes / 1048576} ` +
          `(${received} signals received so far)`));
      }
    }, WATCH_MS);
    workers.forEach((w) => w.once('error', (err) => {
      clearInterval(watch);
      reject(err);
    }));
    for (const port of ports) {
      port.on('message', (signal) => {
        if (Array.isArray(signal)) {
          received += 1;
          return;
        }
        // A sender's summary: after its last signal on this port.
        signal.sent.forEach((count, i) => { sent[i] += count; });
        firstNs = Math.min(firstNs, signal.firstNs);
        stopNs = Math.max(stopNs, signal.stopNs);
        port.close();
        left -= 1;
        if (left > 0) return;
        const lastNs = nowNs();
        const c1 = cpuNs();
        clearInterval(watch);
        const sentMessages = sent.reduce((a, b) => a + b, 0);
        resolve({
          measured: {
            send_ns: stopNs - firstNs, receive_ns: lastNs - firstNs, drain_ns: Math.max(0, lastNs - stopNs),
            cpu_ns: c1 - c0, peak_rss_bytes: peakRssBytes(),
          },
          verify: {
            sent_message: sentMessages, received_message: received,
            sent_exit_signal: 0, received_exit_signal: 0, receiver_alive: 1,
          },
        });
      });
    }
    Atomics.store(new BigInt64Array(deadline), 0, BigInt(nowNs() + durationMs * 1e6));
    Atomics.store(new Int32Array(release), 0, 1);
    Atomics.notify(new Int32Array(release), 0);
  });
}

module.exports = { measure };
