#!/usr/bin/env bash
# Checks that every markdown link in the repository stays inside it and points at a file that
# exists: relative links that climb out of the repository root (../shared/...), absolute file
# paths and links to missing files fail. Web links (http, https, mailto) and in-page anchors are
# not checked. Links inside fenced code blocks are ignored. Exit status 1 lists every bad link.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)

bad=0
while IFS= read -r -d '' file; do
  dir=$(dirname "$file")
  # Inline links and images: ](target) or ](target "title"), outside ``` fences.
  while IFS= read -r target; do
    target=${target%% *}            # drop a title
    target=${target#<}; target=${target%>}
    case "$target" in
      ''|'#'*|http://*|https://*|mailto:*) continue ;;
    esac
    path=${target%%#*}              # drop an anchor
    path=${path%%\?*}
    [ -n "$path" ] || continue
    if [[ "$path" == /* ]]; then
      echo "doc-links: $file: absolute path '$target' (link relative to the file instead)" >&2
      bad=1
      continue
    fi
    resolved=$(realpath -m "$dir/$path")
    case "$resolved/" in
      "$root"/*) ;;
      *)
        echo "doc-links: $file: '$target' leaves the repository" >&2
        bad=1
        continue
        ;;
    esac
    if [ ! -e "$resolved" ]; then
      echo "doc-links: $file: '$target' does not exist" >&2
      bad=1
    fi
  done < <(awk '/^[[:space:]]*(```|~~~)/ { fence = !fence; next } !fence' "$file" \
             | grep -oE '\]\([^)]+\)' | sed -E 's/^\]\((.*)\)$/\1/')
  # A path into the developers' shared folder is an outside reference even when not a link.
  if grep -n '\.\./shared/' "$file" >/dev/null; then
    grep -n '\.\./shared/' "$file" | sed "s|^|doc-links: $file: refers outside the repository: |" >&2
    bad=1
  fi
done < <(find . \( -name .git -o -name bin -o -name obj -o -name node_modules \) -prune -o -name '*.md' -type f -print0)

if [ "$bad" -ne 0 ]; then
  echo "doc-links: some documents link outside the repository or to missing files" >&2
  exit 1
fi
echo "doc-links: all markdown links stay inside the repository and resolve"
