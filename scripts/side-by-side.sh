#!/usr/bin/env bash
# Phases that do not depend on each other, run at the same time (make test: the harness
# tests beside lint and the targets' tests, issue 33). Each line of a phase's output is
# prefixed with its name, and the whole fails when any phase fails, naming those that did,
# after every phase has ended. A phase times itself (scripts/timed.sh in its command), so
# that the timing line shows each one's own wall time.
# A failed phase's output is shown again at the very end (the test lines pytest marked
# FAILED or ERROR, then its last lines): the phases' lines interleave, and a log read from
# its tail (CI's) must still say what failed.
#
#   scripts/side-by-side.sh PHASE CMD [PHASE CMD]...   CMD is one shell command
set -uo pipefail

if [ $# -lt 2 ] || [ $(( $# % 2 )) -ne 0 ]; then
  echo "usage: scripts/side-by-side.sh PHASE CMD [PHASE CMD]..." >&2
  exit 2
fi

TAIL_LINES=40
logs=$(mktemp -d "${TMPDIR:-/tmp}/side-by-side.XXXXXX")
trap 'rm -rf "$logs"' EXIT

names=() pids=()
while [ $# -gt 0 ]; do
  name=$1 cmd=$2
  shift 2
  # pipefail: the phase's status, not sed's. sed -u: a line is shown as soon as it is written.
  ( set -o pipefail; bash -c "$cmd" 2>&1 | sed -u "s/^/[$name] /" | tee "$logs/${#pids[@]}" ) &
  names+=("$name") pids+=($!)
done

failed=() failed_at=()
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { failed+=("${names[$i]}"); failed_at+=("$i"); }
done
if [ ${#failed[@]} -gt 0 ]; then
  for i in "${failed_at[@]}"; do
    echo "--- ${names[$i]} failed; its failed tests, then its last $TAIL_LINES lines:"
    grep -F -e "[${names[$i]}] FAILED " -e "[${names[$i]}] ERROR " "$logs/$i"
    tail -n "$TAIL_LINES" "$logs/$i"
  done >&2
  list=$(printf '%s, ' "${failed[@]}")
  printf 'failed: %s\n' "${list%, }" >&2
  exit 1
fi
