"""The per-index cost of onnxruntime's Gather against GatherElements and Expand (docs/onnxruntime.md, "Gather
costs ~40x GatherElements per index": why Broadcast's `*_any` bodies gather rows, not elements). One f32 output of 2^20
elements from a 1,024-element table (cache-resident: the kernels' own cost, not memory misses): Gather of a 1-D
table by 2^20 indices, GatherElements of the same, Expand of the table as a [1, 1024] row to [1024, 1024].
Interleaved rounds at 1 thread (benchmarks/harness.py); per variant the median over rounds of ns per output
element, and its ratio to Expand's in the same round.

    python benchmarks/bench_gather_cost.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from harness import machine_info, session, time_interleaved  # noqa: E402

N, TABLE = 2**20, 1024


def _model(op: str, x_shape: list[int], second: tuple[str, int, list[int]], attrs: dict) -> bytes:
    name, et, shape = second
    graph = helper.make_graph([helper.make_node(op, ["x", name], ["y"], **attrs)], op,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape),
                               helper.make_tensor_value_info(name, et, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10).SerializeToString()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    info = machine_info()
    table = np.random.default_rng(0).standard_normal(TABLE).astype(np.float32)
    index = np.arange(N, dtype=np.int64) % TABLE
    variants = {
        "Gather": (_model("Gather", [TABLE], ("i", TensorProto.INT64, [N]), {"axis": 0}), {"x": table, "i": index}),
        "GatherElements": (_model("GatherElements", [TABLE], ("i", TensorProto.INT64, [N]), {"axis": 0}),
                           {"x": table, "i": index}),
        "Expand": (_model("Expand", [1, TABLE], ("shape", TensorProto.INT64, [2]), {}),
                   {"x": table.reshape(1, TABLE), "shape": np.array([N // TABLE, TABLE])}),
    }
    runs = {}
    for name, (model, feeds) in variants.items():
        sess = session(model, threads=1)
        assert np.array_equal(sess.run(None, feeds)[0].reshape(-1), np.tile(table, N // TABLE))  # same output
        runs[name] = (lambda s=sess, f=feeds: s.run(None, f))
    samples = time_interleaved(runs, args.rounds, budget_s=2.0 * args.rounds, calls_between=(3, 50))
    walls = {name: samples[name]["wall"] for name in runs}
    lines = ["# onnxruntime: Gather, GatherElements and Expand per output element", "",
             f"{info['cpu']}, {info['cores']} cores; onnxruntime {info['onnxruntime']}; {info['date']}; load average "
             f"{', '.join(f'{v:.1f}' for v in info['load_avg'])} at the start; {args.rounds} interleaved rounds, "
             "1 thread. `python benchmarks/bench_gather_cost.py`", "",
             f"2^20 f32 output elements from a {TABLE}-element table (the same output each).", "",
             "| op | ns per element (median) | x Expand (median of per-round ratios) |", "|---|---|---|"]
    for name, wall in walls.items():
        ratio = statistics.median(w / e for w, e in zip(wall, walls["Expand"]))
        lines.append(f"| {name} | {statistics.median(wall) / N * 1e9:.2f} | {ratio:.1f} |")
    text = "\n".join(lines) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench_gather_cost.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
