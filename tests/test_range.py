"""Range-4: the function (onnxruntime), the inlined model and the numpy reference
against OpenVINO's reference, on random cases, the shared vectors and the spec;
exactness beyond 2^53 against Python integers; the failures."""

import itertools
import math

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from onnx import helper
from onnxscript import FLOAT, INT64, script
from onnxscript import opset21 as op

import onnx_ext
from helpers import assert_same, feeds_of, one_node_model, run_three_ways
from onnx_ext.functions import Range
from onnx_ext.ops.range import SPEC, range_length, range_reference
from onnx_ext.types import from_numpy, from_ov
from vectors import load_vectors, vector_expected, vector_inputs

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOAT_TYPES = [np.dtype(t) for t in (np.float16, BF16, np.float32, np.float64)]
INT_TYPES = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)]
NUMERIC = FLOAT_TYPES + INT_TYPES
NAMES = ["start", "stop", "step"]
MAX_COUNT = 110_000


def _model(inputs, out_dtype, const=None):
    """A one-node Range model (attached bodies); runtime inputs unless const."""
    et = from_numpy(out_dtype)
    return one_node_model("Range", inputs, {"output_type": et.onnx}, const=const, out_type=et.onnx, out_rank=1)


def _check_models(model):
    onnx.checker.check_model(model, full_check=True)
    onnx.checker.check_model(onnx_ext.inline(model), full_check=True)


def _ulps(dtype):
    return 1 if np.dtype(dtype) == BF16 else 0


# --- random cases against OpenVINO's reference ------------------------------------


def _fit(value, dtype):
    """``value`` as a 0-d array of ``dtype``, clipped into its range (None if not finite)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array(min(max(math.trunc(value), int(info.min)), int(info.max)), dtype)
    top = float(ml_dtypes.finfo(dtype).max)
    a = np.array(min(max(value, -top), top), np.float64).astype(dtype)
    return a if np.isfinite(a.astype(np.float64)) else None


def _top(dtype):
    dtype = np.dtype(dtype)
    return float(np.iinfo(dtype).max if dtype.kind in "iu" else ml_dtypes.finfo(dtype).max)


@st.composite
def range_cases(draw, out_types, in_types, limit):
    """(start, stop, step, output dtype, const): |start|, |step| < limit where the
    reference's C++ casts are defined; the count is mostly small, sometimes ~1e5."""
    out = draw(st.sampled_from(out_types))
    start_dt, stop_dt, step_dt = [draw(st.sampled_from(in_types)) for _ in range(3)]
    count = draw(st.one_of(st.integers(1, 40), st.sampled_from([1, 255, 256, 1000, 65537, 100_000])))
    fractional = draw(st.booleans())

    def number(lo, hi):
        if fractional:
            return draw(st.floats(lo, hi, allow_nan=False, allow_infinity=False))
        return draw(st.integers(math.ceil(lo), math.floor(hi)))

    # Keep start and stop within the narrower of their types most of the time.
    room = min(limit, _top(start_dt), _top(stop_dt))
    start = _fit(number(0 if start_dt.kind == "u" else -room / 2, room / 2), start_dt)
    negative = step_dt.kind != "u" and draw(st.booleans())
    smallest = 1 if np.dtype(out).kind in "iu" else 1e-3
    largest = draw(st.sampled_from([1, 3, 100, max(1, room / 2 / count), max(1, min(limit, _top(step_dt)))]))
    magnitude = number(smallest, max(smallest, min(largest, _top(step_dt))))
    step = _fit(-magnitude if negative else magnitude, step_dt)
    assume(start is not None and step is not None)
    s, t = float(start.astype(np.float64)), float(step.astype(np.float64))
    empty_way = draw(st.sampled_from(["ahead"] * 6 + ["behind", "equal"]))
    if empty_way == "behind":
        target = s - t * draw(st.integers(1, 5))
    elif empty_way == "equal":
        target = s
    else:
        target = s + t * count - t * draw(st.sampled_from([0.0, 0.25, 0.5, 0.999]))
    stop = _fit(min(max(target, -(2.0**53)), 2.0**53), stop_dt)  # the reference counts in double
    assume(stop is not None)
    inputs = [start, stop, step]
    try:
        n = range_length(*inputs, output_type=from_numpy(out).onnx)
    except onnx_ext.OnnxExtError:  # zero step after truncation: we fail, the reference gives []
        assume(False)
    assume(n <= MAX_COUNT)
    const = [draw(st.booleans()) for _ in range(3)]
    return inputs, out, const


