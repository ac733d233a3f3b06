#!/usr/bin/env bash
# The timing line at the end of `make run` and `make test` (issue 33): how long each
# phase took, so that a phase that grows is seen the day it grows.
#
#   scripts/timed.sh LOG PHASE CMD...   run CMD; add "PHASE<tab>MILLISECONDS" to LOG; exit as CMD did
#   scripts/timed.sh --summary LOG WHAT print "WHAT took T: phase t, ..." and remove LOG
set -uo pipefail

if [ "${1:-}" = "--summary" ]; then
  log=$2 what=$3
  [ -f "$log" ] || exit 0
  awk -F'\t' -v what="$what" '
    function human(s) { s = int(s + 0.5); return s >= 60 ? sprintf("%dm %02ds", s / 60, s % 60) : sprintf("%d s", s) }
    { $2 /= 1000; total += $2; parts = parts (NR > 1 ? ", " : "") $1 " " human($2) }
    END { printf "%s took %s: %s\n", what, human(total), parts }' "$log"
  rm -f "$log"
  exit 0
fi

log=$1 phase=$2
shift 2
mkdir -p "$(dirname "$log")"
start=$(date +%s%N)
"$@"
status=$?
printf '%s\t%s\n' "$phase" "$(( ($(date +%s%N) - start) / 1000000 ))" >> "$log"
exit $status
