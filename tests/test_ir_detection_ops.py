"""IR -> ONNX -> IR for issue 18's detection ops (converters/ir_to_onnx/handlers/domain_detection.py): a small
OpenVINO model around each op, saved as IR, converted (a node of the domain, or a constant where the inputs'
values are known), run in onnxruntime against OpenVINO (its reference where the op has ``evaluate``, else the
CPU plugin at f32), checked against the coverage table, then converted back to IR through the conversion
extensions: the op comes back with its version and attributes."""

from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import openvino.opset8 as o8
import pytest
from openvino.utils.node_factory import NodeFactory

import onnx_ext
from converters.ir_reader import read_ir
from converters.ir_to_onnx import coverage
from converters.onnx_to_ir import convert_onnx_file
from ir_testing import assert_close, check_model_limits, convert, domain_ops, evaluate_ir, evaluate_model_cpu, run_onnx
from ir_testing import model_of, parameter, save_ir

CASES: dict = {}


def case(name, *, backend="CPU", folded=False, ulps=None, atol=0.0):
    """Register a builder returning (model, [feeds, ...]); ``folded``: the op becomes a constant."""
    def register(fn):
        CASES[name] = (fn, dict(backend=backend, folded=folded, ulps=ulps, atol=atol))
        return fn
    return register


def make(opset, op, inputs, attrs):
    return NodeFactory(f"opset{opset}").create(op, [i.output(0) if hasattr(i, "output") else i for i in inputs],
                                               attrs)


def spatial(x):
    """[H, W] of an NCHW value, as SSD IRs compute it: ShapeOf then StridedSlice."""
    c = lambda v: o8.constant(np.array(v, np.int64))  # noqa: E731
    return o8.strided_slice(o8.shape_of(x), c([2]), c([4]), c([1]), begin_mask=[0], end_mask=[0])


# --- PriorBox -------------------------------------------------------------------------------------------

SSD_HEAD = {"offset": 0.5, "min_size": [60.0], "max_size": [111.0], "aspect_ratio": [2.0, 3.0], "flip": True,
            "clip": False, "step": 16.0, "variance": [0.1, 0.1, 0.2, 0.2]}


@case("prior_box8_static_folded", folded=True)
def _():
    feat, img = parameter([1, 4, 19, 19], name="feat"), parameter([1, 3, 300, 300], name="img")
    return model_of(make(8, "PriorBox", [spatial(feat), spatial(img)], SSD_HEAD), [feat, img]), \
        [[np.zeros((1, 4, 19, 19), np.float32), np.zeros((1, 3, 300, 300), np.float32)]]


@case("prior_box8_dynamic_feature_map")
def _():
    feat, img = parameter([1, 4, -1, -1], name="feat"), parameter([1, 3, 300, 300], name="img")
    return model_of(make(8, "PriorBox", [spatial(feat), spatial(img)], SSD_HEAD | {"min_max_aspect_ratios_order":
                                                                                      False}), [feat, img]), \
        [[np.zeros((1, 4, h, w), np.float32), np.zeros((1, 3, 300, 300), np.float32)] for h, w in ((19, 19), (5, 3))]


@case("prior_box1_runtime_shapes")
def _():
    layer, image = parameter([2], "i32", name="layer"), parameter([2], "i32", name="image")
    attrs = {"offset": 0.5, "min_size": [0.2, 0.4], "aspect_ratio": [2.0], "scale_all_sizes": False, "step": -1.0,
             "clip": True}
    return model_of(make(1, "PriorBox", [layer, image], attrs), [layer, image]), \
        [[np.array([3, 4], np.int32), np.array([200, 300], np.int32)]]


@case("prior_box8_fixed_size")
def _():
    layer, image = parameter([2], "i64", name="layer"), parameter([2], "i64", name="image")
    attrs = {"offset": 0.5, "fixed_size": [32.0], "density": [2.0], "aspect_ratio": [2.0], "flip": False,
             "step": 16.0, "variance": [0.1]}
    return model_of(make(8, "PriorBox", [layer, image], attrs), [layer, image]), \
        [[np.array([4, 5], np.int64), np.array([64, 80], np.int64)]]


