"""Range-4's fast bodies (``fast_{out}_{exact}_{types}``: input types known): onnxruntime's Range
where it is exact, the exact body otherwise; against the numpy reference."""

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import given
from hypothesis import strategies as st

import onnx_ext
from helpers import assert_same, bits, feeds_of, one_node_model, run_three_ways
from onnx_ext.ops.range import SPEC, FastRange, SmallStepRange, range_length, range_reference
from onnx_ext.types import from_numpy

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOAT_OUT = [np.dtype(t) for t in (np.float16, BF16, np.float32, np.float64)]
INT_OUT = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)]
IN_TYPES = [np.dtype(t) for t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                  np.uint32, np.uint64)]


def _model(inputs, out, const):
    et = from_numpy(out)
    return one_node_model("Range", inputs, {"output_type": et.onnx}, const=const, out_type=et.onnx, out_rank=1)


def _value(draw, dt):
    kind = draw(st.integers(0, 9))
    if dt.kind == "f":
        info = np.finfo(dt)
        if kind == 0:
            return draw(st.sampled_from([0.0, -0.0, 2.0**24, 2.0**31, 1e30, float(info.max)]))
        return draw(st.floats(-3000, 3000, allow_nan=False, width=16 if dt == np.float16 else 32))
    info = np.iinfo(dt)
    if kind == 0:  # near the fast path's bounds
        near = [2**14, 2**30, 2**31, 2**52]
        return draw(st.sampled_from([v for v in near + [-v for v in near] if info.min <= v <= info.max] + [info.max]))
    return draw(st.integers(max(info.min, -3000), min(info.max, 3000)))


@st.composite
def cases(draw):
    out = draw(st.sampled_from(FLOAT_OUT + INT_OUT))
    types = [draw(st.sampled_from(IN_TYPES)) for _ in range(3)]
    vals = [_value(draw, dt) for dt in types]
    if draw(st.integers(0, 3)) == 0:  # a small step
        vals[2] = draw(st.sampled_from([1, -1, 2, 0.5, -0.25, 0.1, 7])) if types[2].kind == "f" else \
            draw(st.sampled_from([1, 2, 7] + ([-1, -3] if types[2].kind == "i" else [])))
    inputs = [np.array(v).astype(dt) for v, dt in zip(vals, types)]
    const = [draw(st.booleans()) for _ in range(3)]
    return inputs, out, const


@given(cases())
def test_fast_bodies_match_reference(case):
    inputs, out, const = case
    et = from_numpy(out)
    try:
        if range_length(*inputs, output_type=et.onnx) > 200_000:
            return
        want = range_reference(*inputs, output_type=et.onnx)
    except onnx_ext.OnnxExtError:
        want = None
    try:
        model = _model(inputs, out, const)
    except onnx_ext.OnnxExtError:
        assert want is None or all(const)
        return
    assert model.graph.node[0].overload.startswith("fast_")
    if want is None:
        for m in (model, onnx_ext.inline(model)):
            with pytest.raises(Exception):
                onnx_ext.run(m, feeds_of(model, inputs))
        return
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


