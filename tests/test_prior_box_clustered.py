"""PriorBoxClustered-1: the function (onnxruntime), the inlined model and the numpy reference against OpenVINO's
reference (``node.evaluate``), bit for bit, on random attributes, input types and shapes; the schema's shape
inference; the attribute and input checks."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import EXAMPLES
from helpers import assert_same, one_node_model, run_three_ways
from onnx_ext.ops import SPECS
from test_prior_box import INT_TYPES
from test_schemas import check_case

SPEC = SPECS["PriorBoxClustered"]


def f32(x) -> float:
    return float(np.float32(x))


@st.composite
def prior_box_clustered_cases(draw):
    n = draw(st.integers(0, 4))
    steps = draw(st.sampled_from([{}, {"step": 16.0}, {"step_w": 8.0, "step_h": 6.0}, {"step_h": 5.0},
                                  {"step": 7.5, "step_w": 3.0}]))
    attrs = {"width": [f32(draw(st.floats(1.0, 100.0))) for _ in range(n)],
             "height": [f32(draw(st.floats(1.0, 100.0))) for _ in range(n)],
             "offset": draw(st.sampled_from([0.5, 0.0, 0.25])), "clip": draw(st.integers(0, 1)),
             "variance": draw(st.sampled_from([[], [0.2], [0.1, 0.1, 0.2, 0.2]])), **steps}
    t = draw(st.sampled_from(INT_TYPES))
    layer = np.array([draw(st.integers(0, 6)), draw(st.integers(0, 6))], t)
    image = np.array([draw(st.integers(1, 120)), draw(st.integers(1, 120))], t)
    return attrs, layer, image, [draw(st.booleans()), draw(st.booleans())]


@given(prior_box_clustered_cases())
@settings(max_examples=EXAMPLES)
def test_prior_box_clustered_matches_openvino_bit_for_bit(ov_reference, case):
    attrs, layer, image, const = case
    (expected,) = ov_reference("PriorBoxClustered", 1, [layer, image], attrs, const=[True, True], spec=True)
    assert_same(SPEC.reference(layer, image, **SPEC.normalize(attrs)), expected, "numpy reference")
    model = one_node_model("PriorBoxClustered", [layer, image], attrs, const=const, out_type="f32", out_rank=2)
    for how, got in run_three_ways(model, [layer, image]).items():
        assert_same(got, expected, how)


@given(prior_box_clustered_cases(), st.booleans())
def test_prior_box_clustered_shape_inference(case, constant_nodes):
    attrs, layer, image, const = case
    check_case("PriorBoxClustered", [layer, image], attrs, const, False, constant_nodes, static=const[0])


@pytest.mark.parametrize("attrs, name", [
    ({"width": [1.0]}, "offset"),
    ({"offset": 0.5, "width": [1.0, 2.0], "height": [1.0]}, "height"),
    ({"offset": 0.5, "width": [1.0], "height": [1.0], "variance": [0.1, 0.2, 0.3]}, "variance"),
    ({"offset": 0.5, "width": [1.0], "height": [1.0], "clip": 3}, "clip"),
    ({"offset": 0.5, "width": [float("nan")], "height": [1.0]}, "width"),
    ({"offset": 0.5, "step": float("inf")}, "step"),
])
def test_prior_box_clustered_bad_attributes_name_the_attribute(attrs, name):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"PriorBoxClustered.*'{name}'"):
        onnx_ext.make_node("PriorBoxClustered", ["s", "i"], ["y"], **attrs)


def test_prior_box_clustered_bad_inputs():
    attrs = {"offset": 0.5, "width": [4.0], "height": [2.0]}
    with pytest.raises(onnx_ext.OpInputError, match="PriorBoxClustered.*image_shape must be integers"):
        onnx_ext.make_node("PriorBoxClustered", ["s", "i"], ["y"], operands=[
            onnx_ext.Operand(), onnx_ext.Operand(onnx_ext.types.from_ov("f16"))], **attrs)
    layer = np.array([3, -2])
    model = one_node_model("PriorBoxClustered", [layer, np.array([9, 9])], attrs, out_type="f32", out_rank=2)
    with pytest.raises(Exception, match="shapes_are_2_values_and_layer_not_negative"):
        onnx_ext.run(model, {"in0": layer, "in1": np.array([9, 9])})