# --- PriorBoxClustered ----------------------------------------------------------------------------------

CLUSTERED = {"width": [86.0, 13.0, 57.0], "height": [44.0, 10.0, 30.0], "offset": 0.5, "step": 16.0, "clip": False,
             "variance": [0.1, 0.1, 0.2, 0.2]}


@case("prior_box_clustered_static_folded", backend="reference", folded=True)
def _():
    feat, img = parameter([1, 4, 10, 19], name="feat"), parameter([1, 3, 180, 320], name="img")
    return model_of(make(1, "PriorBoxClustered", [spatial(feat), spatial(img)], CLUSTERED), [feat, img]), \
        [[np.zeros((1, 4, 10, 19), np.float32), np.zeros((1, 3, 180, 320), np.float32)]]


@case("prior_box_clustered_dynamic")
def _():
    feat, img = parameter([1, 4, -1, -1], name="feat"), parameter([1, 3, -1, -1], name="img")
    attrs = CLUSTERED | {"step": 0.0, "clip": True, "variance": [0.2]}
    return model_of(make(1, "PriorBoxClustered", [spatial(feat), spatial(img)], attrs), [feat, img]), \
        [[np.zeros((1, 4, h, w), np.float32), np.zeros((1, 3, 64, 96), np.float32)] for h, w in ((4, 6), (1, 2))]


# --- RegionYolo -----------------------------------------------------------------------------------------


@case("region_yolo_v3_head", ulps=8)
def _():
    x = parameter([-1, 255, -1, -1], name="x")
    attrs = {"coords": 4, "classes": 80, "num": 9, "do_softmax": False, "mask": [6, 7, 8], "axis": 1, "end_axis": 3,
             "anchors": [10.0, 13.0, 16.0, 30.0, 33.0, 23.0, 30.0, 61.0, 62.0, 45.0, 59.0, 119.0, 116.0, 90.0, 156.0,
                         198.0, 373.0, 326.0]}
    r = np.random.default_rng(0)
    return model_of(make(1, "RegionYolo", [x], attrs), [x]), \
        [[(r.standard_normal((b, 255, s, s)) * 3).astype(np.float32)] for b, s in ((1, 13), (2, 4))]


@case("region_yolo_v2_softmax", ulps=1)
def _():
    x = parameter([1, 125, 13, 13], "f16", name="x")
    attrs = {"coords": 4, "classes": 20, "num": 5, "do_softmax": True, "mask": [], "axis": 1, "end_axis": 3,
             "anchors": [1.08, 1.19, 3.42, 4.41, 6.63, 11.38, 9.42, 5.11, 16.62, 10.52]}
    return model_of(make(1, "RegionYolo", [x], attrs), [x]), \
        [[(np.random.default_rng(1).standard_normal((1, 125, 13, 13)) * 3).astype(np.float16)]]


# --- PSROIPooling ---------------------------------------------------------------------------------------


@case("psroi_pooling_average_rfcn", ulps=16, atol=1e-6)
def _():
    x, rois = parameter([1, 8 * 9, -1, -1], name="x"), parameter([-1, 5], name="rois")
    attrs = {"output_dim": 8, "group_size": 3, "spatial_scale": 0.0625, "mode": "average", "spatial_bins_x": 1,
             "spatial_bins_y": 1}
    r = np.random.default_rng(2)
    return model_of(make(1, "PSROIPooling", [x, rois], attrs), [x, rois]), \
        [[r.standard_normal((1, 72, 24, 30)).astype(np.float32),
          np.array([[0, 10, 20, 200, 300], [0, 0, 0, 479, 383], [0, 64, 48, 64, 48]], np.float32)]]