@pytest.mark.parametrize("values, in_dtype, out", [
    ((0, 2**30 - 10, 2**29), np.int64, np.int32),  # at the int32 bound: the fast path
    ((0, 2**30 + 10, 2**29), np.int64, np.int32),  # past it: the exact body
    ((-(2**31) + 5, 2**31 - 5, 2**30), np.int64, np.int64),
    ((2**62, 2**62 + 10, 3), np.int64, np.int64),
    ((250, 260, 1), np.int32, np.uint8),  # wraps
    ((-32768, 32767, 1), np.int16, np.int16),  # every int16: the int16 Range
    ((-32768, 32767, 1), np.int32, np.int16),
    ((32767, -32768, -3), np.int64, np.int16),
    ((-3, 3, 1), np.int64, np.uint64),
    ((1.9, -2.9, -0.5), np.float32, np.int32),  # step truncates to 0: exact body, error
    ((2.9, -2.9, -1.5), np.float32, np.int16),
    ((0.0, 2.0**24 + 3, 1.0), np.float64, np.float32),  # 2^24 + 3 elements: exact body (slow, no values checked)
    ((0.5, 0.0, -0.1), np.float32, np.float16),
    ((0.0, 1.0, 1e-7), np.float64, np.float64),
    ((1e-200, 3e-200, 1e-200), np.float64, np.float64),
])
def test_fast_body_bounds(values, in_dtype, out):
    inputs = [np.array(v).astype(in_dtype) for v in values]
    et = from_numpy(np.dtype(out))
    try:
        want = range_reference(*inputs, output_type=et.onnx)
    except onnx_ext.OnnxExtError:
        want = None
    model = _model(inputs, np.dtype(out), [False, False, False])
    assert model.graph.node[0].overload.startswith("fast_")
    if want is None:
        with pytest.raises(Exception, match="step_is_not_zero"):
            onnx_ext.run(model, feeds_of(model, inputs))
        return
    if want.size > 1_000_000:
        got = onnx_ext.run(model, feeds_of(model, inputs))[0]
        assert got.shape == want.shape and got[-1] == want[-1] and got[12345] == want[12345]
        return
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


@pytest.mark.parametrize("name, ok", [
    ("fast_i64_signed_i64_i64_i64_i64", True), ("fast_f32_float_f32_f32_f32", True),
    ("fast_u8_integer_f32_i64_i64", True), ("fast_bf16_half_f16_i8_u64", True),
    ("fast_i64_signed_i64_u64_i64_i64", False),  # u64 with signed: the integer body
    ("fast_f32_half_f32_f32_f32", False), ("fast_boolean_float_f32_f32_f32", False), ("fast_f32_float_f32_f32", False),
    ("fast_f64_float_f32_f32_f32_from0", True), ("fast_f16_half_i64_i64_f64_offset", True),
    ("fast_i64_signed_i64_i64_i64_i64_from0", False), ("fast_f32_float_f32_f32_f32_from1", False),
])
def test_fast_names(name, ok):
    assert isinstance(SPEC.bodies.overload(name), FastRange) == ok
    assert (name in SPEC.bodies) == ok
    if ok:
        assert SPEC.function_proto(name).overload == name


def test_fast_path_leaves_few_nodes(tmp_path):
    # Runtime i64 start/stop/step (position ids): a handful of scalar ops and Range.
    import onnxruntime as ort

    inputs = [np.array(0, np.int64), np.array(512, np.int64), np.array(1, np.int64)]
    model = _model(inputs, np.dtype(np.int64), [False] * 3)
    opts = ort.SessionOptions()
    opts.optimized_model_filepath = str(tmp_path / "opt.onnx")
    ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    graph = onnx.load(str(tmp_path / "opt.onnx")).graph
    assert len(graph.node) <= 12, [n.op_type for n in graph.node]
    (if_node,) = [n for n in graph.node if n.op_type == "If"]
    assert [n.op_type for n in if_node.attribute[0].g.node] == ["Range"]


_FROM_ZERO = [  # from zero with both signs of zero and step; then starts the general path takes
    (0.0, 5.0, 0.25), (-0.0, 5.0, 0.25), (0.0, -5.0, -0.25), (-0.0, -5.0, -0.25), (0.0, 3.0, 0.1), (0.0, 0.0, 1.0),
    (1e-30, 3.0, 0.5), (0.5, 3.0, 0.5), (-3.0, 0.0, 0.5),
]


