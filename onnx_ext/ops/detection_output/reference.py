"""DetectionOutput-1/-8 in numpy: OpenVINO's reference (src/core/reference/.../detection_output.hpp) step by step,
in float32 (the reference computes in the input type; the CPU plugin and the bodies compute in f32)."""

from __future__ import annotations

import numpy as np

CORNER = "caffe.PriorBoxParameter.CORNER"
CENTER_SIZE = "caffe.PriorBoxParameter.CENTER_SIZE"
CODE_TYPES = (CORNER, CENTER_SIZE)

_F32 = np.float32


def output_rows(attrs: dict, num_images: int, num_priors: int, num_classes: int) -> int:
    """The output's third dim (OpenVINO's shape inference)."""
    keep, top_k = attrs["keep_top_k"][0], attrs["top_k"]
    if keep > 0:
        return num_images * keep
    if keep == -1 and top_k > 0:
        return num_images * top_k * num_classes
    return num_images * num_priors * num_classes


def sizes(attrs: dict, box_logits, class_preds, proposals) -> tuple[int, int, int, int]:
    """(images, priors, classes, location classes)."""
    prior_size = 4 if attrs["normalized"] else 5
    num_priors = proposals.shape[2] // prior_size
    num_classes = attrs["num_classes"] if attrs["version"] == 1 else class_preds.shape[1] // num_priors
    return box_logits.shape[0], num_priors, num_classes, 1 if attrs["share_location"] else num_classes


def decode(attrs: dict, priors: np.ndarray, variances: np.ndarray | None, loc: np.ndarray) -> np.ndarray:
    """Boxes [..., 4] from priors [..., 4] (variances [..., 4] or None) and offsets [..., 4], in f32."""
    p = priors.astype(_F32)
    if not attrs["normalized"]:
        p = p / np.array([attrs["input_width"], attrs["input_height"]] * 2, _F32)
    v = np.ones(4, _F32) if variances is None else variances
    if attrs["code_type"] == CORNER:
        out = p + v * loc
    else:
        width, height = p[..., 2] - p[..., 0], p[..., 3] - p[..., 1]
        cx, cy = (p[..., 0] + p[..., 2]) / _F32(2), (p[..., 1] + p[..., 3]) / _F32(2)
        dcx = v[..., 0] * loc[..., 0] * width + cx
        dcy = v[..., 1] * loc[..., 1] * height + cy
        with np.errstate(over="ignore"):  # exp rounded once to f32, as std::exp of a float
            dw = np.exp((v[..., 2] * loc[..., 2]).astype(np.float64)).astype(_F32) * width
            dh = np.exp((v[..., 3] * loc[..., 3]).astype(np.float64)).astype(_F32) * height
        out = np.stack([dcx - dw / _F32(2), dcy - dh / _F32(2), dcx + dw / _F32(2), dcy + dh / _F32(2)], -1)
    if attrs["clip_before_nms"]:
        out = np.clip(out, _F32(0), _F32(1))
    return out.astype(_F32)


def jaccard(a: np.ndarray, b: np.ndarray) -> np.float32:
    """JaccardOverlap of two [4] boxes (xmin, ymin, xmax, ymax), as the reference computes it."""
    if b[0] > a[2] or b[2] < a[0] or b[1] > a[3] or b[3] < a[1]:
        return _F32(0)
    iw = min(a[2], b[2]) - max(a[0], b[0])
    ih = min(a[3], b[3]) - max(a[1], b[1])
    if not (iw > 0 and ih > 0):
        return _F32(0)
    inter = _F32(iw * ih)
    return _F32(inter / (_box_size(a) + _box_size(b) - inter))


def _box_size(b) -> np.float32:
    if b[2] < b[0] or b[3] < b[1]:
        return _F32(0)
    return _F32((b[2] - b[0]) * (b[3] - b[1]))


def greedy_nms(boxes: np.ndarray, order: list[int], threshold: float) -> list[int]:
    """The indices of ``order`` (candidates, best first) that no kept box overlaps by more than ``threshold``."""
    kept: list[int] = []
    for i in order:
        if all(not jaccard(boxes[i], boxes[k]) > _F32(threshold) for k in kept):
            kept.append(i)
    return kept


def _by_score(scores: np.ndarray, candidates) -> list[int]:
    """Candidates by descending score, ties by ascending index (the reference's stable sort)."""
    return sorted(candidates, key=lambda i: (-scores[i], i))


