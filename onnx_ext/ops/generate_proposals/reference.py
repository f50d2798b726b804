"""GenerateProposals-9 and ExperimentalDetectronGenerateProposalsSingleImage-6 in numpy: OpenVINO's references
(src/core/reference/src/op/generate_proposal.cpp, experimental_detectron_proposal_single_image.cpp) in float32,
equal scores keeping the proposals' order (the references' std::partial_sort leaves them in an order of its heap;
the spec calls it undefined)."""

from __future__ import annotations

import math

import numpy as np

from ..proposal.reference import greedy_nms

_F32 = np.float32
#: The references' bound on log(w) deltas: float(log(1000 / 16)).
MAX_DELTA_LOG_WH = _F32(math.log(1000.0 / 16.0))


def refine(anchors, deltas, scores, img_h, img_w, min_h, min_w, offset):
    """Boxes [P, 4], scores [P] and the minimum-size test [P] of one image, cell by cell, anchor by anchor.
    anchors [H*W*A, 4], deltas [4A, H, W], scores [A, H, W]."""
    a = scores.shape[0]
    o = _F32(offset)
    anchors = np.asarray(anchors, _F32).reshape(-1, 4)
    d = np.asarray(deltas, _F32).reshape(a, 4, *deltas.shape[1:]).transpose(2, 3, 0, 1).reshape(-1, 4)
    s = np.asarray(scores, _F32).transpose(1, 2, 0).reshape(-1)
    x0, y0, x1, y1 = anchors.T
    ww, hh = x1 - x0 + o, y1 - y0 + o
    cx, cy = x0 + _F32(0.5) * ww, y0 + _F32(0.5) * hh
    pcx, pcy = d[:, 0] * ww + cx, d[:, 1] * hh + cy
    with np.errstate(over="ignore"):  # exp rounded once to f32, as std::exp of a float
        pw = np.exp(np.minimum(d[:, 2], MAX_DELTA_LOG_WH).astype(np.float64)).astype(_F32) * ww
        ph = np.exp(np.minimum(d[:, 3], MAX_DELTA_LOG_WH).astype(np.float64)).astype(_F32) * hh
    x0, y0 = pcx - _F32(0.5) * pw, pcy - _F32(0.5) * ph
    x1, y1 = pcx + _F32(0.5) * pw - o, pcy + _F32(0.5) * ph - o
    lim_w, lim_h = _F32(img_w) - o, _F32(img_h) - o
    x0, x1 = np.maximum(_F32(0), np.minimum(x0, lim_w)), np.maximum(_F32(0), np.minimum(x1, lim_w))
    y0, y1 = np.maximum(_F32(0), np.minimum(y0, lim_h)), np.maximum(_F32(0), np.minimum(y1, lim_h))
    big = (_F32(min_w) <= x1 - x0 + o) & (_F32(min_h) <= y1 - y0 + o)
    return np.stack([x0, y0, x1, y1], 1).astype(_F32), s, big


def best_first(scores: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` best indices, equal scores in index order."""
    return np.argsort(-scores, kind="stable")[:count]


def generate_proposals_reference(im_info, anchors, deltas, scores, **attrs):
    out_type = np.asarray(scores).dtype
    index_type = np.int32 if attrs["roi_num_type"] == "i32" else np.int64
    info = np.asarray(im_info, _F32)
    offset = 0 if attrs["normalized"] else 1
    rois, probs, counts = [], [], []
    for n in range(info.shape[0]):
        scale_h = info[n, 2]
        scale_w = info[n, 3] if info.shape[1] == 4 else scale_h
        boxes, s, big = refine(anchors, deltas[n], scores[n], info[n, 0], info[n, 1],
                               _F32(attrs["min_size"]) * scale_h, _F32(attrs["min_size"]) * scale_w, offset)
        order = best_first(s, min(len(s), attrs["pre_nms_count"]))
        order = order[big[order]]  # boxes under min_size are dead from the start
        kept = order[greedy_nms(boxes[order], attrs["nms_threshold"], offset, attrs["post_nms_count"])] \
            if attrs["post_nms_count"] > 0 else order[:0]
        rois.append(boxes[kept])
        probs.append(s[kept])
        counts.append(len(kept))
    return (np.concatenate(rois).reshape(-1, 4).astype(out_type), np.concatenate(probs).astype(out_type),
            np.array(counts, index_type))


def ed_generate_proposals_reference(im_info, anchors, deltas, scores, **attrs):
    out_type = np.asarray(scores).dtype
    info = np.asarray(im_info, _F32).reshape(-1)
    boxes, s, big = refine(anchors, deltas, scores, info[0], info[1], attrs["min_size"], attrs["min_size"], 1)
    s = (big.astype(_F32) * s).astype(_F32)  # boxes under min_size score 0 and stay candidates
    post = attrs["post_nms_count"]
    order = best_first(s, min(len(s), attrs["pre_nms_count"]))
    kept = order[greedy_nms(boxes[order], attrs["nms_threshold"], 0, post)] if post > 0 else order[:0]
    rois, probs = np.zeros((post, 4), _F32), np.zeros(post, _F32)
    rois[:len(kept)], probs[:len(kept)] = boxes[kept], s[kept]
    return rois.astype(out_type), probs.astype(out_type)
