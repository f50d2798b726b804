"""IR -> ONNX: OpenVINO graphs saved as IR at test time (plain and f16-compressed),
read, converted, run in onnxruntime and compared with OpenVINO's reference."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest

import ml_dtypes  # noqa: E402
import openvino as ov  # noqa: E402
import openvino.opset1 as o1  # noqa: E402
import openvino.opset3 as o3  # noqa: E402
import openvino.opset4 as o4  # noqa: E402
import openvino.opset8 as o8  # noqa: E402
import openvino.opset13 as o13  # noqa: E402
import openvino.opset17 as o17  # noqa: E402
from openvino.utils.node_factory import NodeFactory  # noqa: E402

import onnx_ext  # noqa: E402
from converters.ir import IRError  # noqa: E402
from converters.ir_reader import read_ir  # noqa: E402
from converters.ir_to_onnx import convert_ir_file, ir_to_onnx, lookup, supported  # noqa: E402
from ir_testing import check_ir, convert, edit_ir, evaluate_ir, run_onnx, save_ir  # noqa: E402
from ir_testing import model_of as M, parameter as P  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _same_values_in_any_order():
    """Each test draws the same values whichever tests ran before it in this process."""
    RNG.bit_generator.state = np.random.default_rng(7).bit_generator.state


def C(value, dtype=None):
    return o8.constant(np.asarray(value, dtype=dtype))


def create(opset: str, op: str, args, attrs=None):
    return NodeFactory(opset).create(op, [a.output(0) if hasattr(a, "output") else a for a in args], attrs or {})


def f32(*shape, lo=-3.0, hi=3.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def ints(*shape, lo=-5, hi=6, dtype=np.int32):
    return RNG.integers(lo, hi, shape).astype(dtype)


# --- cases: name -> () -> (model, feeds) ------------------------------------------------------------

CASES = {}


def case(name, ulps=None, backend="reference", atol=0.0):
    """``backend="cpu"``: OpenVINO's reference has no kernel for a layer (Elu, Bitwise*): compare with
    the CPU plugin at f32."""
    def register(fn):
        CASES[name] = (fn, ulps, backend, atol)
        return fn
    return register


# Gather


@case("gather8_const_indices_negative_and_out_of_range")
def _():
    x = P([-1, 4], name="x")
    g = o8.gather(x, C([[0, -1], [7, 2]], np.int64), C(1, np.int64))
    return M(g, [x]), [f32(3, 4)]


@case("gather8_runtime_indices_batch_dims")
def _():
    x, i = P([2, 3, 4], name="x"), P([2, -1], "i32", name="i")
    g = o8.gather(x, i, C(2, np.int64), batch_dims=1)
    return M(g, [x, i]), [f32(2, 3, 4), np.array([[0, 3], [-4, 9]], np.int32)]


@case("gather7_and_gather1")
def _():
    import openvino.opset7 as o7

    x = P([3, 5], name="x")
    g7 = o7.gather(x, C([4, 0, 1], np.int64), C(-1, np.int64), batch_dims=0)
    g1 = o1.gather(x, C([[2, 0]], np.int32), C(0, np.int64))
    return M([g7, g1], [x]), [f32(3, 5)]


@case("gather8_runtime_axis_i32_data")
def _():
    x, a = P([3, 4], "i32", name="x"), P([], "i64", name="axis")
    g = o8.gather(x, C([1, 0, 2], np.int64), a)
    return M(g, [x, a]), [ints(3, 4), np.array(1, np.int64)]


# Range


@case("range4_f32_runtime")
def _():
    a, b = P([], name="start"), P([], name="stop")
    r = create("opset4", "Range", [a, b, C(np.float32(0.25))], {"output_type": "f32"})
    return M(r, [a, b]), [np.array(-1.5, np.float32), np.array(2.2, np.float32)]


@case("range4_float_inputs_i32_output")
def _():
    r = create("opset4", "Range", [C(np.float32(1.5)), C(np.float32(7.9)), C(np.float32(1.7))], {"output_type": "i32"})
    a = P([], "i64", name="n")
    r2 = create("opset4", "Range", [C(np.int64(0)), a, C(np.int64(1))], {"output_type": "i64"})
    return M([r, r2], [a]), [np.array(5, np.int64)]


@case("range4_fractional_constants_f16_output")
def _():
    r = create("opset4", "Range", [C(np.float32(0.1)), C(np.float32(2.0)), C(np.float32(0.3))], {"output_type": "f16"})
    return M(r, []), []


@case("range1_same_type_inputs")
def _():
    a = P([], "i32", name="stop")
    r = o1.range(C(np.int32(2)), a, C(np.int32(3))) if hasattr(o1, "range") else \
        create("opset1", "Range", [C(np.int32(2)), a, C(np.int32(3))])
    return M(r, [a]), [np.array(14, np.int32)]


# Broadcast


@case("broadcast3_numpy_const_and_runtime_shape")
def _():
    x, s = P([-1, 1], name="x"), P([3], "i64", name="shape")
    b1 = o3.broadcast(x, C([2, 3, 4], np.int64))
    b2 = o3.broadcast(x, s)
    return M([b1, b2], [x, s]), [f32(3, 1), np.array([2, 3, 5], np.int64)]


@case("broadcast3_explicit_and_bidirectional")
def _():
    x = P([3], name="x")
    y = P([3, 1], name="y")
    b1 = o3.broadcast(x, C([2, 3], np.int64), C([1], np.int64), "EXPLICIT")
    b2 = o3.broadcast(y, C([1, 4], np.int64), broadcast_spec="BIDIRECTIONAL")
    return M([b1, b2], [x, y]), [f32(3), f32(3, 1)]


@case("broadcast1_numpy_and_explicit_written_none")
def _():
    x = P([2, 1], "i32", name="x")
    b1 = o1.broadcast(x, C([3, 2, 4], np.int64))
    b2 = o1.broadcast(x, C([2, 5, 1], np.int64), C([0, 2], np.int64), "EXPLICIT")
    return M([b1, b2], [x]), [ints(2, 1)]


# StridedSlice


@case("strided_slice_masks_const")
def _():
    x = P([4, -1, 5], name="x")
    s1 = o1.strided_slice(x, C([1, 0, 4], np.int64), C([3, 0, 0], np.int64), C([1, 1, -2], np.int64),
                          begin_mask=[0, 1, 0], end_mask=[0, 1, 1])
    s2 = o1.strided_slice(x, C([0, 1], np.int64), C([0, 2], np.int64), C([1, 1], np.int64),
                          begin_mask=[0, 0], end_mask=[0, 0], new_axis_mask=[1, 0], shrink_axis_mask=[0, 1])
    s3 = o1.strided_slice(x, C([0, -1], np.int64), C([0, 0], np.int64), C([1, 1], np.int64),
                          begin_mask=[0, 0], end_mask=[0, 0], ellipsis_mask=[1, 0], shrink_axis_mask=[0, 1])
    return M([s1, s2, s3], [x]), [f32(4, 3, 5)]


@case("strided_slice_runtime_begin_end_no_stride")
def _():
    x, b, e = P([6, 4], name="x"), P([2], "i64", name="b"), P([2], "i64", name="e")
    s = create("opset1", "StridedSlice", [x, b, e], {"begin_mask": [0, 0], "end_mask": [0, 1], "new_axis_mask": [],
                                                     "shrink_axis_mask": [], "ellipsis_mask": []})
    return M(s, [x, b, e]), [f32(6, 4), np.array([1, 1], np.int64), np.array([-1, 0], np.int64)]


# shape plumbing


@case("shapeof_gather_concat_reshape_dynamic")
def _():
    x = P([-1, -1, 4], name="x")
    s = o3.shape_of(x, "i32")
    s1 = o1.shape_of(x)
    rows = o8.gather(s1, C([0, 1], np.int64), C(0, np.int64)) if "Gather" in onnx_ext.SPECS else \
        o8.strided_slice(s1, C([0], np.int64), C([2], np.int64), C([1], np.int64), [0], [0])
    shape = o1.concat([rows, C([2, 2], np.int64)], 0)
    r = o1.reshape(x, shape, False)
    return M([s, r], [x]), [f32(2, 3, 4)]


@case("reshape_special_zero")
def _():
    x = P([2, 0, 3], name="x")
    y = P([2, 3, 4], name="y")
    r1 = o1.reshape(y, C([0, -1], np.int64), True)
    r2 = o1.reshape(y, C([4, 0, 6], np.int64) if False else C([4, 6], np.int64), False)
    r3 = o1.reshape(x, C([0, 6], np.int64), False)
    r4 = o1.reshape(y, C([0, 0, -1, 2], np.int64), True)
    return M([r1, r2, r3, r4], [x, y]), [np.zeros((2, 0, 3), np.float32), f32(2, 3, 4)]


@case("squeeze_unsqueeze")
def _():
    x = P([1, 3, 1, -1], name="x")
    a = o1.squeeze(x, C([0, 2], np.int64))
    b = o1.squeeze(x, C([-2, 1], np.int64))  # dim 3 is skipped, as OpenVINO does
    c = create("opset1", "Squeeze", [x])
    d = o1.unsqueeze(x, C([0, -1], np.int64))
    e = o1.unsqueeze(x, C(1, np.int64))
    f = o1.squeeze(x, C([3], np.int64))  # dynamic dim: squeezed only when it is 1
    return M([a, b, c, d, e, f], [x]), [f32(1, 3, 1, 2)]


@case("squeeze_unsqueeze_runtime_axes")
def _():
    """Axes computed at run time follow the constant-axes rule: a listed dim that is not 1 stays (ONNX's
    Squeeze fails on it), negative axes count from the rank, repeats are harmless, an empty list squeezes
    every dim of 1; Unsqueeze's output rank is the data's plus the axes' length."""
    import openvino.opset15 as o15

    x = P([2, 1, -1, 1], name="x")
    axes = [P([-1], "i64", name=f"axes{i}") for i in range(4)]
    scalar = P([], "i32", name="axis")
    outs = [o1.squeeze(x, axes[0]), o15.squeeze(x, axes[1], allow_axis_skip=False), o1.squeeze(x, axes[2]),
            o15.squeeze(x, axes[3], allow_axis_skip=True), o1.unsqueeze(x, scalar)]
    return M(outs, [x, *axes, scalar]), [f32(2, 1, 3, 1), np.array([0, 1], np.int64), np.array([-1, 2], np.int64),
                                         np.zeros(0, np.int64), np.array([3, 1, 3], np.int64), np.array(-2, np.int32)]


