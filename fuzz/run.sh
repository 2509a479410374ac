#!/usr/bin/env bash
# Runs every fuzz target for a bounded time, seeded from the corpus and the
# generated samples. Usage: fuzz/run.sh BUILD_DIR CORPUS_DIR SECONDS
# A crash leaves its input as BUILD_DIR/fuzz-artifacts/<target>/crash-*: add it
# to tests/regressions/ (the regression test replays every file there).
set -euo pipefail
build=$1 corpus=$2 seconds=${3:-60}
seeds=$build/fuzz-seeds
rm -rf "$seeds" && mkdir -p "$seeds"
"$build/bspkit-sample" "$seeds" > /dev/null
# Small and medium corpus maps seed well; the largest ones only slow the fuzzer down.
find "$corpus" -name '*.bsp' -size -1200k -exec cp {} "$seeds/" \;
cp tests/regressions/* "$seeds/" 2>/dev/null || true
status=0 failed=()
for target in "$build"/fuzz/fuzz_*; do
  [ -x "$target" ] || continue
  name=$(basename "$target")
  work=$build/fuzz-work/$name artifacts=$build/fuzz-artifacts/$name
  mkdir -p "$work" "$artifacts"
  echo "=== $name: ${seconds}s"
  if ! "$target" "$work" "$seeds" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
       -max_len=4000000 -artifact_prefix="$artifacts/" -print_final_stats=1 2> "$build/$name.log"; then
    echo "$name FAILED: see $build/$name.log and $artifacts" >&2
    tail -40 "$build/$name.log" >&2
    status=1 failed+=("$name")
  else
    grep -E 'stat::number_of_executed_units|Done' "$build/$name.log" | tail -2
  fi
done
# A CI log may show only its last lines: name each failure again here, with
# libFuzzer's verdict and the first frames in bspkit's own code.
for name in "${failed[@]}"; do
  echo "FAILED $name: $(grep -m1 -E 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error' "$build/$name.log")" >&2
  grep -E '^ +#[0-9]+ .* in bspkit::' "$build/$name.log" | head -4 >&2 || true
  ls "$build/fuzz-artifacts/$name" >&2
done
exit $status
