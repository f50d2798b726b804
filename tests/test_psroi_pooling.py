"""PSROIPooling-1 (average and bilinear): the function (onnxruntime), the inlined model, the numpy reference and the
general body against OpenVINO's CPU plugin at f32 (the op has no reference ``evaluate``), on random attributes, ROIs
(inside and reaching outside the image), element types, batch sizes and static/dynamic shapes; the schema's shape
inference; the checks."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import EXAMPLES, with_general_body
from helpers import one_node_model, run_three_ways
from ir_testing import assert_close
from onnx_ext.ops import SPECS
from test_schemas import check_case

SPEC = SPECS["PSROIPooling"]
TYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.float64]
#: the CPU plugin computes f64 in f32: f64 results are compared within f32's tolerance (2^29 f64 ulps to one of f32)
F32_IN_F64_ULPS = 2**29


def tolerance(dtype) -> dict:
    """Sums in f64 here, in f32 in the plugin (f64 too); f16/bf16 results rounded once."""
    if np.dtype(dtype) in (np.float32, np.float64):
        return {"ulps": 16 * (F32_IN_F64_ULPS if np.dtype(dtype) == np.float64 else 1), "atol": 1e-6}
    return {"ulps": 1, "atol": 0.0}


def random_rois(rng, count, n, height, width, normalized, end=None):
    """[count, 5] ROIs of random images, mostly inside, some reaching outside (or past 1 when normalized); ``end``:
    the row with batch index -1 that ends the list (as Proposal pads its output)."""
    b = rng.integers(0, n, count)
    if end is not None and end < count:
        b[end] = -1
    x1, y1 = rng.uniform(-0.2, 1.0, count) * width, rng.uniform(-0.2, 1.0, count) * height
    x2, y2 = x1 + rng.uniform(0.0, 0.8, count) * width, y1 + rng.uniform(0.0, 0.8, count) * height
    rois = np.stack([b, x1, y1, x2, y2], 1)
    if normalized:
        rois[:, [1, 3]] /= width
        rois[:, [2, 4]] /= height
    return rois


@st.composite
def psroi_cases(draw, modes=("average", "bilinear")):
    mode = draw(st.sampled_from(modes))
    attrs = {"mode": mode, "output_dim": draw(st.integers(1, 3)), "group_size": draw(st.integers(1, 3)),
             "spatial_scale": draw(st.sampled_from([1.0, 0.5, 0.0625, 2.0]))}
    if mode == "bilinear":
        attrs |= {"spatial_bins_x": draw(st.integers(1, 3)), "spatial_bins_y": draw(st.integers(1, 3))}
        per = attrs["spatial_bins_x"] * attrs["spatial_bins_y"]
    else:
        per = attrs["group_size"] ** 2
    n, h, w = draw(st.integers(1, 3)), draw(st.integers(1, 9)), draw(st.integers(1, 9))
    dtype = draw(st.sampled_from(TYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    data = rng.standard_normal((n, attrs["output_dim"] * per, h, w)).astype(dtype)
    scale = attrs["spatial_scale"]
    count = draw(st.integers(0, 6))
    end = draw(st.one_of(st.none(), st.integers(0, 5)))
    rois = random_rois(rng, count, n, h / scale, w / scale, mode == "bilinear", end).astype(dtype)
    return attrs, data, rois, draw(st.booleans())


@given(psroi_cases())
@settings(max_examples=EXAMPLES)
def test_psroi_pooling_matches_openvino_cpu(ov_reference, case):
    attrs, data, rois, known_shapes = case
    (expected,) = ov_reference("PSROIPooling", 1, [data, rois], SPEC.normalize(attrs), device="CPU")
    tol = tolerance(data.dtype)
    assert_close(SPEC.reference(data, rois, **SPEC.normalize(attrs)), expected, "numpy reference", **tol)
    model = one_node_model("PSROIPooling", [data, rois], attrs, out_rank=4, known_shapes=known_shapes)
    for how, got in run_three_ways(model, [data, rois]).items():
        assert_close(got, expected, how, **tol)
    assert_close(onnx_ext.run(with_general_body(model, SPEC), {"in0": data, "in1": rois})[0], expected, "general body", **tol)


@given(psroi_cases(), st.booleans())
def test_psroi_pooling_shape_inference(case, constant_nodes):
    attrs, data, rois, known_shapes = case
    check_case("PSROIPooling", [data, rois], attrs, [False, False], known_shapes, constant_nodes, static=known_shapes)


@pytest.mark.parametrize("attrs, name", [
    ({"output_dim": 2}, "spatial_scale"),
    ({"output_dim": 0, "spatial_scale": 1.0}, "output_dim"),
    ({"output_dim": 2, "spatial_scale": 1.0, "group_size": 0}, "group_size"),
    ({"output_dim": 2, "spatial_scale": -1.0}, "spatial_scale"),
    ({"output_dim": 2, "spatial_scale": 1.0, "mode": "max"}, "mode"),
    ({"output_dim": 2, "spatial_scale": 1.0, "mode": "bilinear", "spatial_bins_x": 0}, "spatial_bins_x"),
])
def test_psroi_pooling_bad_attributes_name_the_attribute(attrs, name):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"PSROIPooling.*'{name}'"):
        onnx_ext.make_node("PSROIPooling", ["x", "r"], ["y"], **attrs)


@pytest.mark.parametrize("mode", ["average", "bilinear"])
def test_psroi_pooling_bad_inputs(mode):
    attrs = {"output_dim": 2, "spatial_scale": 1.0, "group_size": 2, "mode": mode}
    f32 = onnx_ext.types.from_ov("f32")
    with pytest.raises(onnx_ext.OpInputError, match="PSROIPooling.*data has 7 channels"):
        onnx_ext.make_node("PSROIPooling", ["x", "r"], ["y"], operands=[onnx_ext.Operand(f32, (1, 7, 4, 4)),
                                                                      onnx_ext.Operand(f32, (3, 5))], **attrs)
    with pytest.raises(onnx_ext.OpInputError, match=r"PSROIPooling.*rois must have shape \[R, 5\]"):
        onnx_ext.make_node("PSROIPooling", ["x", "r"], ["y"], operands=[onnx_ext.Operand(f32),
                                                                      onnx_ext.Operand(f32, (3, 4))], **attrs)
    data = np.zeros((2, 8 if mode == "average" else 2, 4, 4), np.float32)
    for rois, check in ((np.array([[0, 0, 0, 1, 1], [-2, 0, 0, 1, 1]], np.float32), "roi_batch_indices_in_range"),
                        (np.array([[2, 0, 0, 1, 1]], np.float32), "roi_batch_indices_in_range"),
                        (np.array([[0, 0, 0, 1, 1]], np.float32), "channels_are_output_dim_times_bins")):
        x = data if check.startswith("roi") else data[:, :-1]
        model = one_node_model("PSROIPooling", [x, rois], attrs, out_rank=4)
        for m in (model, with_general_body(model, SPEC)):
            with pytest.raises(Exception, match=check):
                onnx_ext.run(m, {"in0": x, "in1": rois})