@case("squeeze_dynamic_dim_is_one")
def _():
    x = P([-1, 3], name="x")
    return M(o1.squeeze(x, C([0], np.int64)), [x]), [f32(1, 3)]


@case("transpose_slice_tile")
def _():
    x = P([2, -1, 4], name="x")
    t = o1.transpose(x, C([2, 0, 1], np.int64))
    s = o8.slice(x, C([3, 0], np.int64), C([-10, 2], np.int64), C([-2, 1], np.int64), C([2, 0], np.int64))
    s2 = o8.slice(x, C([1], np.int32), C([100], np.int32), C([1], np.int32))
    tl = o1.tile(x, C([2, 1], np.int64))
    tl2 = o1.tile(x, C([2, 1, 1, 2], np.int64))
    return M([t, s, s2, tl, tl2], [x]), [f32(2, 3, 4)]


@case("split_variadic_split")
def _():
    x = P([6, -1], name="x")
    sp = o1.split(x, C(0, np.int64), 3)
    vs = o1.variadic_split(x, C(-1, np.int64), C([1, -1], np.int64))
    vs2 = o1.variadic_split(x, C(0, np.int64), C([4, -1, 0], np.int64))
    outs = list(sp.outputs()) + list(vs.outputs()) + list(vs2.outputs())
    return ov.Model(outs, [x], "case"), [f32(6, 5)]


@case("nonzero_and_select")
def _():
    x, c = P([3, 4], "i32", name="x"), P([1, 4], "boolean", name="c")
    nz = o3.non_zero(x, "i32")
    sel = o1.select(c, x, C(np.int32(-7)))
    return M([nz, sel], [x, c]), [ints(3, 4, lo=-1, hi=2), RNG.integers(0, 2, (1, 4)).astype(bool)]


# element-wise

_BINARY = [("add", o1.add), ("subtract", o1.subtract), ("multiply", o1.multiply), ("maximum", o1.maximum),
           ("minimum", o1.minimum), ("squared_difference", o1.squared_difference)]
_TYPES = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i64": np.int64, "i8": np.int8, "u8": np.uint8,
          "u16": np.uint16, "i16": np.int16, "u32": np.uint32, "u64": np.uint64, "f64": np.float64, "bf16": BF16}


def _values(et, shape):
    dtype = _TYPES[et]
    if et in ("f32", "f16", "f64", "bf16"):
        return RNG.uniform(-4, 4, shape).astype(np.float32).astype(dtype)
    lo, hi = (0, 60) if et.startswith("u") else (-60, 60)
    return RNG.integers(lo, hi, shape).astype(dtype)


_BINARY += [("equal", o1.equal), ("not_equal", o1.not_equal), ("less", o1.less), ("greater_equal", o1.greater_equal),
            ("less_equal", o1.less_equal), ("greater", o1.greater)]


def _reference_has(fn, et) -> bool:
    """OpenVINO's reference lacks some kernels (bf16 SquaredDifference, ...): test what it has."""
    x, y = P([1], et), P([1], et)
    node = fn(x, y)
    out = [ov.Tensor(node.get_output_element_type(0), ov.Shape([1]))]
    try:
        return ov.Model([node], [x, y]).evaluate(out, [ov.Tensor(getattr(ov.Type, et), ov.Shape([1]))] * 2)
    except RuntimeError:
        return False


