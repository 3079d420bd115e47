#!/usr/bin/env bash
# Regenerate fixtures/ with our own driver (src/driver/hlolint_compile.py) from examples/. Needs the venv of
# scripts/setup-python.sh (jax[tpu]==0.10.2); no TPU.
#
#   scripts/regen_fixtures.sh [fp8_matmul_2d|int8_hbm|whole_program|jax_pallas_ops|tpu_inference|all]  (default all)
#
# fp8_matmul_2d runs (each is one driver invocation with its own manifest.json):
#   fixtures/fp8_matmul_2d/tpu7x+v6e/  every version for tpu7x (native fp8 MXU) and v6e (fp8 converted to bf16)
#   fixtures/fp8_matmul_2d/v5e/        v1, v3, bug_upcast for v5e (fp8 emulated: differs from both above)
#   fixtures/fp8_matmul_2d/v4/         v1 (fails: Mosaic E2001, no fp8 matmul on v4) and bug_upcast (bf16: compiles)
#
# Kept: what the driver keeps by default (stablehlo.mlir; hlo/ before/after optimizations + memory-usage
# report; mosaic/ original, post-deserialization, post-apply-vector-layout, post-finalize-llo; llo/
# final_bundles, schedule-analysis_final_bundles, final_hlo-static-per-bundle-utilization,
# memory-space-assignment-*, TLP-hlo; <unit>_hlo.txt; manifest.json). Dropped here: compile.log and
# list.log (libtpu warnings, machine-specific). Dump file names carry libtpu's timestamps, so every
# regeneration renames files; HLO metadata holds the absolute source paths of the machine that made them.
#
# int8_hbm: one run of examples/int8_hbm (an int8 matmul streaming "HBM" operands with its own DMAs: pinned with
# pltpu.with_memory_space_constraint, unpinned, pl.ANY) for tpu7x and v6e into fixtures/int8_hbm/tpu7x+v6e/
# (~1.5 MB: kept as the driver keeps it, like fp8_matmul_2d).
#
# whole_program: one run of examples/whole_program (a 256³ bf16 matmul as XLA computes it and as Pallas kernels,
# one with XLA's copy of an operand into VMEM before the call) for v5e into fixtures/whole_program/v5e/ (~1 MB:
# kept as the driver keeps it). What `hlolint compare` times as whole programs (docs/performance-model.md).
#
# jax_pallas_ops: one run of examples/jax_pallas_ops (jax's own Pallas TPU kernels) for tpu7x, v6e and v5e into
# fixtures/jax_pallas_ops/, then scripts/trim_fixtures.py (the policy is in its header and in
# fixtures/jax_pallas_ops/README.md): ~19 MB per target untrimmed. VERSIONS=a,b compiles only those versions
# and merges them into the existing fixtures (trim_fixtures.py --merge-into): the other units keep their files.
#
# tpu_inference: one run of examples/tpu_inference (tpu-inference's production kernels, python/requirements-kernels.txt)
# for tpu7x and v6e into fixtures/tpu_inference/, trimmed like jax_pallas_ops but keeping every kernel's Mosaic
# post-deserialization dump on both targets (--deser-everywhere: what the DMA analyses read); see
# fixtures/tpu_inference/README.md. libtpu's lockfile makes a compile fail while another process compiles: rerun.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
py="${PYTHON:-$repo/.venv/bin/python}"
if [[ ! -x "$py" ]]; then
  echo "regen_fixtures: $py not found; run scripts/setup-python.sh first" >&2
  exit 1
fi
driver="$repo/src/driver/hlolint_compile.py"
module="examples/fp8_matmul_2d"
dest="$repo/fixtures/fp8_matmul_2d"

what="${1:-all}"
case "$what" in
  fp8_matmul_2d | int8_hbm | whole_program | jax_pallas_ops | tpu_inference | all) ;;
  *) echo "regen_fixtures: unknown fixture set '$what' (fp8_matmul_2d, int8_hbm, whole_program, jax_pallas_ops, tpu_inference, all)" >&2; exit 2 ;;
esac

