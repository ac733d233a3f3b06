'use strict';
// The Node.js kit: what every Node worker of msgbench shares (docs/targets.md, "kits").
// A worker is its benchmarks plus a few lines of main (protocol.serve).

module.exports = {
  ...require('./protocol'),
  ...require('./options'),
  ...require('./measure'),
  ...require('./histogram'),
  ...require('./peer'),
  ...require('./sample'),
};
