"""bench_ops.py scenarios of issue 18's detection heads and NMS ops, each judged against OpenVINO's CPU plugin on
its own op (``vs="openvino"``, at most 3x): no ONNX op does their job, so there is no (b)."""

from __future__ import annotations

import numpy as np
import openvino as ov
from openvino import opset1
from openvino.utils.node_factory import NodeFactory

from op_scenarios import Scenario, _model, _param

RNG = np.random.default_rng(18)


def ssd300_priors() -> np.ndarray:
    """SSD300's 8,732 priors (feature maps 38, 19, 10, 5, 3, 1 with 4, 6, 6, 6, 4, 4 boxes per cell), normalized
    corners, and the variances 0.1, 0.1, 0.2, 0.2: the [1, 2, 34928] proposals input PriorBox gives it."""
    maps = []
    for size, per_cell, scale in [(38, 4, 0.1), (19, 6, 0.2), (10, 6, 0.375), (5, 6, 0.55), (3, 4, 0.725),
                                  (1, 4, 0.9)]:
        centres = (np.arange(size) + 0.5) / size
        cy, cx = np.meshgrid(centres, centres, indexing="ij")
        cell = []
        for r in range(per_cell):
            w, h = scale * (1 + 0.3 * r) / 2, scale / (1 + 0.3 * r) / 2
            cell.append(np.stack([cx - w, cy - h, cx + w, cy + h], -1).reshape(-1, 1, 4))
        maps.append(np.concatenate(cell, 1).reshape(-1, 4))
    priors = np.concatenate(maps).astype(np.float32)
    variances = np.tile(np.array([0.1, 0.1, 0.2, 0.2], np.float32), len(priors))
    return np.stack([priors.reshape(-1), variances])[None]


def ssd_head(batch: int, classes: int, priors: int) -> tuple[np.ndarray, np.ndarray]:
    """Box offsets and softmax class scores as an SSD head gives them (the background class most likely)."""
    loc = (RNG.standard_normal((batch, priors * 4)) * 0.5).astype(np.float32)
    logits = RNG.standard_normal((batch, priors, classes)) * 2
    logits[..., 0] += 4
    conf = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    return loc, conf.astype(np.float32).reshape(batch, -1)


def detection_output_scenarios():
    """DetectionOutput-8 as SSD300 on VOC uses it: 8,732 priors x 21 classes, top_k 400, keep_top_k 200, NMS 0.45,
    confidence 0.01, center-size boxes, priors constant (PriorBox folded)."""
    out = []
    proposals = ssd300_priors()
    priors = proposals.shape[2] // 4
    for name, what, batch, attrs in [
        ("ssd300", "SSD300 (VOC): 8,732 priors x 21 classes, top_k 400, keep_top_k 200", 1, {}),
        ("ssd300-b4", "SSD300, batch 4", 4, {}),
        ("ssd300-mxnet", "SSD300, MXNet style (decrease_label_id): one class per prior", 1,
         {"decrease_label_id": True}),
    ]:
        loc, conf = ssd_head(batch, 21, priors)
        full = dict(keep_top_k=[200], nms_threshold=0.45, background_label_id=0, top_k=400,
                    code_type="caffe.PriorBoxParameter.CENTER_SIZE", share_location=True,
                    confidence_threshold=0.01, normalized=True, variance_encoded_in_target=False) | attrs

        def ov_model(loc=loc, conf=conf, full=full):
            pl, pc = _param("loc", list(loc.shape), np.float32), _param("conf", list(conf.shape), np.float32)
            node = NodeFactory("opset8").create("DetectionOutput", [pl.output(0), pc.output(0),
                                                                    opset1.constant(proposals).output(0)], full)
            return _model(node, [pl, pc])

        out.append(Scenario("DetectionOutput", name, what, False, ov_model, None, {"loc": loc, "conf": conf},
                            out_elements=batch * 200 * 7, vs="openvino"))
    return out


