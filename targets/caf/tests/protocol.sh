#!/bin/sh
# Drives the worker through its protocol: a ring, an unknown option (and what
# fanin lists as known), an unknown workload, socket echo (closed and open
# loop) and flow.
# Usage: tests/protocol.sh bin/msgbench-caf
set -u
worker=$1
passed=0
failed=0
expect() { # name, request, a string the output must contain
  out=$(printf '%s\n' "$2" | "$worker" 2>/dev/null)
  status=$?
  if [ $status -eq 0 ] && printf '%s' "$out" | grep -q "$3" \
     && printf '%s' "$out" | head -n1 | grep -q '"type":"hello"'; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAILED: $1 (exit $status): $out" >&2
  fi
}
expect "ring" '{"workload":"ring","variant":"default","options":{},"params":{"n":100,"m":5,"payload":"BOO!"},"repetition":1,"warmup":false}' '"hops":500'
expect "ring, one thread" '{"workload":"ring","variant":"single_thread","options":{"max_threads":1},"params":{"n":100,"m":5,"payload":"BOO!"},"repetition":1,"warmup":false}' '"laps":5'
expect "unknown option" '{"workload":"ring","variant":"default","options":{"no_such_option":1},"params":{"n":10,"m":1,"payload":""},"repetition":1,"warmup":false}' '"kind":"internal".*no_such_option'
expect "unknown option, listing fanin's" '{"workload":"fanin","variant":"exit_signals","options":{"exit_signals":true,"no_such_option":1},"params":{},"repetition":1,"warmup":false}' 'unknown option no_such_option (known here: max_threads, max_throughput, exit_signals)'
expect "unknown workload" '{"workload":"teleport","variant":"default","options":{},"params":{},"repetition":1,"warmup":false}' '"kind":"unsupported"'
expect "socket echo" '{"workload":"socket","variant":"default","options":{},"params":{"mode":"echo","size":100,"total_bytes":10000,"sockets":2,"data":"binary","placement":"local","check_content":1,"port":0},"repetition":1,"warmup":false}' '"messages_received":200,"messages_sent":200'
expect "socket flow" '{"workload":"socket","variant":"default","options":{},"params":{"mode":"flow","size":100,"total_bytes":10000,"sockets":2,"data":"binary","placement":"local","check_content":1,"port":0},"repetition":1,"warmup":false}' '"bytes_received":20000,"bytes_sent":20000'
expect "socket echo, open loop" '{"workload":"socket","variant":"single_thread","options":{"max_threads":1},"params":{"mode":"echo","size":100,"total_bytes":10000,"sockets":2,"data":"binary","placement":"local","check_content":1,"port":0,"rate":4000},"repetition":1,"warmup":false}' '"latency_ns":\[\[.*"messages_received":200,"messages_sent":200'
echo "protocol: $passed passed, $failed failed"
[ $failed -eq 0 ]
