'use strict';
// Samples: the worker's own view of itself about once a second, off the measured path
// (spec/message.schema.json, sample). The timer is unref'd: it never keeps a worker alive.

const { nowNs } = require('./measure');

// startSampling calls emit(tMs, values()) every intervalMs from now; returns stop().
function startSampling(values, emit, intervalMs = 1000) {
  const start = nowNs();
  const timer = setInterval(() => emit((nowNs() - start) / 1e6, values()), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

module.exports = { startSampling };
