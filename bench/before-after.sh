#!/usr/bin/env bash
# Same-runtime rows of the compare tool, before and after a change, in one run on one machine:
# alternates the baseline checkout's compare tool and this checkout's, round by round, and prints
# the median wall time of each side and after/before. Only the myriad variant (VARIANTS overrides: a comma list); no Go, no AOT.
# Usage: bash bench/before-after.sh BASELINE_DIR [ROUNDS]
#   BASELINE_DIR: a checkout of the baseline commit (git worktree add /tmp/base <commit>)
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bench/before-after.sh BASELINE_DIR [ROUNDS]}
rounds=${2:-3}
out=$(mktemp -d)
# experiment:size pairs (ROWS overrides): the largest default size of each same-runtime row
rows=${ROWS:-"chain-tasks:1M chain-channels:1M ping-pong:100k spawn:1M tiny-tasks:10k"}
dotnet build -c Release bench/Myriad.Compare >/dev/null
dotnet build -c Release "$base/bench/Myriad.Compare" >/dev/null
for r in $(seq 1 "$rounds"); do
  for row in $rows; do
    e=${row%%:*}; n=${row##*:}
    for side in before after; do
      dir=.; [ "$side" = before ] && dir=$base
      extra=(); [ "$side" = after ] && extra=(--cold-runs 0 --no-aot)
      (cd "$dir" && dotnet run --no-build -c Release --project bench/Myriad.Compare -- \
        --experiment "$e" --variant "${VARIANTS:-myriad}" --n "$n" --runs 3 --no-go --json "${extra[@]}") \
        >>"$out/$side.jsonl" 2>/dev/null || echo "before-after: $side $e failed" >&2
    done
  done
done
python3 - "$out" <<'PY'
import json, sys, statistics, collections
d = sys.argv[1]
runs = {s: collections.defaultdict(list) for s in ("before", "after")}
for s in runs:
    for line in open(f"{d}/{s}.jsonl"):
        line = line.strip()
        if not line.startswith("{"):
            continue
        o = json.loads(line)
        if o.get("status") != "ok":
            continue
        key = (o["experiment"] + ("" if o["variant"] == "myriad" else "/" + o["variant"]), o["n"], o.get("mode", ""), o.get("work", 0))
        runs[s][key] += o.get("wall_ms_runs") or [o["wall_ms"]]
print("| experiment | size | mode | work | before (median ms) | after (median ms) | after/before | runs each |")
print("|---|---:|---|---:|---:|---:|---:|---:|")
for key in sorted(runs["after"]):
    a = runs["after"][key]; b = runs["before"].get(key)
    if not b:
        continue
    mb, ma = statistics.median(b), statistics.median(a)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {mb:.2f} | {ma:.2f} | {ma/mb:.3f} | {min(len(a), len(b))} |")
PY
