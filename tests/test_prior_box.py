"""PriorBox-1/-8: the function (onnxruntime), the inlined model, the numpy reference and the general body against
OpenVINO's reference (``node.evaluate``), bit for bit, on random attributes, input types and shapes; the schema's
shape inference; the attribute and input checks; the SSD300 heads."""

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import EXAMPLES, with_general_body
from helpers import assert_same, one_node_model, run_three_ways
from onnx_ext.ops import SPECS
from onnx_ext.ops.prior_box import number_of_priors
from test_schemas import bare_model, check_case, inferred_output

SPEC = SPECS["PriorBox"]
INT_TYPES = [np.int32, np.int64, np.uint8, np.int16, np.uint16, np.uint32, np.uint64, np.int8]


def sizes(draw, n, lo=1.0, hi=64.0):
    return [float(np.float32(draw(st.one_of(st.integers(1, 64).map(float), st.floats(lo, hi, width=32)))))
            for _ in range(n)]


@st.composite
def prior_box_attrs(draw):
    """Valid attributes: the standard form (min_size, max_size, aspect ratios, Caffe's or mxnet's) or the
    fixed_size form (density, fixed_ratio or aspect ratios), each version."""
    version = draw(st.sampled_from([1, 8]))
    attrs = {"offset": draw(st.sampled_from([0.0, 0.5, 0.25])), "clip": draw(st.integers(0, 1)),
             "flip": draw(st.integers(0, 1)), "version": version,
             "variance": draw(st.sampled_from([[], [0.1], [0.1, 0.1, 0.2, 0.2]]))}
    ratios = draw(st.lists(st.sampled_from([2.0, 3.0, 0.5, 1.0, 1.5, 1 / 3]), max_size=3))
    attrs["aspect_ratio"] = [float(np.float32(r)) for r in ratios]
    if version == 8:
        attrs["min_max_aspect_ratios_order"] = draw(st.integers(0, 1))
    form = draw(st.sampled_from(["caffe", "caffe", "mxnet", "fixed"]))
    if form == "fixed":
        n = draw(st.integers(1, 2))
        attrs["fixed_size"] = sizes(draw, n, 1.0, 48.0)
        attrs["density"] = [float(draw(st.integers(1, 3))) for _ in range(n)]
        if draw(st.booleans()):  # as many fixed ratios as aspect ratios, as the output shape counts them
            attrs["fixed_ratio"] = [float(np.float32(r)) for r in draw(st.lists(
                st.sampled_from([1.0, 2.0, 0.5]), min_size=1, max_size=1))]
            attrs["aspect_ratio"] = []
        attrs["step"] = draw(st.sampled_from([0.0, 8.0, 16.0]))
    elif form == "caffe":
        m = draw(st.integers(1, 3))
        attrs["min_size"] = sizes(draw, m)
        attrs["max_size"] = sizes(draw, draw(st.integers(0, m)), 16.0, 128.0)
        attrs["step"] = draw(st.sampled_from([0.0, 8.0, 16.0, 5.5]))
    else:  # mxnet: sizes and step relative to the image height
        attrs["scale_all_sizes"] = 0
        attrs["min_size"] = [float(np.float32(draw(st.floats(0.05, 0.9)))) for _ in range(draw(
            st.integers(1, 3)))]
        attrs["step"] = draw(st.sampled_from([0.0, -1.0, 0.125]))
    return attrs


@st.composite
def prior_box_cases(draw):
    attrs = draw(prior_box_attrs())
    t = draw(st.sampled_from(INT_TYPES))
    layer = np.array([draw(st.integers(0, 6)), draw(st.integers(0, 6))], t)
    image = np.array([draw(st.integers(1, 127)), draw(st.integers(1, 127))], t)
    const = [draw(st.booleans()), draw(st.booleans())]
    return attrs, layer, image, const


@given(prior_box_cases())
@settings(max_examples=EXAMPLES)
def test_prior_box_matches_openvino_bit_for_bit(ov_reference, case):
    attrs, layer, image, const = case
    # the reference reads both inputs as the first one's type, and needs a static output shape: constants
    (expected,) = ov_reference("PriorBox", attrs["version"], [layer, image], attrs, const=[True, True], spec=True)
    assert_same(SPEC.reference(layer, image, **SPEC.normalize(attrs)), expected, "numpy reference")
    model = one_node_model("PriorBox", [layer, image], attrs, const=const, out_type="f32", out_rank=2)
    for how, got in run_three_ways(model, [layer, image]).items():
        assert_same(got, expected, how)
    feeds = {f"in{i}": v for i, (v, c) in enumerate(zip([layer, image], const)) if not c}
    assert_same(onnx_ext.run(with_general_body(model, SPEC), feeds)[0], expected, "general body")


@given(prior_box_cases(), st.booleans())
def test_prior_box_shape_inference(case, constant_nodes):
    attrs, layer, image, const = case
    check_case("PriorBox", [layer, image], attrs, const, False, constant_nodes, static=const[0])


def test_prior_box_inputs_of_different_integer_types():
    # OpenVINO's reference reads image_shape as layer_shape's type; the spec allows any integer type each
    attrs = {"offset": 0.5, "min_size": [30.0], "max_size": [60.0], "aspect_ratio": [2.0], "flip": 1, "step": 8.0}
    same = SPEC.reference(np.array([3, 2]), np.array([300, 300]), **SPEC.normalize(attrs))
    inputs = [np.array([3, 2], np.uint8), np.array([300, 300], np.int32)]
    for how, got in run_three_ways(one_node_model("PriorBox", inputs, attrs, out_type="f32", out_rank=2),
                                   inputs).items():
        assert_same(got, same, how)


