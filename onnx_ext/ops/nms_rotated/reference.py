"""NMSRotated-13 in numpy: OpenVINO's reference (src/core/reference/src/op/nms_rotated.cpp and
nms_rotated_util.hpp, itself detectron2's box_iou_rotated_utils.h) transcribed in f32, with the corners the spec
leaves open decided by it (docs/ops/nms_rotated.md): candidates have a score strictly above score_threshold, a
candidate goes when its IoU with a selected box is strictly above iou_threshold, a negative
max_output_boxes_per_class is no limit."""

from __future__ import annotations

import functools

import numpy as np

from ..nms_operands import nms_outputs

_F32 = np.float32
#: The reference's ``fabs(det) <= 1e-14`` (a float against a double): the f32 at or below 1e-14.
PARALLEL = _F32(np.nextafter(_F32(1e-14), _F32(0)) if _F32(1e-14) > 1e-14 else _F32(1e-14))


def vertices(box: np.ndarray) -> np.ndarray:
    """[4, 2] corners of (x_ctr, y_ctr, w, h, angle): cos and sin in double rounded to f32, as the reference."""
    x, y, w, h, a = (_F32(v) for v in box)
    c = _F32(np.cos(np.float64(a))) * _F32(0.5)
    s = _F32(np.sin(np.float64(a))) * _F32(0.5)
    p0 = (x - s * h - c * w, y + c * h - s * w)
    p1 = (x + s * h - c * w, y - c * h - s * w)
    p2 = (_F32(2) * x - p0[0], _F32(2) * y - p0[1])
    p3 = (_F32(2) * x - p1[0], _F32(2) * y - p1[1])
    return np.array([p0, p1, p2, p3], _F32)


def _cross(a, b):
    return _F32(a[0] * b[1]) - _F32(b[0] * a[1])


def _dot(a, b):
    return _F32(a[0] * b[0]) + _F32(a[1] * b[1])


def intersection_points(pts1: np.ndarray, pts2: np.ndarray) -> list[np.ndarray]:
    """The reference's get_intersection_points: edge crossings, then corners of each box inside the other."""
    vec1 = np.roll(pts1, -1, axis=0) - pts1
    vec2 = np.roll(pts2, -1, axis=0) - pts2
    out = []
    with np.errstate(all="ignore"):
        for i in range(4):
            for j in range(4):
                det = _cross(vec2[j], vec1[i])
                if abs(det) <= PARALLEL:
                    continue
                vec12 = pts2[j] - pts1[i]
                t1 = _cross(vec2[j], vec12) / det
                t2 = _cross(vec1[i], vec12) / det
                if 0 <= t1 <= 1 and 0 <= t2 <= 1:
                    out.append(pts1[i] + vec1[i] * t1)
        for pts, box, vec in ((pts1, pts2, vec2), (pts2, pts1, vec1)):
            ab, da = vec[0], vec[3]
            ab_ab, ad_ad = _dot(ab, ab), _dot(da, da)
            for p in pts:
                ap = p - box[0]
                ap_ab, ap_ad = _dot(ap, ab), -_dot(ap, da)
                if ap_ab >= 0 and ap_ad >= 0 and ap_ab <= ab_ab and ap_ad <= ad_ad:
                    out.append(p)
    return out


def _by_angle(a, b) -> int:
    # the reference's comparator: counter-clockwise first, nearly collinear ones by distance
    temp = _cross(a, b)
    if abs(temp) < 1e-6:
        return -1 if _dot(a, a) < _dot(b, b) else (1 if _dot(b, b) < _dot(a, a) else 0)
    return -1 if temp > 0 else 1


def hull_area(points: list[np.ndarray]) -> np.float32:
    """The reference's convex_hull_graham (shifted to the lowest point) and polygon_area."""
    p = np.array(points, _F32)
    t = 0
    for i in range(1, len(p)):
        if p[i][1] < p[t][1] or (p[i][1] == p[t][1] and p[i][0] < p[t][0]):
            t = i
    q = p - p[t]
    q[[0, t]] = q[[t, 0]]
    q = np.concatenate([q[:1], sorted(q[1:], key=functools.cmp_to_key(_by_angle))]).astype(_F32)
    dist = np.array([_dot(v, v) for v in q], _F32)
    k = next((k for k in range(1, len(q)) if dist[k] > 1e-8), len(q))
    if k == len(q):
        return _F32(0)
    stack = [q[0], q[k]]
    for i in range(k + 1, len(q)):
        while len(stack) > 1 and _cross(q[i] - stack[-2], stack[-1] - stack[-2]) >= 0:
            stack.pop()
        stack.append(q[i])
    if len(stack) <= 2:
        return _F32(0)
    area = _F32(0)
    for i in range(1, len(stack) - 1):
        area = _F32(area + abs(_cross(stack[i] - stack[0], stack[i + 1] - stack[0])))
    return _F32(area / _F32(2))


def rotated_iou(box_i: np.ndarray, box_j: np.ndarray) -> np.float32:
    """The reference's rotated_intersection_over_union (0 when either box has no area)."""
    points = intersection_points(vertices(box_i), vertices(box_j))
    inter = hull_area(points) if len(points) > 2 else _F32(0)
    area_i, area_j = _F32(box_i[2] * box_i[3]), _F32(box_j[2] * box_j[3])
    if area_i <= 0 or area_j <= 0:
        return _F32(0)
    with np.errstate(all="ignore"):
        return _F32(inter / _F32(area_i + area_j - inter))


def class_nms(boxes: np.ndarray, scores: np.ndarray, limit: int, iou_threshold, score_threshold) -> list[int]:
    """The indices one (image, class) selects, in selection order: score descending, then index ascending."""
    candidates = sorted((i for i in range(len(scores)) if scores[i] > score_threshold),
                        key=lambda i: (-scores[i], i))
    selected: list[int] = []
    for i in candidates:
        if len(selected) >= limit:
            break
        if not any(rotated_iou(boxes[i], boxes[j]) > iou_threshold for j in reversed(selected)):
            selected.append(i)
    return selected


def nms_rotated_reference(boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold,
                          sort_result_descending=True, output_type="i64", clockwise=True):
    """(selected_indices [R, 3] of ``output_type``, selected_scores [R, 3] f32, valid_outputs [1])."""
    b = np.array(boxes, _F32)
    s = np.asarray(scores, _F32)
    if not clockwise:
        b[..., 4] = -b[..., 4]
    limit = int(np.asarray(max_output_boxes_per_class).reshape(-1)[0])
    limit = s.shape[2] if limit < 0 else limit  # (size_t)(negative): no limit
    iou = _F32(np.asarray(iou_threshold).reshape(-1)[0])
    score = _F32(np.asarray(score_threshold).reshape(-1)[0])
    rows = []  # (score, batch, class, index)
    for n in range(s.shape[0]):
        for c in range(s.shape[1]):
            rows += [(s[n, c, i], n, c, i) for i in class_nms(b[n], s[n, c], limit, iou, score)]
    return nms_outputs(rows, sort_result_descending, output_type)
