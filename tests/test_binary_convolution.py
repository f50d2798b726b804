"""BinaryConvolution-1 with u1 weights. OpenVINO 2026.4 cannot evaluate it on its reference (Model.evaluate fails
on the op) and its CPU plugin gives other values than the spec's xnor-popcount (for the first case worked by hand
below, [0, 2, 0, 2] where the spec gives [2, 0, 0, -2]; and values that depend on pad_value without padding), so
the truth is the spec and the reference's source (binary_convolution.hpp), transcribed: checked by hand, then three
ways on random cases. Also: the IR's u1 bits (MSB first) read and written
back as u1, the named checks, the schema."""

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import EXAMPLES, check_inference, node_model, round_trip, run_three_ways
from helpers import assert_same
from ir_testing import convert, parameter, run_onnx, save_ir
from onnx_ext.ops.binary_convolution import binary_convolution_reference

AUTO_PADS = ["explicit", "same_upper", "same_lower", "valid"]


def test_the_spec_algorithm_by_hand():
    """xnor-popcount: +1 where input and kernel bits agree, -1 elsewhere, summed. Window (0, 0) of x against
    k = [[1, 0], [0, 1]]: [1, 0, 0, 0] agrees 3 times: 2 * 3 - 4 = 2; then 0, 0 and 1 agreement: -2. A padded
    window counts pad_value as an input value (1 here); a value other than 0 or 1 agrees with no bit."""
    x = np.array([[[[1, 0, 1], [0, 0, 1], [1, 1, 1]]]], np.float32)
    k = np.array([[[[1, 0], [0, 1]]]], bool)
    attrs = {"strides": [1, 1], "pads_begin": [0, 0], "pads_end": [0, 0], "dilations": [1, 1]}
    cases = [(x, attrs, [2, 0, 0, -2]),
             (x, {**attrs, "pads_begin": [1, 1], "pad_value": 1.0}, [0, -2, 2, -2, 2, 0, 2, 0, -2]),
             (np.where(x == 1, np.float32(0.5), x), attrs, [0, -2, -2, -4])]
    for data, a, want in cases:
        want = np.array(want, np.float32).reshape(1, 1, *(3, 3) if len(want) == 9 else (2, 2))
        assert_same(binary_convolution_reference(data, k, **a), want, "numpy reference")
        model = node_model("BinaryConvolution", [data, k], a, [(np.float32, 4)], [False, True])
        for how, (got,) in run_three_ways(model, [data, k]).items():
            assert_same(got, want, how)


