"""Maximum and Minimum with NaN against OpenVINO's reference (found through OpenVINO's JAX
frontend, whose `max` is Maximum-1): the reference computes ``x < y ? y : x`` (Minimum ``y < x ? y : x``),
so a NaN in the first input is kept and one in the second dropped; onnxruntime's Max and Min propagate both.
A constant second input without NaN keeps the single Max/Min node. Signed zeros are not exact: onnxruntime's
Where returns +0 for a -0 taken from its first branch (the reference: Maximum(-inf, -0) is -0, ours +0)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import openvino as ov  # noqa: E402  (the test extra installs it)
import openvino.opset1 as o1  # noqa: E402

from ir_testing import assert_close, convert, evaluate_ir, run_onnx, save_ir  # noqa: E402

NAN = np.nan
#: Every pair of NaN, -0, +0, 1, -inf; the second operand broadcast along rows.
VALUES = np.array([NAN, -0.0, 0.0, 1.0, -np.inf], np.float32)
A, B = np.meshgrid(VALUES, VALUES, indexing="ij")
NUMPY = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


def _layer(op, x, y):
    return (o1.maximum if op == "Maximum" else o1.minimum)(x, y)


@pytest.mark.parametrize("et", sorted(NUMPY))
@pytest.mark.parametrize("op", ["Maximum", "Minimum"])
def test_min_max_nan_matches_reference(op, et, tmp_path):
    x, y = (o1.parameter([5, -1], getattr(ov.Type, et), name=n) for n in ("x", "y"))
    xml = save_ir(ov.Model([_layer(op, x, y)], [x, y], op), tmp_path)
    a, b = A.astype(NUMPY[et]), B.astype(NUMPY[et])
    got = run_onnx(convert(xml), [a, b])[0]
    want = evaluate_ir(xml, [a, b])[0]
    assert_close(got, want, f"{op} {et}")  # NaN where NaN; -0 equals +0 (below)
    # the definition, spelled out: NaN in x kept, NaN in y dropped
    first = np.isnan(A) & ~np.isnan(B)
    second = ~np.isnan(A) & np.isnan(B)
    assert np.isnan(got.astype(np.float32)[first]).all() and (got.astype(np.float32)[second] == A[second]).all()


@pytest.mark.parametrize("op", ["Maximum", "Minimum"])
def test_min_max_with_constant_second_input(op, tmp_path):
    """Relu-like ``Maximum(x, 0)``: one Max/Min node; NaN in x comes through as in the reference."""
    x = o1.parameter([-1], ov.Type.f32, name="x")
    xml = save_ir(ov.Model([_layer(op, x, o1.constant(np.float32(0.5)))], [x], op), tmp_path)
    model = convert(xml)
    assert [n.op_type for n in model.graph.node] == ["Max" if op == "Maximum" else "Min"]
    a = VALUES
    assert_close(run_onnx(model, [a])[0], evaluate_ir(xml, [a])[0], op)