SSD300 = [  # (feature map, min_size, max_size, aspect ratios, step): SSD300 on VOC, 8,732 priors
    (38, 30.0, 60.0, [2.0], 8.0), (19, 60.0, 111.0, [2.0, 3.0], 16.0), (10, 111.0, 162.0, [2.0, 3.0], 32.0),
    (5, 162.0, 213.0, [2.0, 3.0], 64.0), (3, 213.0, 264.0, [2.0], 100.0), (1, 264.0, 315.0, [2.0], 300.0)]


def test_ssd300_heads_make_8732_priors(ov_reference):
    total = 0
    for size, lo, hi, ratios, step in SSD300:
        attrs = {"offset": 0.5, "min_size": [lo], "max_size": [hi], "aspect_ratio": ratios, "flip": 1,
                 "step": step, "variance": [0.1, 0.1, 0.2, 0.2], "version": 1}
        layer, image = np.array([size, size], np.int64), np.array([300, 300], np.int64)
        (expected,) = ov_reference("PriorBox", 1, [layer, image], attrs, const=[True, True], spec=True)
        got = onnx_ext.run(one_node_model("PriorBox", [layer, image], attrs, out_type="f32", out_rank=2),
                           {"in0": layer, "in1": image})[0]
        assert_same(got, expected, f"{size}x{size}")
        total += got.shape[1] // 4
    assert total == 8732


@pytest.mark.parametrize("attrs, name", [
    ({"min_size": [1.0]}, "offset"),  # required
    ({"offset": 0.5, "min_size": [1.0], "clip": 2}, "clip"),
    ({"offset": 0.5, "min_size": [1.0], "variance": [0.1, 0.2]}, "variance"),
    ({"offset": 0.5, "min_size": [1.0], "version": 3}, "version"),
    ({"offset": 0.5, "min_size": [1.0], "version": 1, "min_max_aspect_ratios_order": 0}, "min_max_aspect_ratios_order"),
    ({"offset": 0.5, "min_size": [1.0], "aspect_ratio": [-2.0]}, "aspect_ratio"),
    ({"offset": 0.5, "min_size": [1.0], "aspect_ratio": [2.0, 2.0000008]}, "aspect_ratio"),  # within 1e-6
    ({"offset": 0.5, "min_size": [1.0], "max_size": [2.0, 3.0]}, "max_size"),
    ({"offset": 0.5, "fixed_size": [8.0]}, "density"),
    ({"offset": 0.5, "fixed_size": [8.0], "density": [0.5]}, "density"),
    ({"offset": 0.5, "fixed_size": [8.0], "density": [2.0], "min_size": [4.0]}, "min_size"),
    ({"offset": 0.5, "fixed_size": [8.0], "density": [2.0], "fixed_ratio": [1.0, 2.0]}, "fixed_ratio"),
    ({"offset": 0.5, "min_size": [1.0], "density": [2.0]}, "density"),
    ({"offset": 0.5, "min_size": [float("inf")]}, "min_size"),
    ({"offset": 0.5, "min_size": ["1"]}, "min_size"),
    ({"offset": "0.5", "min_size": [1.0]}, "offset"),
])
def test_prior_box_bad_attributes_name_the_attribute(attrs, name):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"PriorBox.*'{name}'"):
        onnx_ext.make_node("PriorBox", ["s", "i"], ["y"], **attrs)


def test_prior_box_bad_inputs():
    attrs = {"offset": 0.5, "min_size": [4.0]}
    with pytest.raises(onnx_ext.OpInputError, match="PriorBox.*layer_shape must be integers"):
        onnx_ext.make_node("PriorBox", ["s", "i"], ["y"], operands=[onnx_ext.Operand(onnx_ext.types.from_ov("f32")),
                                                                   onnx_ext.Operand()], **attrs)
    with pytest.raises(onnx_ext.OpInputError, match="PriorBox.*layer_shape is \\[-1, 2\\]"):
        onnx_ext.make_node("PriorBox", ["s", "i"], ["y"], operands=[onnx_ext.Operand(value=np.array([-1, 2])),
                                                                   onnx_ext.Operand()], **attrs)
    with pytest.raises(onnx.shape_inference.InferenceError, match="PriorBox.*vector of 2 values"):
        inferred_output(bare_model("PriorBox", [np.array([2, 2, 2]), np.array([9, 9])], attrs, [False, False], True))
    for layer in (np.array([2, 2, 2]), np.array([-1, 3])):  # known at run time only: the named check fails
        model = one_node_model("PriorBox", [layer, np.array([9, 9])], attrs, out_type="f32", out_rank=2)
        with pytest.raises(Exception, match="shapes_are_2_values_and_layer_not_negative"):
            onnx_ext.run(model, {"in0": layer, "in1": np.array([9, 9])})


def test_prior_box_priors_per_cell():
    base = {"offset": 0.5, "clip": 0, "step": 0.0, "variance": [], "density": [], "fixed_ratio": [],
            "fixed_size": [], "scale_all_sizes": 1, "min_max_aspect_ratios_order": 1, "version": 8}
    assert number_of_priors(base | {"min_size": [30.0], "max_size": [60.0], "aspect_ratio": [2.0, 3.0],
                                    "flip": 1}) == 6
    assert number_of_priors(base | {"min_size": [30.0], "max_size": [], "aspect_ratio": [2.0], "flip": 0}) == 2
