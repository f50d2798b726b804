"""Test helpers shared by the domain's detection heads and NMS ops (DetectionOutput, Proposal, MulticlassNms, ...):
tie-heavy scores and the comparison of detection rows (ids and scores exactly, boxes within a few ulps)."""

from __future__ import annotations

import numpy as np
import onnx
from hypothesis import settings

import onnx_ext
from domain_ops import node_model, run_three_ways
from onnx_ext.ops import SPECS

#: Hypothesis examples per differential test of these ops (each compiles the op on OpenVINO's CPU plugin and
#: loads onnxruntime sessions): a sixth of the profile's, 10 by default, 100 with HYPOTHESIS_PROFILE=thorough.
EXAMPLES = max(1, settings().max_examples // 6)


def tied_scores(rng, shape, levels: int, spread=None) -> np.ndarray:
    """Scores in [0, 1) drawn from ``levels`` values (many ties), plus ``spread`` (broadcast) when given: a
    per-class offset that keeps ties within a class and none across classes."""
    scores = rng.integers(0, levels, shape) / levels
    if spread is not None:
        scores = scores + spread
    return scores.astype(np.float32)


def nms_outputs(inputs, attrs) -> list:
    """``node_model``'s outputs of a MatrixNms or MulticlassNms node: rows of the boxes' type, then indices and
    counts of its ``output_type``."""
    index = np.int32 if attrs["output_type"] == onnx.TensorProto.INT32 else np.int64
    return [(inputs[0].dtype, 2), (index, 2), (index, 1)]


def assert_outputs_equal(got, want, what: str) -> None:
    """Every output in ``got`` has the dtype and the values of ``want``'s."""
    assert len(got) == len(want), f"{what}: {len(got)} outputs vs {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and np.array_equal(g, w), f"{what} output {k}:\n{g}\nvs\n{w}"


def check_three_ways(op: str, inputs, attrs, outputs, want, const=None, known_shapes=False) -> None:
    """One node of ``op`` (``node_model``'s arguments) run as the function, inlined and by the reference evaluator:
    every output exactly ``want``."""
    model = node_model(op, inputs, attrs, outputs, const, known_shapes)
    for how, got in run_three_ways(model, inputs).items():
        assert_outputs_equal(got, want, how)


def run_f32(op: str, boxes, scores, **attrs) -> list:
    """The outputs of one f32 node of ``op`` (MatrixNms, MulticlassNms) in onnxruntime, asserted equal to the numpy
    reference's."""
    inputs = [np.asarray(boxes, np.float32), np.asarray(scores, np.float32)]
    model = node_model(op, inputs, attrs, [(np.float32, 2), (np.int64, 2), (np.int64, 1)])
    got = onnx_ext.run(model, {"in0": inputs[0], "in1": inputs[1]})
    want = SPECS[op].run_reference(*inputs, **SPECS[op].normalize(attrs))
    for g, w in zip(got, want):
        assert np.array_equal(g, w)
    return got


def assert_rows(got, want, what: str, exact: int, ulps: int = 4, atol: float = 0.0):
    """Rows of ``want.shape[-1]`` values: the first ``exact`` columns (ids, labels, scores) equal, the rest (box
    corners) within ``ulps`` (exp and division differ by an ulp between libraries) or ``atol`` (a corner near 0
    that is the difference of larger values: OpenVINO's CPU plugin fuses multiply-adds)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, \
        f"{what}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    width = want.shape[-1] if want.ndim else 1
    g, w = got.reshape(-1, width).astype(np.float64), want.reshape(-1, width).astype(np.float64)
    assert np.array_equal(g[:, :exact], w[:, :exact], equal_nan=True), \
        f"{what}: rows differ:\n{g[:, :exact]}\nvs\n{w[:, :exact]}"
    spacing = np.abs(np.spacing(np.abs(want.reshape(-1, width)[:, exact:]))).astype(np.float64)
    bad = ~((np.abs(g[:, exact:] - w[:, exact:]) <= ulps * spacing + atol)
            | (np.isnan(g[:, exact:]) & np.isnan(w[:, exact:])))
    assert not bad.any(), f"{what}: boxes differ: {g[:, exact:][bad][:4]} vs {w[:, exact:][bad][:4]}"
