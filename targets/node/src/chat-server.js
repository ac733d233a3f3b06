'use strict';
// The chat server kind's server (docs/chat-server.md) on ws: a user per connection and
// a group per group, plain objects on the one event loop (what a Node chat server is).
// Usage: node src/chat-server.js --listen HOST:PORT

const fs = require('node:fs');
const { WebSocketServer } = require('ws');
const { cpuNs, peakRssBytes, rssBytes, writeLine } = require('msgbench-kit');

class Group {
  constructor() {
    this.members = [];
  }

  join(user) {
    this.members.push(user);
  }

  leave(user) {
    const at = this.members.indexOf(user);
    if (at >= 0) this.members.splice(at, 1);
  }

  // pass hands a payload to a member other than from, chosen uniformly at random.
  pass(from, payload, isBinary) {
    const others = this.members.length - 1;
    if (others < 1) return; // a group of one drops it (the load generator never makes one)
    let pick = Math.floor(Math.random() * others);
    if (pick >= this.members.indexOf(from)) pick += 1;
    this.members[pick].deliver(payload, isBinary);
  }
}

class User {
  constructor(socket, group, history) {
    this.socket = socket;
    this.group = group;
    this.historyLimit = history;
    this.history = [];
  }

  deliver(payload, isBinary) {
    if (this.historyLimit > 0) {
      this.history.push(payload);
      if (this.history.length > this.historyLimit) this.history.shift();
    }
    this.socket.send(payload, { binary: isBinary });
  }
}

function parseListen(argv) {
  const at = argv.indexOf('--listen');
  const value = at >= 0 ? argv[at + 1] : undefined;
  const match = value && value.match(/^(.*):(\d+)$/);
  if (!match || Number(match[2]) > 65535) {
    console.error(`chat-server: --listen ${value}: expected HOST:PORT (PORT 0..65535; 0 picks a free one)`);
    process.exit(2);
  }
  return { host: match[1], port: Number(match[2]) };
}

function threads() {
  const match = fs.readFileSync('/proc/self/status', 'utf8').match(/^Threads:\s+(\d+)/m);
  return match ? Number(match[1]) : 1;
}

function main() {
  const { host, port } = parseListen(process.argv.slice(2));
  const groups = new Map();
  let connections = 0;
  const stats = () => {
    const memory = process.memoryUsage();
    const rss = rssBytes(); // before the peak: read after it, a growing RSS could pass the peak read first
    return JSON.stringify({
      peak_rss_bytes: peakRssBytes(), rss_bytes: rss, cpu_ns: cpuNs(), connections,
      processes: threads(),
      runtime: {
        total_bytes: memory.heapTotal + memory.external, heap_used_bytes: memory.heapUsed,
        heap_total_bytes: memory.heapTotal, external_bytes: memory.external,
        array_buffers_bytes: memory.arrayBuffers, groups_count: groups.size,
      },
    });
  };
  const server = new WebSocketServer({ host, port, perMessageDeflate: false });
  server.on('connection', (socket) => {
    let user = null;
    let control = false;
    socket.on('message', (data, isBinary) => {
      if (user) {
        user.group.pass(user, data, isBinary);
        return;
      }
      if (control) {
        socket.send(stats());
        return;
      }
      let first;
      try {
        first = JSON.parse(data.toString());
      } catch {
        first = null;
      }
      if (first && first.stats === true) {
        control = true;
        socket.send(stats());
        return;
      }
      if (!first || !first.join || !Number.isInteger(first.join.group)) {
        socket.close(1003, 'expected {"join": {...}} or {"stats": true} first');
        return;
      }
      const { group: g, user: u, history } = first.join;
      if (!groups.has(g)) groups.set(g, new Group());
      user = new User(socket, groups.get(g), history);
      user.group.join(user);
      connections += 1;
      socket.send(JSON.stringify({ joined: u }));
    });
    socket.on('close', () => {
      if (!user) return;
      user.group.leave(user);
      connections -= 1;
    });
    socket.on('error', (err) => console.error(`chat-server: a connection failed: ${err.message}`));
  });
  server.on('listening', () => writeLine({ listening: server.address().port }));
  server.on('error', (err) => {
    console.error(`chat-server: cannot listen on ${host}:${port}: ${err.message}`);
    process.exit(1);
  });
  process.on('SIGTERM', () => process.exit(0));
  process.stdin.on('end', () => process.exit(0)).on('error', () => process.exit(0)).resume();
}

main();