for _et in ("f32", "f16", "bf16", "f64", "i32", "i64", "i8", "u8", "i16", "u16", "u32", "u64"):
    def _binary_case(et=_et):
        x, y = P([2, -1], et, name="x"), P([1, 3], et, name="y")
        outs = [fn(x, y) for _, fn in _BINARY if _reference_has(fn, et)]
        assert outs
        return M(outs, [x, y]), [_values(et, (2, 3)), _values(et, (1, 3))]
    case(f"binary_{_et}")(_binary_case)


@case("divide_floor_mod_mod_integers")
def _():
    x, y = P([8], "i32", name="x"), P([8], "i32", name="y")
    d = o1.divide(x, y)
    d2 = create("opset1", "Divide", [x, y], {"m_pythondiv": False})
    fm = o1.floor_mod(x, y)
    md = o1.mod(x, y)
    return M([d, d2, fm, md], [x, y]), [np.array([-7, 7, -7, 7, 5, -5, 0, 9], np.int32),
                                        np.array([2, 2, -2, -2, 3, 3, 4, -9], np.int32)]


@case("divide_floor_mod_unsigned_and_float")
def _():
    x, y = P([5], "u32", name="x"), P([5], "u32", name="y")
    a, b = P([6], name="a"), P([6], name="b")
    return M([o1.divide(x, y), o1.floor_mod(x, y), o1.divide(a, b), o1.floor_mod(a, b), o1.power(o1.abs(a), b)],
             [x, y, a, b]), [np.array([7, 200, 0, 2**32 - 1, 9], np.uint32), np.array([2, 7, 3, 16, 9], np.uint32),
                             np.array([-7.5, 7.5, -7.5, 7.5, 5.1, -5.1], np.float32),
                             np.array([2, 2, -2, -2, 3, 3], np.float32)]


@case("logical_and_comparisons_of_bool")
def _():
    x, y = P([4], "boolean", name="x"), P([1], "boolean", name="y")
    outs = [o1.logical_and(x, y), o1.logical_or(x, y), o1.logical_xor(x, y), o1.logical_not(x), o1.equal(x, y),
            o1.not_equal(x, y)]
    return M(outs, [x, y]), [np.array([True, False, True, False]), np.array([True])]


@case("unary_float", ulps=8, atol=1e-6)
def _():
    x = P([2, 5], name="x")
    outs = [o1.abs(x), o1.negative(x), o1.sign(x), o1.floor(x), o1.ceiling(x), o1.relu(x), o1.sigmoid(x),
            o1.tanh(x), o1.exp(x), o1.sqrt(o1.abs(x)), o1.clamp(x, -1.5, 0.5), o1.erf(x)]
    return M(outs, [x]), [f32(2, 5)]


@case("unary_integer")
def _():
    x = P([6], "i32", name="x")
    outs = [o1.abs(x), o1.negative(x), o1.relu(x), o1.clamp(x, -2.5, 3.7), o1.sign(x), o1.floor(x)]
    return M(outs, [x]), [np.array([-3, -2, 0, 1, 4, 9], np.int32)]


@case("convert_wraps_and_bool")
def _():
    x = P([8], name="x")
    outs = [o1.convert(x, t) for t in ("i32", "i8", "u8", "boolean", "f16", "i64")]
    i = P([4], "i64", name="i")
    outs += [o1.convert(i, t) for t in ("i8", "u16", "f32", "boolean")]
    return M(outs, [x, i]), [np.array([-2.7, -0.5, 0.5, 1.5, 2.5, 300.7, -300.2, 1e5], np.float32),
                             np.array([2**40 + 5, -129, 300, 0], np.int64)]


@case("bf16_parameter_through_convert_and_add")
def _():
    x = P([3], "bf16", name="x")
    y = o1.add(x, o1.convert(C(np.float32(1.25)), "bf16"))
    return M([y, o1.convert(y, "f32")], [x]), [np.array([1.0, -2.5, 3.0078125], BF16)]


@case("more_unary_activations", ulps=16, atol=1e-6)  # gelu(-2.5): 1 + erf(x) cancels
def _():
    import openvino.opset4 as o4
    import openvino.opset5 as o5
    import openvino.opset7 as o7

    x = P([2, 5], name="x")
    outs = [o7.gelu(x, "erf"), o7.gelu(x, "tanh"), o4.hswish(x), o4.softplus(x), o4.mish(x),
            o5.hsigmoid(x), o5.round(x, "half_to_even"), o5.round(x, "half_away_from_zero"),
            o1.softmax(x, 0), o1.sin(x), o1.cos(x), o1.atan(x)]
    return M(outs, [x]), [np.array([[-2.5, -0.5, 0.5, 1.5, 2.5], [0.1, -3, 3, 0, 7.25]], np.float32)]


@case("trigonometry_log_and_the_rest", ulps=8, atol=1e-6)
def _():
    import openvino.opset4 as o4
    import openvino.opset9 as o9

    u = P([5], name="unit")  # in (-1, 1)
    g = P([5], name="big")  # > 1
    outs = [o1.asin(u), o1.acos(u), o4.atanh(u), o1.sinh(u), o1.cosh(u), o1.tan(u), o4.asinh(g), o4.acosh(g),
            o1.log(g), o9.softsign(u), o4.reduce_l1(g, C([0], np.int64), True),
            o4.reduce_l2(g, C([0], np.int64), False)]
    return M(outs, [u, g]), [np.array([-0.9, -0.3, 0, 0.4, 0.95], np.float32),
                             np.array([1, 1.5, 2, 10, 1e3], np.float32)]


@case("activations_without_reference_kernels", ulps=64, backend="cpu", atol=1e-6)
def _():
    import openvino.opset5 as o5

    import openvino.opset2 as o2
    import openvino.opset16 as o16

    x = P([2, 5], name="x")
    return M([o1.elu(x, 0.7), o5.log_softmax(x, 1), o2.gelu(x), o16.identity(x)], [x]), [f32(2, 5)]


@case("bitwise_cumsum_nonzero", backend="cpu")
def _():
    import openvino.opset13 as o13

    x, y = P([5], "i32", name="x"), P([5], "i32", name="y")
    b, c = P([3], "boolean", name="b"), P([3], "boolean", name="c")
    d = P([2, 3], "f64", name="d")
    outs = [o13.bitwise_and(x, y), o13.bitwise_or(x, y), o13.bitwise_xor(x, y), o13.bitwise_not(x),
            o13.bitwise_and(b, c), o13.bitwise_not(b), o3.cum_sum(x, C(0, np.int64), exclusive=True, reverse=True),
            o3.non_zero(d, "i64")]
    return M(outs, [x, y, b, c, d]), [ints(5), ints(5), np.array([True, False, True]), np.array([True, True, False]),
                                      np.array([[0.0, -0.0, 1e-30], [np.nan, 0, 2]])]


@case("runtime_shapes_for_reshape_tile_squeeze")
def _():
    import openvino.opset15 as o15

    x, s, r = P([2, -1], name="x"), P([3], "i64", name="shape"), P([2], "i32", name="reps")
    y = P([-1, 3, 1], name="y")
    outs = [o1.reshape(x, s, True), o1.tile(x, r), o15.squeeze(y, C([0, 2], np.int64), allow_axis_skip=True)]
    return M(outs, [x, s, r, y]), [f32(2, 6), np.array([0, 3, -1], np.int64), np.array([2, 1], np.int32), f32(1, 3, 1)]


