"""Folding's numpy path (``run_numpy`` of converters/ir_to_onnx/fold.py) computes what onnx's reference
evaluator (the folding's other path) computes, op by op: values, element type and shape, over the element
types, with broadcasting, integer division and modulo of every sign, bool; and refuses (None: the evaluator
folds) what it does not cover. Every op of its table has cases here."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import onnx_ir as ir
import pytest
from onnx import helper, numpy_helper

import onnx_ext
from converters.ir_to_onnx import fold
from onnx_ext.reference import reference_evaluator

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]
NUMERIC = INTS + FLOATS
PLAIN = [np.bool_, *NUMERIC]


def _values(dtype, shape, rng, signs=True):
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dtype, np.unsignedinteger):
        return rng.integers(0, 20, shape).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-20 if signs else 0, 20, shape).astype(dtype)
    return (rng.standard_normal(shape) * 10).astype(dtype)


def _cases():
    """(op, inputs, attributes)."""
    rng = np.random.default_rng(0)
    shapes = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (4,)), ((3,), ())]
    for op in ("Add", "Sub", "Mul", "Div", "Mod", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Min", "Max"):
        for dtype, (sa, sb) in itertools.product(NUMERIC, shapes):
            a, b = _values(dtype, sa, rng), _values(dtype, sb, rng)
            if op in ("Div", "Mod") and np.issubdtype(dtype, np.integer):
                b = np.where(b == 0, 3, b).astype(dtype)  # a zero divisor: undefined in ONNX
            yield op, [a, b], {}
    for dtype in (np.int8, np.int32, np.int64):  # truncation and the modulo's sign: every sign pair
        a = np.array([7, -7, 7, -7, 6, -6, 0, 1], dtype)
        b = np.array([2, 2, -2, -2, 3, -3, 5, -5], dtype)
        yield "Div", [a, b], {}
        yield "Mod", [a, b], {}
        yield "Mod", [a, b], {"fmod": 1}
    for dtype in FLOATS:
        yield "Mod", [_values(dtype, (2, 3), rng), _values(dtype, (3,), rng)], {"fmod": 1}
        yield "Div", [np.array([1, -1, 0], dtype), np.array([0, 0, 0], dtype)], {}  # inf, -inf, nan
    yield "Min", [_values(np.int64, (2, 3), rng), _values(np.int64, (3,), rng), _values(np.int64, (), rng)], {}
    yield "Max", [_values(np.float32, (2, 1), rng)], {}
    for op, dtype in itertools.product(("Neg", "Abs"), [np.int8, np.int32, np.int64, *FLOATS]):
        yield op, [_values(dtype, (2, 3), rng)], {}
    yield "Abs", [_values(np.uint8, (4,), rng)], {}
    for dtype, (sa, sb) in itertools.product(PLAIN, shapes):
        yield "Equal", [_values(dtype, sa, rng), _values(dtype, sb, rng)], {}
    for op, (sa, sb) in itertools.product(("And", "Or", "Xor"), shapes):
        yield op, [_values(np.bool_, sa, rng), _values(np.bool_, sb, rng)], {}
    yield "Not", [_values(np.bool_, (2, 3), rng)], {}
    for dtype, shape in itertools.product(PLAIN, [(2, 3), (3,), ()]):
        yield "Where", [_values(np.bool_, (2, 1), rng), _values(dtype, shape, rng), _values(dtype, (3,), rng)], {}
        yield "Identity", [_values(dtype, shape, rng)], {}
    for src, dst in itertools.product(PLAIN, PLAIN):
        x = np.array([0, 1, -1, 2.5, -2.5, 300, 70000.75], np.float64) if src in FLOATS else _values(src, (7,), rng)
        yield "Cast", [x.astype(src)], {"to": helper.np_dtype_to_tensor_dtype(np.dtype(dst))}
    for dtype, axis in itertools.product(PLAIN, (0, 1, -1)):
        yield "Concat", [_values(dtype, (2, 3), rng), _values(dtype, (2, 3), rng), _values(dtype, (2, 3), rng)], \
            {"axis": axis}
    yield "Concat", [np.array([4], np.int64), np.array([], np.int64), np.array([2, 3], np.int64)], {"axis": 0}
    for dtype, (axis, indices) in itertools.product(PLAIN, ((0, np.array([1, -2], np.int64)), (1, np.array(2)),
                                                           (-1, np.array([[0, 1], [2, -1]], np.int32)))):
        yield "Gather", [_values(dtype, (2, 3), rng), indices], {"axis": axis}
    for axes in ([0], [-1], [0, 3], [1, -1]):
        yield "Unsqueeze", [_values(np.int64, (2, 3), rng), np.array(axes, np.int64)], {}
    yield "Unsqueeze", [np.array(5, np.int64), np.array([0], np.int64)], {}
    for axes in ([0], [-1], [0, 2], None):
        yield "Squeeze", [_values(np.float32, (1, 3, 1), rng)] + ([] if axes is None else [np.array(axes, np.int64)]), {}
    for shape, allowzero in (([3, 2], 0), ([-1], 0), ([0, -1], 0), ([0, 3, 1], 0), ([3, 0], 1), ([-1, 3, 1], 1)):
        x = _values(np.int32, (2, 3) if shape != [3, 0] else (0, 3), rng)
        yield "Reshape", [x, np.array(shape, np.int64)], {"allowzero": allowzero}
    for dtype, (start, limit, delta) in itertools.product((np.int32, np.int64, np.float32, np.float64),
                                                        ((0, 5, 1), (10, 2, -3), (1, 1, 1), (-2, 7, 2))):
        yield "Range", [np.array(start, dtype), np.array(limit, dtype), np.array(delta, dtype)], {}
    yield "Range", [np.array(0.1, np.float32), np.array(1.0, np.float32), np.array(0.3, np.float32)], {}


with np.errstate(all="ignore"):
    CASES = list(_cases())


def _node(op, n_inputs, attrs, domain=""):
    inputs = [ir.Value(name=f"in{i}") for i in range(n_inputs)]
    return ir.Node(domain, op, inputs, [ir.convenience.convert_attribute(k, v) for k, v in attrs.items()],
                   outputs=[ir.Value(name="out")])


def _by_evaluator(node: ir.Node, inputs: list[np.ndarray]) -> np.ndarray:
    graph = helper.make_graph([ir.serde.serialize_node(node)], "case", [], [onnx.ValueInfoProto(name="out")],
                              initializer=[numpy_helper.from_array(x, f"in{i}") for i, x in enumerate(inputs)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx_ext.ONNX_OPSET),
                                                    helper.make_opsetid(onnx_ext.DOMAIN, onnx_ext.DOMAIN_VERSION)])
    with np.errstate(all="ignore"):
        return np.asarray(reference_evaluator(model).run(None, {})[0])


def _by_numpy(node: ir.Node, inputs: list[np.ndarray]) -> np.ndarray | None:
    with np.errstate(all="ignore"):
        got = fold.run_numpy([node], {f"in{i}": x for i, x in enumerate(inputs)}, ["out"])
    return None if got is None else got[0]


def test_every_op_of_the_table_has_cases():
    assert set(fold.OPS) == {op for op, _, _ in CASES}


@pytest.mark.parametrize("op", sorted(fold.OPS))
def test_numpy_path_agrees_with_the_evaluator(op):
    cases = [(inputs, attrs) for o, inputs, attrs in CASES if o == op]
    for inputs, attrs in cases:
        node = _node(op, len(inputs), attrs)
        want, got = _by_evaluator(node, inputs), _by_numpy(node, inputs)
        label = f"{op}{attrs} of {[(x.dtype.name, x.shape) for x in inputs]}"
        assert got is not None, f"{label}: not computed"
        assert (got.dtype, got.shape) == (want.dtype, want.shape), label
        np.testing.assert_array_equal(got, want, err_msg=label)


def test_domain_ops_run_their_reference_as_in_the_evaluator():
    data = np.arange(24, dtype=np.int64).reshape(2, 3, 4) - 7
    inputs = [data, np.array([[2, 0], [-1, 1]], np.int64), np.array(-1, np.int64)]
    node = ir.Node(onnx_ext.DOMAIN, "Gather", [ir.Value(name=f"in{i}") for i in range(3)],
                   [ir.AttrInt64("batch_dims", 0)], outputs=[ir.Value(name="out")])
    want, got = _by_evaluator(node, inputs), _by_numpy(node, inputs)
    assert (got.dtype, got.shape) == (want.dtype, want.shape) == (np.int64, (2, 3, 2, 2))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op, inputs, attrs", [
    ("Slice", [np.arange(6), np.array([1]), np.array([4])], {}),  # not in the table
    ("Add", [np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int64)], {}),  # types ONNX refuses
    ("And", [np.arange(3), np.arange(3)], {}),  # not bool
    ("Cast", [np.arange(3, dtype=np.float32)], {"to": onnx.TensorProto.FLOAT8E4M3FN}),  # not a plain type
    ("Concat", [np.array(1), np.array(2)], {"axis": 0}),  # scalars: the evaluator refuses them
])
def test_what_the_table_does_not_cover_is_left_to_the_evaluator(op, inputs, attrs):
    assert _by_numpy(_node(op, len(inputs), attrs), inputs) is None


def test_shape_arithmetic_folds_without_building_an_evaluator(tmp_path, monkeypatch):
    """A chain of shape-arithmetic layers over constants (the domain's Gather, Add, integer Divide of
    negative values, Unsqueeze, Squeeze, Convert, Equal, Select) folds to the Reshape's target by the
    numpy path alone: no model is built for the evaluator, and the result is OpenVINO's."""
    import openvino as ov
    from openvino import opset8 as o

    import onnx_ext.reference
    from ir_testing import check_ir, save_ir

    def no_evaluator(*args):
        raise AssertionError("the reference evaluator was built")

    monkeypatch.setattr(onnx_ext.reference, "reference_evaluator", no_evaluator)
    x = o.parameter([2, 3, 4], np.float32, name="x")
    dims = o.gather(o.constant(np.array([2, 3, 4], np.int64)), o.constant(np.array([2, 0, 1], np.int64)),
                    o.constant(np.int64(0)))
    negated = o.divide(o.multiply(o.add(dims, o.constant(np.int64(1))), o.constant(np.int64(-2))),
                       o.constant(np.int64(-2)))  # -10 / -2, -6 / -2, -8 / -2
    dims = o.subtract(o.squeeze(o.unsqueeze(negated, o.constant(np.int64(0))), o.constant(np.int64(0))),
                      o.constant(np.int64(1)))
    same = o.equal(o.convert(dims, "i32"), o.constant(np.array([4, 2, 3], np.int32)))
    target = o.select(same, dims, o.constant(np.array([1, 1, 1], np.int64)))
    xml = save_ir(ov.Model([o.reshape(x, target, False)], [x], "shape_chain"), tmp_path)
    model = check_ir(xml, [np.arange(24, dtype=np.float32).reshape(2, 3, 4)])
    assert [n.op_type for n in model.graph.node] == ["Reshape"]
    target = next(i for i in model.graph.initializer if i.name == model.graph.node[0].input[1])
    assert numpy_helper.to_array(target).tolist() == [4, 2, 3]
