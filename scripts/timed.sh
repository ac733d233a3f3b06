#!/usr/bin/env bash
# The timing line at the end of `make run` and `make test` (issue 33): how long each
# phase took, so that a phase that grows is seen the day it grows.
#
#   scripts/timed.sh LOG PHASE CMD...   run CMD; add "PHASE<tab>START_MS<tab>END_MS" to LOG; exit as CMD did
#   scripts/timed.sh --summary LOG WHAT print "WHAT took T: phase t, ..." and remove LOG
#
# Phases may overlap: msgbench run adds the builds it runs beside the measurements and
# the moment the first table row appears (MSGBENCH_PHASES=LOG, msgbench/core/phases.py).
# The total is the wall time from the first start to the last end, never a sum; a phase
# that overlaps another says when it ran ("from 1m 52s to 4m 10s"), a moment says when
# it came ("first table row at 2m 40s").
set -uo pipefail

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

if [ "${1:-}" = "--summary" ]; then
  log=$2 what=$3
  [ -f "$log" ] || exit 0
  sort -t$'\t' -k2,2n -s "$log" | awk -F'\t' -v what="$what" '
    function human(ms,  s) { s = int(ms / 1000 + 0.5); return s >= 60 ? sprintf("%dm %02ds", s / 60, s % 60) : sprintf("%d s", s) }
    { name[NR] = $1; start[NR] = $2; end_[NR] = $3
      if (NR == 1 || $2 < first) first = $2
      if (NR == 1 || $3 > last) last = $3 }
    END {
      for (i = 1; i <= NR; i++) {
        if (start[i] == end_[i]) { text = name[i] " at " human(start[i] - first) }
        else {
          text = name[i] " " human(end_[i] - start[i])
          # When it ran, if another phase crosses it or holds it (one it holds says so itself).
          shown = 0
          for (j = 1; j <= NR; j++)
            if (j != i && start[j] != end_[j] && start[j] < end_[i] && start[i] < end_[j] &&
                ((start[j] <= start[i] && end_[i] <= end_[j]) || !(start[i] <= start[j] && end_[j] <= end_[i]))) shown = 1
          if (shown) text = text " (from " human(start[i] - first) " to " human(end_[i] - first) ")"
        }
        parts = parts (i > 1 ? ", " : "") text
      }
      printf "%s took %s: %s\n", what, human(last - first), parts }'
  rm -f "$log"
  exit 0
fi

log=$1 phase=$2
shift 2
mkdir -p "$(dirname "$log")"
start=$(now_ms)
"$@"
status=$?
printf '%s\t%s\t%s\n' "$phase" "$start" "$(now_ms)" >> "$log"
exit $status
