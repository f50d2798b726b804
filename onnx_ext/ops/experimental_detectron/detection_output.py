"""ExperimentalDetectronDetectionOutput-6 (Mask R-CNN's box head post-processing, one image): record, numpy
reference, body.

DetectionOutput(rois [R, 4], deltas [R, 4 C], scores [R, C], im_info [1, 3]; score_threshold, nms_threshold,
max_delta_log_wh, num_classes = C, post_nms_count, max_detections_per_image = M, class_agnostic_box_regression,
deltas_weights) -> boxes [M, 4], classes [M] (i32), scores [M].

As OpenVINO's CPU plugin (src/plugins/intel_cpu/src/nodes/experimental_detectron_detection_output.cpp; the op has
no ``evaluate``: the plugin is the oracle; the template plugin's reference reads M rois instead of R), in f32: each
ROI with a positive width and height (x1 - x0, y1 - y0) is moved by its deltas of each class from 1 on (divided by
deltas_weights, log sizes capped at max_delta_log_wh, +1 widths, corners clamped at 0 from below only: im_info is
not read); per class the (roi, class) pairs scoring above score_threshold, best first (equal scores: lower ROI
first), go through a greedy NMS (+1 widths, touching boxes overlap, suppressed when IoU > nms_threshold), up to
post_nms_count kept (-1: all); the kept pairs in class order, and when there are more than M, the M best by score
(equal scores: lower ROI first; equal ROI too: lower class first, which OpenVINO leaves to std::partial_sort);
rows past them are zeros. class_agnostic_box_regression is read by neither OpenVINO implementation (deltas are
per class either way). Corners: docs/ops/experimental_detectron_detection_output.md.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from onnxscript import BOOL, FLOAT, INT32, INT64, script

from ...domain import op, ov_ext
from ...errors import OpAttributeError, OpInputError
from ...types import from_ov
from ..base import Attr, Bodies, OpSpec, Operand, require_bool
from ..box_decode import _box_decode
from ..greedy_nms import _greedy_fixed_point

__all__ = ["SPEC", "detection_output_reference"]

NAME = "ExperimentalDetectronDetectionOutput"
FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
F32 = np.float32
#: Candidates per class the body's NMS takes at a time (the IoU of a block against itself and the earlier ones).
NMS_BLOCK = 64


# --- numpy reference -----------------------------------------------------------------------------------


def _where_positive(x: np.ndarray) -> np.ndarray:
    return np.where(F32(0) < x, x, F32(0))  # std::max(0.0f, x): NaN gives 0


def refine(rois, deltas, scores, weights, max_delta_log_wh):
    """Boxes [C, R, 4], their areas [C, R] and scores [C, R] as the plugin refines them: class 0 and the ROIs
    without a positive width and height are zeros."""
    r = np.asarray(rois, F32).reshape(-1, 4)
    s = np.asarray(scores, F32)
    count, classes = s.shape
    d = np.asarray(deltas, F32).reshape(count, classes, 4)
    w = np.asarray(weights, F32)
    x0, y0, x1, y1 = (r[:, k:k + 1] for k in range(4))
    with np.errstate(all="ignore"):
        valid = ~((x1 - x0 <= 0) | (y1 - y0 <= 0))
        one, half = F32(1), F32(0.5)
        ww, hh = x1 - x0 + one, y1 - y0 + one
        cx, cy = x0 + half * ww, y0 + half * hh
        dx, dy, dw, dh = (d[..., k] / w[k] for k in range(4))
        pcx, pcy = dx * ww + cx, dy * hh + cy
        lim = F32(max_delta_log_wh)
        # std::min(d, lim) and exp rounded once to f32, as std::exp of a float
        pw = np.exp(np.where(lim < dw, lim, dw).astype(np.float64)).astype(F32) * ww
        ph = np.exp(np.where(lim < dh, lim, dh).astype(np.float64)).astype(F32) * hh
        nx0, ny0 = _where_positive(pcx - half * pw), _where_positive(pcy - half * ph)
        nx1, ny1 = _where_positive(pcx + half * pw - one), _where_positive(pcy + half * ph - one)
        area = (nx1 - nx0 + one) * (ny1 - ny0 + one)
    keep = valid & (np.arange(classes) >= 1)
    boxes = np.where(keep[..., None], np.stack([nx0, ny0, nx1, ny1], -1), F32(0)).astype(F32)
    return boxes.transpose(1, 0, 2), np.where(keep, area, F32(0)).T, np.where(keep, s, F32(0)).T


def jaccard(boxes: np.ndarray, areas: np.ndarray, j: int, kept: np.ndarray) -> np.ndarray:
    """JaccardOverlap(candidate j, each kept box) as the plugin computes it (+1 widths, 0 when apart)."""
    a, b = boxes[j], boxes[kept]
    apart = (b[:, 0] > a[2]) | (b[:, 2] < a[0]) | (b[:, 1] > a[3]) | (b[:, 3] < a[1])
    with np.errstate(all="ignore"):
        iw = np.minimum(a[2], b[:, 2]) - np.maximum(a[0], b[:, 0]) + F32(1)
        ih = np.minimum(a[3], b[:, 3]) - np.maximum(a[1], b[:, 1]) + F32(1)
        inter = iw * ih
        iou = inter / (areas[j] + areas[kept] - inter)
    return np.where(apart | (iw <= 0) | (ih <= 0), F32(0), iou)


def class_nms(boxes, areas, scores, score_threshold, nms_threshold, post_nms_count) -> list[int]:
    """nms_cf of one class: the ROIs kept, best first."""
    candidates = np.flatnonzero(scores > F32(score_threshold))
    order = candidates[np.argsort(-scores[candidates], kind="stable")]  # equal scores: lower ROI first
    kept: list[int] = []
    for j in order:
        if not kept or not (jaccard(boxes, areas, j, np.array(kept)) > F32(nms_threshold)).any():
            kept.append(int(j))
    return kept if post_nms_count == -1 else kept[:post_nms_count]


def detection_output_reference(rois, deltas, scores, im_info, **attrs):
    out_type = np.asarray(rois).dtype
    boxes, areas, s = refine(rois, deltas, scores, attrs["deltas_weights"], attrs["max_delta_log_wh"])
    found = [(s[c, j], j, c) for c in range(1, len(s))
             for j in class_nms(boxes[c], areas[c], s[c], attrs["score_threshold"], attrs["nms_threshold"],
                                attrs["post_nms_count"])]
    m = attrs["max_detections_per_image"]
    if len(found) > m:  # the M best: score descending, then ROI, then class
        found = sorted(found, key=lambda f: (-f[0], f[1], f[2]))[:m]
    out_boxes, out_classes, out_scores = np.zeros((m, 4), F32), np.zeros(m, np.int32), np.zeros(m, F32)
    for i, (score, j, c) in enumerate(found):
        out_boxes[i], out_classes[i], out_scores[i] = boxes[c, j], c, score
    return out_boxes.astype(out_type), out_classes, out_scores.astype(out_type)


# --- record --------------------------------------------------------------------------------------------

ATTRIBUTES = {
    "score_threshold": Attr("float"),
    "nms_threshold": Attr("float"),
    "max_delta_log_wh": Attr("float"),
    "num_classes": Attr("int"),
    "post_nms_count": Attr("int"),
    "max_detections_per_image": Attr("int"),
    "class_agnostic_box_regression": Attr("int", 0),
    "deltas_weights": Attr("floats"),
}


def check_attributes(attrs: dict) -> dict:
    def bad(name, problem):
        raise OpAttributeError(NAME, name, problem)

    for name in ("score_threshold", "nms_threshold", "max_delta_log_wh"):
        if math.isnan(attrs[name]):
            bad(name, "is NaN")
    if attrs["num_classes"] < 1:
        bad("num_classes", f"is {attrs['num_classes']}: must be at least 1 (class 0 is the background)")
    if attrs["post_nms_count"] < -1:
        bad("post_nms_count", f"is {attrs['post_nms_count']}: must be >= 0, or -1 for no limit")
    if attrs["max_detections_per_image"] < 1:
        bad("max_detections_per_image", f"is {attrs['max_detections_per_image']}: must be positive")
    require_bool(NAME, attrs, "class_agnostic_box_regression")
    weights = attrs["deltas_weights"]
    if len(weights) != 4 or not all(math.isfinite(w) for w in weights):
        bad("deltas_weights", f"is {list(weights)}: must be 4 finite numbers (x, y, log w, log h)")
    return attrs


def _known(dim) -> bool:
    return isinstance(dim, int)


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    for name, o in zip(("rois", "deltas", "scores", "im_info"), operands):
        if o.type is not None and o.type.ov not in FLOAT_TYPES:
            raise OpInputError(NAME, f"{name} must be floating-point (f16, bf16, f32, f64), got {o.type.ov}")
        if o.rank is not None and o.rank != 2:
            raise OpInputError(NAME, f"{name} must have rank 2, got shape {list(o.shape)}")
    types = {o.type.ov for o in operands if o.type is not None}
    if len(types) > 1:
        raise OpInputError(NAME, f"the inputs must have one element type, got {', '.join(sorted(types))}")
    rois, deltas, scores, info = operands
    c = attrs["num_classes"]
    for o, want, what in ((rois, 4, "rois must be [R, 4]"), (deltas, 4 * c, f"deltas must be [R, 4 x {c} classes]"),
                          (scores, c, f"scores must be [R, {c} classes]")):
        if o.rank == 2 and _known(o.shape[1]) and o.shape[1] != want:
            raise OpInputError(NAME, f"{what}, got {list(o.shape)}")
    if info.rank == 2 and any(_known(d) and d != w for d, w in zip(info.shape, (1, 3))):
        raise OpInputError(NAME, f"im_info must be [1, 3], got {list(info.shape)}")
    counts = {o.shape[0] for o in (rois, deltas, scores) if o.rank == 2 and _known(o.shape[0])}
    if len(counts) > 1:
        raise OpInputError(NAME, f"rois, deltas and scores must have one row per ROI, got {sorted(counts)} rows")


def openvino_node(attrs: dict, inputs: list):
    """The native ExperimentalDetectronDetectionOutput-6."""
    from openvino.utils.node_factory import NodeFactory

    native = dict(attrs, class_agnostic_box_regression=bool(attrs["class_agnostic_box_regression"]))
    return NodeFactory("opset6").create(NAME, inputs, native)


# --- body ----------------------------------------------------------------------------------------------


@script(ov_ext, default_opset=op)
def _eddo_suppresses(kept, kept_area, blk, blk_area, threshold):
    # kept [C, I, 4], blk [C, J, 4] (x0, y0, x1, y1) and their areas [C, I], [C, J] -> [C, I, J]: kept i suppresses
    # candidate j of its class: JaccardOverlap(j, i) > threshold, the overlap 0 when the boxes are apart (touching
    # ones are not) or the +1 intersection is empty (so a negative threshold suppresses every later box).
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    two = op.Constant(value_int=2)
    three = op.Constant(value_int=3)
    ki = op.Constant(value_ints=[2])
    bj = op.Constant(value_ints=[1])
    kx0 = op.Unsqueeze(op.Gather(kept, zero, axis=2), ki)
    ky0 = op.Unsqueeze(op.Gather(kept, one, axis=2), ki)
    kx1 = op.Unsqueeze(op.Gather(kept, two, axis=2), ki)
    ky1 = op.Unsqueeze(op.Gather(kept, three, axis=2), ki)
    bx0 = op.Unsqueeze(op.Gather(blk, zero, axis=2), bj)
    by0 = op.Unsqueeze(op.Gather(blk, one, axis=2), bj)
    bx1 = op.Unsqueeze(op.Gather(blk, two, axis=2), bj)
    by1 = op.Unsqueeze(op.Gather(blk, three, axis=2), bj)
    apart = op.Or(op.Or(op.Greater(kx0, bx1), op.Less(kx1, bx0)), op.Or(op.Greater(ky0, by1), op.Less(ky1, by0)))
    offset = op.Constant(value_float=1.0)
    iw = op.Add(op.Sub(op.Min(bx1, kx1), op.Max(bx0, kx0)), offset)
    ih = op.Add(op.Sub(op.Min(by1, ky1), op.Max(by0, ky0)), offset)
    nought = op.Constant(value_float=0.0)
    empty = op.Or(apart, op.Or(op.LessOrEqual(iw, nought), op.LessOrEqual(ih, nought)))
    inter = op.Mul(iw, ih)
    union = op.Sub(op.Add(op.Unsqueeze(blk_area, bj), op.Unsqueeze(kept_area, ki)), inter)
    overlap = op.Where(empty, nought, op.Div(inter, union))
    return op.Greater(overlap, threshold)


@script(ov_ext, default_opset=op)
def _eddo_class_nms(boxes, areas, candidate, count, threshold, post, block):
    # Every class's greedy NMS at once: boxes [C, K, 4], areas [C, K] best first within each class, candidate
    # [C, K] (the first count [C] of each row), threshold f32, post int64 (-1: no limit), block int64 -> kept
    # [C, K]. By blocks of candidates: the kept before a block suppress its boxes, then the block's own greedy
    # pass (greedy_nms._greedy_fixed_point, one per class through MatMul's batch axis).
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    shape = op.Shape(candidate)
    c = op.Slice(shape, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    k = op.Squeeze(op.Slice(shape, op.Constant(value_ints=[1]), op.Constant(value_ints=[2])))
    kept = op.Cast(op.ConstantOfShape(op.Concat(c, op.Constant(value_ints=[0]), axis=0)), to=BOOL.dtype)
    unlimited = op.Less(post, zero)
    start = op.Identity(zero)
    go = op.And(op.Less(start, k), op.Not(op.Equal(post, zero)))
    while go:
        end = op.Min(op.Add(start, block), k)
        index = op.Range(start, end, one)
        blk = op.Gather(boxes, index, axis=1)
        blk_area = op.Gather(areas, index, axis=1)
        earlier = op.Range(zero, start, one)
        by_kept = op.And(_eddo_suppresses(op.Gather(boxes, earlier, axis=1), op.Gather(areas, earlier, axis=1), blk,
                                          blk_area, threshold), op.Unsqueeze(kept, op.Constant(value_ints=[2])))
        # (a sum, not a max: nothing before the first block reduces an empty axis)
        hit = op.ReduceSum(op.Cast(by_kept, to=INT64.dtype), op.Constant(value_ints=[1]), keepdims=0)
        free = op.And(op.Gather(candidate, index, axis=1), op.Equal(hit, zero))
        j = op.Range(zero, op.Sub(end, start), one)
        before = op.Less(op.Unsqueeze(j, op.Constant(value_ints=[1])), op.Unsqueeze(j, op.Constant(value_ints=[0])))
        within = op.Cast(op.And(_eddo_suppresses(blk, blk_area, blk, blk_area, threshold), before), to=FLOAT.dtype)
        alive = _greedy_fixed_point(free, within)
        kept = op.Concat(kept, alive, axis=1)
        start = op.Identity(end)
        room = op.Or(unlimited, op.Less(op.ReduceSum(op.Cast(kept, to=INT64.dtype), op.Constant(value_ints=[1]),
                                                     keepdims=0), post))
        more = op.And(room, op.Less(start, count))
        go = op.Greater(op.ReduceSum(op.Cast(more, to=INT64.dtype), keepdims=0), zero)
    # the columns never reached (every class full) are not kept
    undecided = op.Sub(op.Reshape(k, op.Constant(value_ints=[1])),
                       op.Slice(op.Shape(kept), op.Constant(value_ints=[1]), op.Constant(value_ints=[2])))
    kept = op.Concat(kept, op.Cast(op.ConstantOfShape(op.Concat(c, undecided, axis=0)), to=BOOL.dtype), axis=1)
    rank = op.CumSum(op.Cast(kept, to=INT64.dtype), one, exclusive=1)
    return op.And(kept, op.Or(unlimited, op.Less(rank, post)))


@script(ov_ext, default_opset=op)
def _eddo_refine(rois, deltas, weights, max_delta_log_wh):
    # rois [C, K, 4] and their deltas [C, K, 4] of the class (f32), weights [4] -> boxes [C, K, 4], areas [C, K], in
    # the plugin's order of f32 operations (box_decode._box_decode); std::max(0, x) and std::min(d, limit) as
    # comparisons (NaN: 0, d).
    one = op.Constant(value_float=1.0)
    nought = op.Constant(value_float=0.0)
    x0 = op.Gather(rois, op.Constant(value_int=0), axis=2)
    y0 = op.Gather(rois, op.Constant(value_int=1), axis=2)
    x1 = op.Gather(rois, op.Constant(value_int=2), axis=2)
    y1 = op.Gather(rois, op.Constant(value_int=3), axis=2)
    dx = op.Div(op.Gather(deltas, op.Constant(value_int=0), axis=2), op.Gather(weights, op.Constant(value_int=0)))
    dy = op.Div(op.Gather(deltas, op.Constant(value_int=1), axis=2), op.Gather(weights, op.Constant(value_int=1)))
    dw = op.Div(op.Gather(deltas, op.Constant(value_int=2), axis=2), op.Gather(weights, op.Constant(value_int=2)))
    dh = op.Div(op.Gather(deltas, op.Constant(value_int=3), axis=2), op.Gather(weights, op.Constant(value_int=3)))
    lw = op.Where(op.Less(max_delta_log_wh, dw), max_delta_log_wh, dw)
    lh = op.Where(op.Less(max_delta_log_wh, dh), max_delta_log_wh, dh)
    nx0, ny0, nx1, ny1 = _box_decode(x0, y0, x1, y1, dx, dy, lw, lh, one)
    nx1 = op.Sub(nx1, one)
    ny1 = op.Sub(ny1, one)
    nx0 = op.Where(op.Less(nought, nx0), nx0, nought)
    ny0 = op.Where(op.Less(nought, ny0), ny0, nought)
    nx1 = op.Where(op.Less(nought, nx1), nx1, nought)
    ny1 = op.Where(op.Less(nought, ny1), ny1, nought)
    area = op.Mul(op.Add(op.Sub(nx1, nx0), one), op.Add(op.Sub(ny1, ny0), one))
    last = op.Constant(value_ints=[2])
    boxes = op.Concat(op.Unsqueeze(nx0, last), op.Unsqueeze(ny0, last), op.Unsqueeze(nx1, last),
                      op.Unsqueeze(ny1, last), axis=2)
    return boxes, area


@script(ov_ext, default_opset=op)
def ExperimentalDetectronDetectionOutput(rois, deltas, scores, im_info, score_threshold: float, nms_threshold: float,
                                         max_delta_log_wh: float, num_classes: int, post_nms_count: int,
                                         max_detections_per_image: int, class_agnostic_box_regression: int,
                                         deltas_weights: Sequence[float]):
    # ExperimentalDetectronDetectionOutput-6(rois [R, 4], deltas [R, 4C], scores [R, C], im_info [1, 3]) -> boxes
    # [M, 4], classes [M] (i32), scores [M]; every attribute read at run time, in f32.
    r = op.Cast(rois, to=FLOAT.dtype)
    s = op.Cast(scores, to=FLOAT.dtype)
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    first = op.Constant(value_ints=[0])
    shape = op.Shape(s)
    n = op.Slice(shape, first, op.Constant(value_ints=[1]))
    c = op.Slice(shape, op.Constant(value_ints=[1]), op.Constant(value_ints=[2]))
    four = op.Constant(value_ints=[4])
    ok = op.Equal(c, op.Reshape(op.Constant(value_int=num_classes), op.Constant(value_ints=[1])))
    ok = op.And(ok, op.Equal(op.Shape(r), op.Concat(n, four, axis=0)))
    ok = op.And(ok, op.Equal(op.Shape(deltas), op.Concat(n, op.Mul(c, four), axis=0)))
    ok = op.And(ok, op.Equal(op.ReduceProd(op.Shape(im_info), keepdims=0), op.Constant(value_int=3)))
    ok = op.ReduceMin(op.Cast(ok, to=INT64.dtype), keepdims=0)
    scores_have_num_classes_deltas_4_per_class_rois_4_and_im_info_3 = op.Gather(
        op.Constant(value_ints=[0]), op.Reshape(op.Sub(one, ok), op.Constant(value_ints=[1])))
    checked = op.Cast(scores_have_num_classes_deltas_4_per_class_rois_4_and_im_info_3, to=FLOAT.dtype)
    r = op.Add(r, checked)
    s = op.Add(s, checked)
    # the (roi, class) candidates of the classes from 1, each class's best first
    nought = op.Constant(value_float=0.0)
    x0 = op.Gather(r, zero, axis=1)
    y0 = op.Gather(r, one, axis=1)
    x1 = op.Gather(r, op.Constant(value_int=2), axis=1)
    y1 = op.Gather(r, op.Constant(value_int=3), axis=1)
    skipped = op.Or(op.LessOrEqual(op.Sub(x1, x0), nought), op.LessOrEqual(op.Sub(y1, y0), nought))
    big = op.Constant(value_ints=[1 << 62])
    st = op.Transpose(op.Slice(s, op.Constant(value_ints=[1]), big, op.Constant(value_ints=[1])), perm=[1, 0])
    st = op.Where(op.Unsqueeze(skipped, first), nought, st)  # a skipped ROI scores 0 in every class
    candidate = op.Greater(st, op.Constant(value_float=score_threshold))
    count = op.ReduceSum(op.Cast(candidate, to=INT64.dtype), op.Constant(value_ints=[1]), keepdims=0)
    k = op.ReduceMax(op.Concat(count, first, axis=0), keepdims=1)
    key = op.Where(candidate, st, op.Constant(value_float=float("-inf")))
    top, order = op.TopK(key, k, axis=1, largest=1, sorted=1)  # equal scores: lower ROI first
    d = op.Reshape(op.Add(op.Cast(deltas, to=FLOAT.dtype), checked), op.Concat(n, c, four, axis=0))
    d = op.Transpose(d, perm=[1, 0, 2])
    d = op.Slice(d, op.Constant(value_ints=[1]), big, first)
    boxes, areas = _eddo_refine(op.Gather(r, order, axis=0),
                                op.GatherND(d, op.Unsqueeze(order, op.Constant(value_ints=[2])), batch_dims=1),
                                op.Constant(value_floats=deltas_weights), op.Constant(value_float=max_delta_log_wh))
    on = op.Unsqueeze(op.Not(op.Gather(skipped, order)), op.Constant(value_ints=[2]))
    boxes = op.Where(on, boxes, nought)
    areas = op.Where(op.Squeeze(on, op.Constant(value_ints=[2])), areas, nought)
    position = op.Range(zero, op.Squeeze(k), one)
    in_row = op.Less(op.Unsqueeze(position, first), op.Unsqueeze(count, op.Constant(value_ints=[1])))
    kept = _eddo_class_nms(boxes, areas, in_row, count, op.Constant(value_float=nms_threshold),
                           op.Constant(value_int=post_nms_count), op.Constant(value_int=NMS_BLOCK))
    # the kept pairs in class order, then the M best (score descending, ROI, class) when there are more
    which = op.Reshape(op.NonZero(op.Reshape(kept, op.Constant(value_ints=[-1]))), op.Constant(value_ints=[-1]))
    label = op.Add(op.Div(which, op.Max(op.Squeeze(k), one)), one)  # (onnxruntime divides empty tensors too)
    roi = op.Gather(op.Reshape(order, op.Constant(value_ints=[-1])), which)
    score = op.Gather(op.Reshape(top, op.Constant(value_ints=[-1])), which)
    box = op.Gather(op.Reshape(boxes, op.Constant(value_ints=[-1, 4])), which)
    m = op.Reshape(op.Constant(value_int=max_detections_per_image), op.Constant(value_ints=[1]))
    total = op.Shape(which)
    if op.Greater(op.Squeeze(total), op.Squeeze(m)):
        _, by_roi = op.TopK(roi, total, axis=0, largest=0, sorted=1)
        _, by_score = op.TopK(op.Gather(score, by_roi), m, axis=0, largest=1, sorted=1)
        best = op.Gather(by_roi, by_score)
    else:
        best = op.Range(zero, op.Squeeze(total), one)
    rest = op.Sub(m, op.Shape(best))
    out_boxes = op.Concat(op.Gather(box, best), op.ConstantOfShape(op.Concat(rest, four, axis=0)), axis=0)
    out_classes = op.Concat(op.Cast(op.Gather(label, best), to=INT32.dtype),
                            op.Cast(op.ConstantOfShape(rest), to=INT32.dtype), axis=0)
    out_scores = op.Concat(op.Gather(score, best), op.ConstantOfShape(rest), axis=0)
    return op.CastLike(out_boxes, rois), op.Cast(out_classes, to=INT32.dtype), op.CastLike(out_scores, rois)


SPEC = OpSpec(
    name=NAME,
    inputs=("rois", "deltas", "scores", "im_info"),
    min_inputs=4,
    attributes=ATTRIBUTES,
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=lambda attrs, operands: "general",
    output_type=lambda attrs, operands: (operands[0].type, from_ov("i32"), operands[0].type),
    output_shape=lambda attrs, operands: ((attrs["max_detections_per_image"], 4), (attrs["max_detections_per_image"],),
                                          (attrs["max_detections_per_image"],)),
    bodies=Bodies(ExperimentalDetectronDetectionOutput, {"general": ExperimentalDetectronDetectionOutput}),
    helpers=(_eddo_suppresses, _greedy_fixed_point, _eddo_class_nms, _box_decode, _eddo_refine),
    public=ExperimentalDetectronDetectionOutput,
    reference=detection_output_reference,
    openvino=openvino_node,
    outputs=("boxes", "classes", "scores"),
)