def rpn_head(batch: int, anchors: int, height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Objectness (background, foreground probabilities) and box deltas as a Faster R-CNN RPN head gives them. The
    foreground scores are distinct: OpenVINO orders equal ones as std::partial_sort leaves them, onnx-ext by
    position (docs/ops/proposal.md), and the check of bench_ops compares the two."""
    count = batch * anchors * height * width
    foreground = RNG.permutation(np.linspace(0.001, 0.999, count)).reshape(batch, 1, anchors, height, width)
    probs = np.concatenate([1 - foreground, foreground], 1)
    deltas = RNG.standard_normal((batch, 4 * anchors, height, width)) * 0.2
    return probs.reshape(batch, 2 * anchors, height, width).astype(np.float32), deltas.astype(np.float32)


def proposal_scenarios():
    """Proposal-4 as Faster R-CNN (ResNet-50, 600 x 800 image) uses it: 9 anchors on a 38 x 50 map (17,100
    proposals), pre_nms_topn 6000, post_nms_topn 300, NMS 0.7; Caffe's boxes (+1) and TensorFlow's."""
    out = []
    for name, what, framework, attrs in [
        ("faster-rcnn", "Faster R-CNN: 38 x 50 x 9 anchors, pre 6000, post 300, NMS 0.7 (Caffe)", "", {}),
        ("faster-rcnn-tf", "Faster R-CNN: 38 x 50 x 9 anchors, pre 6000, post 300, NMS 0.7 (TensorFlow)",
         "tensorflow", {}),
    ]:
        probs, deltas = rpn_head(1, 9, 38, 50)
        full = dict(base_size=16, pre_nms_topn=6000, post_nms_topn=300, nms_thresh=0.7, feat_stride=16, min_size=16,
                    ratio=[0.5, 1.0, 2.0], scale=[8.0, 16.0, 32.0], framework=framework) | attrs

        def ov_model(probs=probs, deltas=deltas, full=full):
            pp, pd = _param("probs", list(probs.shape), np.float32), _param("deltas", list(deltas.shape), np.float32)
            image = opset1.constant(np.array([600, 800, 1], np.float32)).output(0)
            node = NodeFactory("opset4").create("Proposal", [pp.output(0), pd.output(0), image], full)
            return _model(node, [pp, pd])

        out.append(Scenario("Proposal", name, what, False, ov_model, None, {"probs": probs, "deltas": deltas},
                            out_elements=300 * 5, vs="openvino"))
    return out


def yolo_head(batch: int, boxes: int, classes: int, size: float) -> tuple[np.ndarray, np.ndarray]:
    """Pixel boxes and sigmoid class scores (most of them low) as a YOLOv3 head gives them."""
    centre = RNG.random((batch, boxes, 2)) * size
    extent = RNG.random((batch, boxes, 2)) * size / 4 + 4
    xyxy = np.concatenate([centre - extent / 2, centre + extent / 2], -1).astype(np.float32)
    scores = 1 / (1 + np.exp(-(RNG.standard_normal((batch, classes, boxes)) * 2 - 4)))
    return xyxy, scores.astype(np.float32)


def multiclass_nms_scenarios():
    """MulticlassNms-9 as PaddleDetection's YOLOv3 / PP-YOLO heads use it (608 x 608: 10,647 boxes x 80 classes,
    score 0.01, nms_top_k 1000, keep_top_k 100, IoU 0.45, pixel boxes) and SSD-like (8,732 normalized boxes x
    21 classes, nms_top_k 400, keep_top_k 200)."""
    out = []
    for name, what, (batch, count, classes, size), attrs in [
        ("ppyolo", "PP-YOLO 608: 10,647 boxes x 80 classes, top 1000, keep 100, IoU 0.45, not normalized",
         (1, 10647, 80, 608.0), dict(nms_top_k=1000, keep_top_k=100, iou_threshold=0.45, score_threshold=0.01,
                                     normalized=False, sort_result_type="score")),
        ("ssd", "SSD-like: 8,732 normalized boxes x 21 classes, top 400, keep 200, IoU 0.45",
         (1, 8732, 21, 1.0), dict(nms_top_k=400, keep_top_k=200, iou_threshold=0.45, score_threshold=0.01,
                                  background_class=0, normalized=True)),
    ]:
        boxes, scores = yolo_head(batch, count, classes, size)

        def ov_model(boxes=boxes, scores=scores, attrs=attrs):
            pb, ps = _param("boxes", list(boxes.shape), np.float32), _param("scores", list(scores.shape), np.float32)
            node = NodeFactory("opset9").create("MulticlassNms", [pb.output(0), ps.output(0)], attrs)
            return ov.Model(node.outputs(), [pb, ps], "bench")

        out.append(Scenario("MulticlassNms", name, what, False, ov_model, None, {"boxes": boxes, "scores": scores},
                            out_elements=attrs["keep_top_k"] * 6, vs="openvino", ties_within=1e-6))
    return out


def matrix_nms_scenarios():
    """MatrixNms-8 as PaddleDetection's PP-YOLO head can use it (608 x 608: 10,647 boxes x 80 classes, score 0.01,
    post 0.01, gaussian decay, keep_top_k 100, pixel boxes) with nms_top_k 100 and 200: the IoU matrix of every
    class's candidates."""
    out = []
    for top_k in (100, 200):
        boxes, scores = yolo_head(1, 10647, 80, 608.0)
        attrs = dict(nms_top_k=top_k, keep_top_k=100, score_threshold=0.01, post_threshold=0.01, normalized=False,
                     decay_function="gaussian", sort_result_type="score")

        def ov_model(boxes=boxes, scores=scores, attrs=attrs):
            pb, ps = _param("boxes", list(boxes.shape), np.float32), _param("scores", list(scores.shape), np.float32)
            node = NodeFactory("opset8").create("MatrixNms", [pb.output(0), ps.output(0)], attrs)
            return ov.Model(node.outputs(), [pb, ps], "bench")

        out.append(Scenario("MatrixNms", f"ppyolo-top{top_k}", f"PP-YOLO 608: 10,647 boxes x 80 classes, nms_top_k "
                            f"{top_k}, keep 100, gaussian", False, ov_model, None, {"boxes": boxes, "scores": scores},
                            out_elements=100 * 6, vs="openvino"))
    return out


