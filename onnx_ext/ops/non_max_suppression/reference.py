"""NonMaxSuppression-5/-9 in numpy, soft (Gaussian, ``soft_nms_sigma`` > 0) or hard: OpenVINO's reference
(src/core/reference/src/op/non_max_suppression.cpp, ``non_max_suppression5`` and ``non_max_suppression``)
transcribed in f32, its lazy priority queue included: a candidate is decayed only by the boxes selected since it
was last taken from the queue, newest first, so the decayed scores round exactly as the reference's. Where
the reference's final sort is not the spec's (NMS-5 compares scores within 1e-6, NMS-9 only reverses the rows)
this sorts as the spec and OpenVINO's CPU plugin do (docs/spec-corrections.md)."""

from __future__ import annotations

import heapq

import numpy as np

from ..nms_operands import nms_outputs

_F32 = np.float32


def corners(boxes: np.ndarray, center: bool) -> np.ndarray:
    """[..., 4] boxes as (y_min, x_min, y_max, x_max) in f32, as the reference normalises them."""
    b = np.asarray(boxes, _F32)
    if center:  # (x_center, y_center, width, height)
        x, y, w, h = (b[..., i] for i in range(4))
        half_w, half_h = w * _F32(0.5), h * _F32(0.5)
        return np.stack([y - half_h, x - half_w, y + half_h, x + half_w], -1).astype(_F32)
    return np.concatenate([np.minimum(b[..., :2], b[..., 2:]), np.maximum(b[..., :2], b[..., 2:])], -1)


def iou(box_i: np.ndarray, box_j: np.ndarray) -> np.float32:
    """The reference's intersectionOverUnion in f32 (0 when either box has no area)."""
    area_i = _F32((box_i[2] - box_i[0]) * (box_i[3] - box_i[1]))
    area_j = _F32((box_j[2] - box_j[0]) * (box_j[3] - box_j[1]))
    if area_i <= 0 or area_j <= 0:
        return _F32(0)
    h = max(_F32(min(box_i[2], box_j[2]) - max(box_i[0], box_j[0])), _F32(0))
    w = max(_F32(min(box_i[3], box_j[3]) - max(box_i[1], box_j[1])), _F32(0))
    inter = _F32(h * w)
    with np.errstate(all="ignore"):
        return _F32(inter / _F32(_F32(area_i + area_j) - inter))


def weight(v: np.float32, scale: np.float32) -> np.float32:
    """std::exp(scale * iou * iou) in f32 (the exponential correctly rounded, as glibc's expf)."""
    return _F32(np.exp(np.float64(_F32(_F32(scale * v) * v))))


def class_nms(boxes, scores, limit: int, iou_threshold, score_threshold, sigma, version: int) -> list:
    """(index, decayed score) of what one (image, class) selects, in selection order."""
    soft = sigma > 0
    scale = _F32(_F32(-0.5) / sigma) if soft else _F32(0)
    queue = [(-float(s), i, s, 0) for i, s in enumerate(scores) if s > score_threshold]
    heapq.heapify(queue)  # the top: the highest score, then the lowest index
    selected: list = []
    while queue and len(selected) < limit:
        _, i, score, begin = heapq.heappop(queue)
        original, hard = score, False
        for j in range(len(selected) - 1, begin - 1, -1):
            v = iou(boxes[i], boxes[selected[j][0]])
            keep = v <= iou_threshold if version == 5 else (soft or v <= iou_threshold)
            score = _F32(score * (weight(v, scale) if keep else _F32(0)))
            if (v >= iou_threshold) if version == 5 else (v > iou_threshold and not soft):
                hard = True
                break
            if score <= score_threshold:
                break
        if hard:
            continue
        if score == original:
            selected.append((i, score))
        elif score > score_threshold:
            heapq.heappush(queue, (-float(score), i, score, len(selected)))
    return selected


def non_max_suppression_reference(boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold,
                                  soft_nms_sigma, version=9, center_point_box=False, sort_result_descending=True,
                                  output_type="i64"):
    """(selected_indices [R, 3] of ``output_type``, selected_scores [R, 3] f32, valid_outputs [1])."""
    s = np.asarray(scores, _F32)
    b = corners(boxes, center_point_box)
    limit = int(np.asarray(max_output_boxes_per_class).reshape(-1)[0])
    limit = s.shape[2] if limit < 0 else limit  # (size_t)(negative): no limit
    thresholds = [_F32(np.asarray(t, _F32).reshape(-1)[0]) for t in (iou_threshold, score_threshold, soft_nms_sigma)]
    rows = []  # (score, batch, class, index)
    for n in range(s.shape[0]):
        for c in range(s.shape[1]):
            rows += [(score, n, c, i) for i, score in class_nms(b[n], s[n, c], limit, *thresholds, version)]
    return nms_outputs(rows, sort_result_descending, output_type)