def _check_against_openvino(ov_reference, inputs, out, const):
    attrs = {"output_type": from_numpy(out).ov}
    (expected,) = ov_reference("Range", 4, inputs, attrs, const=const)
    mine = range_reference(*inputs, output_type=from_numpy(out).onnx)
    assert_same(mine, expected, "numpy reference vs OpenVINO", ulps=_ulps(out))
    model = _model(inputs, out, const)
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, mine, how)  # bit-exact with the documented semantics


@given(range_cases(FLOAT_TYPES, NUMERIC, 2.0**20))
def test_range_float_output_matches_openvino(ov_reference, case):
    _check_against_openvino(ov_reference, *case)


@given(range_cases(INT_TYPES, INT_TYPES, 2**31 - 1))
def test_range_integer_output_from_integers_matches_openvino(ov_reference, case):
    _check_against_openvino(ov_reference, *case)


@given(range_cases(INT_TYPES, NUMERIC, 2**31 - 1))
def test_range_integer_output_from_any_inputs_matches_openvino(ov_reference, case):
    # Fractional float inputs are truncated toward zero; values wrap in the output type.
    _check_against_openvino(ov_reference, *case)


@given(range_cases([np.dtype(np.int64), np.dtype(np.uint64), np.dtype(np.float64)],
                   [np.dtype(np.int64), np.dtype(np.uint64), np.dtype(np.float64)], 2.0**53))
def test_range_64_bit_matches_openvino_up_to_2_53(ov_reference, case):
    _check_against_openvino(ov_reference, *case)


# --- exactness beyond 2^53 ---------------------------------------------------------


