"""DeformablePSROIPooling-1: the function (onnxruntime), the inlined model, the numpy reference and the general body
against OpenVINO's CPU plugin at f32 (no reference ``evaluate``), with and without offsets, on random attributes,
ROIs (inside, outside, a -1 ending the list), element types, batch sizes and static/dynamic shapes; the schema's
shape inference; the checks."""

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import EXAMPLES, with_general_body
from helpers import one_node_model, run_three_ways
from ir_testing import assert_close
from onnx_ext.ops import SPECS
from test_psroi_pooling import TYPES, random_rois, tolerance
from test_schemas import check_case

SPEC = SPECS["DeformablePSROIPooling"]


@st.composite
def deformable_cases(draw):
    classes = draw(st.integers(1, 2))
    attrs = {"output_dim": classes * draw(st.integers(1, 2)), "group_size": draw(st.integers(1, 3)),
             "spatial_scale": draw(st.sampled_from([1.0, 0.5, 0.0625])), "spatial_bins_x": draw(st.integers(1, 3)),
             "spatial_bins_y": draw(st.integers(1, 3)), "trans_std": draw(st.sampled_from([0.1, 1.0, 0.0])),
             "part_size": draw(st.integers(1, 3))}
    n, h, w = draw(st.integers(1, 3)), draw(st.integers(1, 9)), draw(st.integers(1, 9))
    dtype = draw(st.sampled_from(TYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    data = rng.standard_normal((n, attrs["output_dim"] * attrs["group_size"] ** 2, h, w)).astype(dtype)
    count = draw(st.integers(0, 5))
    end = draw(st.one_of(st.none(), st.integers(0, 4)))
    s = attrs["spatial_scale"]
    rois = random_rois(rng, count, n, h / s, w / s, False, end).astype(dtype)
    inputs = [data, rois]
    if draw(st.booleans()):
        part = attrs["part_size"]
        inputs.append((rng.standard_normal((count, 2 * classes, part, part)) * 0.5).astype(dtype))
    return attrs, inputs, draw(st.booleans())


def general_model(model, inputs):
    out = with_general_body(model, SPEC)
    node = out.graph.node[0]
    if len(inputs) == 2:  # the general body reads offsets: zeros of one class
        zeros = np.zeros((len(inputs[1]), 2, 1, 1), inputs[0].dtype)
        out.graph.initializer.append(onnx.numpy_helper.from_array(zeros, "zero_offsets"))
        node.input.append("zero_offsets")
        for a in node.attribute:
            if a.name == "part_size":
                a.i = 1
    return out


@given(deformable_cases())
@settings(max_examples=EXAMPLES)
def test_deformable_psroi_pooling_matches_openvino_cpu(ov_reference, case):
    attrs, inputs, known_shapes = case
    (expected,) = ov_reference("DeformablePSROIPooling", 1, inputs, SPEC.normalize(attrs), device="CPU")
    tol = tolerance(inputs[0].dtype)
    assert_close(SPEC.reference(*inputs, **SPEC.normalize(attrs)), expected, "numpy reference", **tol)
    model = one_node_model("DeformablePSROIPooling", inputs, attrs, out_rank=4, known_shapes=known_shapes)
    for how, got in run_three_ways(model, inputs).items():
        assert_close(got, expected, how, **tol)
    feeds = {f"in{i}": v for i, v in enumerate(inputs)}
    assert_close(onnx_ext.run(general_model(model, inputs), feeds)[0], expected, "general body", **tol)


@given(deformable_cases(), st.booleans())
def test_deformable_psroi_pooling_shape_inference(case, constant_nodes):
    attrs, inputs, known_shapes = case
    check_case("DeformablePSROIPooling", inputs, attrs, [False] * len(inputs), known_shapes, constant_nodes,
               static=known_shapes)


@pytest.mark.parametrize("attrs, name", [
    ({"output_dim": 2}, "spatial_scale"),
    ({"output_dim": 2, "spatial_scale": 1.0, "mode": "bilinear"}, "mode"),
    ({"output_dim": 2, "spatial_scale": 1.0, "part_size": 0}, "part_size"),
    ({"output_dim": 2, "spatial_scale": 0.0}, "spatial_scale"),
    ({"output_dim": 2, "spatial_scale": 1.0, "trans_std": float("nan")}, "trans_std"),
])
def test_deformable_psroi_pooling_bad_attributes_name_the_attribute(attrs, name):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"DeformablePSROIPooling.*'{name}'"):
        onnx_ext.make_node("DeformablePSROIPooling", ["x", "r"], ["y"], **attrs)


def test_deformable_psroi_pooling_bad_inputs():
    attrs = {"output_dim": 2, "spatial_scale": 1.0, "group_size": 2, "part_size": 2}
    f32 = onnx_ext.types.from_ov("f32")
    with pytest.raises(onnx_ext.OpInputError, match="DeformablePSROIPooling.*offsets have 6 channels"):
        onnx_ext.make_node("DeformablePSROIPooling", ["x", "r", "t"], ["y"], operands=[
            onnx_ext.Operand(f32, (1, 8, 4, 4)), onnx_ext.Operand(f32, (3, 5)), onnx_ext.Operand(f32, (3, 6, 2, 2))],
            **attrs)
    with pytest.raises(onnx_ext.OpInputError, match="DeformablePSROIPooling.*data has 9 channels"):
        onnx_ext.make_node("DeformablePSROIPooling", ["x", "r"], ["y"], operands=[
            onnx_ext.Operand(f32, (1, 9, 4, 4)), onnx_ext.Operand(f32, (3, 5))], **attrs)
    data = np.zeros((1, 8, 4, 4), np.float32)
    for x, rois, check in ((data, np.array([[1, 0, 0, 1, 1]], np.float32), "roi_batch_indices_in_range"),
                           (data[:, :7], np.array([[0, 0, 0, 1, 1]], np.float32), "channels_and_offset_classes_match")):
        model = one_node_model("DeformablePSROIPooling", [x, rois], attrs, out_rank=4)
        with pytest.raises(Exception, match=check):
            onnx_ext.run(model, {"in0": x, "in1": rois})
