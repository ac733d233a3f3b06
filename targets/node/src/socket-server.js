'use strict';
// The socket workload's server half (spec/README.md, "Peers"): reads the request on
// stdin, listens, serves `sockets` connections (echo: every frame back; flow: read and
// discard, then one ACK byte once the client has shut its side), prints listening and
// served, and exits; it also exits when its stdin closes.

const net = require('node:net');
const { firstLine, parseRequest, writeLine, errorLine, unsupported, resource, internal } = require('msgbench-kit');
const { FrameReader, HEADER_BYTES, ACK } = require('./frames');

const ACCEPT_WITHIN_MS = 60000;

async function serveConnection(socket, flow, counts) {
  socket.setNoDelay(true);
  if (flow) {
    // Discard as it comes, counting whole frames: no frame is assembled.
    let need = 0; // bytes left of the current payload
    let header = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      let at = 0;
      while (at < chunk.length) {
        if (need > 0) {
          const take = Math.min(need, chunk.length - at);
          need -= take;
          counts.bytes += take;
          at += take;
          if (need === 0) counts.messages += 1;
          continue;
        }
        const take = Math.min(HEADER_BYTES - header.length, chunk.length - at);
        header = Buffer.concat([header, chunk.subarray(at, at + take)]);
        at += take;
        if (header.length === HEADER_BYTES) {
          need = header.readUInt32BE(0);
          header = Buffer.alloc(0);
          if (need === 0) counts.messages += 1;
        }
      }
    });
    await new Promise((resolve, reject) => {
      socket.once('end', resolve);
      socket.once('error', reject);
    });
    socket.end(Buffer.from([ACK]));
    return;
  }
  const reader = new FrameReader(socket);
  const failed = new Promise((_, reject) => socket.once('error', reject));
  for (;;) {
    const payload = await Promise.race([reader.next(), failed]);
    if (payload === null) break;
    counts.messages += 1;
    counts.bytes += payload.length;
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeUInt32BE(payload.length, 0);
    socket.cork(); // header and payload leave in one writev
    socket.write(header);
    socket.write(payload);
    socket.uncork();
  }
  socket.end();
}

async function main() {
  let stdinClosed = false;
  const line = await firstLine(process.stdin, () => {
    stdinClosed = true;
    process.exit(0); // the worker is gone or done: so is the server
  });
  const request = parseRequest(line);
  if (request.workload !== 'socket') {
    throw unsupported(`the server half serves workload socket only, not ${request.workload}`);
  }
  const { mode, sockets, port } = request.params;
  const server = net.createServer({ noDelay: true, allowHalfOpen: true }); // flow's ACK follows the client's FIN
  await new Promise((resolve, reject) => {
    server.once('error', (err) => reject(err.code === 'EADDRINUSE'
      ? resource(`port ${port} is in use: give another port, or port = 0 for any free one`)
      : resource(`the server cannot listen on port ${port}: ${err.message}`)));
    server.listen({ port, host: '0.0.0.0' }, resolve);
  });
  writeLine({ type: 'listening', port: server.address().port });
  const counts = { messages: 0, bytes: 0 };
  const served = [];
  const timer = setTimeout(() => {
    writeLine(errorLine(internal(`the server accepted ${served.length} of ${sockets} connections ` +
      `within ${ACCEPT_WITHIN_MS} ms`)));
    process.exit(0);
  }, ACCEPT_WITHIN_MS);
  await new Promise((resolve) => {
    server.on('connection', (socket) => {
      served.push(serveConnection(socket, mode === 'flow', counts));
      if (served.length === sockets) {
        clearTimeout(timer);
        server.close();
        resolve();
      }
    });
  });
  await Promise.all(served);
  if (!stdinClosed) writeLine({ type: 'served', messages: counts.messages, bytes: counts.bytes });
  process.exit(0);
}

main().catch((err) => {
  writeLine(errorLine(err));
  process.exit(0);
});
