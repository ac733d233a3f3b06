'use strict';
// The worker side of the msgbench worker protocol (spec/README.md): one JSON request
// on stdin, JSON lines on stdout. Lines are written synchronously: a worker that exits
// right after its result must not lose it in a stream's buffer.

const fs = require('node:fs');
const readline = require('node:readline');

const KINDS = ['unsupported', 'resource', 'internal'];

// A failure the worker reports as an error line; kind is one of KINDS.
class WorkerError extends Error {
  constructor(kind, message) {
    super(message);
    if (!KINDS.includes(kind)) throw new Error(`error kind ${kind}: expected one of ${KINDS.join(', ')}`);
    this.kind = kind;
  }
}

const unsupported = (message) => new WorkerError('unsupported', message);
const resource = (message) => new WorkerError('resource', message);
const internal = (message) => new WorkerError('internal', message);

// writeLine writes one JSON line to fd (stdout unless told), whole.
function writeLine(value, fd = 1) {
  const text = `${JSON.stringify(value)}\n`;
  let buffer = Buffer.from(text);
  while (buffer.length > 0) {
    try {
      buffer = buffer.subarray(fs.writeSync(fd, buffer));
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err; // a non-blocking pipe that is full: try again
    }
  }
}

// errorLine is the error line of any thrown value: a WorkerError as it is, anything
// else as internal (a bug: the worker did not expect it).
function errorLine(err) {
  if (err instanceof WorkerError) return { type: 'error', kind: err.kind, message: err.message };
  return { type: 'error', kind: 'internal', message: String((err && err.stack) || err) };
}

// firstLine resolves with the first line of a stream and keeps reading the rest in
// the background; onEnd is called when the stream closes (a peer's cue to stop).
function firstLine(stream = process.stdin, onEnd = () => {}) {
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
    let seen = false;
    lines.on('line', (line) => {
      if (!seen) {
        seen = true;
        resolve(line);
      }
    });
    lines.on('close', () => {
      if (!seen) reject(internal('stdin closed before the request line'));
      onEnd();
    });
  });
}

// parseRequest decodes the request line. The harness validated it, so one that does
// not decode means the two disagree: internal.
function parseRequest(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (err) {
    throw internal(`the request is not JSON (${err.message}): ${line.slice(0, 200)}`);
  }
  if (request === null || typeof request !== 'object' || typeof request.workload !== 'string') {
    throw internal(`the request has no workload: ${line.slice(0, 200)}`);
  }
  return { options: {}, params: {}, ...request };
}

// serve runs one measurement for the protocol: reads the request, says hello, runs
// workloads[request.workload](request, context) and writes its result, or the error it
// threw, then exits 0. context.progress(done, total) and context.sample(values) write
// the optional lines.
async function serve({ target, runtimeVersion, workloads }) {
  let request = { variant: 'unknown' };
  try {
    request = parseRequest(await firstLine());
  } catch (err) {
    writeLine({ type: 'hello', target, runtime_version: runtimeVersion, variant: request.variant });
    writeLine(errorLine(err));
    process.exit(0);
  }
  writeLine({ type: 'hello', target, runtime_version: runtimeVersion, variant: request.variant });
  const context = {
    progress: (done, total) => writeLine({ type: 'progress', done, total }),
    sample: (tMs, values) => writeLine({ type: 'sample', t_ms: tMs, values }),
  };
  // A run whose promise can no longer settle (nothing left on the event loop) would
  // otherwise exit 0 without a result line.
  process.once('beforeExit', () => {
    writeLine(errorLine(internal(`the ${request.workload} run left nothing to wait for before its result`)));
    process.exit(0);
  });
  try {
    const run = Object.hasOwn(workloads, request.workload) ? workloads[request.workload] : null;
    if (!run) {
      throw unsupported(`${target} implements ${Object.keys(workloads).join(', ')}, not ${request.workload}`);
    }
    const { measured, verify, histograms } = await run(request, context);
    writeLine({ type: 'result', measured, verify, ...(histograms ? { histograms } : {}) });
  } catch (err) {
    writeLine(errorLine(err));
  }
  process.exit(0);
}

module.exports = {
  WorkerError, unsupported, resource, internal, writeLine, errorLine, firstLine, parseRequest, serve,
};
