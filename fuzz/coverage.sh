#!/bin/sh
# fuzz/coverage.sh [TARGET...]: line coverage of each reader by its fuzz corpus. Builds the
# targets with source-based coverage (build-fuzz-cov/, clang++-14), runs each once over its
# corpus (the working one of fuzz/run.sh: build-fuzz-fast/corpus, else build-fuzz/corpus, else the
# committed seeds) and prints llvm-cov-14's line coverage of the reader's headers.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz-cov
targets=${*:-graph_json topology_json plan_json pipedream tarnawski piper}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 -DDEVPLACE_FUZZ=ON \
      -DDEVPLACE_FUZZ_COVERAGE=ON -DDEVPLACE_BUILD_TESTS=OFF -DDEVPLACE_BUILD_EXAMPLES=OFF -DDEVPLACE_BUILD_CLI=OFF \
      -DDEVPLACE_INSTALL=OFF >/dev/null
io=$root/include/devplace/io
for t in $targets; do
  nice cmake --build "$build" -j2 --target "fuzz_$t" >/dev/null
  corpus=$root/build-fuzz-fast/corpus/$t                 # the long runs (FUZZ_MODE=fast) first,
  [ -d "$corpus" ] || corpus=$root/build-fuzz/corpus/$t   # then the short ones,
  [ -d "$corpus" ] || corpus=$root/fuzz/corpus/$t         # then the committed seeds
  echo "== $t: $(ls "$corpus" | wc -l) inputs in $corpus"
  LLVM_PROFILE_FILE="$build/$t.profraw" "$build/fuzz/fuzz_$t" -runs=0 "$corpus" >/dev/null 2>&1
  llvm-profdata-14 merge -sparse "$build/$t.profraw" -o "$build/$t.profdata"
  case $t in
    graph_json) files="$io/graph_json.hpp $io/detail/graph_reading.hpp $io/detail/json_reader.hpp" ;;
    topology_json) files="$io/topology_json.ipp $root/include/devplace/topology/generators.hpp" ;;
    plan_json) files="$io/plan_json.ipp" ;;
    pipedream) files="$io/pipedream.hpp" ;;
    tarnawski) files="$io/tarnawski.hpp $io/tarnawski_instance.ipp" ;;
    piper) files="$io/piper.ipp" ;;
    *) files="" ;;
  esac
  llvm-cov-14 report "$build/fuzz/fuzz_$t" -instr-profile="$build/$t.profdata" $files
done
