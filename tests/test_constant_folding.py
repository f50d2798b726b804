"""Constant folding (converters/ir_to_onnx/fold.py): a layer whose inputs are all small constants becomes the
constant its translation computes, whatever its type; big constants (weights) and random draws are left as
they are. Values are checked against OpenVINO's reference."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset8 as o8

from ir_testing import check_ir, convert, save_ir
from ir_testing import parameter as P
from test_if_constant_condition import _if, _transpose


def test_shape_arithmetic_of_any_layer_type_folds(tmp_path):
    """ShapeOf -> Gather -> Multiply -> Equal -> If, on static dims: Gather and Multiply have no folding of
    their own, the condition folds all the same and only the live body is left."""
    x = P([2, 3, 4, 5], name="x")
    channels = o8.gather(o8.shape_of(x), o1.constant(np.int64(1)), o1.constant(np.int64(0)))
    cond = o1.equal(o1.multiply(channels, o1.constant(np.int64(2))), o1.constant(np.int64(6)))
    out = _if(cond, x, _transpose([0, 3, 1, 2]), _transpose([2, 0, 1]))
    xml = save_ir(ov.Model([o1.relu(out)], [x], "gather_dispatch"), tmp_path)
    model = check_ir(xml, [np.random.default_rng(6).standard_normal((2, 3, 4, 5)).astype(np.float32)],
                     backend="cpu")
    assert [n.op_type for n in model.graph.node] == ["Transpose", "Relu"]


def test_small_constants_fold_weights_do_not(tmp_path):
    """x + (a * b) for a, b of 64 elements: the product is one initializer; for 65 elements the Multiply stays
    (weights are never evaluated or copied)."""
    rng = np.random.default_rng(7)
    for n, folded in ((64, True), (65, False)):
        x = P([n], name="x")
        a, b = (o1.constant(rng.standard_normal(n).astype(np.float32)) for _ in range(2))
        xml = save_ir(ov.Model([o1.add(x, o1.multiply(a, b))], [x], f"small_{n}"), tmp_path / str(n))
        model = check_ir(xml, [rng.standard_normal(n).astype(np.float32)])
        assert [node.op_type for node in model.graph.node] == (["Add"] if folded else ["Mul", "Add"])


def test_random_draws_are_not_folded(tmp_path):
    """RandomUniform with both seeds 0 draws anew at each run: its constant inputs make no constant."""
    shape = o1.constant(np.array([4], np.int64))
    low, high = o1.constant(np.float32(0)), o1.constant(np.float32(1))
    x = P([4], name="x")
    draw = o8.random_uniform(shape, low, high, "f32", 0, 0)
    xml = save_ir(ov.Model([o1.add(x, draw)], [x], "draw"), tmp_path)
    assert [n.op_type for n in convert(xml).graph.node] == ["RandomUniform", "Add"]