run() {  # run NAME TARGETS [VERSIONS]  (module and dest: $module, $dest; NAME "." = dest itself)
  local name="$1" targets="$2" versions="${3:-}"
  local out="$dest/$name"
  out="${out%/.}"
  rm -rf "$out"
  local args=(--module "$module" --target "$targets" --out "$out")
  [[ -n "$versions" ]] && args+=(--versions "$versions")
  echo "regen_fixtures: $name: --target $targets ${versions:+--versions $versions}"
  local t0=$SECONDS rc=0
  "$py" "$driver" "${args[@]}" > "$out.events.jsonl" || rc=$?
  # rc 1 = some version failed, which these fixtures expect (bug_bad_block, v4, see the READMEs); else a real error
  if [[ $rc -ne 0 && $rc -ne 1 ]]; then
    echo "regen_fixtures: driver exited $rc for $name" >&2
    cat "$out.events.jsonl" >&2
    exit "$rc"
  fi
  mv "$out.events.jsonl" "$out/events.jsonl"
  find "$out" \( -name compile.log -o -name list.log \) -delete
  "$py" - "$out/manifest.json" <<'PYEOF'
import json, sys
m = json.load(open(sys.argv[1]))
for r in m["results"]:
    err = r["error"]
    print(f"  {r['version']:<18} {r['target']:<6} {r['status']:<5} {r['elapsed_s']:>6.1f}s"
          + (f"  {err['kind']}: {err['message'].splitlines()[0][:90]}" if err else ""))
PYEOF
  echo "regen_fixtures: $name done in $((SECONDS - t0))s, $(du -sh "$out" | cut -f1)"
}

if [[ "$what" == fp8_matmul_2d || "$what" == all ]]; then
  mkdir -p "$dest"
  run "tpu7x+v6e" "tpu7x,v6e"
  run "v5e" "v5e" "v1,v3,bug_upcast"
  run "v4" "v4" "v1,bug_upcast"
  echo "regen_fixtures: total $(du -sh "$dest" | cut -f1) in $(find "$dest" -type f | wc -l) files"
fi

if [[ "$what" == int8_hbm || "$what" == all ]]; then
  module="examples/int8_hbm"
  dest="$repo/fixtures/int8_hbm"
  mkdir -p "$dest"
  run "tpu7x+v6e" "tpu7x,v6e"
fi

if [[ "$what" == whole_program || "$what" == all ]]; then
  module="examples/whole_program"
  dest="$repo/fixtures/whole_program"
  mkdir -p "$dest"
  run "v5e" "v5e"
fi

if [[ "$what" == jax_pallas_ops || "$what" == all ]]; then
  module="examples/jax_pallas_ops"
  final="$repo/fixtures/jax_pallas_ops"
  finalize="${FINALIZE_EVERYWHERE:-matmul_bf16,matmul_int8}"
  if [[ -n "${VERSIONS:-}" ]]; then
    # only these versions: compiled into a scratch folder, trimmed, then merged into the existing fixtures
    dest="$(mktemp -d)"
    run "run" "tpu7x,v6e,v5e" "$VERSIONS"
    "$py" "$repo/scripts/trim_fixtures.py" "$dest/run" --full-target tpu7x --finalize-everywhere "$finalize" \
      --merge-into "$final"
    rm -rf "$dest"
    dest="$final"
  else
    dest="$final"
    # keep the hand-written README across the rm -rf of run()
    readme="$(mktemp)"
    [[ -f "$dest/README.md" ]] && cp "$dest/README.md" "$readme"
    mkdir -p "$dest"
    run "." "tpu7x,v6e,v5e"
    [[ -s "$readme" ]] && cp "$readme" "$dest/README.md"
    rm -f "$readme"
    "$py" "$repo/scripts/trim_fixtures.py" "$dest" --full-target tpu7x --finalize-everywhere "$finalize"
  fi
  echo "regen_fixtures: jax_pallas_ops total $(du -sh --apparent-size "$dest" | cut -f1) in $(find "$dest" -type f | wc -l) files"
fi

if [[ "$what" == tpu_inference || "$what" == all ]]; then
  module="examples/tpu_inference"
  dest="$repo/fixtures/tpu_inference"
  readme="$(mktemp)"
  [[ -f "$dest/README.md" ]] && cp "$dest/README.md" "$readme"
  mkdir -p "$dest"
  run "." "tpu7x,v6e"
  [[ -s "$readme" ]] && cp "$readme" "$dest/README.md"
  rm -f "$readme"
  versions="$("$py" -c 'import json,sys; print(",".join(json.load(open(sys.argv[1]))["versions"]))' "$dest/manifest.json")"
  "$py" "$repo/scripts/trim_fixtures.py" "$dest" --full-target tpu7x --deser-everywhere "$versions"
  echo "regen_fixtures: tpu_inference total $(du -sh --apparent-size "$dest" | cut -f1) in $(find "$dest" -type f | wc -l) files"
fi
