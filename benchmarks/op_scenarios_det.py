"""bench_ops.py scenarios of issue 18's prior-box, region and ROI-pooling ops, each judged against OpenVINO's CPU
plugin on its own op (``vs="openvino"``, at most 3x). Only ExperimentalDetectronROIFeatureExtractor has an ONNX op
for (b): RoiAlign on the one level every ROI is given. Inputs are run-time (a PriorBox over static shapes is a
constant: the converter folds it)."""

from __future__ import annotations

import numpy as np
from onnx import helper, numpy_helper
from openvino.utils.node_factory import NodeFactory

from op_scenarios import Scenario, _model, _onnx_model, _param, _vi

RNG = np.random.default_rng(18)

#: SSD300 on VOC: (feature map, min_size, max_size, aspect ratios, step); 8,732 priors in all.
SSD300 = [(38, 30.0, 60.0, [2.0], 8.0), (19, 60.0, 111.0, [2.0, 3.0], 16.0), (10, 111.0, 162.0, [2.0, 3.0], 32.0),
          (5, 162.0, 213.0, [2.0, 3.0], 64.0), (3, 213.0, 264.0, [2.0], 100.0), (1, 264.0, 315.0, [2.0], 300.0)]


def _make(opset, op, inputs, attrs):
    return NodeFactory(f"opset{opset}").create(op, [i.output(0) for i in inputs], attrs)


def prior_box_scenarios():
    """SSD300's six PriorBox-1 heads (8,732 priors) with the feature-map and image sizes run-time inputs (a dynamic
    input image): one model computing the six, against the CPU plugin running the same six ops."""
    def ov_model():
        image = _param("image", [2], np.int64)
        sizes = [_param(f"layer{i}", [2], np.int64) for i in range(len(SSD300))]
        from openvino import opset1

        heads = [opset1.reshape(_make(1, "PriorBox", [s, image], {
            "offset": 0.5, "min_size": [lo], "max_size": [hi], "aspect_ratio": ratios, "flip": True, "clip": False,
            "step": step, "variance": [0.1, 0.1, 0.2, 0.2]}), opset1.constant(np.array([2, -1], np.int64)), False)
            for s, (_, lo, hi, ratios, step) in zip(sizes, SSD300)]
        return _model(opset1.concat(heads, 1), [image] + sizes)

    feeds = {"image": np.array([300, 300], np.int64)}
    feeds |= {f"layer{i}": np.array([n, n], np.int64) for i, (n, *_) in enumerate(SSD300)}
    return [Scenario("PriorBox", "ssd300-8732", "SSD300's 6 heads: [2, 34928] f32, layer and image sizes at run time",
                     False, ov_model, None, feeds, out_elements=2 * 34928, vs="openvino")]


def prior_box_clustered_scenarios():
    """PriorBoxClustered-1 of an SSD-MobileNet head: 19 x 19 cells, 3 boxes each."""
    attrs = {"width": [30.0, 42.4, 21.2], "height": [30.0, 21.2, 42.4], "offset": 0.5, "step": 16.0, "clip": False,
             "variance": [0.1, 0.1, 0.2, 0.2]}

    def ov_model():
        layer, image = _param("layer", [2], np.int64), _param("image", [2], np.int64)
        return _model(_make(1, "PriorBoxClustered", [layer, image], attrs), [layer, image])

    return [Scenario("PriorBoxClustered", "ssd-mobilenet-19x19", "19 x 19 cells x 3 boxes, sizes at run time", False,
                     ov_model, None, {"layer": np.array([19, 19], np.int64), "image": np.array([300, 300], np.int64)},
                     out_elements=2 * 19 * 19 * 3 * 4, vs="openvino")]


