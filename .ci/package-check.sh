#!/usr/bin/env bash
# Package check: packs src/Myriad, checks that the .nupkg, the .snupkg and the analyzers are
# there, then builds a fresh console app that consumes the package from a local folder feed and
# drops a job; the build must report MYR0001. Exits non-zero, saying what failed, otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
feed="$work/feed"
fail() { echo "package-check: FAILED: $*" >&2; exit 1; }

# A version of our own, so that the consumer can only restore the package just packed (never
# one from another source or an older one in the global package cache).
version="0.0.0-check.$(date +%s)"
if ! dotnet pack src/Myriad -c Release -o "$feed" -p:Version="$version" >"$work/pack.log" 2>&1; then
  cat "$work/pack.log" >&2
  fail "dotnet pack src/Myriad"
fi
nupkg="$feed/Myriad.$version.nupkg"
[ -f "$nupkg" ] || fail "no $nupkg"
[ -f "$feed/Myriad.$version.snupkg" ] || fail "no symbol package Myriad.$version.snupkg"
contents=$(unzip -Z1 "$nupkg") || fail "cannot list $nupkg"
for entry in analyzers/dotnet/cs/Myriad.Analyzers.dll analyzers/dotnet/cs/Myriad.Analyzers.CodeFixes.dll \
             lib/net10.0/Myriad.dll PACKAGE.md LICENSE; do
  grep -qx "$entry" <<<"$contents" || fail "$entry is not in the package"
done

# The consumer: the machine's own package sources plus the local folder.
app="$work/app"
mkdir -p "$app"
(cd "$app" && dotnet new console --framework net10.0 --no-restore >/dev/null 2>&1) || fail "dotnet new console"
(cd "$app" && dotnet new nugetconfig >/dev/null 2>&1) || fail "dotnet new nugetconfig"
# 'dotnet new nugetconfig' starts with <clear/>: put back the sources this machine already uses.
(cd "$app" && dotnet nuget remove source nuget >/dev/null 2>&1)
sed -i '/<clear \/>/d' "$app/nuget.config"
(cd "$app" && dotnet nuget add source "$feed" --name myriad-local --configfile nuget.config >/dev/null) || fail "dotnet nuget add source"
(cd "$app" && dotnet add package Myriad --version "$version" --no-restore >/dev/null) || fail "dotnet add package Myriad"
cat >"$app/Program.cs" <<'CS'
using Myriad;

Foo();

static async Job Foo() => await Job.Delay(1);
CS

# A package cache of its own: the check version never lands in the user's global cache.
(cd "$app" && NUGET_PACKAGES="$work/packages" dotnet build -c Release >"$work/build.log" 2>&1)
build_rc=$?
if ! grep -q "warning MYR0001" "$work/build.log"; then
  cat "$work/build.log" >&2
  fail "building a consumer that drops a job did not report MYR0001 (build exit code $build_rc)"
fi
[ "$build_rc" -eq 0 ] || { cat "$work/build.log" >&2; fail "the consumer did not build"; }
echo "package-check: ok (Myriad $version: .nupkg, .snupkg, analyzers inside; a dropped job reports MYR0001)"
