"""Wall time of one decode step of LLM ONNX folders in onnxruntime (issue 17): ``session.run`` on one token after
a past of ``--past`` (the inputs of ``profile_llm_step.feeds``), the models interleaved in blocks (each block the
median of ``--runs`` steps), with the median and quartiles of each pair's per-block ratio (a slow spell of a shared
machine hits both models of a block alike). Unlike ``profile_llm_step.py`` this counts onnxruntime's time between
the kernels too (per node, on the calling thread), which fewer nodes save. ``--clock thread``: the calling thread's
CPU time instead of the wall time (``time.thread_time``: all of a step at 1 thread, its share but the intra-op
worker's at 2), which other processes' load moves much less than the wall time (it still pays their cache misses).

    python benchmarks/step_time_llm.py --threads 1 /tmp/bench/ours-requant-int4 /tmp/bench/builder-int4
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from profile_llm_step import feeds  # noqa: E402


def step_times(folders: list[Path], threads: int, past: int, blocks: int, runs: int,
               clock=time.perf_counter) -> dict[str, list[float]]:
    import onnxruntime as ort

    sessions = []
    for folder in folders:
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        session = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
        sessions.append((folder.name, session, feeds(session, folder, past)))
    for _, session, inputs in sessions:  # warm up
        for _ in range(runs):
            session.run(None, inputs)
    times = {name: [] for name, _, _ in sessions}
    for _ in range(blocks):
        for name, session, inputs in sessions:
            block = []
            for _ in range(runs):
                start = clock()
                session.run(None, inputs)
                block.append(clock() - start)
            times[name].append(statistics.median(block))
    return times


def report(times: dict[str, list[float]], threads: int, past: int, load: tuple, clock: str = "wall") -> str:
    lines = [f"one decode step (past {past}), {threads} thread(s), {clock} time, {len(next(iter(times.values())))} "
             "blocks; load "
             f"average {' '.join(f'{x:.1f}' for x in load)} before, {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
             "after", "", "| model | median ms |", "|---|---|"]
    lines += [f"| {name} | {statistics.median(t) * 1e3:.3f} |" for name, t in times.items()]
    lines += ["", "| ratio | paired median | quartiles |", "|---|---|---|"]
    for a, b in itertools.combinations(times, 2):
        ratios = [y / x for x, y in zip(times[a], times[b])]
        q = statistics.quantiles(ratios, n=4)
        lines.append(f"| {b} / {a} | {statistics.median(ratios):.3f} | {q[0]:.3f}-{q[2]:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--past", type=int, default=24)
    parser.add_argument("--blocks", type=int, default=40)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--clock", choices=("wall", "thread"), default="wall",
                        help="wall time, or the calling thread's CPU time")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    clock = time.perf_counter if args.clock == "wall" else time.thread_time
    print(report(step_times(args.folders, args.threads, args.past, args.blocks, args.runs, clock), args.threads,
                 args.past, load, args.clock))
    return 0


if __name__ == "__main__":
    sys.exit(main())