def region_yolo_scenarios():
    """YOLOv3's three heads (416 x 416 input: 13, 26, 52) and YOLOv2's softmax form."""
    out = []
    v3 = {"coords": 4, "classes": 80, "num": 9, "do_softmax": False, "axis": 1, "end_axis": 3, "anchors": []}
    for size, mask in ((13, [6, 7, 8]), (26, [3, 4, 5]), (52, [0, 1, 2])):
        data = RNG.standard_normal((1, 255, size, size)).astype(np.float32)

        def ov_model(size=size, mask=mask):
            x = _param("data", [1, 255, size, size], np.float32)
            return _model(_make(1, "RegionYolo", [x], v3 | {"mask": mask}), [x])

        out.append(Scenario("RegionYolo", f"yolov3-{size}", f"YOLOv3 head [1, 255, {size}, {size}]", False, ov_model,
                            None, {"data": data}, out_elements=data.size, vs="openvino"))
    data = RNG.standard_normal((1, 125, 13, 13)).astype(np.float32)

    def v2_model():
        x = _param("data", [1, 125, 13, 13], np.float32)
        return _model(_make(1, "RegionYolo", [x], {"coords": 4, "classes": 20, "num": 5, "do_softmax": True,
                                                   "mask": [], "axis": 1, "end_axis": 3, "anchors": []}), [x])

    out.append(Scenario("RegionYolo", "yolov2-softmax", "YOLOv2 head [1, 125, 13, 13], softmax over 20 classes",
                        False, v2_model, None, {"data": data}, out_elements=data.size, vs="openvino"))
    return out


def _rois(count, height, width, batch=1, normalized=False):
    x0, y0 = RNG.uniform(0, width * 0.7, count), RNG.uniform(0, height * 0.7, count)
    w, h = RNG.uniform(width * 0.05, width * 0.3, count), RNG.uniform(height * 0.05, height * 0.3, count)
    rois = np.stack([RNG.integers(0, batch, count), x0, y0, x0 + w, y0 + h], 1)
    if normalized:
        rois[:, [1, 3]] /= width
        rois[:, [2, 4]] /= height
    return rois.astype(np.float32)


def roi_pooling_scenarios():
    """R-FCN's PSROIPooling (average, 21 classes x 7 x 7 bins, 300 ROIs), the spec's bilinear example, a deformable
    one with offsets, and ROIAlignRotated of the spec's example size."""
    out = []
    cases = [
        ("PSROIPooling", "rfcn-average", "[1, 1029, 38, 63] f32, 300 ROIs -> [300, 21, 7, 7]",
         (1, 21 * 49, 38, 63), 300, {"output_dim": 21, "group_size": 7, "spatial_scale": 0.0625, "mode": "average",
                                     "spatial_bins_x": 1, "spatial_bins_y": 1}, False),
        ("PSROIPooling", "bilinear", "[1, 3240, 38, 38] f32, 100 ROIs -> [100, 360, 6, 6], 3 x 3 bins",
         (1, 3240, 38, 38), 100, {"output_dim": 360, "group_size": 6, "spatial_scale": 1.0, "mode": "bilinear",
                                  "spatial_bins_x": 3, "spatial_bins_y": 3}, True),
        ("DeformablePSROIPooling", "offsets", "[1, 392, 38, 63] f32, 300 ROIs, offsets -> [300, 8, 7, 7], 4 x 4 bins",
         (1, 392, 38, 63), 300, {"output_dim": 8, "group_size": 7, "spatial_scale": 0.0625,
                                 "mode": "bilinear_deformable", "spatial_bins_x": 4, "spatial_bins_y": 4,
                                 "trans_std": 0.1, "part_size": 7}, False),
    ]
    for op, name, what, shape, count, attrs, normalized in cases:
        data = RNG.standard_normal(shape).astype(np.float32)
        scale = attrs["spatial_scale"]
        feeds = {"data": data, "rois": _rois(count, shape[2] / scale, shape[3] / scale, normalized=normalized)}
        if op == "DeformablePSROIPooling":
            feeds["offsets"] = (RNG.standard_normal((count, 2, 7, 7)) * 0.5).astype(np.float32)

        def ov_model(op=op, attrs=attrs, feeds=feeds):
            params = [_param(k, list(v.shape), np.float32) for k, v in feeds.items()]
            return _model(_make(1, op, params, attrs), params)

        out.append(Scenario(op, name, what, False, ov_model, None, feeds,
                            out_elements=count * attrs["output_dim"] * attrs["group_size"] ** 2, vs="openvino",
                            of_largest=1e-5))
    # (OpenVINO's CPU plugin takes about 0.1 s per ROI of 256 channels here: a small case)
    data = RNG.standard_normal((2, 64, 50, 50)).astype(np.float32)
    rois = np.stack([RNG.uniform(0, 200, 100), RNG.uniform(0, 200, 100), RNG.uniform(8, 64, 100),
                     RNG.uniform(8, 64, 100), RNG.uniform(-3, 3, 100)], 1).astype(np.float32)
    feeds = {"data": data, "rois": rois, "batch": RNG.integers(0, 2, 100).astype(np.int32)}

    def rotated():
        x, r, b = (_param("data", [2, 64, 50, 50], np.float32), _param("rois", [100, 5], np.float32),
                   _param("batch", [100], np.int32))
        return _model(_make(15, "ROIAlignRotated", [x, r, b], {"pooled_h": 6, "pooled_w": 6, "sampling_ratio": 2,
                                                                "spatial_scale": 0.25, "clockwise_mode": True}),
                      [x, r, b])

    out.append(Scenario("ROIAlignRotated", "100-rois", "[2, 64, 50, 50] f32, 100 ROIs -> [100, 64, 6, 6]", False,
                        rotated, None, feeds, out_elements=100 * 64 * 36, vs="openvino", of_largest=1e-5))
    return out


