"""python -m tests.ir_generator: run one-layer IR cases against OpenVINO (docs/ir-generator.md)."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import traceback
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.ir_generator", description=__doc__)
    parser.add_argument("--op", action="append", default=[],
                        help="only these IR types (or Type-version), case-insensitive; repeatable")
    parser.add_argument("--case", action="append", default=[], help="run these case ids, in this process")
    parser.add_argument("--sample", type=int, help="a seeded sample of this many cases, spread over the ops")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", "-j", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per case (default 120)")
    parser.add_argument("--out", type=Path, default=Path("ir-generator-out"),
                        help="where failures (IR, inputs, case.json) and summary.{json,md} go")
    parser.add_argument("--types", action="store_true",
                        help="only one case per op version and element type (static, alone, first attributes)")
    parser.add_argument("--shapes", choices=("static", "dyn_dims", "dyn_rank", "empty", "from_rank", "from_static_dims", "from_dynamic_dims"),
                        help="only cases of this shape mode")
    parser.add_argument("--body", choices=("plain", "if", "loop", "dead_if", "ti", "loop_sliced", "loop_merged", "loop_if", "f16_consts"),
                        help="only cases where the layer sits there")
    parser.add_argument("--load-only", action="store_true",
                        help="only check that the conversion loads (OpenVINO validates, does not run)")
    parser.add_argument("--round-trip", action="store_true",
                        help="convert each matching case's ONNX back to IR (converters.onnx_to_ir) and compare "
                             "that IR's outputs on OpenVINO with the original's: rt-refused, rt-run-error, rt-mismatch")
    parser.add_argument("--grep", help="only cases whose id matches this regular expression")
    parser.add_argument("--skip", action="append", type=Path, default=[],
                        help="the summary.json of an earlier run: its cases are not run (a new seed's sample is "
                             "otherwise drawn from every case, earlier samples' included); repeatable")
    parser.add_argument("--list", action="store_true", help="print the case ids and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every case's outcome")
    args = parser.parse_args(argv)

    from .cases import all_cases, find, type_cases
    from .report import select, summarize

    if args.case:
        from .run import run_case

        for case_id in args.case:
            case = find(case_id)
            try:
                result = run_case(case, args.out, load_only=args.load_only, round_trip=args.round_trip)
            except Exception:  # noqa: BLE001 - the harness's own error, shown whole
                traceback.print_exc()
                return 1
            print(f"{case.id}: {result['outcome']} ({result.get('backend', '-')}) {result['message']}")
            if args.verbose and "traceback" in result:
                print(result["traceback"])
        return 0
    pool = [c for c in (type_cases() if args.types else all_cases())
            if (args.shapes is None or c.shapes == args.shapes) and (args.body is None or c.body == args.body)]
    ran = {case_id for path in args.skip for case_id in json.loads(path.read_text())}
    pool = [c for c in pool if c.id not in ran and (args.grep is None or re.search(args.grep, c.id))]
    cases = select(pool, args.op, args.sample, args.seed)
    if args.list:
        print("\n".join(c.id for c in cases))
        return 0
    from .pool import run_cases

    args.out.mkdir(parents=True, exist_ok=True)
    results = {}
    start = time.monotonic()
    for i, (case, result) in enumerate(run_cases(cases, args.jobs, args.out, args.timeout, args.load_only,
                                                                 args.round_trip), 1):
        results[case.id] = result
        if args.verbose:
            print(f"[{i}/{len(cases)}] {case.id}: {result['outcome']} {result['message'][:200]}", flush=True)
        elif i % 200 == 0:
            print(f"{i}/{len(cases)} cases, {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
    table = summarize(cases, results)
    print(table)
    (args.out / "summary.md").write_text(table + "\n")
    (args.out / "summary.json").write_text(json.dumps(
        {c.id: {"family": c.family, **results[c.id]} for c in cases}, indent=0) + "\n")
    print(f"{len(cases)} cases in {time.monotonic() - start:.0f} s; failures and summary in {args.out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
