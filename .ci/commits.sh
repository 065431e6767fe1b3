#!/usr/bin/env bash
# Commit subjects: `area: what changed`, at most 72 characters
# (CONTRIBUTING.md). Checks the commits of MEMPERF_COMMITS (a git range,
# A..B), else those after 641f1b8, where the convention began, when that
# commit is in the history; a checkout without the history (a tarball, a
# shallow clone) has nothing to check and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
range=${MEMPERF_COMMITS:-}
if [ -z "$range" ]; then
  if git rev-parse -q --verify '641f1b8^{commit}' >/dev/null 2>&1; then
    range=641f1b8..HEAD
  else
    echo "commit subjects: no history to check (set MEMPERF_COMMITS=A..B)"
    exit 0
  fi
fi
bad=0
while IFS= read -r line; do
  hash=${line%% *}; subject=${line#* }
  if [ "${#subject}" -gt 72 ]; then
    echo "commit $hash: subject of ${#subject} characters (at most 72): $subject" >&2; bad=1
  elif ! [[ $subject =~ ^[A-Za-z0-9_./,\ -]+:\ [^[:space:]] ]]; then
    echo "commit $hash: subject not of the form 'area: what changed': $subject" >&2; bad=1
  fi
done < <(git log --no-merges --format='%h %s' "$range")
[ "$bad" = 0 ] && echo "commit subjects: $(git rev-list --no-merges --count "$range") in $range, each 'area: what changed' of at most 72 characters"
exit "$bad"