def fpn_anchors(height: int, width: int, stride: int, sizes) -> np.ndarray:
    """[H, W, A, 4] anchors of one FPN level: one box per size (and aspect 0.5, 1, 2) centred on each cell."""
    ys, xs = np.meshgrid((np.arange(height) + 0.5) * stride, (np.arange(width) + 0.5) * stride, indexing="ij")
    boxes = []
    for size in sizes:
        for ratio in (0.5, 1.0, 2.0):
            w, h = size / np.sqrt(ratio) / 2, size * np.sqrt(ratio) / 2
            boxes.append(np.stack([xs - w, ys - h, xs + w, ys + h], -1))
    return np.stack(boxes, 2).astype(np.float32)


def generate_proposals_scenarios():
    """Mask R-CNN's RPN on one FPN level (stride 16 on 800 x 1344: a 50 x 84 map, 3 anchors: 12,600 proposals),
    pre 1000 / post 1000, NMS 0.7: ExperimentalDetectronGenerateProposalsSingleImage-6 and GenerateProposals-9
    (batch 2)."""
    out = []
    anchors = fpn_anchors(50, 84, 16, [64.0])
    attrs = dict(min_size=0.0, nms_threshold=0.7, pre_nms_count=1000, post_nms_count=1000)
    for op, batch in (("ExperimentalDetectronGenerateProposalsSingleImage", 1), ("GenerateProposals", 2)):
        scores = RNG.permutation(np.linspace(0.001, 0.999, batch * 3 * 50 * 84)).reshape(batch, 3, 50, 84)
        deltas = RNG.standard_normal((batch, 12, 50, 84)) * 0.2
        info = np.tile(np.array([800, 1344, 1], np.float32), (batch, 1))
        if op == "GenerateProposals":
            feeds, consts = {"deltas": deltas, "scores": scores}, [info, anchors]
            version, full = "opset9", attrs | {"normalized": False}
        else:
            feeds, consts = {"deltas": deltas[0], "scores": scores[0]}, [info[0], anchors.reshape(-1, 4)]
            version, full = "opset6", attrs
        feeds = {k: v.astype(np.float32) for k, v in feeds.items()}

        def ov_model(feeds=feeds, consts=consts, op=op, version=version, full=full):
            params = [_param(k, list(v.shape), np.float32) for k, v in feeds.items()]
            inputs = [opset1.constant(c).output(0) for c in consts] + [p.output(0) for p in params]
            node = NodeFactory(version).create(op, inputs, full)
            return ov.Model(node.outputs(), params, "bench")

        out.append(Scenario(op, "mask-rcnn-p4", f"Mask R-CNN RPN, 50 x 84 x 3 anchors, pre 1000, post 1000, batch "
                            f"{batch}", False, ov_model, None, feeds, out_elements=batch * 1000 * 4, vs="openvino"))
    return out


