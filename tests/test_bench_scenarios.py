"""The scenarios of benchmarks/bench_ops.py (op_scenarios*.py) build, and the smallest of each op runs once.

Every scenario's models are built (the OpenVINO model holding the op, the native ONNX model and Range-11's
body, loaded by onnxruntime, the OpenVINO baseline), and the smallest scenario of each op goes through the
bench's own ``prepare``: converted, run in onnxruntime and checked against OpenVINO's CPU plugin (Range: the
numpy reference) and the native model, as a bench run checks them. Nothing is timed. The bench's sizes are
kept (the smallest of each op: at most 224,000 output elements); a NameError in a scenario builder used to
show first in a bench run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnxruntime
import pytest

import openvino as ov

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import bench_ops  # noqa: E402

#: The scenario modules' random generators as imported: each op's scenarios are built from that state, as a bench
#: run of that op alone builds them (built after others, MulticlassNms's PP-YOLO head has two scores 4e-7 apart
#: that OpenVINO's CPU plugin outputs in the other order)
_RNG_STATES = {name: sys.modules[name].RNG.bit_generator.state
               for name in ("op_scenarios", "op_scenarios_seq", "op_scenarios_nms", "op_scenarios_det")}


def _scenarios(op: str) -> list:
    build = bench_ops.SCENARIOS[op]
    sys.modules[build.__module__].RNG.bit_generator.state = _RNG_STATES[build.__module__]
    return build()


@pytest.mark.parametrize("op", sorted(bench_ops.SCENARIOS))
def test_scenarios_build_and_the_smallest_runs(op, tmp_path):
    scenarios = _scenarios(op)
    assert scenarios, f"{op}: no scenario"
    for sc in scenarios:
        assert isinstance(sc.ov_model(), ov.Model), sc.key
        for build in (sc.native, sc.range11):
            if build is not None:
                onnxruntime.InferenceSession(build().SerializeToString())  # (loads: valid for onnxruntime)
        if sc.ov_baseline is not None:
            assert isinstance(sc.ov_baseline(), ov.Model), sc.key
        assert all(isinstance(v, np.ndarray | np.generic) for v in sc.feeds.values()), sc.key
    smallest = min(scenarios, key=lambda s: s.out_elements)
    runners, _, _, checks, *_ = bench_ops.prepare(smallest, 1, str(tmp_path), use_ov=True)
    assert checks, f"{smallest.key}: nothing compared"
    assert all(checks.values()), f"{smallest.key}: {checks}"
    assert set(runners) >= {"ours", "native"}, smallest.key


def test_a_merge_recounts_the_nodes_of_the_rows_it_keeps(tmp_path):
    """``--merge`` keeps the timings of the rows it does not measure, but their node counts are counted again on
    the models as they convert now (RandomUniform's rows quoted an earlier run's 14 (141) beside 14 (144))."""
    sc = min(_scenarios("random_uniform"), key=lambda s: s.out_elements)
    stale = {"ours": (1, 1), "native": (1, 1), "openvino": (1, 1)}

    def row(threads):
        return {"op": sc.op, "name": sc.name, "const": sc.const, "threads": threads, "nodes": dict(stale),
                "ratio": {"ours": 1.0, "ours_over_openvino": 1.0}, "target_ratio": 3.0, "met": False}

    kept, measured = row(1), row(2)  # (the row measured: of 2 threads)
    assert bench_ops.recount([kept, measured], [measured], [sc], str(tmp_path), True) == 1
    _, nodes, ops, *_ = bench_ops.prepare(sc, 1, str(tmp_path), use_ov=True)
    assert kept["nodes"]["ours"] == nodes["ours"] != stale["ours"] and kept["ops"] == ops
    assert kept["met"] is True and measured["nodes"] == stale
