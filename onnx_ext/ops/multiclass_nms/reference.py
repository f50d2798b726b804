"""MulticlassNms-8/-9 in numpy: OpenVINO's reference (src/core/reference/src/op/multiclass_nms.cpp), with the corners
the spec decides (docs/ops/multiclass_nms.md): every candidate is tested against every box selected before it (the
reference tests a box whose score equals score_threshold against the last one only), and sorts compare scores
exactly (the reference's comparators treat scores within 1e-6 as equal, which is no ordering)."""

from __future__ import annotations

import numpy as np

_F32 = np.float32
SORT_TYPES = ("classid", "score", "none")


def iou(box: np.ndarray, others: np.ndarray, normalized: bool) -> np.ndarray:
    """The reference's intersectionOverUnion of ``box`` [4] (x1, y1, x2, y2) with each of ``others`` [K, 4], f32."""
    norm = _F32(0 if normalized else 1)
    area_i = (box[3] - box[1] + norm) * (box[2] - box[0] + norm)
    area_j = (others[:, 3] - others[:, 1] + norm) * (others[:, 2] - others[:, 0] + norm)
    ih = np.maximum(np.minimum(box[3], others[:, 3]) - np.maximum(box[1], others[:, 1]) + norm, _F32(0))
    iw = np.maximum(np.minimum(box[2], others[:, 2]) - np.maximum(box[0], others[:, 0]) + norm, _F32(0))
    inter = ih * iw
    with np.errstate(divide="ignore", invalid="ignore"):
        value = inter / (area_i + area_j - inter)
    return np.where((area_i <= 0) | (area_j <= 0), _F32(0), value).astype(_F32)


def class_nms(boxes: np.ndarray, scores: np.ndarray, attrs: dict) -> list[int]:
    """The selected indices of one class of one image, in selection order."""
    candidates = [i for i in range(len(scores)) if scores[i] >= _F32(attrs["score_threshold"])]
    candidates.sort(key=lambda i: (-scores[i], i))
    if attrs["nms_top_k"] > -1:
        candidates = candidates[:attrs["nms_top_k"]]
    threshold = _F32(attrs["iou_threshold"])
    eta = _F32(attrs["nms_eta"])
    selected: list[int] = []
    for i in candidates:
        if selected and np.any(iou(boxes[i], boxes[selected], attrs["normalized"]) >= threshold):
            continue
        selected.append(i)
        if eta < 1 and threshold > 0.5:
            threshold = _F32(threshold * eta)
    return selected


def images(boxes, scores, roisnum):
    """Per image: (boxes [C, M_n, 4] or [M_n, 4] shared, scores [C, M_n], the offset of its boxes)."""
    if scores.ndim == 3:
        return [(boxes[n], scores[n], 0) for n in range(scores.shape[0])]
    starts = np.concatenate([[0], np.cumsum(roisnum)[:-1]]).astype(np.int64)
    return [(boxes[:, s:s + k], scores[:, s:s + k], s) for s, k in zip(starts, np.asarray(roisnum, np.int64))]


def multiclass_nms_reference(boxes, scores, roisnum=None, **attrs):
    out_type = np.asarray(boxes).dtype
    index_type = np.int32 if attrs["output_type"] == "i32" else np.int64
    b, s = np.asarray(boxes, _F32), np.asarray(scores, _F32)
    shared = s.ndim == 3
    num_classes = s.shape[1] if shared else s.shape[0]
    rows, counts = [], []  # rows: (image, class, score, index in the image, flat index)
    for n, (ib, isc, start) in enumerate(images(b, s, roisnum)):
        found = []
        if shared or isc.shape[1] > 0:
            for c in range(num_classes):
                if c == attrs["background_class"]:
                    continue
                cb = ib if shared else ib[c]
                for i in class_nms(cb, isc[c], attrs):
                    flat = n * b.shape[1] + i if shared else (start + i) * num_classes + c
                    found.append((n, c, isc[c][i], i, flat, cb[i]))
        found.sort(key=lambda r: (-r[2], r[1], r[3]))
        if attrs["keep_top_k"] > -1:
            found = found[:attrs["keep_top_k"]]
        if attrs["sort_result_type"] == "classid" and not attrs["sort_result_across_batch"]:
            found.sort(key=lambda r: (r[1], -r[2], r[3]))
        counts.append(len(found))
        rows += found
    if attrs["sort_result_across_batch"]:
        if attrs["sort_result_type"] == "score":
            rows.sort(key=lambda r: (-r[2], r[0], r[1], r[3]))
        elif attrs["sort_result_type"] == "classid":
            rows.sort(key=lambda r: (r[1], r[0], -r[2], r[3]))
    outputs = np.array([[r[1], r[2], *r[5]] for r in rows], _F32).reshape(-1, 6)
    indices = np.array([r[4] for r in rows], index_type).reshape(-1, 1)
    return outputs.astype(out_type), indices, np.array(counts, index_type)