def rotated_head(objects: int, per_object: int, classes: int, size: float) -> tuple[np.ndarray, np.ndarray]:
    """[1, objects * per_object, 5] rotated boxes (x_ctr, y_ctr, w, h, angle) as an aerial-image detector (DOTA)
    gives them: a few jittered detections around each object, 10 to 80 pixels, any angle; sigmoid class scores,
    the object's class high."""
    centre = RNG.random((objects, 1, 2)) * size + RNG.normal(0, 3, (objects, per_object, 2))
    extent = RNG.uniform(10, 80, (objects, 1, 2)) * RNG.uniform(0.9, 1.1, (objects, per_object, 2))
    angle = RNG.uniform(-np.pi / 2, np.pi / 2, (objects, 1, 1)) + RNG.normal(0, 0.05, (objects, per_object, 1))
    boxes = np.concatenate([centre, extent, angle], -1).reshape(1, -1, 5)
    logits = RNG.standard_normal((1, classes, objects * per_object)) * 2 - 3
    owner = RNG.integers(0, classes, objects).repeat(per_object)
    logits[0, owner, np.arange(objects * per_object)] += 5
    return boxes.astype(np.float32), (1 / (1 + np.exp(-logits))).astype(np.float32)


def nms_rotated_scenarios():
    """NMSRotated-13 as a rotated detector's head (DOTA, 1024 x 1024) uses it: 1,000 boxes (250 objects x 4
    detections) x 3 classes, and 4,000 x 15 classes; score 0.05, IoU 0.1, up to 1,000 per class."""
    out = []
    for name, what, (objects, classes) in [
        ("dota-1000x3", "1 x 1,000 rotated boxes x 3 classes, IoU 0.1, score 0.05", (250, 3)),
        ("dota-4000x15", "1 x 4,000 rotated boxes x 15 classes, IoU 0.1, score 0.05", (1000, 15)),
    ]:
        boxes, scores = rotated_head(objects, 4, classes, 1024.0)

        def ov_model(boxes=boxes, scores=scores):
            pb, ps = _param("boxes", list(boxes.shape), np.float32), _param("scores", list(scores.shape), np.float32)
            limits = [opset1.constant(np.array(v, t)).output(0) for v, t in ((1000, np.int64), (0.1, np.float32),
                                                                             (0.05, np.float32))]
            node = NodeFactory("opset13").create("NMSRotated", [pb.output(0), ps.output(0), *limits], {})
            return ov.Model(node.outputs(), [pb, ps], "bench")

        out.append(Scenario("NMSRotated", name, what, True, ov_model, None, {"boxes": boxes, "scores": scores},
                            out_elements=objects * 3, vs="openvino"))
    return out

def soft_nms_scenarios():
    """NonMaxSuppression-9 with soft_nms_sigma (TensorFlow's non_max_suppression_with_scores) on an SSD300 head's
    boxes: 1 image x 1 class x 1,000 and 8,732 boxes, up to 100 selected, sigma 0.5, score threshold 0 (the
    scores are softmax outputs: every box is a candidate)."""
    out = []
    for name, m in [("ssd-1000", 1000), ("ssd300-8732", 8732)]:
        priors = ssd300_priors()[0, 0].reshape(-1, 4)[:m]
        loc, conf = ssd_head(1, 2, m)
        boxes = (priors + loc.reshape(-1, 4) * 0.02)[None][:, :, [1, 0, 3, 2]].astype(np.float32)  # (y1, x1, ...)
        scores = np.ascontiguousarray(conf.reshape(1, m, 2)[:, :, 1][:, None, :])

        def ov_model(boxes=boxes, scores=scores):
            pb, ps = _param("boxes", list(boxes.shape), np.float32), _param("scores", list(scores.shape), np.float32)
            limits = [opset1.constant(np.array(v, t)).output(0) for v, t in (
                (100, np.int64), (0.5, np.float32), (0.0, np.float32), (0.5, np.float32))]
            node = NodeFactory("opset9").create("NonMaxSuppression", [pb.output(0), ps.output(0), *limits], {})
            return ov.Model(node.outputs(), [pb, ps], "bench")

        out.append(Scenario("NonMaxSuppression-soft", name, f"1 x {m:,} boxes x 1 class, sigma 0.5, max 100",
                            True, ov_model, None, {"boxes": boxes, "scores": scores}, out_elements=100 * 3,
                            vs="openvino"))
    return out


SCENARIOS = {"detection_output": detection_output_scenarios, "proposal": proposal_scenarios,
             "multiclass_nms": multiclass_nms_scenarios, "matrix_nms": matrix_nms_scenarios,
             "generate_proposals": generate_proposals_scenarios, "nms_rotated": nms_rotated_scenarios,
             "soft_nms": soft_nms_scenarios}
