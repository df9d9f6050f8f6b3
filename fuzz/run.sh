#!/bin/sh
# fuzz/run.sh SECONDS [TARGET...]: builds the libFuzzer targets (clang++-14, build-fuzz/) and runs
# each for SECONDS, one at a time, niced, on a working copy of its committed seed corpus
# (fuzz/corpus/TARGET). A crash stops with the crashing input saved under build-fuzz/crashes/.
# Needs the Debian packages clang-14 and libfuzzer-14-dev.
set -eu
secs=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
targets=${*:-graph_json topology_json plan_json pipedream tarnawski piper args}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 -DDEVPLACE_FUZZ=ON \
      -DDEVPLACE_BUILD_TESTS=OFF -DDEVPLACE_BUILD_EXAMPLES=OFF -DDEVPLACE_BUILD_CLI=OFF -DDEVPLACE_INSTALL=OFF >/dev/null
tlist=""
for t in $targets; do tlist="$tlist fuzz_$t"; done
nice cmake --build "$build" -j2 --target $tlist  # one build: the targets compile in parallel
mkdir -p "$build/crashes"
status=0
for t in $targets; do
  work=$build/corpus/$t
  mkdir -p "$work"
  cp "$root/fuzz/corpus/$t"/* "$work"/ 2>/dev/null || true
  echo "== fuzz_$t for $secs s"
  if ! nice "$build/fuzz/fuzz_$t" -max_total_time="$secs" -max_len=8192 -rss_limit_mb=2048 -timeout=10 \
       -artifact_prefix="$build/crashes/$t-" -print_final_stats=1 "$work" 2>"$build/fuzz_$t.log"; then
    status=1
    tail -40 "$build/fuzz_$t.log"
  fi
  grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$build/fuzz_$t.log" | tail -2
done
exit $status