# reductions


@case("reductions_keep_dims")
def _():
    x = P([2, 3, 4], name="x")
    i = P([2, 3], "i32", name="i")
    outs = []
    for keep in (False, True):
        outs += [o1.reduce_sum(x, C([1, -1], np.int64), keep), o1.reduce_prod(x, C([0], np.int64), keep),
                 o1.reduce_max(x, C(2, np.int64), keep), o1.reduce_min(x, C([0, 1, 2], np.int64), keep),
                 o1.reduce_mean(x, C([1], np.int64), keep), o1.reduce_sum(i, C([0], np.int64), keep),
                 o1.reduce_max(i, C([1], np.int64), keep)]
    outs.append(o1.reduce_sum(x, ov.op.Constant(ov.Type.i64, ov.Shape([0]), []), False))  # empty axes: no reduction
    return M(outs, [x, i]), [f32(2, 3, 4, lo=0.5, hi=1.5), ints(2, 3)]


@case("reductions_small_and_unsigned_types")
def _():
    x = P([2, 3], "u32", name="x")
    y = P([2, 3], "u64", name="y")
    b = P([2, 3], "boolean", name="b")
    outs = [o1.reduce_sum(x, C([1], np.int64), False), o1.reduce_max(y, C([0], np.int64), True),
            o1.reduce_min(y, C([1], np.int64), False), o1.reduce_logical_and(b, C([1], np.int64), False),
            o1.reduce_logical_or(b, C([0], np.int64), True)]
    return M(outs, [x, y, b]), [np.array([[2**32 - 1, 100, 3], [1, 2, 3]], np.uint32),
                                np.array([[2**64 - 1, 5, 2**63], [7, 2**63 + 1, 0]], np.uint64),
                                np.array([[True, True, False], [True, True, True]])]


@case("matmul_softmax", ulps=64, atol=1e-5)  # sums cancel: ulps alone flake on near-zero results
def _():
    a, b = P([2, 3, 4], name="a"), P([5, 4], name="b")
    mm = o1.matmul(a, b, False, True)
    v = P([4], name="v")
    mv = o1.matmul(a, v, False, False)
    sm = o8.softmax(mm, -1)
    return M([mm, mv, sm], [a, b, v]), [f32(2, 3, 4), f32(5, 4), f32(4)]


# realistic shape plumbing around the four ops


@case("position_ids_block")
def _():
    ids = P([-1, -1], "i64", name="input_ids")
    table = C(RNG.standard_normal((10, 4)).astype(np.float32))
    emb = o8.gather(table, ids, C(0, np.int64))
    shape = o3.shape_of(ids)
    seq = o8.gather(shape, C(1, np.int64), C(0, np.int64))
    pos = create("opset4", "Range", [C(np.int64(0)), seq, C(np.int64(1))], {"output_type": "i64"})
    pos = o1.unsqueeze(pos, C([0], np.int64))
    pos = o3.broadcast(pos, shape)
    pos_emb = o8.gather(C(RNG.standard_normal((16, 4)).astype(np.float32)), pos, C(0, np.int64))
    out = o1.add(emb, pos_emb)
    last = o1.strided_slice(out, C([0, -1], np.int64), C([0, 0], np.int64), C([1, 1], np.int64), [1, 0], [1, 0],
                            shrink_axis_mask=[0, 1])
    return M([out, last], [ids]), [np.array([[1, 2, 3], [4, 5, 9]], np.int64)]


CASE_NAMES = sorted(CASES)


@pytest.mark.parametrize("compress", [False, True], ids=["f32", "compressed"])
@pytest.mark.parametrize("name", CASE_NAMES)
def test_case(name, compress, tmp_path):
    build, ulps, backend, atol = CASES[name]
    model, feeds = build()
    xml = save_ir(model, tmp_path, compress=compress)
    check_ir(xml, feeds, ulps=ulps, backend=backend, atol=atol)


@pytest.mark.parametrize("name", ["position_ids_block", "strided_slice_masks_const",
                                  "gather8_runtime_indices_batch_dims", "broadcast1_numpy_and_explicit_written_none",
                                  "range4_float_inputs_i32_output"])
def test_inline(name, tmp_path):
    build, *_ = CASES[name]
    model, feeds = build()
    xml = save_ir(model, tmp_path, compress=True)
    onnx_model = check_ir(xml, feeds, inline=True)
    assert not onnx_model.functions
    assert all(n.domain in ("", "ai.onnx") for n in onnx_model.graph.node)
    assert onnx_ext.DOMAIN not in {o.domain for o in onnx_model.opset_import}


@pytest.mark.parametrize("name", ["binary_i32", "reshape_special_zero", "position_ids_block", "split_variadic_split"])
def test_ir_v10(name, tmp_path):
    build, *_ = CASES[name]
    model, feeds = build()
    xml = save_ir(model, tmp_path, version=10)
    assert read_ir(xml).ir_version == 10
    check_ir(xml, feeds, legacy_types=True)


# --- pdpd broadcasting (not buildable from Python: edited into the XML) -----------------------


def test_broadcast_pdpd_axis(tmp_path):
    x = P([2, 1], name="x")
    # Broadcast-3 writes the pdpd axis as mode.mode.axis, Broadcast-1 as mode.auto_broadcast_axis.
    for version, mod, key in ((3, o3, "mode.mode.axis"), (1, o1, "mode.auto_broadcast_axis")):
        model = M(mod.broadcast(x, C([4, 2, 3], np.int64)), [x])
        xml = save_ir(model, tmp_path, f"pdpd{version}")
        edit_ir(xml, r'mode="numpy"', f'mode="pdpd" {key}="1"')
        onnx_model = check_ir(xml, [f32(2, 1)])
        node = next(n for n in onnx_model.graph.node if n.op_type == "Broadcast")
        attrs = onnx_ext.node_attributes(node)
        assert (attrs["mode"], attrs["axis"], attrs["version"]) == ("pdpd", 1, version)


def test_elementwise_pdpd_axis(tmp_path):
    a, b = P([4, 2, 3], name="a"), P([2, 1], name="b")
    xml = save_ir(M(o1.add(a, b), [a, b]), tmp_path)
    edit_ir(xml, r'auto_broadcast="numpy"', 'auto_broadcast="pdpd" auto_broadcast.auto_broadcast_axis="1"')
    check_ir(xml, [f32(4, 2, 3), f32(2, 1)])


# --- what the converted model looks like ---------------------------------------------------


