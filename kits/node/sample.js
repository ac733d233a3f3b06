'use strict';
// Samples: the worker's own view of itself about once a second, off the measured path
// (spec/message.schema.json, sample). The timer is unref'd: it never keeps a worker alive.

const { nowNs } = require('./measure');

// startSampling calls emit(tMs, values()) now and every intervalMs; stop() ends it with
// a last sample.
function startSampling(values, emit, intervalMs = 1000) {
  const start = nowNs();
  const take = () => emit((nowNs() - start) / 1e6, values());
  take();
  const timer = setInterval(take, intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    take();
  };
}

module.exports = { startSampling };
