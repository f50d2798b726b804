"""Proposal-1/-4 in numpy: OpenVINO's reference (src/core/reference/include/openvino/reference/proposal.hpp) in
float32, with two corners decided by the spec (docs/ops/proposal.md): equal scores keep the order of the
proposals (the reference's std::partial_sort leaves them in an order of its heap), and a 4-value image_shape's
fourth value is the width's scale (the reference reads the third for both)."""

from __future__ import annotations

import numpy as np

_F32 = np.float32
TENSORFLOW = "tensorflow"


def round_half_away(x: np.ndarray) -> np.ndarray:
    """std::roundf on non-negative float32 values."""
    t = np.floor(x)
    return (t + (x - t >= _F32(0.5))).astype(_F32)


def anchors(attrs: dict) -> np.ndarray:
    """The [A, 4] anchors (x0, y0, x1, y1) of generate_anchors, ratio-major, in float32."""
    tf = attrs["framework"] == TENSORFLOW
    offset = _F32(0 if tf else 1)
    base = attrs["base_size"]
    area, half, center = _F32(base * base), _F32(base) * _F32(0.5), _F32(0.5) * (_F32(base) - offset)
    out = []
    for ratio in np.asarray(attrs["ratio"], _F32):
        w = np.sqrt(area / ratio).astype(_F32)
        h = w * ratio
        if not tf:
            w = round_half_away(w)
            h = round_half_away(w * ratio)
        for scale in np.asarray(attrs["scale"], _F32):
            sw, sh = _F32(0.5) * (w * scale - offset), _F32(0.5) * (h * scale - offset)
            box = np.array([center - sw, center - sh, center + sw, center + sh], _F32)
            out.append(box - half if tf else box)
    return np.array(out, _F32).reshape(-1, 4)


def decode(attrs: dict, class_probs, bbox_deltas, image_shape) -> tuple[np.ndarray, np.ndarray, tuple]:
    """Each image's proposals [N, H*W*A, 4] and scores [N, H*W*A] (zero below the minimum size), in the
    reference's order (cell by cell, anchor by anchor); and (img_h, img_w)."""
    tf = attrs["framework"] == TENSORFLOW
    offset = _F32(0 if tf else 1)
    n, _, height, width = class_probs.shape
    a = anchors(attrs)
    k = a.shape[0]
    img = np.asarray(image_shape, _F32).reshape(-1)
    img_h, img_w = (img[1], img[0]) if tf else (img[0], img[1])
    scale_h = img[2]
    scale_w = img[3] if img.size == 4 else scale_h
    min_h, min_w = _F32(attrs["min_size"]) * scale_h, _F32(attrs["min_size"]) * scale_w
    hh, ww = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    stride = attrs["feat_stride"]
    x = ((hh if tf else ww) * stride).astype(_F32)[..., None]  # [H, W, 1]
    y = ((ww if tf else hh) * stride).astype(_F32)[..., None]
    deltas = np.asarray(bbox_deltas, _F32).reshape(n, k, 4, height, width).transpose(0, 3, 4, 1, 2)  # [N,H,W,A,4]
    dx = deltas[..., 0] / _F32(attrs["box_coordinate_scale"])
    dy = deltas[..., 1] / _F32(attrs["box_coordinate_scale"])
    dw = deltas[..., 2] / _F32(attrs["box_size_scale"])
    dh = deltas[..., 3] / _F32(attrs["box_size_scale"])
    scores = np.asarray(class_probs, _F32)[:, k:].transpose(0, 2, 3, 1)  # foreground [N, H, W, A]
    x0, y0, x1, y1 = x + a[:, 0], y + a[:, 1], x + a[:, 2], y + a[:, 3]
    if tf:  # initial clip of the anchors to the image
        x0, x1 = np.maximum(_F32(0), np.minimum(x0, img_w)), np.maximum(_F32(0), np.minimum(x1, img_w))
        y0, y1 = np.maximum(_F32(0), np.minimum(y0, img_h)), np.maximum(_F32(0), np.minimum(y1, img_h))
    bw, bh = x1 - x0 + offset, y1 - y0 + offset
    cx, cy = x0 + _F32(0.5) * bw, y0 + _F32(0.5) * bh
    pcx, pcy = dx * bw + cx, dy * bh + cy
    with np.errstate(over="ignore"):  # exp rounded once to f32, as std::exp of a float
        pw = np.exp(dw.astype(np.float64)).astype(_F32) * bw
        ph = np.exp(dh.astype(np.float64)).astype(_F32) * bh
    x0, y0 = pcx - _F32(0.5) * pw, pcy - _F32(0.5) * ph
    x1, y1 = pcx + _F32(0.5) * pw, pcy + _F32(0.5) * ph
    if attrs["clip_before_nms"]:
        x0, x1 = np.maximum(_F32(0), np.minimum(x0, img_w - offset)), np.maximum(_F32(0), np.minimum(x1, img_w - offset))
        y0, y1 = np.maximum(_F32(0), np.minimum(y0, img_h - offset)), np.maximum(_F32(0), np.minimum(y1, img_h - offset))
    big = ((min_w <= x1 - x0 + offset) & (min_h <= y1 - y0 + offset)).astype(_F32)
    boxes = np.stack([x0, y0, x1, y1], -1).reshape(n, -1, 4).astype(_F32)
    return boxes, (big * scores).reshape(n, -1).astype(_F32), (img_h, img_w)


