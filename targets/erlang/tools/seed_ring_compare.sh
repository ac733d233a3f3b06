#!/usr/bin/env bash
# Runs the seed's own ring (seed 004, Chris Whealy's ring_benchmark) and
# msgbench's ring (src/msgbench_ring.erl) side by side in one VM and prints
# their passing times and hops/s, run by run and as medians.
#
#   tools/seed_ring_compare.sh SEED_DOC N M [RUNS]
#   e.g. tools/seed_ring_compare.sh /work/shared/seeds/004_3e67f598853fe91a.txt 10000 100
#
# The seed's module is the document's first listing (lines numbered 001 to
# 168); it is extracted into a temporary directory at run time and never
# stored in the repository. Extra VM flags go in ERL_ARGS (e.g. "+S 1").
set -euo pipefail

if [[ $# -lt 3 || $# -gt 4 ]]; then
    echo "usage: $0 SEED_DOC N M [RUNS]" >&2
    exit 2
fi
seed_doc=$1 n=$2 m=$3 runs=${4:-5}
for value in "$n" "$m" "$runs"; do
    [[ $value =~ ^[1-9][0-9]*$ ]] || { echo "$0: N, M and RUNS must be positive integers" >&2; exit 2; }
done
(( n >= 2 )) || { echo "$0: N must be >= 2" >&2; exit 2; }

target_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"' EXIT

# The first listing only: take each numbered line in order, 001 to 168,
# without its three-digit prefix.
awk 'BEGIN { want = 1 }
     /^[0-9][0-9][0-9]/ && substr($0, 1, 3) + 0 == want {
         print substr($0, 4); want++; if (want > 168) exit
     }' "$seed_doc" > "$work_dir/ring_benchmark.erl"
if [[ $(wc -l < "$work_dir/ring_benchmark.erl") -ne 168 ]]; then
    echo "$0: could not find the 168-line ring_benchmark listing in $seed_doc" >&2
    exit 1
fi

make -s -C "$target_dir" build
erlc -o "$work_dir" "$work_dir/ring_benchmark.erl"
erlc +warnings_as_errors -pa "$target_dir/ebin" -o "$work_dir" "$target_dir/tools/seed_ring_compare.erl"

# Room for the ring, the system's own processes and some to spare.
process_limit=$(( n + 10000 ))
# shellcheck disable=SC2086  # ERL_ARGS is a list of flags
ERL_CRASH_DUMP_SECONDS=0 erl +P "$process_limit" ${ERL_ARGS:-} -noshell \
    -kernel logger '[{handler,default,logger_std_h,#{config=>#{type=>standard_error}}}]' \
    -pa "$target_dir/ebin" -pa "$work_dir" \
    -run seed_ring_compare main "$n" "$m" "$runs" | tee "$work_dir/compare.txt"

# Whether the two differ at all: msgbench's own Mann-Whitney U test over the
# per-run passing times printed above (skipped when the harness is not set up).
python=$target_dir/../../.venv/bin/python
if [[ -x $python ]]; then
    PYTHONPATH="$target_dir/../.." "$python" -c '
import re, sys
from msgbench import stats
rows = [line.split() for line in open(sys.argv[1]) if re.match(r"\d+\s", line)]
seed, ours = [float(r[1]) for r in rows], [float(r[2]) for r in rows]
test = stats.mann_whitney(ours, seed)
verdict = "differ" if test.p_value < 0.05 else "do not differ significantly"
print(f"Mann-Whitney U over pass times: p = {test.p_value:.2f}: seed and ours {verdict}")
' "$work_dir/compare.txt"
fi
