"""Constant folding (converters/ir_to_onnx/fold.py): a layer whose inputs are all small constants becomes the
constant its translation computes, whatever its type; big constants (weights) and random draws are left as
they are. Values are checked against OpenVINO's reference."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset8 as o8
import pytest

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


def _shape_patterns():
    """Shape arithmetic reading static dims of x [?, 2, 3, 4] (a dynamic batch), as frontends write it, feeding an
    input that must be a constant: (name, the layer reading it)."""
    import openvino.opset11 as o11

    def const(*v, t=np.int64):
        return o1.constant(np.array(v, t))

    def tf_slice_order(x):  # tf.shape(x)[1:] -> 5 - dims -> Concat([0], ...): Transpose order [0, 3, 2, 1]
        dims = o8.strided_slice(o8.shape_of(x), const(1), const(0), const(1), [0], [1])
        return o1.transpose(x, o1.concat([const(0), o1.subtract(const(5, 5, 5), dims)], 0))

    def torch_slice_axis(x):  # x.shape[2:] -> i32 -> [0] - 2: Split axis 1
        dims = o8.convert(o8.slice(o8.shape_of(x), const(2), const(2**63 - 1), const(1)), "i32")
        first = o8.gather(dims, o1.constant(np.int32(0)), o1.constant(np.int32(0)))
        axis = o1.subtract(first, o1.constant(np.int32(2)))
        return o1.split(x, axis, 2).output(1)

    def shrink_axis(x):  # tf.shape(x)[3] (shrink axis) - 3 -> Split axis 1, of i32 dims converted back to i64
        dims = o8.convert(o8.convert(o8.shape_of(x, "i32"), "i64"), "i64")
        axis = o1.subtract(o8.strided_slice(dims, const(3), const(4), const(1), [0], [0], shrink_axis_mask=[1]),
                           o1.constant(np.int64(3)))
        return o1.split(x, axis, 2).output(0)

    def concat_special_zero(x):  # Reshape to [0, dims[1], dims[2] * dims[3]] with special zero
        shape = o8.convert(o8.shape_of(x), "i32")
        pick = [o8.gather(shape, const(i, t=np.int32), o1.constant(np.int32(0))) for i in (1, 2, 3)]
        target = o1.concat([const(0, t=np.int32), pick[0], o1.multiply(pick[1], pick[2])], 0)
        return o1.reshape(x, target, True)

    def interpolate_axes(x):  # Interpolate-11 over axes (dims[2:4] as i32) - 1 = [2, 3]
        axes = o1.subtract(o8.strided_slice(o8.convert(o8.shape_of(x), "i32"), const(2), const(4), const(1), [0], [0]),
                           const(1, 1, t=np.int32))
        return o11.interpolate(x, const(6, 8), "nearest", "sizes", axes=axes)

    def squeezed_axis(x):  # Squeeze(Unsqueeze(Squeeze(dims[1:2]))) - 1: VariadicSplit axis 1
        dim = o1.squeeze(o8.slice(o8.shape_of(x), const(1), const(2), const(1)), const(0))
        axis = o1.subtract(o1.squeeze(o1.unsqueeze(dim, const(0)), const(0)), o1.constant(np.int64(1)))
        return o1.variadic_split(x, axis, const(1, 1)).output(1)

    return [tf_slice_order, torch_slice_axis, shrink_axis, concat_special_zero, interpolate_axes, squeezed_axis]


@pytest.mark.parametrize("pattern", ["tf_slice_order", "torch_slice_axis", "shrink_axis", "concat_special_zero",
                                     "interpolate_axes", "squeezed_axis"])
def test_shape_arithmetic_on_static_dims_folds(tmp_path, pattern):
    """StridedSlice / Slice / Gather of a ShapeOf of data with a dynamic batch, through Convert, Concat with
    constants, Squeeze/Unsqueeze and arithmetic, reading static dims only: a Transpose order, a Split axis, a
    Reshape target with special zero, Interpolate axes, a Roll axis get constants (were refused: "must be a
    constant", or computed at run time: the Transpose order, the Reshape target) and the layer reads no node
    but the data; values as OpenVINO's reference gives them. The ShapeOf's node, read by nothing after the
    folds, is dropped (assemble.py: it would run in every inference)."""
    build = {b.__name__: b for b in _shape_patterns()}[pattern]
    x = P([-1, 2, 3, 4], name="x")
    xml = save_ir(ov.Model([build(x)], [x], pattern), tmp_path)
    assert "ShapeOf" in xml.read_text()  # (written as built: nothing folded before)
    model = check_ir(xml, [np.random.default_rng(8).standard_normal((3, 2, 3, 4)).astype(np.float32)])
    known = {"x", ""} | {i.name for i in model.graph.initializer}
    assert set(model.graph.node[-1].input) <= known, [(n.op_type, list(n.input)) for n in model.graph.node]
    read = {name for n in model.graph.node for name in n.input} | {o.name for o in model.graph.output}
    assert all(any(o in read for o in n.output) for n in model.graph.node), \
        [(n.op_type, list(n.output)) for n in model.graph.node]


def test_shape_partly_dynamic_stays_computed(tmp_path):
    """A Reshape target of the dynamic batch (through scalar arithmetic) and static dims stays computed (it runs
    for another batch)."""
    x = P([-1, 2, 3, 4], name="x")
    batch = o8.gather(o8.shape_of(x), o1.constant(np.int64(0)), o1.constant(np.int64(0)))
    batch = o1.unsqueeze(o1.add(batch, o1.constant(np.int64(0))), o1.constant(np.int64(0)))
    target = o1.concat([batch, o1.constant(np.array([-1], np.int64))], 0)
    xml = save_ir(ov.Model([o1.reshape(x, target, False)], [x], "partly"), tmp_path)
    for n in (1, 5):
        model = check_ir(xml, [np.random.default_rng(n).standard_normal((n, 2, 3, 4)).astype(np.float32)])
    assert "Shape" in [n.op_type for n in model.graph.node]
