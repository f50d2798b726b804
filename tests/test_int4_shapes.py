"""Reshape, Squeeze and Unsqueeze of 4-bit integers (i4/u4), which onnxruntime has no kernel for (were: refused,
"onnxruntime has no Reshape kernel that runs T u4"): a constant is reshaped at conversion time (the decompression
pattern Const(u4) -> Reshape -> Convert -> Subtract -> Multiply), data of run time travels in 8 bits and is cast
back, exact either way. Checked against OpenVINO's reference on IRs OpenVINO builds."""

import numpy as np
import pytest

openvino = pytest.importorskip("openvino")
import openvino as ov  # noqa: E402
import openvino.opset8 as o8  # noqa: E402

from ir_testing import convert, evaluate_ir, model_of, parameter, run_onnx, save_ir  # noqa: E402

_RANGES = {"u4": (0, 16), "i4": (-8, 8)}


def _const4(et: str, shape: list[int], seed: int) -> ov.Node:
    lo, hi = _RANGES[et]
    values = np.random.default_rng(seed).integers(lo, hi, int(np.prod(shape)))
    return ov.op.Constant(getattr(ov.Type, et), ov.Shape(shape), values.tolist())


@pytest.mark.parametrize("et", ["u4", "i4"])
@pytest.mark.parametrize("special_zero, target", [(False, [8, 4]), (True, [0, -1])])
def test_constant_weights_reshaped_then_decompressed_match_openvino(tmp_path, et, special_zero, target):
    """Const(4-bit) [8, 2, 2] -> Reshape -> Convert(f32) -> Subtract(zero point) -> Multiply(scale) -> MatMul: the
    decompression pattern with the Reshape first, which becomes onnxruntime's MatMulNBits (4-bit weights)."""
    w = o8.reshape(_const4(et, [8, 2, 2], 1), o8.constant(np.array(target, np.int64)), special_zero)
    zp = np.float32(8 if et == "u4" else 0)
    weights = o8.multiply(o8.subtract(o8.convert(w, "f32"), o8.constant(zp)), o8.constant(np.float32(0.25)))
    x = parameter([3, 8], name="x")
    xml = save_ir(model_of(o8.matmul(x, weights, False, False), [x]), tmp_path)
    onnx_model = convert(xml)
    assert [n.op_type for n in onnx_model.graph.node] == ["MatMulNBits"]
    feeds = [np.random.default_rng(2).standard_normal((3, 8)).astype(np.float32)]
    got, want = run_onnx(onnx_model, feeds)[0], evaluate_ir(xml, feeds)[0]
    assert got.dtype == want.dtype == np.float32 and got.shape == want.shape == (3, 4)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("et", ["u4", "i4"])
def test_a_reshaped_4bit_constant_folds_and_stays_4bit(tmp_path, et):
    """Const(4-bit) -> Reshape -> Convert(f32), no decompression pattern: the Reshape folds into the constant, which
    stays 4-bit in the ONNX (converted at run time)."""
    w = o8.reshape(_const4(et, [4, 2, 2], 4), o8.constant(np.array([2, -1], np.int64)), False)
    x = parameter([2, 8], name="x")
    xml = save_ir(model_of(o8.add(x, o8.convert(w, "f32")), [x]), tmp_path)
    onnx_model = convert(xml)
    assert not any(n.op_type == "Reshape" for n in onnx_model.graph.node)
    assert [list(t.dims) for t in onnx_model.graph.initializer if t.data_type in (21, 22)] == [[2, 8]]  # (U)INT4
    feeds = [np.zeros((2, 8), np.float32)]
    got, want = run_onnx(onnx_model, feeds)[0], evaluate_ir(xml, feeds)[0]
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(want)) > 4


@pytest.mark.parametrize("et", ["u4", "i4"])
@pytest.mark.parametrize("op", ["reshape", "squeeze", "unsqueeze", "squeeze_dynamic"])
@pytest.mark.parametrize("also_shape_of", [False, True])
def test_run_time_4bit_data_through_shape_ops_matches_openvino(tmp_path, et, op, also_shape_of):
    """Floats converted to 4 bits at run time (truncated and wrapped, as OpenVINO does), moved by the shape op,
    converted back to f32: every value as OpenVINO's reference gives it. Read only by the Convert, the moved
    values stay in 8 bits (one Cast to 4 bits in all: the first Convert's); read by a ShapeOf too, they are cast
    back to 4 bits."""
    x = parameter([2, 1, 6] if op != "squeeze_dynamic" else [2, -1, 6], name="x")
    q = o8.convert(x, et)
    moved = {"reshape": lambda: o8.reshape(q, o8.constant(np.array([3, 4], np.int64)), False),
             "squeeze": lambda: o8.squeeze(q, o8.constant(np.array([1], np.int64))),
             "unsqueeze": lambda: o8.unsqueeze(q, o8.constant(np.array([0, 3], np.int64))),
             "squeeze_dynamic": lambda: o8.squeeze(q, o8.constant(np.array([1], np.int64)))}[op]()
    outputs = [o8.convert(moved, "f32")] + ([o8.shape_of(moved)] if also_shape_of else [])
    xml = save_ir(model_of(outputs, [x]), tmp_path)
    onnx_model = convert(xml)
    to_4bit = [n for n in onnx_model.graph.node if n.op_type == "Cast" and n.attribute[0].i in (21, 22)]
    assert len(to_4bit) == (2 if also_shape_of else 1)
    feeds = [np.random.default_rng(3).uniform(-20, 20, (2, 1, 6)).astype(np.float32)]
    got, want = run_onnx(onnx_model, feeds), evaluate_ir(xml, feeds)
    assert len(got) == len(want) == len(outputs)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    assert len(np.unique(want[0])) > 4  # the values cover the type's range, not a constant
