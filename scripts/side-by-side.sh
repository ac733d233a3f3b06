#!/usr/bin/env bash
# Phases that do not depend on each other, run at the same time (make test: the harness
# tests beside lint and the targets' tests, issue 33). Each line of a phase's output is
# prefixed with its name, and the whole fails when any phase fails, naming those that did,
# after every phase has ended. A phase times itself (scripts/timed.sh in its command), so
# that the timing line shows each one's own wall time.
#
#   scripts/side-by-side.sh PHASE CMD [PHASE CMD]...   CMD is one shell command
set -uo pipefail

if [ $# -lt 2 ] || [ $(( $# % 2 )) -ne 0 ]; then
  echo "usage: scripts/side-by-side.sh PHASE CMD [PHASE CMD]..." >&2
  exit 2
fi

names=() pids=()
while [ $# -gt 0 ]; do
  name=$1 cmd=$2
  shift 2
  # pipefail: the phase's status, not sed's. sed -u: a line is shown as soon as it is written.
  ( set -o pipefail; bash -c "$cmd" 2>&1 | sed -u "s/^/[$name] /" ) &
  names+=("$name") pids+=($!)
done

failed=()
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed+=("${names[$i]}")
done
if [ ${#failed[@]} -gt 0 ]; then
  list=$(printf '%s, ' "${failed[@]}")
  printf 'failed: %s\n' "${list%, }" >&2
  exit 1
fi