@case("psroi_pooling_bilinear", ulps=16, atol=1e-6)
def _():
    x, rois = parameter([2, 2 * 4, 12, 10], name="x"), parameter([3, 5], name="rois")
    attrs = {"output_dim": 2, "group_size": 3, "spatial_scale": 1.0, "mode": "bilinear", "spatial_bins_x": 2,
             "spatial_bins_y": 2}
    r = np.random.default_rng(3)
    return model_of(make(1, "PSROIPooling", [x, rois], attrs), [x, rois]), \
        [[r.standard_normal((2, 8, 12, 10)).astype(np.float32),
          np.array([[1, 0.1, 0.2, 0.7, 0.9], [0, 0.0, 0.0, 1.0, 1.0], [1, 0.5, 0.5, 0.6, 0.55]], np.float32)]]


# --- DeformablePSROIPooling -----------------------------------------------------------------------------


@case("deformable_psroi_pooling_offsets", ulps=16, atol=1e-6)
def _():
    x, rois, off = parameter([1, 2 * 49, 12, 20], name="x"), parameter([-1, 5], name="rois"), \
        parameter([-1, 2, 7, 7], name="offsets")
    attrs = {"output_dim": 2, "group_size": 7, "spatial_scale": 0.0625, "mode": "bilinear_deformable",
             "spatial_bins_x": 4, "spatial_bins_y": 4, "trans_std": 0.1, "part_size": 7}
    r = np.random.default_rng(4)
    return model_of(make(1, "DeformablePSROIPooling", [x, rois, off], attrs), [x, rois, off]), \
        [[r.standard_normal((1, 98, 12, 20)).astype(np.float32),
          np.array([[0, 10, 20, 200, 150], [0, 0, 0, 319, 191], [-1, 0, 0, 0, 0]], np.float32),
          r.standard_normal((3, 2, 7, 7)).astype(np.float32)]]


@case("deformable_psroi_pooling_plain", ulps=16, atol=1e-6)
def _():
    x, rois = parameter([2, 8 * 9, 10, 10], name="x"), parameter([4, 5], name="rois")
    attrs = {"output_dim": 8, "group_size": 3, "spatial_scale": 0.5, "mode": "bilinear_deformable",
             "spatial_bins_x": 2, "spatial_bins_y": 2, "trans_std": 0.0, "part_size": 3}
    r = np.random.default_rng(5)
    return model_of(make(1, "DeformablePSROIPooling", [x, rois], attrs), [x, rois]), \
        [[r.standard_normal((2, 72, 10, 10)).astype(np.float32),
          np.array([[1, 2, 3, 15, 17], [0, -4, -4, 5, 5], [1, 10, 10, 10, 10], [0, 0, 0, 19, 19]], np.float32)]]


# --- ROIAlignRotated ------------------------------------------------------------------------------------


@case("roi_align_rotated", ulps=16, atol=1e-6)
def _():
    x, rois, b = parameter([-1, 4, 20, 24], name="x"), parameter([-1, 5], name="rois"), \
        parameter([-1], "i32", name="batch")
    attrs = {"pooled_h": 3, "pooled_w": 4, "sampling_ratio": 2, "spatial_scale": 0.5, "clockwise_mode": True}
    r = np.random.default_rng(6)
    return model_of(make(15, "ROIAlignRotated", [x, rois, b], attrs), [x, rois, b]), \
        [[r.standard_normal((2, 4, 20, 24)).astype(np.float32),
          np.array([[20, 16, 10, 6, 0.5], [40, 30, 20, 12, -1.2], [0, 0, 8, 8, 3.0]], np.float32),
          np.array([1, 0, 1], np.int32)]]


# --- ExperimentalDetectron PriorGridGenerator, TopKROIs, ROIFeatureExtractor -------------------------------


