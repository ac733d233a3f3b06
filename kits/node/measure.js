'use strict';
// Clocks and memory as the protocol wants them: a monotonic wall clock in ns
// (CLOCK_MONOTONIC, the same in every thread), the whole process's CPU time
// (getrusage: every thread), peak and current RSS from /proc/self/status.

const fs = require('node:fs');

// nowNs is the monotonic clock in ns, as a Number (exact below 2^53 ns, 104 days of uptime).
const nowNs = () => Number(process.hrtime.bigint());

// cpuNs is the process's user + system CPU time in ns (every thread's).
function cpuNs() {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
}

function statusKiB(field, path = '/proc/self/status') {
  const match = fs.readFileSync(path, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  if (!match) throw new Error(`${path} has no ${field} line`);
  return Number(match[1]);
}

const peakRssBytes = () => statusKiB('VmHWM') * 1024;
const rssBytes = () => statusKiB('VmRSS') * 1024;

// availableBytes is MemAvailable from /proc/meminfo, or null where there is none.
function availableBytes() {
  try {
    return statusKiB('MemAvailable', '/proc/meminfo') * 1024;
  } catch {
    return null;
  }
}

module.exports = { nowNs, cpuNs, peakRssBytes, rssBytes, availableBytes };
