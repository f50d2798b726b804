"""ROIAlignRotated-15: the function (onnxruntime), the inlined model and the numpy reference against OpenVINO's CPU
plugin at f32 (no reference ``evaluate``), on random attributes (fixed and adaptive sampling, both turning
directions), boxes (inside, outside, empty), element types, batch sizes and static/dynamic shapes; the schema's
shape inference; the checks."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import EXAMPLES
from helpers import one_node_model, run_three_ways
from ir_testing import assert_close
from onnx_ext.ops import SPECS
from test_psroi_pooling import TYPES, tolerance
from test_schemas import check_case

SPEC = SPECS["ROIAlignRotated"]


@st.composite
def roi_align_rotated_cases(draw):
    attrs = {"pooled_h": draw(st.integers(1, 3)), "pooled_w": draw(st.integers(1, 3)),
             "sampling_ratio": draw(st.sampled_from([0, 1, 2, 3])),
             "spatial_scale": draw(st.sampled_from([1.0, 0.5, 0.25, 2.0])), "clockwise_mode": draw(st.integers(0, 1))}
    n, c, h, w = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 8)), draw(st.integers(1, 8))
    dtype = draw(st.sampled_from(TYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    data = rng.standard_normal((n, c, h, w)).astype(dtype)
    count, s = draw(st.integers(0, 5)), attrs["spatial_scale"]
    rois = np.stack([rng.uniform(-2, w + 2, count) / s, rng.uniform(-2, h + 2, count) / s,
                     rng.uniform(0, 6, count) / s, rng.uniform(0, 6, count) / s,
                     rng.uniform(-4, 4, count)], 1).astype(dtype)
    batch = rng.integers(0, n, count).astype(draw(st.sampled_from([np.int32, np.int64])))
    return attrs, [data, rois, batch], draw(st.booleans())


@given(roi_align_rotated_cases())
@settings(max_examples=EXAMPLES)
def test_roi_align_rotated_matches_openvino_cpu(ov_reference, case):
    attrs, inputs, known_shapes = case
    (expected,) = ov_reference("ROIAlignRotated", 15, inputs, attrs, device="CPU", spec=True)
    tol = tolerance(inputs[0].dtype)
    assert_close(SPEC.reference(*inputs, **SPEC.normalize(attrs)), expected, "numpy reference", **tol)
    model = one_node_model("ROIAlignRotated", inputs, attrs, out_rank=4, known_shapes=known_shapes)
    for how, got in run_three_ways(model, inputs).items():
        assert_close(got, expected, how, **tol)


@given(roi_align_rotated_cases(), st.booleans())
def test_roi_align_rotated_shape_inference(case, constant_nodes):
    attrs, inputs, known_shapes = case
    check_case("ROIAlignRotated", inputs, attrs, [False] * 3, known_shapes, constant_nodes, static=known_shapes)


@pytest.mark.parametrize("attrs, name", [
    ({"pooled_h": 2, "pooled_w": 2, "sampling_ratio": 2}, "spatial_scale"),
    ({"pooled_h": 0, "pooled_w": 2, "sampling_ratio": 2, "spatial_scale": 1.0}, "pooled_h"),
    ({"pooled_h": 2, "pooled_w": 2, "sampling_ratio": -1, "spatial_scale": 1.0}, "sampling_ratio"),
    ({"pooled_h": 2, "pooled_w": 2, "sampling_ratio": 2, "spatial_scale": -2.0}, "spatial_scale"),
    ({"pooled_h": 2, "pooled_w": 2, "sampling_ratio": 2, "spatial_scale": 1.0, "clockwise_mode": 2}, "clockwise_mode"),
])
def test_roi_align_rotated_bad_attributes_name_the_attribute(attrs, name):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"ROIAlignRotated.*'{name}'"):
        onnx_ext.make_node("ROIAlignRotated", ["x", "r", "b"], ["y"], **attrs)


def test_roi_align_rotated_bad_inputs():
    attrs = {"pooled_h": 2, "pooled_w": 2, "sampling_ratio": 0, "spatial_scale": 1.0}
    f32, i32 = onnx_ext.types.from_ov("f32"), onnx_ext.types.from_ov("i32")
    with pytest.raises(onnx_ext.OpInputError, match="ROIAlignRotated.*batch_indices has 2 values for 3 ROIs"):
        onnx_ext.make_node("ROIAlignRotated", ["x", "r", "b"], ["y"], operands=[
            onnx_ext.Operand(f32, (1, 2, 4, 4)), onnx_ext.Operand(f32, (3, 5)), onnx_ext.Operand(i32, (2,))], **attrs)
    with pytest.raises(onnx_ext.OpInputError, match="ROIAlignRotated.*batch_indices must be integers"):
        onnx_ext.make_node("ROIAlignRotated", ["x", "r", "b"], ["y"], operands=[
            onnx_ext.Operand(f32), onnx_ext.Operand(f32), onnx_ext.Operand(f32)], **attrs)
    data = np.zeros((1, 2, 4, 4), np.float32)
    for rois, batch, check in ((np.array([[1, 1, 2, 2, 0]], np.float32), np.array([1]), "batch_indices_in_range"),
                               (np.array([[1, 1, -2, 2, 0]], np.float32), np.array([0]), "roi_sizes_not_negative")):
        model = one_node_model("ROIAlignRotated", [data, rois, batch], attrs, out_rank=4)
        with pytest.raises(Exception, match=check):
            onnx_ext.run(model, {"in0": data, "in1": rois, "in2": batch})