def test_names_order_and_dynamic_dims(tmp_path):
    x = P([-1, 3], name="in,put")
    y = P([2, 3], "boolean", name="cond")
    s = o1.add(x, C(np.float32(1)))
    s.output(0).get_tensor().set_names({"sum"})
    sel = o1.select(y, s, x)
    model = ov.Model([o1.result(s), o1.result(s), o1.result(x), o1.result(sel), o1.result(C([1, 2], np.int64))],
                     [x, y], "names")
    xml = save_ir(model, tmp_path)
    onnx_model = check_ir(xml, [f32(2, 3), np.ones((2, 3), bool)])
    assert [i.name for i in onnx_model.graph.input] == ["in,put", "cond"]
    outs = [o.name for o in onnx_model.graph.output]
    assert outs[:3] == ["sum", "sum_1", "in,put"] and len(set(outs)) == 5
    dims = onnx_model.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param and not dims[0].HasField("dim_value") and dims[1].dim_value == 3
    assert onnx_model.graph.output[3].type.tensor_type.elem_type == onnx.TensorProto.FLOAT


def test_decompression_is_folded(tmp_path):
    x = P([3], name="x")
    xml = save_ir(M(o1.multiply(x, C(np.array([0.5, 2.0, 0.1], np.float32))), [x]), tmp_path, compress=True)
    ir = read_ir(xml)
    converts = [layer for layer in ir.layers if layer.type == "Convert"]
    assert converts and "decompression" in converts[0].rt_info
    onnx_model = check_ir(xml, [f32(3)])
    assert [n.op_type for n in onnx_model.graph.node] == ["Mul"]
    init = onnx.numpy_helper.to_array(onnx_model.graph.initializer[0])
    assert init.dtype == np.float32 and init[2] == np.float32(np.float16(0.1))


def test_domain_nodes_carry_version_and_overload(tmp_path):
    x = P([3, 4], name="x")
    model = M([o1.gather(x, C([1], np.int64), C(0, np.int64)), o1.broadcast(x, C([2, 3, 4], np.int64))], [x])
    onnx_model = convert(save_ir(model, tmp_path))
    nodes = {n.op_type: n for n in onnx_model.graph.node if n.domain == onnx_ext.DOMAIN}
    assert onnx_ext.node_attributes(nodes["Gather"])["version"] == 1
    assert onnx_ext.node_attributes(nodes["Broadcast"])["version"] == 1
    assert all(n.overload for n in nodes.values())
    assert {(f.name, f.overload) for f in onnx_model.functions} >= {(n.op_type, n.overload) for n in nodes.values()}


def test_registry_one_translator_per_type_and_version():
    names = supported()
    assert "Gather-opset8" in names and "Gather-opset7" in names and "Gather-opset1" in names
    assert "Broadcast-opset1" in names and "Broadcast-opset3" in names and "Range-opset4" in names
    assert lookup("Gather", "opset8") is lookup("Gather", "opset9")  # opset9 holds Gather-8
    assert lookup("Add", "opset13") is lookup("Add", "opset1")
    assert lookup("relu", "opset1") is lookup("ReLU", "opset1")
    assert lookup("Squeeze", "opset16") is lookup("Squeeze", "opset15")
    assert lookup("Gather", "extension") is None and lookup("NoSuchOp", "opset1") is None


def test_type_names_are_case_insensitive(tmp_path):
    """OpenVINO's reader finds ops case-insensitively (the IR writes ReLU for Relu)."""
    x = P([3], name="x")
    xml = save_ir(M([o1.add(x, x), o1.reduce_sum(x, C([0], np.int64), False), o1.equal(x, x)], [x]), tmp_path)
    text = xml.read_text().replace('type="Add"', 'type="add"').replace('type="ReduceSum"', 'type="reducesum"')
    xml.write_text(text.replace('type="Equal"', 'type="EQUAL"'))
    check_ir(xml, [f32(3)])


def test_example_embedding_block():
    from pathlib import Path

    xml = Path(__file__).resolve().parents[1] / "examples" / "embedding_block.xml"
    if not xml.exists():
        pytest.skip("examples/embedding_block.xml is not there")
    onnx_model = convert(xml)
    ir = read_ir(xml)
    feeds = []
    for vi in onnx_model.graph.input:
        t = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else 3 for d in t.shape.dim]
        feeds.append(RNG.integers(0, 4, shape).astype(onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)))
    got, want = run_onnx(onnx_model, feeds), evaluate_ir(xml, feeds)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert len(ir.layers) > 10


# --- errors --------------------------------------------------------------------------------


def test_unsupported_layers_listed_with_counts(tmp_path):
    # Two StringTensorUnpack-15 layers (no ONNX equivalent): Negative layers on u8 renamed, as the IR reader
    # refuses the string element type of a real one's input before it lists the layers (a clear error too)
    x = P([2, 3], name="x")
    words, more = P([2], "u8", name="words"), P([3], "u8", name="more")
    image = P([1, 2, 5, 5], name="image")
    model = M([o17.erfinv(image), o1.relu(x),  # opset1..16 have no layer left untranslated
               o1.negative(words), o1.negative(more)],
              [x, words, more, image])
    xml = edit_ir(save_ir(model, tmp_path), r'type="Negative" version="opset1"',
                  'type="StringTensorUnpack" version="opset15"', count=2)
    out = tmp_path / "out.onnx"
    with pytest.raises(IRError) as info:
        convert_ir_file(xml, out)
    msg = str(info.value)
    assert "\n" not in msg and str(xml) in msg
    assert "ErfInv-opset17 x1 (not translated yet; layer " in msg
    assert "StringTensorUnpack-opset15 x2 (no ONNX equivalent; layer " in msg
    assert msg.endswith("(docs/coverage.md lists what converts; docs/extending.md adds a translator)")
    assert not out.exists() and not list(tmp_path.glob("*.onnx*"))


def test_convert_ir_file_writes_atomically(tmp_path):
    x = P([2], name="x")
    xml = save_ir(M(o1.relu(x), [x]), tmp_path)
    out = tmp_path / "sub" / "m.onnx"
    assert convert_ir_file(xml, out) == out
    onnx.checker.check_model(onnx.load(str(out)), full_check=True)
    before = out.read_bytes()
    xml.write_text(xml.read_text().replace('type="ReLU"', 'type="NoSuchOp"'))
    with pytest.raises(IRError, match="NoSuchOp-opset1"):
        convert_ir_file(xml, out)
    assert out.read_bytes() == before  # untouched
    assert sorted(p.name for p in out.parent.iterdir()) == ["m.onnx"]  # no temporary left


def test_bad_domain_attribute_names_the_layer(tmp_path):
    x = P([3, 4], name="x")
    xml = save_ir(M(o8.gather(x, C([[0]] * 3, np.int64), C(1, np.int64), batch_dims=1), [x]), tmp_path)
    edit_ir(xml, r'batch_dims="1"', 'batch_dims="5"')
    with pytest.raises(IRError) as info:
        convert(xml)
    assert "Gather_" in str(info.value) and str(xml) in str(info.value) and "batch_dims" in str(info.value)


# --- types OpenVINO's reference has no kernel for: checked against numpy ------------------