@st.composite
def binary_convolution_cases(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n, c, o = draw(st.integers(1, 2)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    kernel = [draw(st.integers(1, 3)) for _ in range(2)]
    dilations = [draw(st.integers(1, 2)) for _ in range(2)]
    size = [draw(st.integers(max(1, (k - 1) * d + 1), 8)) for k, d in zip(kernel, dilations)]
    dtype = draw(st.sampled_from([np.float32, np.float16]))
    data = rng.integers(0, 2, (n, c, *size)).astype(dtype)
    if draw(st.booleans()):
        data.reshape(-1)[0] = draw(st.sampled_from([0.5, -1.0, 2.0]))
    attrs = {"strides": [draw(st.integers(1, 2)) for _ in range(2)], "dilations": dilations,
             "pads_begin": [draw(st.integers(0, 2)) for _ in range(2)], "pads_end": [draw(st.integers(0, 2))
                                                                                  for _ in range(2)],
             "pad_value": draw(st.sampled_from([0.0, 1.0, -1.0, 0.25])), "auto_pad": draw(st.sampled_from(AUTO_PADS))}
    bits = rng.integers(0, 2, (o, c, *kernel)).astype(bool)
    return [data, bits], attrs, [False, draw(st.booleans())], draw(st.booleans())


@settings(max_examples=EXAMPLES)
@given(binary_convolution_cases())
def test_binary_convolution_three_ways(case):
    inputs, attrs, const, known_shapes = case
    want = binary_convolution_reference(*inputs, **attrs)
    model = node_model("BinaryConvolution", inputs, attrs, [(want.dtype, 4)], const, known_shapes)
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


@pytest.mark.parametrize("attrs, message", [
    ({"mode": "xor"}, "mode' is 'xor'"),
    ({"auto_pad": "same"}, "auto_pad' is 'same'"),
    ({"strides": [0, 1]}, "strides' is \\[0, 1\\]"),
    ({"pads_begin": [-1, 0]}, "pads_begin'"),
    ({"pad_value": "x"}, "pad_value' must be a number"),
])
def test_bad_attributes_name_op_and_attribute(attrs, message):
    base = {"strides": [1, 1], "pads_begin": [0, 0], "pads_end": [0, 0], "dilations": [1, 1]}
    with pytest.raises(onnx_ext.OpAttributeError, match=f"BinaryConvolution.*{message}"):
        onnx_ext.make_node("BinaryConvolution", ["x", "k"], ["y"], **{**base, **attrs})


@pytest.mark.parametrize("types, shapes, message", [
    (["f32", "f32"], [(1, 2, 5, 5), (3, 2, 3, 3)], "kernel must be BOOL"),
    (["f32", "boolean"], [(1, 2, 5, 5), (3, 4, 3, 3)], "kernel has 4 input channels, data 2"),
    (["i32", "boolean"], [(1, 2, 5, 5), (3, 2, 3, 3)], "data must be f16 or f32"),
    (["f32", "boolean"], [(1, 2, 5, 5, 5), (3, 2, 3, 3, 3)], "strides' has 2 entries for 3 spatial dims"),
])
def test_bad_inputs_are_refused_when_the_node_is_built(types, shapes, message):
    operands = [onnx_ext.Operand(onnx_ext.types.from_ov(t), s) for t, s in zip(types, shapes)]
    with pytest.raises(onnx_ext.OnnxExtError, match=f"BinaryConvolution.*{message}"):
        onnx_ext.make_node("BinaryConvolution", ["x", "k"], ["y"], strides=[1, 1], pads_begin=[0, 0],
                           pads_end=[0, 0], dilations=[1, 1], operands=operands)


@settings(max_examples=EXAMPLES)
@given(binary_convolution_cases())
def test_binary_convolution_shape_inference(case):
    inputs, attrs, const, known_shapes = case
    check_inference("BinaryConvolution", inputs, attrs, const, [binary_convolution_reference(*inputs, **attrs)],
                    known_shapes, static=known_shapes)


def _ir(bits, auto_pad="explicit"):
    import openvino as ov
    import openvino.opset1 as o1

    x = parameter([-1, bits.shape[1], -1, -1], name="x")
    kernel = ov.op.Constant(ov.Type.u1, ov.Shape(list(bits.shape)), bits.reshape(-1).astype(np.uint8).tolist())
    node = o1.binary_convolution(x, kernel, [1, 2], [1, 0], [0, 1], [1, 1], "xnor-popcount", -1.0, auto_pad)
    return ov.Model([node.output(0)], [x], "m")


@pytest.mark.parametrize("auto_pad", ["explicit", "same_upper"])
def test_ir_u1_weights_convert_and_come_back(auto_pad, tmp_path):
    bits = np.random.default_rng(11).integers(0, 2, (5, 3, 3, 3)).astype(bool)  # 135 bits: not a whole byte
    first, again = round_trip(_ir(bits, auto_pad), tmp_path, "BinaryConvolution")
    kernels = [next(n for n in m.get_ordered_ops() if n.get_type_name() == "Constant") for m in (first, again)]
    assert [k.get_element_type().get_type_name() for k in kernels] == ["u1", "u1"]
    np.testing.assert_array_equal(np.asarray(kernels[1].get_data()).astype(bool),
                                  np.asarray(kernels[0].get_data()).astype(bool))
    model = convert(save_ir(_ir(bits, auto_pad), tmp_path, "again"))
    (init,) = [i for i in model.graph.initializer if i.data_type == onnx.TensorProto.BOOL]
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(init), bits)  # the IR's bits, MSB first
    x = np.random.default_rng(12).integers(0, 2, (2, 3, 7, 6)).astype(np.float32)
    attrs = {"strides": [1, 2], "pads_begin": [1, 0], "pads_end": [0, 1], "dilations": [1, 1], "pad_value": -1.0,
             "auto_pad": auto_pad}
    assert_same(run_onnx(model, [x])[0], binary_convolution_reference(x, bits, **attrs), "converted")
