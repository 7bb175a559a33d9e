#!/usr/bin/env bash
# Runs the compare tool (TPL vs Myriad vs Go), installing Go first when it can.
#   bash bench/compare.sh [compare options]      e.g. --quick, --experiment spawn, --out bench/results/compare
# Go is optional: if bench/go/install-go.sh fails (no root, no network), the tool runs anyway and
# shows the Go column as missing.
set -uo pipefail
cd "$(dirname "$0")/.."

# Help and listing options run nothing, so they need no Go toolchain.
needs_go=1
for arg in "$@"; do
  case "$arg" in
    -h|--help|-\?|--list) needs_go=0 ;;
  esac
done

if [ "$needs_go" = 0 ]; then
  :
elif go_bin=$(bash bench/go/install-go.sh | tail -1) && [ -x "$go_bin" ]; then
  export PATH="$(dirname "$go_bin"):$PATH"
else
  echo "compare.sh: could not install Go; the Go variants will show as missing" >&2
fi

exec dotnet run -c Release --project bench/Myriad.Compare -- "$@"