@pytest.mark.parametrize("out", [np.float16, BF16, np.float32, np.float64])
@pytest.mark.parametrize("start, stop, step, in_dtype", [
    (*v, dt) for v in _FROM_ZERO for dt in (np.float32, np.float64, np.int64) if dt != np.int64 or v[2] == int(v[2])
])
@pytest.mark.parametrize("const", [(False, False, False), (True, False, True)], ids=["runtime", "const-start-step"])
def test_fast_float_from_zero_is_bit_exact(ov_reference, start, stop, step, in_dtype, out, const):
    # Ranges from 0 skip the Add (signed zeros included); the other cases take the general path.
    # Both against the reference's and OpenVINO's bits. With start and step constant the converter
    # picks the body (_from0, _offset) statically.
    inputs = [np.array(v).astype(in_dtype) for v in (start, stop, step)]
    out = np.dtype(out)
    et = from_numpy(out)
    want = range_reference(*inputs, output_type=et.onnx)
    if out != BF16:  # OpenVINO rounds bf16 its own way (README)
        (expected,) = ov_reference("Range", 4, inputs, {"output_type": et.ov}, const=list(const))
        assert np.array_equal(bits(want), bits(expected.astype(out))), (want, expected)
    model = _model(inputs, out, list(const))
    overload = model.graph.node[0].overload
    assert overload.startswith("fast_")
    suffix = None if not const[0] else "from0" if start == 0 else "offset"
    assert SPEC.bodies.overload(overload).constant_start == suffix, overload
    for how, got in run_three_ways(model, inputs).items():
        assert got.dtype == out and got.shape == want.shape, how
        assert np.array_equal(bits(got), bits(want)), f"{how}: {got} vs {want}"


def _ops(graph) -> list[str]:
    return [n.op_type for n in graph.node]


def _branches(node) -> dict:
    return {a.name: a.g for a in node.attribute}


def test_fast_float_from_zero_skips_the_add():
    # Constant start 0 (_from0): Range and Mul, no Add. Start at run time: Range, Mul, Add for small
    # ranges; for large ones an If on start == 0 whose then branch has no Add.
    inputs = [np.array(v, np.float64) for v in (0.0, 10.0, 0.5)]
    body = onnx_ext.inline(_model(inputs, np.dtype(np.float64), [True, False, True])).graph
    (top_if,) = [n for n in body.node if n.op_type == "If"]
    assert "Add" not in _ops(_branches(top_if)["then_branch"]), _ops(_branches(top_if)["then_branch"])
    body = onnx_ext.inline(_model(inputs, np.dtype(np.float64), [False] * 3)).graph
    (top_if,) = [n for n in body.node if n.op_type == "If"]
    small, rest = _branches(top_if)["then_branch"], _branches(top_if)["else_branch"]
    assert _ops(small)[-3:] == ["Range", "Mul", "Add"], _ops(small)
    (fast_or_exact,) = [n for n in rest.node if n.op_type == "If"]
    (start_is_0,) = [n for n in _branches(fast_or_exact)["then_branch"].node if n.op_type == "If"]
    assert "Add" not in _ops(_branches(start_is_0)["then_branch"])
    assert "Add" in _ops(_branches(start_is_0)["else_branch"])


