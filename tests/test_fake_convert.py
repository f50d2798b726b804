"""FakeConvert-13: the function (onnxruntime), the inlined model and the numpy reference against OpenVINO's
reference on random cases (f8e4m3 subnormals: the spec's rounding, which the reference does not do; bf16: the
reference's own bf16 rounding, emulated here to show it is the only difference); the named checks; the schema;
the translator; IR -> ONNX -> IR."""

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import EXAMPLES, check_inference, node_model, round_trip, run_three_ways
from helpers import assert_same
from ir_testing import convert, evaluate_model, parameter, run_onnx, save_ir
from onnx_ext.ops.fake_convert import fake_convert_reference
from ov_reference import OVCrashed, OVRejected

BF16 = np.dtype(ml_dtypes.bfloat16)


def _ov_bf16(values) -> np.ndarray:
    """f32 values rounded to bf16 as OpenVINO's bfloat16 does: (u + ((u & 0x10000) >> 1)) >> 16 on the bits."""
    u = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + ((u & 0x10000) >> 1)) >> 16).astype(np.uint16).view(BF16)


def _as_openvino(data, scale, shift, destination):
    """The reference's arithmetic: each bf16 operation rounded OpenVINO's way (f16, f32 as ours)."""
    if data.dtype != BF16:
        return fake_convert_reference(data, scale, shift, destination)
    f32 = (lambda v: np.asarray(v).astype(np.float32))
    rnd = (lambda v: f32(_ov_bf16(v)))
    shift = np.zeros_like(scale) if shift is None else shift
    with np.errstate(all="ignore"):
        y = rnd(rnd(f32(data) * f32(scale)) - f32(shift))
        q = fake_convert_reference(y.astype(np.float16), np.float16(1), None, destination).astype(np.float32)
        return _ov_bf16(rnd(rnd(q) + f32(shift)) / f32(scale))


def _subnormal_e4m3(data, scale, shift):
    """Where data * scale - shift lies in f8e4m3's subnormal range (or below): the reference rounds there twice
    and flushes [2^-10, 2^-9) to zero; the spec's Convert (and this op) rounds once to nearest even."""
    shift = 0 if shift is None else shift
    y = np.asarray(data).astype(np.float32) * np.asarray(scale).astype(np.float32) - np.asarray(shift).astype(np.float32)
    return np.abs(y) < 2.0**-6


@st.composite
def fake_convert_cases(draw):
    dtype = np.dtype(draw(st.sampled_from([np.float32, np.float16, BF16])))
    rank = draw(st.integers(0, 3))
    shape = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    magnitude = np.exp2(rng.uniform(-16 if dtype != np.float16 else -13, 12, shape))
    data = (rng.standard_normal(shape) * magnitude).astype(dtype)
    if rank and draw(st.booleans()):  # a few specials
        flat = data.reshape(-1)
        flat[0] = draw(st.sampled_from([np.inf, -np.inf, np.nan, 0.0, -0.0, 448.0, 465.0, 60000.0]))
    sshape = [d if draw(st.booleans()) else 1 for d in shape][draw(st.integers(0, rank)):]
    scale = np.exp2(rng.uniform(-4, 4, sshape)).astype(dtype)
    shift = (rng.standard_normal(sshape) * draw(st.sampled_from([0.0, 0.01, 1.0]))).astype(dtype) \
        if draw(st.booleans()) else None
    destination = draw(st.sampled_from(["f8e4m3", "f8e5m2"]))
    const = [False, draw(st.booleans()), draw(st.booleans())]
    return [data, scale] + ([shift] if shift is not None else []), destination, const, draw(st.booleans())


def _same_values(got, want, what):
    assert got.dtype == want.dtype and got.shape == want.shape, what
    g, w = got.astype(np.float64), want.astype(np.float64)
    bad = ~((g == w) | (np.isnan(g) & np.isnan(w)))
    assert not bad.any(), f"{what}: {int(bad.sum())} values differ: {got[bad][:4]} vs {want[bad][:4]}"


@settings(max_examples=EXAMPLES)
@given(fake_convert_cases())
def test_fake_convert_matches_openvino(ov_reference, case):
    inputs, destination, const, known_shapes = case
    try:
        (expected,) = ov_reference("FakeConvert", 13, inputs, {"destination_type": destination}, const=const)
    except (OVRejected, OVCrashed) as e:
        raise AssertionError(f"the reference refused a valid case: {e}") from None
    mine = fake_convert_reference(*inputs, destination_type=destination)
    openvino_way = _as_openvino(inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None, destination)
    keep = ~np.isnan(inputs[0].astype(np.float32))  # NaN: the reference gives +448 (f8e4m3); here NaN
    if destination == "f8e4m3":
        keep &= ~np.broadcast_to(_subnormal_e4m3(*inputs[:2], inputs[2] if len(inputs) > 2 else None), keep.shape)
    _same_values(np.asarray(openvino_way)[keep], expected[keep], "the reference's arithmetic vs OpenVINO")
    if inputs[0].dtype != BF16:
        _same_values(mine[keep], expected[keep], "numpy reference vs OpenVINO")
    model = node_model("FakeConvert", inputs, {"destination_type": destination}, [(mine.dtype, mine.ndim)], const,
                       known_shapes)
    for how, (got,) in run_three_ways(model, inputs).items():
        _same_values(got, mine, how)


