"""MatrixNms-8 in numpy: OpenVINO's reference (src/core/reference/src/op/matrix_nms.cpp) in float32, with the
corners decided by the spec (docs/ops/matrix_nms.md): equal scores keep the boxes' order (the reference's
std::partial_sort leaves them in an order of its heap), and every image is processed (the reference stops at the
first image without detections)."""

from __future__ import annotations

import numpy as np

_F32 = np.float32
SORT_TYPES = ("classid", "score", "none")
DECAY_FUNCTIONS = ("gaussian", "linear")


def box_area(b: np.ndarray, normalized: bool) -> np.ndarray:
    w, h = b[..., 2] - b[..., 0], b[..., 3] - b[..., 1]
    area = w * h if normalized else (w + _F32(1)) * (h + _F32(1))
    return np.where((b[..., 2] < b[..., 0]) | (b[..., 3] < b[..., 1]), _F32(0), area).astype(_F32)


def iou_matrix(boxes: np.ndarray, normalized: bool) -> np.ndarray:
    """[K, K]: the reference's intersectionOverUnion(box a, box b) at [a, b], in f32."""
    a, b = boxes[:, None, :], boxes[None, :, :]
    disjoint = (b[..., 0] > a[..., 2]) | (b[..., 2] < a[..., 0]) | (b[..., 1] > a[..., 3]) | (b[..., 3] < a[..., 1])
    norm = _F32(0 if normalized else 1)
    w = np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]) + norm
    h = np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]) + norm
    inter = w * h
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (box_area(a, normalized) + box_area(b, normalized) - inter)
    return np.where(disjoint, _F32(0), iou).astype(_F32)


def decay(iou: np.ndarray, max_iou: np.ndarray, attrs: dict) -> np.ndarray:
    if attrs["decay_function"] == "gaussian":
        with np.errstate(over="ignore"):  # exp rounded once to f32, as std::exp of a float
            return np.exp(((max_iou * max_iou - iou * iou) * _F32(attrs["gaussian_sigma"])).astype(np.float64)
                          ).astype(_F32)
    with np.errstate(divide="ignore", invalid="ignore"):  # in double, as the reference's 1. - ...
        return ((1.0 - iou.astype(np.float64)) / (1.0 - max_iou.astype(np.float64) + np.float64(np.float32(1e-10)))
                ).astype(_F32)


def class_matrix_nms(boxes: np.ndarray, scores: np.ndarray, attrs: dict) -> list[tuple[int, float]]:
    """(box index, decayed score) of one class of one image, in candidate order."""
    candidates = np.flatnonzero(scores > _F32(attrs["score_threshold"]))
    if candidates.size == 0:
        return []
    candidates = candidates[np.argsort(-scores[candidates], kind="stable")]
    if attrs["nms_top_k"] > -1:
        candidates = candidates[:attrs["nms_top_k"]]
    if candidates.size == 0:
        return []
    iou = iou_matrix(boxes[candidates], attrs["normalized"])  # [i, j]: candidate i against j
    lower = np.tril(np.ones(iou.shape, bool), -1)  # j < i
    max_iou = np.where(lower, iou, _F32(0)).max(1)  # each candidate's max IoU with the better ones
    d = np.where(lower, decay(iou, max_iou[None, :], attrs), _F32(1))
    min_decay = np.minimum(d.min(1), _F32(1))
    decayed = (min_decay * scores[candidates]).astype(_F32)
    decayed[0] = scores[candidates[0]]
    post = _F32(attrs["post_threshold"])
    return [(int(i), s) for i, s in zip(candidates, decayed) if s > post]


def matrix_nms_reference(boxes, scores, **attrs):
    out_type = np.asarray(boxes).dtype
    index_type = np.int32 if attrs["output_type"] == "i32" else np.int64
    b, s = np.asarray(boxes, _F32), np.asarray(scores, _F32)
    n, c, m = s.shape
    rows, counts = [], []
    for image in range(n):
        found = []
        for cls in range(c):
            if cls == attrs["background_class"]:
                continue
            found += [(image, cls, score, idx) for idx, score in class_matrix_nms(b[image], s[image, cls], attrs)]
        found.sort(key=lambda r: (-r[2], r[1], r[3]))
        if attrs["keep_top_k"] > -1:
            found = found[:attrs["keep_top_k"]]
        counts.append(len(found))
        rows += found
    if attrs["sort_result_across_batch"]:
        if attrs["sort_result_type"] == "score":
            rows.sort(key=lambda r: (-r[2], r[0], r[1], r[3]))
        elif attrs["sort_result_type"] == "classid":
            rows.sort(key=lambda r: (r[1], r[0], -r[2], r[3]))
    outputs = np.array([[r[1], r[2], *b[r[0], r[3]]] for r in rows], _F32).reshape(-1, 6)
    indices = np.array([r[0] * m + r[3] for r in rows], index_type).reshape(-1, 1)
    return outputs.astype(out_type), indices, np.array(counts, index_type)