@pytest.mark.parametrize("out", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("start, stop, step", [
    (0.0, 70000 * 0.25, 0.25), (-0.0, 70000 * 0.25, 0.25), (0.0, -70000.0, -1.0), (-0.0, -70000.0, -1.0),
    (0.0, 7000.0, 0.1), (5.0, 70005.0, 1.0), (-0.5, -7000.5, -0.1),
])
def test_large_runtime_ranges_are_bit_exact(ov_reference, start, stop, step, out):
    # 2^16 elements or more, start at run time: the nested If on start == 0 (signed zeros included).
    inputs = [np.array(v, np.float32) for v in (start, stop, step)]
    out = np.dtype(out)
    et = from_numpy(out)
    want = range_reference(*inputs, output_type=et.onnx)
    assert want.size >= 2**16
    (expected,) = ov_reference("Range", 4, inputs, {"output_type": et.ov}, const=[False] * 3)
    assert np.array_equal(bits(want), bits(expected.astype(out)))
    model = _model(inputs, out, [False] * 3)
    for m in (model, onnx_ext.inline(model)):
        got = onnx_ext.run(m, feeds_of(model, inputs))[0]
        assert got.dtype == out and got.shape == want.shape
        assert np.array_equal(bits(got), bits(want))


def _with_consumer(model: onnx.ModelProto) -> onnx.ModelProto:
    # Range's output feeds an Unsqueeze, as in a real graph: onnxruntime's NoopElimination removes an
    # Add of a constant 0 only when the Add's output is not a graph output.
    m = onnx.ModelProto()
    m.CopyFrom(model)
    y = m.graph.output[0].name
    m.graph.node[0].output[0] = "range_out"
    m.graph.initializer.append(onnx.numpy_helper.from_array(np.array([0], np.int64), "axes0"))
    m.graph.node.append(onnx.helper.make_node("Unsqueeze", ["range_out", "axes0"], [y]))
    del m.graph.output[0].type.tensor_type.shape.dim[:]
    return m


@pytest.mark.parametrize("out", [np.float16, BF16, np.float32, np.float64])
@pytest.mark.parametrize("in_dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("start", [0.0, -0.0])
@pytest.mark.parametrize("const", [(True, False, True), (True, True, True), (True, False, False)])
def test_constant_zero_start_keeps_the_sign_of_zero(start, in_dtype, out, const):
    # Range-4: +0 + 0 * step is +0 for any step, -0 + 0 * step is -0 for step < 0. A body that adds
    # a constant start 0 loses that to onnxruntime's NoopElimination (the first element came out -0).
    inputs = [np.array(v).astype(in_dtype) for v in (start, -5.0, -1.0)]
    out = np.dtype(out)
    et = from_numpy(out)
    want = range_reference(*inputs, output_type=et.onnx)[None]
    model = _with_consumer(_model(inputs, out, list(const)))
    for m in (model, onnx_ext.inline(model)):
        got = onnx_ext.run(m, feeds_of(model, inputs))[0]
        assert got.dtype == out and got.shape == want.shape
        assert np.array_equal(bits(got), bits(want)), (got, want)


# --- SmallStepRange: int64 output, a constant step of 1..64 (either sign): no If ------------------------------

SMALL_STEP_INPUTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32)]


def _small_step_value(draw, dt):
    info = np.iinfo(dt)
    if draw(st.integers(0, 3)) == 0:  # the clip's edges: int64's ends, past 2^53
        near = [info.min, info.max, 2**53, 2**53 + 1, -(2**53), 2**62, -(2**62), 2**31]
        return draw(st.sampled_from([v for v in near if info.min <= v <= info.max]))
    return draw(st.integers(max(info.min, -3000), min(info.max, 3000)))


@st.composite
def small_step_cases(draw):
    types = [draw(st.sampled_from(SMALL_STEP_INPUTS)) for _ in range(2)]
    vals = [_small_step_value(draw, dt) for dt in types]
    step_type = draw(st.sampled_from([np.dtype(np.int64), np.dtype(np.int8), np.dtype(np.float32)]))
    step = draw(st.sampled_from([1, -1, 2, -3, 7, 64, -64] + ([2.7, -64.9, 1.0] if step_type.kind == "f" else [])))
    if step_type.kind == "u" and step < 0:
        step = -step
    if draw(st.booleans()):  # near the other end: a short range there
        vals[1] = int(np.clip(vals[0] + draw(st.integers(-300, 300)), np.iinfo(types[1]).min, np.iinfo(types[1]).max))
    inputs = [np.array(v).astype(dt) for v, dt in zip(vals, types)] + [np.array(step).astype(step_type)]
    return inputs, draw(st.booleans())


def _assert_int64_range_three_ways(model, inputs):
    want = range_reference(*inputs, output_type=onnx.TensorProto.INT64)
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


@given(small_step_cases())
def test_small_step_body_matches_reference(case):
    inputs, const_start = case
    model = _model(inputs, np.dtype(np.int64), [const_start, False, True])
    assert model.graph.node[0].overload.startswith("fast_i64_smallstep_")
    n = range_length(*inputs, output_type=onnx.TensorProto.INT64)
    if n > 200_000:
        if n >= 2**47:  # past the clip (or nearly): no machine allocates it, and the body must fail, not cut it short
            for m in (model, onnx_ext.inline(model)):
                with pytest.raises(Exception):
                    onnx_ext.run(m, feeds_of(model, inputs))
        return
    _assert_int64_range_three_ways(model, inputs)


