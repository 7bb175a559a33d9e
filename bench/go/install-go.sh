#!/usr/bin/env bash
# Installs a Go toolchain (>= 1.21) for the Go benchmark counterparts, on Debian 12.
# Idempotent. The last line of stdout is the absolute path of the go binary:
#   GO=$(bash bench/go/install-go.sh | tail -1)
# Everything else (apt output, progress) goes to stderr.
#
# Strategy: reuse a go >= 1.21 on PATH or an installed golang-1.23-go; otherwise enable
# bookworm-backports using the mirror URI this machine already uses for "bookworm"
# (never a hard-coded host), install golang-1.23-go, and fall back to golang-go.
set -euo pipefail

BACKPORTS_GO=/usr/lib/go-1.23/bin/go
SOURCES_FILE=/etc/apt/sources.list.d/myriad-backports.sources

log() { echo "install-go: $*" >&2; }

# go_ok BIN: true if BIN runs and reports a version >= 1.21.
go_ok() {
  local ver major minor
  ver=$("$1" env GOVERSION 2>/dev/null) || return 1   # e.g. go1.23.4
  ver=${ver#go}
  major=${ver%%.*}
  minor=${ver#*.}; minor=${minor%%.*}; minor=${minor%%[!0-9]*}
  [[ $major =~ ^[0-9]+$ && $minor =~ ^[0-9]+$ ]] || return 1
  (( major > 1 || (major == 1 && minor >= 21) ))
}

found_go() {
  local p
  if p=$(command -v go 2>/dev/null) && go_ok "$p"; then
    readlink -f "$p"; return 0
  fi
  if [[ -x $BACKPORTS_GO ]] && go_ok "$BACKPORTS_GO"; then
    echo "$BACKPORTS_GO"; return 0
  fi
  return 1
}

if GO=$(found_go); then
  echo "$GO"
  exit 0
fi

# Root is needed from here on.
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "install-go: need root (or sudo) to install Go via apt; run as root." >&2
    exit 1
  fi
fi
as_root() { "${SUDO[@]}" "$@"; }

# Prints "URI<TAB>Signed-By" of the source entry that serves the main "bookworm" suite,
# from deb822 .sources files first, then one-line sources.list entries.
find_bookworm_uri() {
  local f
  shopt -s nullglob
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ $f == "$SOURCES_FILE" ]] && continue
    # Stanzas are separated by blank lines; comment lines are ignored.
    awk '
      function flush() {
        if (types ~ /(^|[ \t])deb([ \t]|$)/ && suites ~ /(^|[ \t])bookworm([ \t]|$)/ && uris != "" && !done) {
          split(uris, u, /[ \t]+/); print u[1] "\t" signed; done = 1
        }
        types = ""; suites = ""; uris = ""; signed = ""
      }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      {
        key = $0; sub(/:.*/, "", key); val = $0; sub(/^[^:]*:[ \t]*/, "", val)
        k = tolower(key)
        if (k == "types") types = val
        else if (k == "suites") suites = val
        else if (k == "uris") uris = val
        else if (k == "signed-by") signed = val
      }
      END { flush() }
    ' "$f" | head -n1 | grep . && return 0
  done
  local lists=() l
  [[ -f /etc/apt/sources.list ]] && lists+=(/etc/apt/sources.list)
  for l in /etc/apt/sources.list.d/*.list; do lists+=("$l"); done
  shopt -u nullglob
  if ((${#lists[@]})); then
    # "deb [options] URI suite components..."
    awk '
      $1 == "deb" {
        i = 2
        if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if ($(i+1) == "bookworm") { print $i "\t"; exit }
      }
    ' "${lists[@]}" | grep . && return 0
  fi
  return 1
}

if [[ ! -f $SOURCES_FILE ]]; then
  if ! entry=$(find_bookworm_uri); then
    log "no apt source for the 'bookworm' suite found; cannot enable bookworm-backports"
  else
    uri=${entry%%$'\t'*}
    signed=${entry#*$'\t'}
    log "enabling bookworm-backports from the existing mirror $uri"
    {
      echo "Types: deb"
      echo "URIs: $uri"
      echo "Suites: bookworm-backports"
      echo "Components: main"
      [[ -n $signed ]] && echo "Signed-By: $signed"
    } | as_root tee "$SOURCES_FILE" >/dev/null
  fi
fi

log "apt-get update"
as_root apt-get update -qq >&2 || log "apt-get update reported errors; continuing"

export DEBIAN_FRONTEND=noninteractive
if as_root apt-get install -y -qq golang-1.23-go >&2; then
  log "installed golang-1.23-go"
else
  log "golang-1.23-go not available; falling back to golang-go"
  as_root apt-get install -y -qq golang-go >&2 || true
fi

if GO=$(found_go); then
  echo "$GO"
  exit 0
fi
# Fallback golang-go from plain bookworm is 1.19: older than go.mod asks for, but the
# benchmark uses no newer language features, so hand it out with a warning.
if p=$(command -v go 2>/dev/null); then
  log "WARNING: only $("$p" version 2>/dev/null) is available (want >= 1.21)"
  readlink -f "$p"
  exit 0
fi
log "no Go toolchain available after installation attempts"
exit 1