@pytest.mark.parametrize("x, want, reference", [
    (1.5 * 2**-10, 2**-9, 0.0),         # [2^-10, 2^-9): the reference flushes to 0
    (1.5 * 2**-9, 2 * 2**-9, 2**-9),    # a tie between subnormals: nearest even; the reference rounds down
    (3.5 * 2**-9, 4 * 2**-9, 3 * 2**-9),
    (np.nan, np.nan, 448.0),            # NaN stays NaN (the reference: +448, the CPU plugin: -448)
    (1e6, 448.0, 448.0), (-np.inf, -448.0, -448.0), (0.1165, 0.1171875, 0.1171875),
])
def test_f8e4m3_corners_follow_the_spec(ov_reference, x, want, reference):
    inputs = [np.array([x], np.float32), np.float32(1)]
    (ov,) = ov_reference("FakeConvert", 13, [inputs[0], np.array(1, np.float32)], {"destination_type": "f8e4m3"})
    np.testing.assert_equal(ov, np.array([reference], np.float32))  # what the reference does
    model = node_model("FakeConvert", [inputs[0], np.array(1, np.float32)], {"destination_type": "f8e4m3"},
                       [(np.float32, 1)])
    for how, (got,) in run_three_ways(model, [inputs[0], np.array(1, np.float32)]).items():
        np.testing.assert_equal(got, np.array([want], np.float32), err_msg=how)


def test_the_conversion_goes_through_f16_as_openvino_does(ov_reference):
    """1.0625 + 2^-20 is above the tie 1.0625 of f8e4m3 in f32 but on it in f16: OpenVINO (reference and CPU
    plugin) rounds via f16, to 1.0, and so does this op."""
    x = np.array([1.0625 + 2**-20], np.float32)
    (ov,) = ov_reference("FakeConvert", 13, [x, np.array(1, np.float32)], {"destination_type": "f8e4m3"})
    model = node_model("FakeConvert", [x, np.array(1, np.float32)], {"destination_type": "f8e4m3"}, [(np.float32, 1)])
    for how, (got,) in run_three_ways(model, [x, np.array(1, np.float32)]).items():
        assert_same(got, ov, how)
        assert got[0] == 1.0


@pytest.mark.parametrize("attrs, message", [
    ({"destination_type": "f8e3m4"}, "destination_type' is 'f8e3m4'"),
    ({}, "destination_type' is required"),
])
def test_bad_attributes_name_op_and_attribute(attrs, message):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"FakeConvert.*{message}"):
        onnx_ext.make_node("FakeConvert", ["d", "s"], ["y"], **attrs)


@pytest.mark.parametrize("types, shapes, message", [
    (["f32", "f16"], [(2, 3), (1,)], "one element type"),
    (["f64", "f64"], [(2, 3), (1,)], "must be f16, bf16 or f32"),
    (["f32", "f32"], [(2, 3), (3, 1)], "does not broadcast"),
    (["f32", "f32", "f32"], [(2, 3), (1, 3), (3,)], "shift's shape"),
])
def test_bad_inputs_are_refused_when_the_node_is_built(types, shapes, message):
    operands = [onnx_ext.Operand(onnx_ext.types.from_ov(t), s) for t, s in zip(types, shapes)]
    with pytest.raises(onnx_ext.OpInputError, match=f"FakeConvert.*{message}"):
        onnx_ext.make_node("FakeConvert", ["d", "s", "o"][:len(types)], ["y"], destination_type="f8e5m2",
                           operands=operands)


def test_models_of_an_older_opset_are_refused():
    model = node_model("FakeConvert", [np.zeros(3, np.float32), np.float32(1)], {"destination_type": "f8e4m3"},
                       [(np.float32, 1)], bodies=False)
    model.opset_import[0].version = 18
    with pytest.raises(onnx_ext.OnnxExtError, match="opset 19, the model imports 18"):
        onnx_ext.attach_functions(model)


@settings(max_examples=EXAMPLES)
@given(fake_convert_cases())
def test_fake_convert_shape_inference(case):
    inputs, destination, const, known_shapes = case
    check_inference("FakeConvert", inputs, {"destination_type": destination}, const,
                    [fake_convert_reference(*inputs, destination_type=destination)], known_shapes, static=known_shapes)


def _ir(destination, shift):
    import openvino as ov
    import openvino.opset1 as o1
    import openvino.opset13 as o13

    x = parameter([-1, 4, -1], name="x")
    scale = o1.constant(np.array([[[2.0], [0.5], [4.0], [1.0]]], np.float32))
    node = o13.fake_convert(x, scale, o1.constant(np.full((1, 4, 1), 0.25, np.float32)) if shift else None,
                            destination)
    return ov.Model([node.output(0)], [x], "m")


@pytest.mark.parametrize("destination", ["f8e4m3", "f8e5m2"])
@pytest.mark.parametrize("shift", [True, False])
def test_ir_converts_and_comes_back(destination, shift, tmp_path):
    first, again = round_trip(_ir(destination, shift), tmp_path, "FakeConvert")
    x = (np.random.default_rng(9).standard_normal((2, 4, 5)) * 30).astype(np.float32)
    want = evaluate_model(first, [x])[0]
    assert_same(evaluate_model(again, [x])[0], want, "round trip, reference")
    assert_same(run_onnx(convert(save_ir(_ir(destination, shift), tmp_path, "again")), [x])[0], want, "converted")
