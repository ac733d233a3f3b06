'use strict';
// The peer: a workload's server half as a child process (spec/README.md, "Peers").
// Its argv comes from MSGBENCH_PEER_COMMAND (a JSON array; the harness puts a netns or
// ssh prefix in front for remote placement), else this worker's own serve script. The
// peer runs in a process group of its own and reads the request on its stdin, which
// stays open: closing it (or the worker dying) tells the peer to exit.

const { spawn } = require('node:child_process');
const readline = require('node:readline');
const { internal, WorkerError } = require('./protocol');

const EXIT_WITHIN_MS = 5000;

// peerArgv is the peer's argv: MSGBENCH_PEER_COMMAND, or fallback (this worker's own).
function peerArgv(fallback) {
  const command = process.env.MSGBENCH_PEER_COMMAND;
  if (!command) return fallback;
  let argv;
  try {
    argv = JSON.parse(command);
  } catch {
    argv = null;
  }
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string' && a !== '')) {
    throw internal(`MSGBENCH_PEER_COMMAND = ${JSON.stringify(command)}: expected a JSON array of strings, a command`);
  }
  return argv;
}

const peerHost = () => process.env.MSGBENCH_PEER_HOST || '127.0.0.1';

class Peer {
  // start spawns the peer and writes request to its stdin as one line.
  constructor(who, argv, request) {
    this.who = `${who} ${JSON.stringify(argv)}`;
    this.child = spawn(argv[0], argv.slice(1), {
      cwd: process.env.MSGBENCH_PEER_CWD || process.cwd(),
      stdio: ['pipe', 'pipe', 'inherit'],
      detached: true, // a process group of its own, to stop it and everything it started
    });
    this.queue = [];
    this.waiting = null;
    this.ended = false;
    this.exit = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `exit status ${code}`));
    });
    this.child.once('error', (err) => this.push({ bad: `cannot start: ${err.message}` }));
    this.child.stdin.on('error', () => {}); // a peer that died: its exit says why
    this.child.stdin.write(`${JSON.stringify(request)}\n`);
    const lines = readline.createInterface({ input: this.child.stdout, crlfDelay: Infinity });
    lines.on('line', (text) => {
      if (text.trim() === '') return;
      let line;
      try {
        line = JSON.parse(text);
      } catch {
        line = null;
      }
      const ok = line && typeof line.type === 'string';
      this.push(ok ? { line } : { bad: `printed ${JSON.stringify(text.slice(0, 200))}` });
    });
    lines.on('close', () => this.push({ end: true }));
  }

  push(item) {
    this.queue.push(item);
    if (this.waiting) this.waiting();
  }

  // next resolves with the next line, which must be of type want (an error line is
  // relayed as the worker's own error) within limitMs.
  async next(want, limitMs) {
    const deadline = Date.now() + limitMs;
    while (this.queue.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) throw internal(`${this.who} did not say ${want} within ${limitMs} ms`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiting = null;
    }
    const item = this.queue.shift();
    if (item.end) {
      this.queue.unshift(item);
      throw internal(`${this.who} exited without saying ${want} (${await this.exit})`);
    }
    if (item.bad) throw internal(`${this.who} ${item.bad} where ${want} was due`);
    if (item.line.type === 'error') {
      const kind = ['unsupported', 'resource', 'internal'].includes(item.line.kind) ? item.line.kind : 'internal';
      throw new WorkerError(kind, `the server half: ${item.line.message}`);
    }
    if (item.line.type !== want) throw internal(`${this.who} said ${item.line.type} where ${want} was due`);
    return item.line;
  }

  // stop closes the peer's stdin, gives it EXIT_WITHIN_MS to exit, then kills its group.
  async stop() {
    this.child.stdin.end();
    const timer = new Promise((resolve) => setTimeout(resolve, EXIT_WITHIN_MS, 'timeout'));
    if ((await Promise.race([this.exit, timer])) === 'timeout' || this.child.exitCode === null) {
      try {
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await this.exit;
    }
  }
}

module.exports = { Peer, peerArgv, peerHost, EXIT_WITHIN_MS };
