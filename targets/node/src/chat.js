'use strict';
// chat, the in-process kinds (spec/workloads/chat.json): groups, users and clients are
// actors on the one event loop (src/actor.js), as a Node chat server holds them: no
// thread per user. A message goes client -> its user -> the group (which picks a peer
// among the other members) -> the peer user (history) -> the peer's client.

const { nowNs, peakRssBytes, rssBytes, Histogram, Options, startSampling } = require('msgbench-kit');
const { Actor } = require('./actor');

const SENTENCE = "I've been mad for fucking years\u2014absolutely years";

class Group extends Actor {
  constructor(index) {
    super();
    this.index = index;
    this.members = [];
  }

  receive(message) {
    const others = this.members.length - 1;
    let pick = Math.floor(Math.random() * others);
    if (pick >= message.from) pick += 1; // skip the sender: uniform among the others
    this.members[pick].post(message);
  }
}

class User extends Actor {
  constructor(group, position, history) {
    super();
    this.group = group;
    this.position = position;
    this.historyLimit = history;
    this.history = [];
    this.client = null;
  }

  receive(message) {
    if (message.outgoing) {
      this.group.post(message.outgoing);
      return;
    }
    if (this.historyLimit > 0) {
      this.history.push(message.body);
      if (this.history.length > this.historyLimit) this.history.shift();
    }
    this.client.post(message);
  }
}

class Client extends Actor {
  constructor(user, run) {
    super();
    this.user = user;
    this.run = run;
    this.latency = run.latency;
  }

  send() {
    const run = this.run;
    const sentAt = nowNs();
    const body = run.binary ? encode(sentAt) : SENTENCE;
    run.sent += 1;
    this.user.post({ outgoing: { from: this.user.position, group: this.user.group.index, sentAt, body } });
  }

  receive(message) {
    const run = this.run;
    const now = nowNs();
    if (message.group !== this.user.group.index) run.crossGroup += 1;
    if (message.from === this.user.position) run.selfDeliveries += 1;
    this.latency.record(now - message.sentAt);
    run.received += 1;
    if (run.sending) run.receivedInWindow += 1;
    else if (run.received === run.sent && run.drained) run.drained();
  }

  // stress: send, listen listenerDelayMs (0: a turn of the loop, taking what is
  // there), send again, until T.
  async stress(listenerDelayMs) {
    while (this.run.sending) {
      this.send();
      await new Promise((resolve) => {
        if (listenerDelayMs > 0) setTimeout(resolve, listenerDelayMs);
        else setImmediate(resolve);
      });
    }
  }

  // realistic: one send every thinkMs from a uniformly random phase in the first.
  realistic(thinkMs) {
    const tick = () => {
      if (!this.run.sending) return;
      this.send();
      this.timer = setTimeout(tick, thinkMs);
    };
    this.timer = setTimeout(tick, Math.random() * thinkMs);
  }
}

// encode is the seed's term_to_binary({Text, os:timestamp()}): the sentence and the
// send time, a buffer of its own per message.
function encode(sentAt) {
  const buffer = Buffer.allocUnsafe(Buffer.byteLength(SENTENCE) + 8);
  const end = buffer.write(SENTENCE);
  buffer.writeBigInt64BE(BigInt(sentAt), end);
  return buffer;
}

// The runtime's own view once a second, for the measurement's time series.
function runtimeView() {
  const memory = process.memoryUsage();
  return { rss_bytes: rssBytes(), heap_used_bytes: memory.heapUsed, heap_total_bytes: memory.heapTotal,
    external_bytes: memory.external };
}

async function measure(request, context) {
  new Options(request.options).unknown();
  const p = request.params;
  const run = {
    sent: 0, received: 0, receivedInWindow: 0, crossGroup: 0, selfDeliveries: 0, sending: true,
    binary: p.message === 'binary', latency: new Histogram(), drained: null,
  };
  const t0 = nowNs();
  const clients = [];
  for (let g = 0; g < p.groups; g += 1) {
    const group = new Group(g);
    for (let u = 0; u < p.clients_per_group; u += 1) {
      const user = new User(group, u, p.history);
      user.client = new Client(user, run);
      group.members.push(user);
      clients.push(user.client);
    }
  }
  const setupNs = nowNs() - t0;
  const stopSampling = startSampling(runtimeView, context.sample);
  const windowStart = nowNs();
  const windowOver = new Promise((resolve) => setTimeout(resolve, p.duration_s * 1000));
  const senders = clients.map((c) => (p.think_ms === 0 ? c.stress(p.listener_delay_ms) : c.realistic(p.think_ms)));
  await windowOver;
  run.sending = false;
  const windowNs = nowNs() - windowStart;
  const memory = process.memoryUsage();
  clients.forEach((c) => clearTimeout(c.timer));
  await Promise.all(senders);
  if (run.received < run.sent) {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, p.drain_timeout_s * 1000);
      run.drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
  const drainNs = nowNs() - windowStart - windowNs;
  stopSampling();
  return {
    measured: {
      setup_ns: setupNs, send_window_ns: windowNs, drain_ns: drainNs, received_in_window: run.receivedInWindow,
      processes_count: p.groups * (2 * p.clients_per_group + 1), peak_rss_bytes: peakRssBytes(),
      runtime_memory_bytes: memory.heapTotal + memory.external, latency_max_ns: run.latency.max,
    },
    histograms: { latency_ns: run.latency.sparse() },
    verify: {
      sent: run.sent, received: run.received, cross_group: run.crossGroup, self_deliveries: run.selfDeliveries,
      users: clients.length,
    },
  };
}

module.exports = { measure, SENTENCE, encode };
