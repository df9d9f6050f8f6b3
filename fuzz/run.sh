#!/bin/sh
# fuzz/run.sh SECONDS [TARGET...]: builds the libFuzzer targets (clang++-14) and runs each for
# SECONDS, as many at a time as there are cores, niced, on a working copy of its committed seed corpus
# (fuzz/corpus/TARGET). A crash stops that target with the crashing input saved under
# BUILD/crashes/. Needs the Debian packages clang-14 and libfuzzer-14-dev.
#   FUZZ_MODE=asan (default, CI): ASan + UBSan, build-fuzz/
#   FUZZ_MODE=fast: UBSan only at -O2 (no ASan), build-fuzz-fast/, for long runs (docs/fuzzing.md)
#   FUZZ_RUNS=N: stop each target after N executions instead of SECONDS (SECONDS stays a cap)
#   FUZZ_OPT=-O0: build the asan mode's targets at -O0 instead of -O1 (CI's short run: builds in
#   a third of the time, executes about half as many inputs)
set -eu
secs=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${FUZZ_MODE:-asan}
case $mode in
  asan) build=$root/build-fuzz; fast=OFF ;;
  fast) build=$root/build-fuzz-fast; fast=ON ;;
  *) echo "fuzz/run.sh: FUZZ_MODE must be asan or fast, not '$mode'" >&2; exit 2 ;;
esac
runs=${FUZZ_RUNS:--1}
targets=${*:-graph_json topology_json plan_json pipedream tarnawski piper nvidia_smi cluster_json dfmodel_setup phaze_cores llm_json args}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 -DDEVPLACE_FUZZ=ON \
      -DDEVPLACE_FUZZ_FAST=$fast -DDEVPLACE_FUZZ_OPT="${FUZZ_OPT:--O1}" -DDEVPLACE_BUILD_TESTS=OFF -DDEVPLACE_BUILD_EXAMPLES=OFF -DDEVPLACE_BUILD_CLI=OFF \
      -DDEVPLACE_INSTALL=OFF >/dev/null
if [ $# -eq 0 ]; then
  nice cmake --build "$build" -j2  # every target: the fuzz targets are all this build has, in parallel
else
  for t in $targets; do nice cmake --build "$build" -j2 --target "fuzz_$t"; done
fi
mkdir -p "$build/crashes"
# The targets run as many at a time as there are cores (each libFuzzer process is single-threaded);
# their reports are printed in the order the targets were named.
jobs=$(nproc 2>/dev/null || echo 2)
run_one() {
  t=$1 work=$build/corpus/$1
  mkdir -p "$work"
  cp "$root/fuzz/corpus/$t"/* "$work"/ 2>/dev/null || true
  rc=0
  nice -n 10 "$build/fuzz/fuzz_$t" -max_total_time="$secs" -runs="$runs" -max_len=8192 -rss_limit_mb=2048 \
       -timeout=10 -artifact_prefix="$build/crashes/$t-" -print_final_stats=1 "$work" 2>"$build/fuzz_$t.log" || rc=$?
  echo $rc >"$build/fuzz_$t.rc"
}
pids=""
running=0
for t in $targets; do
  rm -f "$build/fuzz_$t.rc"
  run_one "$t" &
  pids="${pids:+$pids }$!"
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait "${pids%% *}" 2>/dev/null || true  # the oldest; the later ones keep running
    case $pids in *" "*) pids=${pids#* } ;; *) pids="" ;; esac
    running=$((running - 1))
  fi
done
wait
status=0
for t in $targets; do
  echo "== fuzz_$t ($mode) for $secs s"
  if [ "$(cat "$build/fuzz_$t.rc" 2>/dev/null || echo 1)" != 0 ]; then
    status=1
    tail -40 "$build/fuzz_$t.log"
  fi
  grep -E "stat::number_of_executed_units|stat::average_exec_per_sec|Done [0-9]+ runs" "$build/fuzz_$t.log" | tail -3
done
exit $status
