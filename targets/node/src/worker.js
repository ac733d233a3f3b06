'use strict';
// The Node.js worker: one measurement per process (spec/README.md).

const { serve } = require('msgbench-kit');

serve({
  target: 'node',
  runtimeVersion: `Node ${process.version} / V8 ${process.versions.v8}`,
  workloads: {
    ring: (request) => require('./ring').measure(request),
    fanin: (request) => require('./fanin').measure(request),
    socket: (request) => require('./socket').measure(request),
    chat: (request, context) => require('./chat').measure(request, context),
  },
});
