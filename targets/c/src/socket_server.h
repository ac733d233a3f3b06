/* The server half of the socket workload (`msgbench-c --serve`): it reads the same
 * request the worker got, listens, prints {"type":"listening","port":P}, serves
 * `sockets` connections with one thread each (echo: read a frame, write it back; flow:
 * read and discard, counting, then a 1-byte ack at EOF), prints
 * {"type":"served","messages":M,"bytes":B} and exits. It exits at once when its stdin
 * closes (the worker is gone). */
#ifndef MSGBENCH_SOCKET_SERVER_H
#define MSGBENCH_SOCKET_SERVER_H

#include <stdio.h>

/* Bytes the flow server reads per read() call: it parses frames out of the chunk. */
#define SOCKET_FLOW_CHUNK_BYTES (256 * 1024)

/* Reads the request from in (whose descriptor it then watches for EOF), writes the
 * server's JSON lines to out. Returns the process exit status (0 after an answer). */
int serve_main(FILE *in, FILE *out, FILE *log);

#endif