def test_types_without_reference_kernels(tmp_path):
    u8, i8, u16, u64 = (P([4], t, name=t) for t in ("u8", "i8", "u16", "u64"))
    i16 = P([4], "i16", name="i16")
    outs = [o1.negative(u8), o1.divide(u8, C(np.uint8(3))), o1.reduce_sum(i8, C([0], np.int64), False),
            o1.maximum(u16, C(np.uint16(40000))), o1.multiply(i16, C(np.int16(300))), o1.add(u64, u64),
            o1.less(u64, C(np.uint64(2**63))), o1.convert_like(i8, C(np.float32(0))),
            o1.select(o1.less(i8, C(np.int8(0))), u16, C(np.uint16(7))), o1.reduce_max(u16, C([0], np.int64), True)]
    xml = save_ir(M(outs, [u8, i8, u16, u64, i16]), tmp_path)
    a8 = np.array([0, 1, 200, 255], np.uint8)
    b8 = np.array([100, 100, -3, 7], np.int8)
    c16 = np.array([1, 65535, 40001, 39999], np.uint16)
    d64 = np.array([0, 2**63, 2**64 - 1, 5], np.uint64)
    e16 = np.array([1, 200, -200, 32767], np.int16)
    got = run_onnx(convert(xml), [a8, b8, c16, d64, e16])
    with np.errstate(over="ignore"):
        want = [(-a8.astype(np.int64)).astype(np.uint8), a8 // 3, np.array(b8.astype(np.int64).sum()).astype(np.int8),
                np.maximum(c16, 40000), (e16.astype(np.int64) * 300).astype(np.int16), d64 + d64, d64 < 2**63,
                b8.astype(np.float32), np.where(b8 < 0, c16, 7).astype(np.uint16), c16.max(keepdims=True)]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and np.array_equal(g, w), f"output {i}: {g} vs {w}"


def test_layers_feeding_no_result_are_dropped(tmp_path):
    x = P([2], name="x")
    xml = save_ir(M(o1.relu(x), [x]), tmp_path)
    text = xml.read_text()
    dead = ('<layer id="90" name="dead" type="Frobnicate" version="opset1"><input><port id="0" precision="FP32">'
            '<dim>2</dim></port></input><output><port id="1" precision="FP32"><dim>2</dim></port></output></layer>\n')
    text = text.replace("</layers>", dead + "</layers>").replace("</edges>", '<edge from-layer="0" from-port="0" '
                                                                           'to-layer="90" to-port="0" />\n</edges>')
    xml.write_text(text)
    check_ir(xml, [f32(2)])


def test_graph_from_openvinos_onnx_frontend(tmp_path):
    """What openvino.convert_model writes for a small transformer-ish ONNX graph."""
    from onnx import TensorProto as T
    from onnx import helper
    from onnx import numpy_helper as nh

    def node(op, ins, outs, **attrs):
        return helper.make_node(op, ins, outs, **attrs)

    nodes = [
        node("Shape", ["ids"], ["s"]), node("Gather", ["s", "one"], ["seq"], axis=0),
        node("Range", ["zero", "seq", "one"], ["pos"]), node("Unsqueeze", ["pos", "ax0"], ["pos2"]),
        node("Expand", ["pos2", "s"], ["posb"]), node("Gather", ["emb", "ids"], ["e1"], axis=0),
        node("Gather", ["pemb", "posb"], ["e2"], axis=0), node("Add", ["e1", "e2"], ["h"]),
        node("ReduceMean", ["h", "axm1"], ["mu"], keepdims=1), node("Sub", ["h", "mu"], ["hc"]),
        node("MatMul", ["hc", "w"], ["q"]), node("Softmax", ["q"], ["p"], axis=-1),
        node("Equal", ["ids", "zero"], ["pad"]), node("Unsqueeze", ["pad", "axm1"], ["pad2"]),
        node("Where", ["pad2", "negs", "p"], ["pm"]), node("Slice", ["pm", "st", "en", "axs"], ["sl"]),
        node("Cast", ["sl"], ["out"], to=T.FLOAT16), node("Flatten", ["hc"], ["flat"], axis=1),
        node("Transpose", ["h"], ["ht"], perm=[0, 2, 1]), node("Concat", ["ht", "ht"], ["cat"], axis=1),
        node("Split", ["cat"], ["sp1", "sp2"], axis=1, num_outputs=2), node("Tile", ["sp1", "reps"], ["tl"]),
        node("Abs", ["tl"], ["ab"]), node("Sqrt", ["ab"], ["sq"]),
        node("ReduceSum", ["sq", "axm1"], ["rs"], keepdims=0),
        node("Erf", ["rs"], ["er"]), node("Pow", ["er", "two"], ["pw"]),
    ]
    rng = np.random.default_rng(3)  # its own: the module's RNG depends on which tests ran before
    inits = {"one": np.array(1, np.int64), "zero": np.array(0, np.int64), "ax0": np.array([0], np.int64),
             "axm1": np.array([-1], np.int64), "emb": rng.random((10, 4), np.float32),
             "pemb": rng.random((16, 4), np.float32), "w": rng.random((4, 5), np.float32),
             "negs": np.array(-1e4, np.float32), "st": np.array([1], np.int64), "en": np.array([4], np.int64),
             "axs": np.array([2], np.int64), "reps": np.array([1, 1, 2], np.int64), "two": np.array(2, np.float32)}
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("ids", T.INT64, ["B", "S"])],
        [helper.make_tensor_value_info("out", T.FLOAT16, None), helper.make_tensor_value_info("flat", T.FLOAT, None),
         helper.make_tensor_value_info("pw", T.FLOAT, None)],
        initializer=[nh.from_array(v, k) for k, v in inits.items()])
    src = tmp_path / "src.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), str(src))
    for compress in (False, True):
        xml = save_ir(ov.convert_model(str(src)), tmp_path, f"m{int(compress)}", compress=compress)
        types = {layer.type for layer in read_ir(xml).layers}
        assert {"Gather", "Range", "Broadcast", "ShapeOf", "Slice", "Select"} <= types
        # h - mean(h): cancellation
        check_ir(xml, [np.array([[1, 0, 3, 4], [4, 5, 9, 0]], np.int64)], ulps=64, atol=1e-6)


# --- If-8: bodies become ONNX sub-graphs --------------------------------------------------------


def _if_model(then_extra=None):
    c, x, y = P([], "boolean", name="c"), P([2], name="x"), P([2], name="y")
    tx, ty = o8.parameter([2], ov.Type.f32), o8.parameter([2], ov.Type.f32)
    t_out = [o1.add(tx, ty), o1.multiply(tx, C(np.float32(2)))]
    if then_extra is not None:
        t_out[1] = then_extra(tx)
    then = ov.Model(t_out, [tx, ty])
    ex = o8.parameter([2], ov.Type.f32)
    els = ov.Model([o1.negative(ex), C(np.array([7, 8], np.float32))], [ex])
    node = o8.if_op(c)
    node.set_then_body(then)
    node.set_else_body(els)
    node.set_input(x.output(0), tx, ex)
    node.set_input(y.output(0), ty, None)
    outs = [node.set_output(then.results[i], els.results[i]) for i in range(2)]
    return ov.Model([o1.relu(outs[0]).output(0), outs[1]], [c, x, y], "if")


