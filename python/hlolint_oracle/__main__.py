"""`python -m hlolint_oracle [KERNEL] [--scalars JSON] [--mutation NAME] [--mode MODE] [--json]`

Without a kernel: lists the kernels, their scalar inputs and planted bugs. With one: runs it under jax's TPU
interpreter in both DMA execution modes (or `--mode`) and prints what the interpreter saw; exit status 0 when
every mode ran clean, 1 otherwise. `--scalars '{"kv_lens": [0, 16]}'` replays a static witness."""

import argparse
import json
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# the multi-device kernels (all_gather) need several jax devices; on CPU they must be asked for before jax starts
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hlolint_oracle", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernel", nargs="?")
    ap.add_argument("--scalars", default="{}", help="JSON object: scalar input name -> value or list")
    ap.add_argument("--mutation", help="run this planted bug instead of the kernel")
    ap.add_argument("--mode", choices=["on_wait", "eager"], action="append", help="default: both")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--hang-seconds", type=float, default=20.0)
    args = ap.parse_args(argv)

    from . import CASES, replay, to_json

    if not args.kernel:
        for case in CASES.values():
            slow = " (slow)" if case.slow else ""
            print(f"{case.name}{slow}: {case.origin}\n  scalars: {json.dumps(case.scalars)}")
            for m in case.mutations.values():
                print(f"  mutation {m.name}: {m.doc}")
        return 0
    if args.kernel not in CASES:
        print(f"unknown kernel {args.kernel!r}; known: {', '.join(CASES)}", file=sys.stderr)
        return 2
    results = replay(args.kernel, json.loads(args.scalars), mutation=args.mutation,
                     modes=tuple(args.mode or ("on_wait", "eager")), hang_seconds=args.hang_seconds)
    print(to_json(results) if args.json else "\n".join(str(r) for r in results.values()))
    return 0 if all(r.clean for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