def experimental_detectron_scenarios():
    """Mask R-CNN's ROIFeatureExtractor (1000 ROIs on four FPN levels of 256 channels), its TopKROIs (1000 of 4000)
    and a PriorGridGenerator of the spec's example size."""
    out = []
    maps = {f"p{k}": RNG.standard_normal((1, 256, 800 // 2 ** k, 1344 // 2 ** k)).astype(np.float32)
            for k in range(2, 6)}
    x0, y0 = RNG.uniform(0, 1200, 1000), RNG.uniform(0, 700, 1000)
    size = np.exp(RNG.uniform(3, 6, (1000, 2)))
    rois = np.stack([x0, y0, x0 + size[:, 0], y0 + size[:, 1]], 1).astype(np.float32)
    attrs = {"output_size": 7, "sampling_ratio": 2, "pyramid_scales": [4, 8, 16, 32], "aligned": False}

    def features():
        params = [_param("rois", [1000, 4], np.float32)] + [_param(k, list(v.shape), np.float32)
                                                           for k, v in maps.items()]
        return _model(_make(6, "ExperimentalDetectronROIFeatureExtractor", params, attrs), params)

    def one_level():
        # (b): ONNX RoiAlign on one level for every ROI: the work without the level assignment
        nodes = [helper.make_node("RoiAlign", ["p3", "rois", "zeros"], ["y"], mode="avg", output_height=7,
                                  output_width=7, sampling_ratio=2, spatial_scale=0.125,
                                  coordinate_transformation_mode="output_half_pixel")]
        return _onnx_model(nodes, [_vi("rois", np.float32, [1000, 4]), _vi("p3", np.float32, list(maps["p3"].shape))],
                           [numpy_helper.from_array(np.zeros(1000, np.int64), "zeros")])

    features_scenario = Scenario("ExperimentalDetectronROIFeatureExtractor", "mask-rcnn-fpn",
                                 "1000 ROIs on 4 FPN levels [1, 256, 200..25, 336..42] -> [1000, 256, 7, 7]", False,
                                 features, one_level, {"rois": rois, **maps}, out_elements=1000 * 256 * 49,
                                 vs="openvino", of_largest=1e-5, note="(b): RoiAlign of every ROI on one level")
    features_scenario.native_feeds = {"rois": rois, "p3": maps["p3"]}  # (b) does other work: not compared
    out.append(features_scenario)
    probs = RNG.permutation(4000).astype(np.float32) / 4000
    boxes = RNG.uniform(0, 800, (4000, 4)).astype(np.float32)

    def topk():
        r, p = _param("rois", [4000, 4], np.float32), _param("probs", [4000], np.float32)
        return _model(_make(6, "ExperimentalDetectronTopKROIs", [r, p], {"max_rois": 1000}), [r, p])

    out.append(Scenario("ExperimentalDetectronTopKROIs", "1000-of-4000", "the 1000 best of 4000 ROIs", False, topk,
                        None, {"rois": boxes, "probs": probs}, out_elements=4000, vs="openvino"))
    priors = RNG.uniform(-64, 64, (3, 4)).astype(np.float32)

    def grid():
        p, f, i = (_param("priors", [3, 4], np.float32), _param("feature", [1, 256, 25, 42], np.float32),
                   _param("image", [1, 3, 800, 1344], np.float32))
        return _model(_make(6, "ExperimentalDetectronPriorGridGenerator", [p, f, i], {
            "flatten": True, "h": 0, "w": 0, "stride_x": 32.0, "stride_y": 32.0}), [p, f, i])

    out.append(Scenario("ExperimentalDetectronPriorGridGenerator", "25x42x3", "25 x 42 cells x 3 priors -> [3150, 4]",
                        False, grid, None, {"priors": priors, "feature": np.zeros((1, 256, 25, 42), np.float32),
                                            "image": np.zeros((1, 3, 800, 1344), np.float32)},
                        out_elements=3150 * 4, vs="openvino"))
    return out


def mask_rcnn_box_head(rois: int, classes: int, objects: int = 30):
    """Mask R-CNN's box head output for one image: ``rois`` proposals jittered around ``objects`` objects of random
    classes (many overlapping boxes per object), softmax scores peaked on the object's class, small deltas."""
    centre = RNG.uniform(100, 700, (objects, 2))
    size = RNG.uniform(30, 300, (objects, 2))
    label = RNG.integers(1, classes, objects)
    owner = RNG.integers(0, objects, rois)
    jitter = RNG.normal(0, 0.15, (rois, 4)) * np.tile(size[owner], 2)
    boxes = np.concatenate([centre[owner] - size[owner] / 2, centre[owner] + size[owner] / 2], 1) + jitter
    logits = RNG.normal(0, 1, (rois, classes))
    logits[np.arange(rois), label[owner]] += RNG.uniform(0, 8, rois)
    logits[:, 0] += RNG.uniform(0, 4, rois)
    scores = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    deltas = RNG.normal(0, 0.5, (rois, 4 * classes))
    return boxes.astype(np.float32), deltas.astype(np.float32), scores.astype(np.float32)


def detection_output_scenarios():
    """ExperimentalDetectronDetectionOutput-6 as Mask R-CNN's IR has it: 1000 ROIs x 81 classes, score_threshold
    0.05, NMS 0.5, post_nms_count 2000, 100 detections (no ONNX op does the job: against the CPU plugin only)."""
    rois, deltas, scores = mask_rcnn_box_head(1000, 81)
    attrs = {"score_threshold": 0.05, "nms_threshold": 0.5, "max_delta_log_wh": float(np.log(1000 / 16)),
             "num_classes": 81, "post_nms_count": 2000, "max_detections_per_image": 100,
             "class_agnostic_box_regression": False, "deltas_weights": [10.0, 10.0, 5.0, 5.0]}

    def ov_model():
        import openvino as ov
        from openvino import opset1

        params = [_param("rois", [1000, 4], np.float32), _param("deltas", [1000, 324], np.float32),
                  _param("scores", [1000, 81], np.float32)]
        info = opset1.constant(np.array([[800, 1344, 1]], np.float32))
        node = NodeFactory("opset6").create("ExperimentalDetectronDetectionOutput",
                                            [p.output(0) for p in params] + [info.output(0)], attrs)
        return ov.Model(node.outputs(), params, "bench")

    return [Scenario("ExperimentalDetectronDetectionOutput", "mask-rcnn-1000x81",
                     "Mask R-CNN box head: 1000 ROIs x 81 classes, 30 objects, 100 detections", False, ov_model, None,
                     {"rois": rois, "deltas": deltas, "scores": scores}, out_elements=100 * 6, vs="openvino")]


SCENARIOS = {"prior_box": prior_box_scenarios, "prior_box_clustered": prior_box_clustered_scenarios,
             "region_yolo": region_yolo_scenarios, "roi_pooling": roi_pooling_scenarios,
             "experimental_detectron": experimental_detectron_scenarios,
             "experimental_detectron_detection_output": detection_output_scenarios}