@pytest.mark.parametrize("step, direction, ok", [
    (1, "up", True), (64, "up", True), (64.9, "up", True), (65, "up", False), (0, "up", False), (0.9, "up", False),
    (-1, "up", False), (-1, "down", True), (-64.5, "down", True), (-65.0, "down", False), (2, "down", False),
    (np.nan, "up", False), (np.inf, "up", False),
])
def test_small_step_body_checks_its_step(step, direction, ok):
    # The converter chooses it for a constant step in its bounds; named by hand with another step, it fails.
    step_type = np.float64 if isinstance(step, float) else np.int64
    inputs = [np.array(3, np.int64), np.array(40, np.int64) * (1 if direction == "up" else -1), np.array(step, step_type)]
    model = _model(inputs, np.dtype(np.int64), [False] * 3)
    model.graph.node[0].overload = f"fast_i64_smallstep_{direction}_i64_i64_{'f64' if step_type == np.float64 else 'i64'}"
    model = onnx_ext.attach_functions(model)
    if not ok:
        with pytest.raises(Exception, match="step_fits_the_small_step_body"):
            onnx_ext.run(model, feeds_of(model, inputs))
        return
    _assert_int64_range_three_ways(model, inputs)


@pytest.mark.parametrize("name, ok", [
    ("fast_i64_smallstep_up_i64_i64_i64", True), ("fast_i64_smallstep_down_i32_u32_f16", True),
    ("fast_i64_smallstep_up_u64_i64_i64", False), ("fast_i64_smallstep_up_i64_f32_i64", False),
    ("fast_i64_smallstep_left_i64_i64_i64", False), ("fast_i32_smallstep_up_i64_i64_i64", False),
])
def test_small_step_names(name, ok):
    assert isinstance(SPEC.bodies.overload(name), SmallStepRange) == ok
    if ok:
        assert SPEC.function_proto(name).overload == name


@pytest.mark.parametrize("inputs, const, chosen", [
    ((0, 512, 1), (True, False, True), True), ((0, 512, 1), (False, False, True), True),
    ((0, 512, 100), (True, False, True), False),  # |step| > 64: the FastRange body
    ((0, 512, 1), (True, False, False), False),  # step at run time
    ((0.0, 512, 1), (True, False, True), False),  # float start
])
def test_small_step_body_is_chosen_for_a_constant_small_step(inputs, const, chosen):
    values = [np.array(v) for v in inputs]
    model = _model(values, np.dtype(np.int64), list(const))
    assert model.graph.node[0].overload.startswith("fast_i64_smallstep_") == chosen


def test_small_step_body_leaves_clip_and_range(tmp_path):
    # arange(n) as exporters write it (position ids): constant start and step, a runtime stop. onnxruntime
    # folds the checks and bounds: Clip and Range, no If (the CPU plugin's first-inference bug).
    import onnxruntime as ort

    inputs = [np.array(0, np.int64), np.array(512, np.int64), np.array(1, np.int64)]
    model = _model(inputs, np.dtype(np.int64), [True, False, True])
    for m in (model, onnx_ext.inline(model)):
        opts = ort.SessionOptions()
        opts.optimized_model_filepath = str(tmp_path / "opt.onnx")
        ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        assert [n.op_type for n in onnx.load(str(tmp_path / "opt.onnx")).graph.node] == ["Clip", "Range"]


@pytest.mark.parametrize("start, stop, step", [
    (0, 2**63 - 1, 1), (-(2**63), 2**63 - 1, 1), (2**63 - 1, -(2**63), -1), (-5, 2**63 - 1, 64), (2**62, -(2**62), -64),
])
def test_small_step_body_fails_on_int64_spans(start, stop, step):
    # Spans past int64 or 2^53: the clipped count is still far too large to allocate; onnxruntime fails
    # (its own check, or the allocation), never an empty or short output.
    inputs = [np.array(v, np.int64) for v in (start, stop, step)]
    model = _model(inputs, np.dtype(np.int64), [False, False, True])
    assert model.graph.node[0].overload.startswith("fast_i64_smallstep_")
    for m in (model, onnx_ext.inline(model)):
        with pytest.raises(Exception, match="Range"):
            onnx_ext.run(m, feeds_of(model, inputs))
