#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time and prints executions and crashes per target.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 60 s, every target)
# Seed corpora (fuzz/corpus/<target>, git-ignored) are made from tests/data and the fixtures on each run; crashes
# land in fuzz/artifacts/<target>/ — each one becomes a regression test (tests/it/robustness.rs and friends).
# Needs nightly (installed on these machines) and cargo-fuzz (installed from crates.io when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(hlo mlir llo sniff bytecode packs pipeline)

command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz

# seed <target> <pick-byte-or-empty> <files...>: copies small files (≤ 256 kB) into the target's corpus, with a
# leading byte when the target reads its first byte as a choice.
seed() {
  local t="$1" pick="$2"
  shift 2
  mkdir -p "fuzz/corpus/$t"
  for f in "$@"; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 262144 ] || continue
    local out
    out="fuzz/corpus/$t/$(echo "$pick$f" | md5sum | cut -c1-16)"
    if [ -n "$pick" ]; then { printf "\\x$pick"; cat "$f"; } >"$out"; else cp "$f" "$out"; fi
  done
}
shopt -s nullglob globstar
seed hlo "" tests/data/hlo/* fixtures/fp8_matmul_2d/v5e/*/hlo/*after_optimizations.txt
seed mlir "" tests/data/mlir/* fixtures/fp8_matmul_2d/v5e/*/mosaic/* fixtures/jax_pallas_ops/*@v5e/mosaic/*original*
seed llo "00" fixtures/fp8_matmul_2d/tpu7x+v6e/v2@tpu7x/llo/*final_bundles.txt
seed llo "01" fixtures/fp8_matmul_2d/tpu7x+v6e/v2@tpu7x/llo/*schedule-analysis*
seed llo "02" fixtures/fp8_matmul_2d/tpu7x+v6e/v2@tpu7x/llo/*utilization*
seed llo "03" fixtures/fp8_matmul_2d/tpu7x+v6e/v2@tpu7x/llo/*bufferinfo*
seed llo "04" fixtures/fp8_matmul_2d/tpu7x+v6e/v2@tpu7x/llo/*allocinfo*
seed llo "05" fixtures/fp8_matmul_2d/tpu7x+v6e/v2@tpu7x/llo/*scheduleinfo*
seed sniff "" tests/data/hlo/* tests/data/mlir/* tests/data/llo/*
seed bytecode "" tests/data/bytecode/*
seed packs "00" rules/*.yaml tests/data/rules/**/*.yaml
seed packs "01" tests/data/rules/**/hlolint.toml
seed packs "03" pyproject.toml
seed pipeline "00" tests/data/real_mutants/**/*.txt fixtures/fp8_matmul_2d/v5e/*/hlo/*after_optimizations.txt
seed pipeline "81" fixtures/fp8_matmul_2d/v5e/*/stablehlo.mlir
seed pipeline "02" fixtures/fp8_matmul_2d/v5e/*/mosaic/*post-deserialization* fixtures/jax_pallas_ops/*@v5e/mosaic/*original*
seed pipeline "83" fixtures/fp8_matmul_2d/v5e/*/llo/*final_bundles.txt

summary=()
for t in "${targets[@]}"; do
  dict=()
  [ "$t" = hlo ] && dict=(-dict=fuzz/hlo.dict)
  log="fuzz/artifacts/$t.log"
  mkdir -p "fuzz/artifacts/$t"
  # -timeout: one input running over 20 s is a hang (the analyses have budgets well under that);
  # -rss_limit_mb: memory blowing up on a small input is a bug too.
  set +e
  cargo +nightly fuzz run "$t" "fuzz/corpus/$t" -- -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 \
    -artifact_prefix="fuzz/artifacts/$t/" -print_final_stats=1 "${dict[@]}" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  # crash-, timeout-, oom-, leak- files are failures; slow-unit- files are inputs over 10 s in the instrumented build
  # (worth a look, not a failure: the release build is several times faster).
  crashes=$(find "fuzz/artifacts/$t" -type f ! -name 'slow-unit-*' | wc -l)
  slow=$(find "fuzz/artifacts/$t" -type f -name 'slow-unit-*' | wc -l)
  summary+=("$(printf '%-9s exit %-3s executions %-9s failures %-3s slow %s' "$t" "$rc" "$execs" "$crashes" "$slow")")
done
printf '%s\n' "${summary[@]}"
