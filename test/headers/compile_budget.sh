#!/usr/bin/env bash
# compile_budget.sh BUDGETS CXX FLAGS INCLUDE_DIR [HEADER...]
#
# The compile-time budget of the public headers (docs/compile-time.md): every header under
# INCLUDE_DIR/devplace, not detail/ nor the optional backends' (or the HEADERs given, relative to
# INCLUDE_DIR), is compiled alone, included twice (it must stand on its own and be guarded), with
# `CXX FLAGS -c`, and its CPU time (user + sys of the compiler) must be within its budget.
#
# CPU time, not wall time, and in reference seconds: the three anchors below are compiled in the
# same run, and the machine's scale is the mean of their measured / reference ratios, so that a
# loaded or a slow machine (which slows the anchors as much as the headers) moves no verdict. The
# reference seconds are those of the anchors with g++ 12 at -O2 on the machine the budgets were
# set on (the project's 2-core development machine, lightly loaded), so that there a reference
# second is a CPU second. The budget is 3 s; BUDGETS lists the headers still above it and why. A header over
# its budget is measured again, after the anchors again, and fails if the second try is over too.
set -uo pipefail
budgets=$1 cxx=$2 flags=$3 include_dir=$4
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TIMEFORMAT='%U %S'

cpu() {  # cpu '<header>': the compiler's CPU seconds; exits the test when it does not compile
  printf '#include %s\n#include %s\n' "$1" "$1" >"$tmp/tu.cpp"
  local t
  # shellcheck disable=SC2086
  t=$( { time "$cxx" $flags -I"$include_dir" -c "$tmp/tu.cpp" -o "$tmp/tu.o" 2>"$tmp/err"; } 2>&1 ) || {
    echo "FAIL $1: does not compile on its own:"; head -20 "$tmp/err"; exit 1; }
  awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%.3f", a[1] + a[2] }'
}

declare -A reference=(['<Eigen/Dense>']=2.1 ['<range/v3/all.hpp>']=2.1 ['<nlohmann/json.hpp>']=2.2)
measure_scale() {  # sets scale: the mean of the anchors' measured / reference CPU time
  local a s
  scale=0
  for a in "${!reference[@]}"; do
    s=$(cpu "$a")
    scale=$(awk -v s="$scale" -v m="$s" -v r="${reference[$a]}" 'BEGIN { print s + m / r / 3 }')
    echo "anchor $a: $s s CPU (reference ${reference[$a]} s)"
  done
  echo "scale: $scale (measured / reference)"
}
measure_scale

declare -A budget=()
while read -r h b _; do
  [[ -z "$h" || "$h" == \#* ]] && continue
  budget[$h]=$b
done <"$budgets"

if [ $# -gt 0 ]; then
  headers=("$@")
else
  mapfile -t headers < <(cd "$include_dir" && find devplace -name '*.hpp' -not -path '*/detail/*' \
    -not -path 'devplace/ilp/backends/*' -not -path 'devplace/map/scotch.hpp' -not -path 'devplace/sweep/mpi.hpp' | sort)
fi

failed=0
for h in "${headers[@]}"; do
  key=${h#devplace/}
  limit=${budget[$key]:-3}
  over=1
  for try in 1 2; do
    [ $try = 2 ] && measure_scale  # the load may have changed since: the anchors again
    s=$(cpu "<$h>")
    ref=$(awk -v s="$s" -v k="$scale" 'BEGIN { printf "%.2f", s / k }')
    if awk -v r="$ref" -v l="$limit" 'BEGIN { exit !(r <= l) }'; then over=0; break; fi
  done
  if [ $over = 1 ]; then
    echo "FAIL $h: $ref s (reference; measured $s s CPU), budget $limit s"
    failed=$((failed + 1))
  else
    echo "ok   $h: $ref s (budget $limit s)"
  fi
done
echo "${#headers[@]} headers, $failed over budget"
[ $failed = 0 ]