def _exact(s, e, t, out_dtype):
    """Range over Python integers, wrapped into out_dtype."""
    count = max(0, -((s - e) // t))
    bits = np.iinfo(out_dtype).bits
    values = [(s + i * t) % (1 << bits) for i in range(count)]
    if np.dtype(out_dtype).kind == "i":
        values = [v - (1 << bits) if v >= 1 << (bits - 1) else v for v in values]
    return np.array(values, dtype=out_dtype).reshape(count)


@st.composite
def big_integer_cases(draw):
    """int64/uint64 inputs anywhere in their ranges, with at most ~50 elements."""
    dts = [draw(st.sampled_from([np.dtype(np.int64), np.dtype(np.uint64)])) for _ in range(3)]
    out = np.dtype(draw(st.sampled_from([np.int64, np.uint64, np.int32, np.uint8])))
    lo, hi = (lambda dt: int(np.iinfo(dt).min)), (lambda dt: int(np.iinfo(dt).max))
    s = draw(st.integers(lo(dts[0]), hi(dts[0])))
    e = draw(st.one_of(st.integers(lo(dts[1]), hi(dts[1])), st.integers(s - 100, s + 100)))
    e = min(max(e, lo(dts[1])), hi(dts[1]))
    count = draw(st.integers(1, 50))
    t = -((s - e) // count) or 1  # ceil((e - s) / count)
    if dts[2].kind == "u":
        t = abs(t)  # a step pointing away from stop: empty
    t = min(max(t, lo(dts[2])), hi(dts[2]))
    return [np.array(s, dts[0]), np.array(e, dts[1]), np.array(t, dts[2])], out, (s, e, t)


@given(big_integer_cases())
def test_range_is_exact_for_all_int64_and_uint64_values(case):
    inputs, out, (s, e, t) = case
    want = _exact(s, e, t, out)
    model = _model(inputs, out)
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


@pytest.mark.parametrize("start, stop, step, out, want", [
    (np.int64(2**53 + 1), np.int64(2**53 + 10), np.int64(3), np.int64, [2**53 + 1, 2**53 + 4, 2**53 + 7]),
    (np.int64(2**62 + 1), np.int64(2**62 + 6), np.int64(1), np.int64, [2**62 + k for k in range(1, 6)]),
    (np.uint64(2**64 - 3), np.uint64(2**64 - 1), np.uint64(1), np.uint64, [2**64 - 3, 2**64 - 2]),
    (np.int64(-2**63), np.int64(2**63 - 1), np.int64(2**62), np.int64, [-2**63, -2**62, 0, 2**62]),
    (np.int64(2**63 - 1), np.int64(-2**63), np.int64(-2**63), np.int64, [2**63 - 1, -1]),
    # stop - start = 2^64 exceeds both int64 and uint64:
    (np.int64(-1), np.uint64(2**64 - 1), np.uint64(2**62), np.uint64, [2**64 - 1, 2**62 - 1, 2**63 - 1, 3 * 2**62 - 1]),
    (np.uint64(2**64 - 1), np.int64(-2**63), np.int64(-2**63), np.uint64, [2**64 - 1, 2**63 - 1, 2**64 - 1]),
    (np.uint64(2**64 - 1), np.int64(-2), np.int64(-(2**63)), np.int64, [-1, 2**63 - 1, -1]),
    (np.float64(2.0**63), np.float64(2.0**63 + 2**12), np.uint64(2048), np.uint64, [2**63, 2**63 + 2048]),
    (np.float64(-(2.0**63)), np.uint64(2**63), np.uint64(2**63), np.int64, [-2**63, 0]),
    # onnxruntime's own Range serves |start|, count * |step| <= 2^52; beyond, i * step + start:
    (np.int64(2**52), np.int64(2**52 + 3), np.int64(1), np.int64, [2**52, 2**52 + 1, 2**52 + 2]),
    (np.int64(2**52 + 1), np.int64(2**52 + 4), np.int64(1), np.int64, [2**52 + 1, 2**52 + 2, 2**52 + 3]),
    (np.int64(-(2**52) - 1), np.int64(-(2**52) - 4), np.int64(-1), np.int64, [-(2**52) - k for k in (1, 2, 3)]),
    (np.int64(0), np.int64(2**62), np.int64(2**60), np.int64, [k * 2**60 for k in range(4)]),
    (np.int64(5), np.int64(5 - 3 * 2**50), np.int64(-(2**50)), np.int64, [5, 5 - 2**50, 5 - 2**51]),
    (np.uint64(2**64 - 1), np.uint64(2**64 - 1), np.uint64(1), np.uint64, []),
    (np.uint64(0), np.uint64(2**64 - 1), np.uint64(2**64 - 1), np.uint64, [0]),
    (np.uint64(2**64 - 1), np.float32(0.5), np.float64(-(2.0**62)), np.uint8, [255, 255, 255, 255]),
])
def test_range_exact_examples_beyond_2_53(start, stop, step, out, want):
    inputs = [np.array(start), np.array(stop), np.array(step)]
    expected = np.array(want, dtype=out).reshape(len(want))
    s, e, t = (math.trunc(v.item()) for v in inputs)
    assert_same(_exact(s, e, t, out), expected, "python ints")
    model = _model(inputs, np.dtype(out))
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, expected, how)


@pytest.mark.parametrize("const", list(itertools.product([False, True], repeat=3)), ids=str)
@pytest.mark.parametrize("values", [(0.0, 100.0, 1.00000001), (0.0, 3.0000000001, 1.0000000001),
                                    (1.00000001, 5.0, 1.0), (1e-200, 3e-200, 1e-200), (-1e-200, 1.0, 1.0)])
def test_range_double_constants_that_are_0_or_1_in_float32(values, const):
    # onnxruntime's NoopElimination drops x * c and x + c when c is 1 or 0 in float32.
    inputs = [np.array(v, np.float64) for v in values]
    want = range_reference(*inputs, output_type=onnx.TensorProto.DOUBLE)
    for how, got in run_three_ways(_model(inputs, np.dtype(np.float64), const=list(const)), inputs).items():
        assert_same(got, want, how)


# --- shared vectors and the spec ---------------------------------------------------


@pytest.mark.parametrize("vector", load_vectors("Range"), ids=lambda v: v["test_name"])
def test_range_vectors(ov_reference, vector):
    inputs = vector_inputs(vector, NAMES)
    want = vector_expected(vector)
    out = from_ov(vector["attrs"]["output_type"])
    model = _model(inputs, out.numpy)
    _check_models(model)
    (openvino,) = ov_reference("Range", 4, inputs, {"output_type": out.ov})
    # Transcribed float vectors hold decimals (0.2, not 0.20000005): OpenVINO's own
    # test compares them with a tolerance. The reference's output is exact.
    ulps = 4 if want.dtype.kind == "f" and vector["values_source"] == "transcribed" else 0
    assert_same(openvino, want, "OpenVINO vs the vector", ulps=max(ulps, _ulps(want.dtype)))
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, openvino, f"{how} vs OpenVINO", ulps=_ulps(want.dtype))
        assert_same(got, want, f"{how} vs the vector", ulps=max(ulps, _ulps(want.dtype)))


SPEC_EXAMPLES = [  # Range-4 spec examples 1-3
    ((2, 23, 3), np.int32, np.int32, [2, 5, 8, 11, 14, 17, 20]),
    ((23, 2, -3), np.int32, np.int32, [23, 20, 17, 14, 11, 8, 5]),
    ((1, 2.5, 0.5), np.float32, np.float32, [1.0, 1.5, 2.0]),
]


@pytest.mark.parametrize("values, in_dtype, out, expected", SPEC_EXAMPLES)
def test_range_spec_examples(values, in_dtype, out, expected):
    inputs = [np.array(v, in_dtype) for v in values]
    want = np.array(expected, out)
    model = _model(inputs, np.dtype(out))
    _check_models(model)
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


@pytest.mark.parametrize("values, out, expected", [
    ((250, 260, 1), np.uint8, [250, 251, 252, 253, 254, 255, 0, 1, 2, 3]),
    ((-1.5, 2.5, 1), np.int32, [-1, 0, 1]),
    ((1.5, 7.9, 1.7), np.int32, [1, 2, 3, 4, 5, 6]),
    ((-5, 5, 1), np.uint8, [251, 252, 253, 254, 255, 0, 1, 2, 3, 4]),
    ((10, 0, -1), np.uint8, [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]),
    ((0, 1000, 300), np.int8, [0, 44, 88, -124]),
])
def test_range_truncation_and_wrap_around(ov_reference, values, out, expected):
    inputs = [np.array(v, np.float64) for v in values]
    want = np.array(expected, out)
    (openvino,) = ov_reference("Range", 4, inputs, {"output_type": from_numpy(out).ov})
    assert_same(openvino, want, "OpenVINO")
    for how, got in run_three_ways(_model(inputs, np.dtype(out)), inputs).items():
        assert_same(got, want, how)


# --- the public (general) body and the overloads -----------------------------------


def _public_body_model(inputs, out_dtype):
    """A node with no overload and only the general body, as an onnxscript user gets it."""
    et = from_numpy(out_dtype)
    node = helper.make_node("Range", ["in0", "in1", "in2"], ["out"], domain=onnx_ext.DOMAIN, output_type=et.onnx)
    graph = helper.make_graph(
        [node], "range",
        [helper.make_tensor_value_info(f"in{i}", from_numpy(v.dtype).onnx, []) for i, v in enumerate(inputs)],
        [helper.make_tensor_value_info("out", et.onnx, ["n"])])
    functions = [SPEC.function_proto(None, onnx_ext.ONNX_OPSET)] + SPEC.helper_protos(onnx_ext.ONNX_OPSET)
    model = helper.make_model(
        graph, ir_version=10, functions=functions,
        opset_imports=[helper.make_opsetid("", onnx_ext.ONNX_OPSET), helper.make_opsetid(onnx_ext.DOMAIN, 1)])
    return model


@pytest.mark.parametrize("out", NUMERIC, ids=str)
@pytest.mark.parametrize("in_types", [(np.float32,) * 3, (np.int64,) * 3, (np.uint8, np.float16, BF16)], ids=str)
def test_range_public_body_serves_every_output_type(out, in_types):
    inputs = [np.array(v).astype(dt) for v, dt in zip((3, 40.5, 2.5), in_types)]
    model = _public_body_model(inputs, out)
    onnx.checker.check_model(model, full_check=True)
    got = onnx_ext.run(model, feeds_of(model, inputs))[0]
    assert_same(got, range_reference(*inputs, output_type=from_numpy(out).onnx), "public body")


@script()
def half_steps(n: INT64) -> FLOAT["N"]:  # onnxscript reads module globals: Range is the op
    return Range(op.Constant(value_float=0.0), op.Cast(n, to=FLOAT.dtype), op.Constant(value_float=0.5), output_type=1)


def test_onnxscript_users_call_range():
    model = onnx_ext.attach_functions(half_steps.to_model_proto())
    # start 0 and step 0.5 are Constants: the body without the Add
    assert [n.overload for n in model.graph.node if n.op_type == "Range"] == ["fast_f32_float_f32_f32_f32_from0"]
    onnx.checker.check_model(model, full_check=True)
    want = np.arange(6, dtype=np.float32) / 2
    for m in (model, onnx_ext.inline(model)):
        assert_same(onnx_ext.run(m, {"n": np.array(3)})[0], want, "onnxscript")


@pytest.mark.parametrize("in_types, out, overload", [
    (("i64", "i64", "i64"), "i64", "signed_i64"),
    (("i32", "u32", "i8"), "u8", "signed"),
    (("u64", "u8", "u64"), "i64", "unsigned_i64"),
    (("u16", "u8", "u64"), "u32", "unsigned"),
    (("u64", "i64", "u64"), "u64", "integer"),
    (("u64", "i64", "u64"), "i64", "integer_i64"),
    (("f32", "i64", "i64"), "i32", "integer"),
    ((None, "i64", "i64"), "i64", "integer_i64"),
    (("i64", "i64", "i64"), "f32", "float"),
    (("f32", "f32", "f32"), "f64", "float"),
    (("f64", "f64", "f64"), "f16", "half"),
    ((None, None, None), "bf16", "half"),
])
def test_range_select_body(in_types, out, overload):
    operands = [onnx_ext.Operand(type=None if t is None else from_ov(t), shape=()) for t in in_types]
    node = onnx_ext.make_node("Range", ["a", "b", "c"], ["y"], output_type=from_ov(out).onnx, operands=operands)
    if None not in in_types:  # types known: the fast body, which falls back on the exact one
        overload = f"fast_{out}_{overload}_" + "_".join(in_types)
    assert node.overload == overload


@st.composite
def body_cases(draw):
    # Every overload on the same inputs: runtime types chosen, bodies forced.
    dts = [draw(st.sampled_from(INT_TYPES)) for _ in range(3)]
    vals = [draw(st.integers(0 if dt.kind == "u" else -100, 100)) for dt in dts]
    assume(vals[2] != 0)
    out = draw(st.sampled_from(INT_TYPES))
    return [np.array(v, dt) for v, dt in zip(vals, dts)], out


@given(body_cases())
def test_range_integer_bodies_agree(case):
    inputs, out = case
    want = range_reference(*inputs, output_type=from_numpy(out).onnx)
    model = _model(inputs, out)
    bodies = ["integer"]
    if all(v.dtype.kind == "u" for v in inputs):
        bodies.append("unsigned")
    if all(v.dtype != np.uint64 for v in inputs):
        bodies.append("signed")
    if out == np.int64:
        bodies = [b + "_i64" for b in bodies]
    for body in bodies:
        forced = onnx.ModelProto()
        forced.CopyFrom(model)
        forced.graph.node[0].overload = body
        del forced.functions[:]
        forced.functions.append(SPEC.function_proto(body, onnx_ext.ONNX_OPSET))
        forced.functions.extend(SPEC.helper_protos(onnx_ext.ONNX_OPSET))
        assert_same(onnx_ext.run(forced, feeds_of(forced, inputs))[0], want, body)


# --- failures ----------------------------------------------------------------------


@pytest.mark.parametrize("values, in_dtype, out, check", [
    ((np.nan, 5, 1), np.float32, np.float32, "start_is_finite"),
    ((0, np.inf, 1), np.float32, np.float16, "stop_is_finite"),
    ((0, 5, -np.inf), np.float64, np.float64, "step_is_finite_and_not_zero"),
    ((0, 5, np.nan), np.float16, BF16, "step_is_finite_and_not_zero"),
    ((0, 5, 0), np.float32, np.float32, "step_is_finite_and_not_zero"),
    ((0, 5, 0), np.float32, np.float64, "step_is_finite_and_not_zero"),
    ((np.nan, 5, 1), np.float32, np.int32, "start_is_finite"),
    ((0, -np.inf, 1), np.float64, np.uint8, "stop_is_finite"),
    ((0, 5, np.nan), np.float32, np.int64, "step_is_finite"),
    ((0, 5, 0.5), np.float32, np.int32, "step_is_not_zero"),
    ((0, 5, -0.9), np.float64, np.uint64, "step_is_not_zero"),
    ((0, 5, 0), np.int32, np.int32, "step_is_not_zero"),
    ((0, 5, 0), np.uint16, np.int64, "step_is_not_zero"),
    ((0, 1e30, 1), np.float32, np.int64, "stop_fits_int64_or_uint64"),
    ((-1e19, 0, 1), np.float64, np.uint64, "start_fits_int64_or_uint64"),
    ((-(2**63), 2**63 - 1, 1), np.int64, np.int64, "range_size_fits_int64"),
    ((0, 2**64 - 1, 1), np.uint64, np.uint64, "range_size_fits_int64"),
    ((-3e38, 3e38, 1e-30), np.float32, np.float32, "range_size_fits_int64"),
])
def test_range_bad_values_fail_at_runtime_naming_the_check(values, in_dtype, out, check):
    inputs = [np.array(v).astype(in_dtype) for v in values]
    model = _model(inputs, np.dtype(out))
    for how, m in (("function", model), ("inlined", onnx_ext.inline(model))):
        with pytest.raises(Exception, match=check):
            onnx_ext.run(m, feeds_of(m, inputs))
    with pytest.raises(onnx_ext.OpInputError, match="Range"):
        range_reference(*inputs, output_type=from_numpy(out).onnx)
    # Known when the inputs are constants: rejected when the node is built.
    with pytest.raises(onnx_ext.OpInputError, match="Range"):
        _model(inputs, np.dtype(out), const=[True, True, True])


def test_openvino_also_rejects_non_finite_inputs_and_zero_step(ov_reference):
    from ov_reference import OVRejected

    for values in [(np.nan, 5, 1), (0, np.inf, 1), (0, 5, np.nan), (0, 5, 0)]:
        inputs = [np.array(v, np.float32) for v in values]
        with pytest.raises(OVRejected):
            ov_reference("Range", 4, inputs, {"output_type": "f32"})


@pytest.mark.parametrize("output_type", [0, onnx.TensorProto.BOOL, onnx.TensorProto.STRING,
                                         onnx.TensorProto.FLOAT8E4M3FN, onnx.TensorProto.INT4, onnx.TensorProto.UINT4,
                                         999, -1, "f32", 1.0, None])
def test_range_bad_output_type_names_op_and_attribute(output_type):
    attrs = {} if output_type is None else {"output_type": output_type}
    with pytest.raises(onnx_ext.OpAttributeError, match="Range.*output_type"):
        onnx_ext.make_node("Range", ["a", "b", "c"], ["y"], **attrs)
    if isinstance(output_type, int):
        with pytest.raises(onnx_ext.OpAttributeError, match="Range.*output_type"):
            range_reference(np.array(0), np.array(3), np.array(1), output_type=output_type)


@pytest.mark.parametrize("operands, message", [
    ([onnx_ext.Operand(shape=(1,)), onnx_ext.Operand(), onnx_ext.Operand()], "start must be a scalar"),
    ([onnx_ext.Operand(), onnx_ext.Operand(shape=("n",)), onnx_ext.Operand()], "stop must be a scalar"),
    ([onnx_ext.Operand(), onnx_ext.Operand(), onnx_ext.Operand(value=np.array([1]))], "step must be a scalar"),
    ([onnx_ext.Operand(type=from_ov("boolean")), onnx_ext.Operand(), onnx_ext.Operand()], "start must be numeric"),
    ([onnx_ext.Operand(), onnx_ext.Operand(type=from_ov("i4")), onnx_ext.Operand()], "stop must be numeric .*got i4"),
    ([onnx_ext.Operand(), onnx_ext.Operand(), onnx_ext.Operand(type=from_ov("u4"))], "step must be numeric .*got u4"),
    ([onnx_ext.Operand(), onnx_ext.Operand(), onnx_ext.Operand(value=np.array(0.25))], "step is 0.25: must not be 0"),
    ([onnx_ext.Operand(value=np.array(np.inf)), onnx_ext.Operand(), onnx_ext.Operand()], "start is inf"),
    ([onnx_ext.Operand(), onnx_ext.Operand(), onnx_ext.Operand()] * 2, "takes 3 inputs"),
])
def test_range_bad_inputs_rejected_when_built(operands, message):
    with pytest.raises(onnx_ext.OpInputError, match=f"Range.*{message}"):
        onnx_ext.make_node("Range", ["a", "b", "c"], ["y"], output_type=onnx.TensorProto.INT32, operands=operands)


@pytest.mark.parametrize("vector", load_vectors("Range", errors=True), ids=lambda v: v["source_file"])
def test_range_error_vectors_fail(vector):
    inputs = vector_inputs(vector, NAMES)
    out = from_ov(vector["attrs"]["output_type"])
    model = _model(inputs, out.numpy)
    with pytest.raises(Exception, match="step_is_finite_and_not_zero"):
        onnx_ext.run(model, feeds_of(model, inputs))
    with pytest.raises(onnx_ext.OnnxExtError):
        range_reference(*inputs, output_type=out.onnx)