@pytest.mark.parametrize("compress", [False, True], ids=["f32", "compressed"])
def test_if(compress, tmp_path):
    xml = save_ir(_if_model(), tmp_path, compress=compress)
    x, y = np.array([1.5, -2], np.float32), np.array([10, 20], np.float32)
    for cond in (True, False):
        onnx_model = check_ir(xml, [np.array(cond), x, y], backend="cpu")  # the reference cannot evaluate If
    assert [n.op_type for n in onnx_model.graph.node] == ["If", "Relu"]


def test_if_with_domain_op_in_body(tmp_path):
    xml = save_ir(_if_model(lambda tx: o8.gather(tx, C([1, 5], np.int64), C(0, np.int64))), tmp_path)
    x, y = np.array([1.5, -2], np.float32), np.array([10, 20], np.float32)
    for cond in (True, False):
        check_ir(xml, [np.array(cond), x, y], backend="cpu")
    check_ir(xml, [np.array(True), x, y], backend="cpu", inline=True)


def test_unsupported_layer_in_body_is_listed(tmp_path):
    # a StringTensorUnpack-15 in the If's body: a Negative renamed (see test_unsupported_layers_listed_with_counts)
    xml = save_ir(_if_model(lambda tx: o1.add(tx, o1.negative(tx))), tmp_path)
    edit_ir(xml, r'type="Negative" version="opset1"', 'type="StringTensorUnpack" version="opset15"')
    with pytest.raises(IRError, match=r"StringTensorUnpack-opset15 x1 \(no ONNX equivalent"):
        convert(xml)


def test_equal_constants_stored_once(tmp_path):
    x = P([100], name="x")
    w = np.arange(100, dtype=np.float32)
    xml = save_ir(M([o1.add(x, C(w)), o1.multiply(x, C(w.copy()))], [x]), tmp_path)
    assert len({line for line in xml.read_text().splitlines() if "offset=" in line}) == 1  # shared in the .bin
    onnx_model = check_ir(xml, [f32(100)])
    assert len(onnx_model.graph.initializer) == 1


def test_broadcast1_explicit_is_written_none_and_kept(tmp_path):
    x = P([3], name="x")
    xml = save_ir(M(o1.broadcast(x, C([2, 3], np.int64), C([1], np.int64), "EXPLICIT"), [x]), tmp_path)
    assert 'mode="none"' in xml.read_text()
    onnx_model = check_ir(xml, [f32(3)])
    node = next(n for n in onnx_model.graph.node if n.op_type == "Broadcast")
    assert onnx_ext.node_attributes(node)["mode"] == "none" and len(node.input) == 3


# --- element types onnxruntime has no kernel for: hypothesis against numpy ---------------------------
# IR built in memory (no OpenVINO): Parameter x, Parameter y -> op -> Result.

from hypothesis import given, settings, strategies as st  # noqa: E402

from converters.ir import Edge, IRModel, Layer, Port  # noqa: E402
from onnx_ext.types import from_ov  # noqa: E402


def _ir_binary(op: str, et: str, xshape, yshape, out_et: str, data=None) -> IRModel:
    t, o = from_ov(et), from_ov(out_et)
    out_shape = list(np.broadcast_shapes(tuple(xshape), tuple(yshape)))
    layers = [
        Layer(0, "x", "Parameter", "opset1", {"shape": ",".join(map(str, xshape)), "element_type": et},
              outputs=[Port(0, t, list(xshape), ["x"])]),
        Layer(1, "y", "Parameter", "opset1", {"shape": ",".join(map(str, yshape)), "element_type": et},
              outputs=[Port(0, t, list(yshape), ["y"])]),
        Layer(2, "op", op, "opset1", data or {"auto_broadcast": "numpy"},
              inputs=[Port(0, t, list(xshape)), Port(1, t, list(yshape))], outputs=[Port(2, o, out_shape, ["z"])]),
        Layer(3, "out", "Result", "opset1", inputs=[Port(0, o, out_shape)]),
    ]
    return IRModel("h", 11, layers, [Edge(0, 0, 2, 0), Edge(1, 0, 2, 1), Edge(2, 2, 3, 0)], "<hypothesis>")


_NUMPY_BINARY = {
    "Add": np.add, "Subtract": np.subtract, "Multiply": np.multiply, "Maximum": np.maximum, "Minimum": np.minimum,
    "Equal": np.equal, "NotEqual": np.not_equal, "Less": np.less, "GreaterEqual": np.greater_equal,
    "Divide": None, "FloorMod": None, "Mod": None,
}
_HYP_TYPES = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32", "f64", "boolean"]


def _expected(op: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if x.dtype == BF16:  # ml_dtypes arithmetic: through f32, rounded once
            r = _expected(op, x.astype(np.float32), y.astype(np.float32))
            return r if r.dtype == np.bool_ else r.astype(BF16)
        if op == "Divide":
            return np.floor_divide(x, y) if x.dtype.kind in "iu" else np.divide(x, y)
        if op == "FloorMod":
            return np.mod(x, y)
        if op == "Mod":
            return np.fmod(x, y)
        return _NUMPY_BINARY[op](x, y)


@settings(deadline=None)
@given(op=st.sampled_from(sorted(_NUMPY_BINARY)), et=st.sampled_from(_HYP_TYPES), data=st.data())
def test_binary_types_against_numpy(op, et, data):
    if et == "boolean" and op not in ("Equal", "NotEqual", "Maximum", "Minimum", "Less", "GreaterEqual"):
        return
    dtype = _TYPES.get(et, np.bool_)
    xshape = data.draw(st.sampled_from([(3,), (2, 3), (1, 3), ()]))
    yshape = data.draw(st.sampled_from([(3,), (2, 1), ()]))
    if et == "boolean":
        x = RNG.integers(0, 2, xshape).astype(bool)
        y = RNG.integers(0, 2, yshape).astype(bool)
    elif dtype in (np.float16, np.float32, np.float64, BF16):
        x = RNG.uniform(-50, 50, xshape).astype(np.float32).astype(dtype)
        y = RNG.uniform(-50, 50, yshape).astype(np.float32).astype(dtype)
    else:
        info = np.iinfo(dtype)
        lo, hi = max(int(info.min), -(2**40)), min(int(info.max), 2**40)
        big = data.draw(st.booleans())  # full range (wrapping) or values near 0
        x = RNG.integers(lo if big else max(lo, -9), hi if big else 9, xshape, endpoint=True).astype(dtype)
        y = RNG.integers(lo if big else max(lo, -9), hi if big else 9, yshape, endpoint=True).astype(dtype)
        if et == "u64" and big:
            x = x | np.uint64(2**63)  # values beyond i64
        if op in ("Divide", "FloorMod", "Mod"):
            y = np.where(y == 0, 1, y).astype(dtype)  # integer division by zero kills the process
    want = _expected(op, np.asarray(x), np.asarray(y))
    out_et = "boolean" if want.dtype == np.bool_ else et
    ir = _ir_binary(op, et, np.shape(x), np.shape(y), out_et)
    got = run_onnx(ir_to_onnx(ir), [x, y])[0]
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    if want.dtype.kind == "f" or want.dtype == BF16:
        rtol = {"f16": 1e-3, "bf16": 2**-8}.get(et, 1e-6)  # FloorMod: OpenVINO's formula, in double
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=rtol)
    else:
        assert np.array_equal(got, want), f"{op} {et}: {x} {y} -> {got} vs {want}"