def iou_suppresses(kept: np.ndarray, others: np.ndarray, threshold: float, offset: float) -> np.ndarray:
    """[len(others)] bool: the reference's Caffe-style test, box ``kept`` against each of ``others``: they
    overlap (touching counts) and intersection / union (widths + offset) is above the threshold."""
    o = _F32(offset)
    x0i, y0i, x1i, y1i = kept
    x0j, y0j, x1j, y1j = others.T
    overlap = (x0i <= x1j) & (y0i <= y1j) & (x0j <= x1i) & (y0j <= y1i)
    w = np.maximum(_F32(0), np.minimum(x1i, x1j) - np.maximum(x0i, x0j) + o)
    h = np.maximum(_F32(0), np.minimum(y1i, y1j) - np.maximum(y0i, y0j) + o)
    area = w * h
    a_area = (x1i - x0i + o) * (y1i - y0i + o)
    b_area = (x1j - x0j + o) * (y1j - y0j + o)
    with np.errstate(divide="ignore", invalid="ignore"):
        res = area / (a_area + b_area - area)
    return overlap & (_F32(threshold) < res)


def greedy_nms(boxes: np.ndarray, threshold: float, offset: float, max_out: int) -> list[int]:
    """The reference's NMS over boxes [K, 4] in order: the first ``max_out`` boxes no kept one suppresses."""
    dead = np.zeros(len(boxes), bool)
    kept: list[int] = []
    for i in range(len(boxes)):
        if dead[i]:
            continue
        kept.append(i)
        if len(kept) == max_out:
            break
        dead[i + 1:] |= iou_suppresses(boxes[i], boxes[i + 1:], threshold, offset)
    return kept


def proposal_reference(class_probs, bbox_deltas, image_shape, **attrs):
    out_type = np.asarray(class_probs).dtype
    boxes, scores, (img_h, img_w) = decode(attrs, class_probs, bbox_deltas, image_shape)
    n, post = boxes.shape[0], attrs["post_nms_topn"]
    offset = 0 if attrs["framework"] == TENSORFLOW else 1
    pre = min(boxes.shape[1], attrs["pre_nms_topn"])
    rois, probs = np.zeros((n, post, 5), _F32), np.zeros((n, post), _F32)
    for i in range(n):
        order = np.argsort(-scores[i], kind="stable")[:pre]  # equal scores: proposal order
        kept = order[greedy_nms(boxes[i][order], attrs["nms_thresh"], offset, post)]
        b = boxes[i][kept]
        if attrs["clip_after_nms"]:
            b = np.maximum(_F32(0), np.minimum(b, np.array([img_w, img_h, img_w, img_h], _F32)))
        if attrs["normalize"]:
            b = b / np.array([img_w, img_h, img_w, img_h], _F32)
        rois[i, :len(kept)] = np.concatenate([np.full((len(kept), 1), i, _F32), b], 1)
        probs[i, :len(kept)] = scores[i][kept]
        if len(kept) < post:
            rois[i, len(kept), 0] = -1
    rois = rois.reshape(-1, 5).astype(out_type)
    return rois if attrs["version"] == 1 else (rois, probs.reshape(-1).astype(out_type))
