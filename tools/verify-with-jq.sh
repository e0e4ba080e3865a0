#!/usr/bin/env bash
# Verifies an arbiter export (JSON Lines) with jq and b3sum only: every
# event's hash is BLAKE3 of its canonical JSON without "hash", every seq
# follows the one before it, and every prev is the hash of the event before.
# The log's leaves are the export's exact bytes, so each line must be its
# event's canonical JSON exactly (what `jq -cS .` makes of it: no spaces, no
# CR, keys sorted), lines ended by a newline (the last may lack it, as
# `verify-file` allows).
# This checks the record's integrity, not the game's rules: for those, run
# `arbiter verify-file FILE`.
#
# Usage: tools/verify-with-jq.sh EXPORT.jsonl [EXPECTED_HEAD_HASH]
# Exit: 0 verified, 1 broken (first bad seq named), 2 usage.
set -euo pipefail
file=${1:?usage: verify-with-jq.sh EXPORT.jsonl [EXPECTED_HEAD_HASH]}
want_head=${2:-}
command -v jq >/dev/null && command -v b3sum >/dev/null || { echo "needs jq and b3sum (apt-get install -y jq b3sum)" >&2; exit 2; }
[ -r "$file" ] || { echo "cannot read $file" >&2; exit 2; }

prev=0000000000000000000000000000000000000000000000000000000000000000
expect=0
n=0
while IFS= read -r line || [ -n "$line" ]; do
  n=$((n + 1))
  canon=$(jq -cS . <<<"$line" 2>/dev/null) || { echo "line $n: not JSON" >&2; exit 1; }
  [ "$line" = "$canon" ] || { echo "line $n: not the exact bytes of an export (each line is one event's canonical JSON, as jq -cS writes it)" >&2; exit 1; }
  seq=$(jq -r '.seq' <<<"$line")
  stated=$(jq -r '.hash' <<<"$line")
  actual=$(jq -cS 'del(.hash)' <<<"$line" | tr -d '\n' | b3sum --no-names)
  [ "$seq" = "$expect" ] || { echo "seq $expect: line $n has seq $seq (missing, repeated or reordered events)" >&2; exit 1; }
  [ "$actual" = "$stated" ] || { echo "seq $seq: hash mismatch: stated $stated, content hashes to $actual" >&2; exit 1; }
  [ "$(jq -r '.prev' <<<"$line")" = "$prev" ] || { echo "seq $seq: prev does not match the hash of seq $((seq - 1))" >&2; exit 1; }
  prev=$stated
  expect=$((expect + 1))
done < "$file"
[ "$n" -gt 0 ] || { echo "$file is empty" >&2; exit 1; }
if [ -n "$want_head" ] && [ "$want_head" != "$prev" ]; then
  echo "head is $prev, expected $want_head" >&2; exit 1
fi
echo "ok: $n events, every hash and link verified with jq and b3sum; head $prev"