def _ir_convert(src: str, dst: str, shape) -> IRModel:
    s, d = from_ov(src), from_ov(dst)
    layers = [
        Layer(0, "x", "Parameter", "opset1", {"shape": ",".join(map(str, shape)), "element_type": src},
              outputs=[Port(0, s, list(shape), ["x"])]),
        Layer(1, "cv", "Convert", "opset1", {"destination_type": dst}, inputs=[Port(0, s, list(shape))],
              outputs=[Port(1, d, list(shape), ["y"])]),
        Layer(2, "out", "Result", "opset1", inputs=[Port(0, d, list(shape))]),
    ]
    return IRModel("c", 11, layers, [Edge(0, 0, 1, 0), Edge(1, 1, 2, 0)], "<hypothesis>")


@settings(deadline=None)
@given(src=st.sampled_from(_HYP_TYPES), dst=st.sampled_from(_HYP_TYPES), data=st.data())
def test_convert_against_numpy(src, dst, data):
    """OpenVINO's Convert: float -> integer truncates and wraps, -> boolean is "not zero"."""
    sdt, ddt = _TYPES.get(src, np.bool_), _TYPES.get(dst, np.bool_)
    n = 6
    if src == "boolean":
        x = RNG.integers(0, 2, n).astype(bool)
    elif np.dtype(sdt).kind in "iu":
        info = np.iinfo(sdt)
        small = data.draw(st.booleans()) or dst in ("bf16", "f16")  # ints above 2^11 are not exact in f16
        lo, hi = (max(int(info.min), -100), min(int(info.max), 100)) if small else (int(info.min), int(info.max))
        x = RNG.integers(lo, hi, n, endpoint=True, dtype=np.int64 if src != "u64" else np.uint64).astype(sdt)
    else:
        hi = 60000.0 if src == "f16" else 1e6
        if dst in ("f16", "bf16", "f32", "f64", "boolean") or np.iinfo(ddt).min < 0:
            x = RNG.uniform(-hi, hi, n)
        else:
            x = RNG.uniform(0, hi, n)  # negative floats to unsigned: OpenVINO wraps through i64 only below u64
        x = np.concatenate([x[:3], [0.5, -0.0, 2.5]]).astype(np.float32).astype(sdt)
    with np.errstate(all="ignore"):
        if dst == "boolean":
            want = x.astype(np.float64) != 0 if src != "boolean" else x
        elif np.dtype(ddt).kind in "iu" and (src in ("f16", "bf16", "f32", "f64")):
            want = np.trunc(x.astype(np.float64)).astype(np.int64).astype(ddt) if dst != "u64" else \
                np.trunc(x.astype(np.float64)).astype(np.uint64)
        else:
            want = x.astype(ddt)
    got = run_onnx(ir_to_onnx(_ir_convert(src, dst, (n,))), [x])[0]
    assert got.dtype == want.dtype
    if want.dtype.kind == "f" or want.dtype == BF16:
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
    else:
        assert np.array_equal(got, want), f"{src}->{dst}: {x} -> {got} vs {want}"


def test_ports_written_without_dims(tmp_path):
    """IR from tools that leave out dims they do not know: ranks come from the inputs."""
    x = P([-1, 4], name="x")
    b = o3.broadcast(x, C([2, 3, 4], np.int64))
    a = o1.add(b, C(np.float32(1)))
    g = o8.gather(a, C(-1, np.int64), C(1, np.int64))
    xml = save_ir(M([g, o1.reduce_sum(a, C([0, 1, 2], np.int64), False)], [x]), tmp_path)
    text = xml.read_text()
    for name in ("Broadcast", "Add", "Gather"):  # drop the dims of these layers' output ports
        text = re.sub(rf'(type="{name}" version="opset\d"(?:(?!</layer>).)*?<output>\s*<port [^>]*?)>.*?</port>',
                      r"\1 />", text, count=1, flags=re.S)
    xml.write_text(text)
    ir = read_ir(xml)
    assert [layer.outputs[0].dims for layer in ir.layers if layer.type in ("Broadcast", "Add", "Gather")] == [[]] * 3
    onnx_model = check_ir(xml, [f32(3, 4)])
    assert len(onnx_model.graph.output[0].type.tensor_type.shape.dim) == 2
    assert len(onnx_model.graph.output[1].type.tensor_type.shape.dim) == 0


def test_round_trip_through_openvinos_onnx_frontend(tmp_path):
    """IR -> ONNX -> IR (converters.onnx_to_ir) -> ONNX gives what OpenVINO computes."""
    from converters.onnx_to_ir import convert_onnx_file

    build, *_ = CASES["position_ids_block"]
    model, feeds = build()
    xml = save_ir(model, tmp_path, compress=True)
    first = tmp_path / "first.onnx"
    convert_ir_file(xml, first)
    again = tmp_path / "again.xml"
    convert_onnx_file(first, again)
    check_ir(again, feeds)


def test_dead_node_pass_keeps_a_loop_with_no_carried_values():
    # onnx_ir's RemoveUnusedNodesPass drops trailing empty inputs: Loop(M, "") with no carried values would lose
    # its `cond`, and ONNX counts the carried values after it (TensorIterators of the generator's `ti` mode)
    import onnx_ir as ir
    import onnxruntime as ort
    from onnx import TensorProto, helper

    from converters.ir_to_onnx.assemble import _remove_unused_nodes

    def info(name, et, shape):
        return helper.make_tensor_value_info(name, et, shape)

    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]), helper.make_node("Neg", ["x"], ["y"])], "body",
        [info("i", TensorProto.INT64, []), info("c", TensorProto.BOOL, [])],
        [info("c_out", TensorProto.BOOL, []), info("y", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["m", ""], ["ys"], body=body), helper.make_node("Abs", ["x"], ["unread"])], "g",
        [info("m", TensorProto.INT64, []), info("x", TensorProto.FLOAT, [2])],
        [info("ys", TensorProto.FLOAT, [None, 2])])
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    model = ir.serde.deserialize_model(onnx_model)
    _remove_unused_nodes(model, [])
    proto = ir.serde.serialize_model(model)
    assert [n.op_type for n in proto.graph.node] == ["Loop"]  # the unread Abs went
    assert list(proto.graph.node[0].input) == ["m", ""]
    onnx.checker.check_model(proto, full_check=True)
    x = np.array([1.5, -2.0], np.float32)
    (ys,) = ort.InferenceSession(proto.SerializeToString()).run(None, {"m": np.array(3, np.int64), "x": x})
    np.testing.assert_array_equal(ys, np.stack([-x] * 3))
    assert ys.dtype == np.float32