def detection_output_reference(box_logits, class_preds, proposals, aux_class_preds=None, aux_box_preds=None,
                               **attrs) -> np.ndarray:
    out_type = np.asarray(box_logits).dtype
    loc_all, conf_all = np.asarray(box_logits, _F32), np.asarray(class_preds, _F32)
    proposals = np.asarray(proposals, _F32)
    n, num_priors, num_classes, num_loc = sizes(attrs, loc_all, conf_all, proposals)
    prior_size, offset = (4, 0) if attrs["normalized"] else (5, 1)
    loc = loc_all.reshape(n, num_priors, num_loc, 4).transpose(0, 2, 1, 3)  # [N, L, P, 4]
    conf = conf_all.reshape(n, num_priors, num_classes).transpose(0, 2, 1)  # [N, C, P]
    priors = proposals[:, 0, : num_priors * prior_size].reshape(-1, num_priors, prior_size)[..., offset:offset + 4]
    variances = None
    if not attrs["variance_encoded_in_target"]:
        variances = proposals[:, 1, : num_priors * 4].reshape(-1, num_priors, 4)
    background = attrs["background_label_id"]
    if aux_class_preds is not None:
        # Objectness: a prior whose second aux score is below objectness_score keeps only the background.
        objectness = np.asarray(aux_class_preds, _F32).reshape(n, num_priors, 2)[:, :, 1]
        weak = (objectness < _F32(attrs["objectness_score"]))[:, None, :]
        one_hot = (np.arange(num_classes) == background).astype(_F32)[None, :, None]
        conf = np.where(weak, one_hot, conf)
        arm = np.asarray(aux_box_preds, _F32).reshape(n, num_priors, num_loc, 4).transpose(0, 2, 1, 3)
        priors_b = np.broadcast_to(priors[:, None], (n if priors.shape[0] == n else 1, num_loc, num_priors, 4))
        var_b = None if variances is None else variances[:, None]
        refined = decode(attrs, priors_b, var_b, arm)  # (divided by the input size again below, as the reference)
        boxes = decode(attrs, refined, var_b, loc)
    else:
        var_b = None if variances is None else variances[:, None]
        boxes = decode(attrs, priors[:, None], var_b, loc)
    boxes = np.broadcast_to(boxes, (n, num_loc, num_priors, 4))
    rows = output_rows(attrs, n, num_priors, num_classes)
    result = np.zeros((rows, 7), _F32)
    count = 0
    for i in range(n):
        selected = _select_image(attrs, boxes[i], conf[i], num_classes)
        for label, score, prior in selected:
            box = boxes[i, 0 if attrs["share_location"] else label, prior]
            if attrs["clip_after_nms"]:
                box = np.clip(box, _F32(0), _F32(1))
            shown = label - 1 if attrs["decrease_label_id"] else label
            result[count] = [i, shown, score, *box]
            count += 1
    if count < rows:
        result[count, 0] = -1
    return result.reshape(1, 1, rows, 7).astype(out_type)


def _select_image(attrs: dict, boxes: np.ndarray, conf: np.ndarray, num_classes: int) -> list[tuple[int, float, int]]:
    """(label, score, prior) of one image's detections, by label then as NMS kept them."""
    background, top_k = attrs["background_label_id"], attrs["top_k"]
    threshold, nms = _F32(attrs["confidence_threshold"]), attrs["nms_threshold"]
    share = attrs["share_location"]
    kept: dict[int, list[int]] = {}
    if not attrs["decrease_label_id"]:  # Caffe: NMS per class over its top_k scores above the threshold
        for c in range(num_classes):
            if c == background:
                continue
            scores = conf[c]
            order = _by_score(scores, np.flatnonzero(scores > threshold))
            if top_k >= 0:
                order = order[:top_k]
            kept[c] = greedy_nms(boxes[0 if share else c], order, nms)
    else:  # MXNet: each prior's best class (from class 1, not the background) competes in one list
        best, label = np.full(conf.shape[1], _F32(-1)), np.zeros(conf.shape[1], np.int64)
        for c in range(1, num_classes):
            if background > -1 and c == background:
                continue
            better = conf[c] > best
            best, label = np.where(better, conf[c], best), np.where(better, c, label)
        candidates = np.flatnonzero((label > 0) & (best >= threshold))
        order = _by_score(best, candidates)
        if top_k >= 0:  # (the reference's size_t comparison: any negative top_k keeps all)
            order = order[:top_k]
        for p in order:
            c = int(label[p])
            if all(not jaccard(boxes[0 if share else c][p], boxes[0 if share else c][k]) > _F32(nms)
                   for k in kept.get(c, [])):
                kept.setdefault(c, []).append(p)
    total = sum(len(v) for v in kept.values())
    keep_top_k = attrs["keep_top_k"][0]
    if keep_top_k > -1 and total > keep_top_k:
        pairs = [(float(conf[c][p]), c, p) for c, ps in kept.items() for p in ps]
        pairs.sort(key=lambda t: (-t[0], t[2], t[1]))  # score, then prior; the label decides what std::sort leaves
        pairs = pairs[:keep_top_k]
        kept = {}
        for _, c, p in pairs:
            kept.setdefault(c, []).append(p)
    return [(c, conf[c][p], p) for c in sorted(kept) for p in kept[c]]
