#!/usr/bin/env bash
# Runs the samples that must end by themselves: each must exit with status 0 within a bound.
# Usage: bash .ci/samples.sh   (exit status 1 if any sample fails or hangs)
set -uo pipefail
cd "$(dirname "$0")/.."

# A bound against hangs, far above the few seconds a sample takes; not a timing.
limit=300
status=0
for project in samples/Myriad.Hosting.Sample samples/Myriad.Pipeline; do
  echo "samples: running $project"
  if ! timeout "$limit" dotnet run -c Release --project "$project"; then
    echo "samples: $project failed (non-zero exit or no exit within ${limit}s)" >&2
    status=1
  fi
done
exit $status