@case("ed_prior_grid_generator", ulps=0)
def _():
    priors, feat, img = parameter([3, 4], name="priors"), parameter([1, 8, -1, -1], name="feat"), \
        parameter([1, 3, -1, -1], name="img")
    attrs = {"flatten": True, "h": 0, "w": 0, "stride_x": 0.0, "stride_y": 0.0}
    r = np.random.default_rng(7)
    return model_of(make(6, "ExperimentalDetectronPriorGridGenerator", [priors, feat, img], attrs),
                    [priors, feat, img]), \
        [[r.uniform(-30, 30, (3, 4)).astype(np.float32), np.zeros((1, 8, 25, 42), np.float32),
          np.zeros((1, 3, 800, 1344), np.float32)]]


@case("ed_topk_rois", ulps=0)
def _():
    rois, probs = parameter([-1, 4], name="rois"), parameter([-1], name="probs")
    r = np.random.default_rng(8)
    return model_of(make(6, "ExperimentalDetectronTopKROIs", [rois, probs], {"max_rois": 100}), [rois, probs]), \
        [[r.uniform(0, 800, (1000, 4)).astype(np.float32), r.permutation(1000).astype(np.float32)]]


@case("ed_roi_feature_extractor", ulps=4, atol=1e-6)
def _():
    rois = parameter([-1, 4], name="rois")
    maps = [parameter([1, 16, -1, -1], name=f"p{k}") for k in range(2, 6)]
    attrs = {"output_size": 7, "sampling_ratio": 2, "pyramid_scales": [4, 8, 16, 32], "aligned": False}
    r = np.random.default_rng(9)
    node = make(6, "ExperimentalDetectronROIFeatureExtractor", [rois] + maps, attrs)
    boxes = np.concatenate([r.uniform(0, 300, (40, 2)), np.zeros((40, 2))], 1)
    boxes[:, 2:] = boxes[:, :2] + np.exp(r.uniform(1, 6, (40, 2)))
    return model_of([node.output(0), node.output(1)], [rois] + maps), \
        [[boxes.astype(np.float32)] + [r.standard_normal((1, 16, 512 // s, 384 // s)).astype(np.float32)
                                       for s in (4, 8, 16, 32)]]


# --- the checks -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_ir_to_onnx_matches_openvino(name, tmp_path):
    build, opts = CASES[name]
    model, feed_sets = build()
    xml = save_ir(model, tmp_path, name)
    converted = convert(xml)
    check_model_limits(converted)
    assert not coverage.unlisted_ops(read_ir(xml), converted)
    domain = [n for n in converted.graph.node if n.domain == onnx_ext.DOMAIN and n.op_type not in ("StridedSlice",)]
    assert (not domain) == opts["folded"], [n.op_type for n in domain]
    for feeds in feed_sets:
        got = run_onnx(converted, feeds)
        if opts["backend"] == "reference":
            want = evaluate_ir(xml, feeds)
        else:  # inputs reshaped to the feeds' shapes (the plugin has no dynamic-shape PriorBox-8)
            want = evaluate_model_cpu(ov.Core().read_model(str(xml)), feeds)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{name} output {i}", opts["ulps"], opts["atol"])


@pytest.mark.parametrize("name", sorted(n for n in CASES if not CASES[n][1]["folded"]))
def test_onnx_to_ir_gives_the_native_op_back(name, tmp_path):
    build, _ = CASES[name]
    model, _ = build()
    xml = save_ir(model, tmp_path, name)
    onnx.save(convert(xml), tmp_path / "m.onnx")
    back_xml, _ = convert_onnx_file(tmp_path / "m.onnx", tmp_path / "back.xml")
    back = ov.Core().read_model(str(back_xml))
    original = ov.Core().read_model(str(xml))
    ours = {n.get_type_name(): n for n in domain_ops(original)}
    for node in domain_ops(back):
        if node.get_type_name() in ours and node.get_type_name() not in ("ShapeOf", "StridedSlice"):
            want = ours[node.get_type_name()]
            assert node.get_type_info().version_id == want.get_type_info().version_id
            assert node.get_attributes() == want.get_attributes()
            break
    else:
        pytest.fail(f"no {sorted(ours)} in the IR read back: {[n.get_type_name() for n in domain_ops(back)]}")
