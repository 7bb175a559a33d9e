#!/usr/bin/env bash
# Runs samples/Myriad.Pipeline and fails unless it exits 0 by itself within two minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
if ! timeout 120 dotnet run -c Release --project samples/Myriad.Pipeline; then
  echo "ci: the pipeline sample failed or hung" >&2
  exit 1
fi
