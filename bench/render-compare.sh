#!/usr/bin/env bash
# Renders each result document with two builds of memperf (OLD and NEW
# binaries) and diffs everything they write: report.html, the SVG charts,
# results.json as read back, and `compare` of the document with itself.
# A refactor that keeps every figure prints SAME for each document (the
# "report written to" line names the output folder and always differs).
#   bench/render-compare.sh OLD_BIN NEW_BIN DOC.json...
set -u
OLD=$1; NEW=$2; shift 2
for doc in "$@"; do
  n=$(echo "$doc" | tr '/.' '__')
  for which in old new; do
    bin=$OLD; [ $which = new ] && bin=$NEW
    d=${RC_DIR:-/tmp/render-compare}/$which/$n; rm -rf $d; mkdir -p $d
    cp "$doc" $d/in.json
    $bin report $d/in.json -o $d/out > $d/stdout.txt 2> $d/stderr.txt; echo "rc=$?" >> $d/stdout.txt
    COLUMNS=200 $bin compare $d/in.json $d/in.json > $d/compare.txt 2>&1
  done
  R=${RC_DIR:-/tmp/render-compare}
  if diff -r -q -x in.json -x stdout.txt $R/old/$n $R/new/$n >/dev/null; then echo "SAME $doc"; else echo "DIFF $doc"; diff -r -x in.json ${RC_DIR:-/tmp/render-compare}/old/$n ${RC_DIR:-/tmp/render-compare}/new/$n | head -20; fi
done
