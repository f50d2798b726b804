"""Proposal-1/-4's bodies in onnxscript, every attribute read at run time: ``Proposal`` (the public body: boxes
and scores, Proposal-4) and ``proposal_boxes`` (boxes only, Proposal-1), both on ``_pr_proposals``.

The anchors, the decode and the minimum-size filter are element-wise in f32 with the reference's operations in
its order; a stable TopK (equal scores: the proposals' order) takes each image's pre_nms_topn best; the exact
greedy NMS (``greedy_nms._greedy_nms``, the reference's +1 Caffe IoU and overlap test) keeps up to post_nms_topn;
rows padded with zeros after a -1 end marker."""

from __future__ import annotations

from typing import Sequence

from onnxscript import BOOL, FLOAT, INT64, script

from ...domain import op, ov_ext
from ..box_decode import HELPERS as BOX_DECODE
from ..box_decode import _box_decode
from ..greedy_nms import HELPERS as GREEDY_NMS
from ..greedy_nms import _greedy_nms

#: Candidates per step of the greedy NMS (its cost: about the IoU of as many blocks as it takes to keep
#: post_nms_topn boxes, each against the kept ones and itself).
NMS_BLOCK = 256


@script(ov_ext, default_opset=op)
def _pr_round(x):
    # std::roundf of non-negative values (half away from zero; ONNX Round halves to even)
    t = op.Floor(x)
    return op.Add(t, op.Cast(op.GreaterOrEqual(op.Sub(x, t), op.Constant(value_float=0.5)), to=FLOAT.dtype))


@script(ov_ext, default_opset=op)
def _pr_anchors(base_size, ratios, scales, tensorflow):
    # base_size int64 scalar, ratios [R], scales [S] f32, tensorflow bool -> anchors [R * S, 4] (x0, y0, x1, y1),
    # ratio-major, as generate_anchors computes them in f32.
    offset = op.Where(tensorflow, op.Constant(value_float=0.0), op.Constant(value_float=1.0))
    half = op.Constant(value_float=0.5)
    base = op.Cast(base_size, to=FLOAT.dtype)
    area = op.Cast(op.Mul(base_size, base_size), to=FLOAT.dtype)
    center = op.Mul(half, op.Sub(base, offset))
    w = op.Sqrt(op.Div(area, ratios))
    if tensorflow:
        ratio_w = op.Identity(w)
        ratio_h = op.Mul(w, ratios)
    else:
        ratio_w = _pr_round(w)
        ratio_h = _pr_round(op.Mul(ratio_w, ratios))
    column = op.Constant(value_ints=[-1, 1])
    sw = op.Mul(half, op.Sub(op.Mul(op.Reshape(ratio_w, column), scales), offset))  # [R, S]
    sh = op.Mul(half, op.Sub(op.Mul(op.Reshape(ratio_h, column), scales), offset))
    corners = op.Concat(op.Unsqueeze(op.Sub(center, sw), op.Constant(value_ints=[2])),
                        op.Unsqueeze(op.Sub(center, sh), op.Constant(value_ints=[2])),
                        op.Unsqueeze(op.Add(center, sw), op.Constant(value_ints=[2])),
                        op.Unsqueeze(op.Add(center, sh), op.Constant(value_ints=[2])), axis=2)
    shift = op.Where(tensorflow, op.Mul(base, half), op.Constant(value_float=0.0))
    return op.Reshape(op.Sub(corners, shift), op.Constant(value_ints=[-1, 4]))  # (x - 0 is x)


@script(ov_ext, default_opset=op)
def _pr_clipped(x0, y0, x1, y1, limit_w, limit_h, clip):
    # The corners within [0, limit] when ``clip`` (a bool), else as they are.
    zero = op.Constant(value_float=0.0)
    if clip:
        cx0 = op.Max(zero, op.Min(x0, limit_w))
        cy0 = op.Max(zero, op.Min(y0, limit_h))
        cx1 = op.Max(zero, op.Min(x1, limit_w))
        cy1 = op.Max(zero, op.Min(y1, limit_h))
    else:
        cx0 = op.Identity(x0)
        cy0 = op.Identity(y0)
        cx1 = op.Identity(x1)
        cy1 = op.Identity(y1)
    return cx0, cy0, cx1, cy1


@script(ov_ext, default_opset=op)
def _pr_decode(class_probs, bbox_deltas, image, anchors, feat_stride, min_size, coordinate_scale, size_scale,
               tensorflow, clip_before):
    # -> proposals [N, H * W * A, 4] and scores [N, H * W * A] (0 below the minimum size), cell by cell, anchor by
    # anchor; the image's height, width [1] each.
    zero1 = op.Constant(value_ints=[0])
    one1 = op.Constant(value_ints=[1])
    fzero = op.Constant(value_float=0.0)
    offset = op.Where(tensorflow, fzero, op.Constant(value_float=1.0))
    shape = op.Shape(class_probs)
    n = op.Slice(shape, zero1, one1)
    h = op.Slice(shape, op.Constant(value_ints=[2]), op.Constant(value_ints=[3]))
    w = op.Slice(shape, op.Constant(value_ints=[3]), op.Constant(value_ints=[4]))
    a = op.Slice(op.Shape(anchors), zero1, one1)
    # image: [height, width, scale (, width's scale)]; TensorFlow's reads width, height
    first = op.Gather(image, zero1)
    second = op.Gather(image, one1)
    img_h = op.Where(tensorflow, second, first)
    img_w = op.Where(tensorflow, first, second)
    scale_h = op.Gather(image, op.Constant(value_ints=[2]))
    scale_w = op.Gather(image, op.Sub(op.Size(image), one1))  # the last: the third when there are three
    min_h = op.Mul(min_size, scale_h)
    min_w = op.Mul(min_size, scale_w)

    rows = op.Cast(op.Range(op.Constant(value_int=0), op.ReduceSum(h, keepdims=0), op.Constant(value_int=1)),
                   to=FLOAT.dtype)
    cols = op.Cast(op.Range(op.Constant(value_int=0), op.ReduceSum(w, keepdims=0), op.Constant(value_int=1)),
                   to=FLOAT.dtype)
    grid = op.Concat(h, w, one1, axis=0)
    rows = op.Expand(op.Unsqueeze(op.Mul(rows, feat_stride), op.Constant(value_ints=[1, 2])), grid)  # [H, W, 1]
    cols = op.Expand(op.Unsqueeze(op.Mul(cols, feat_stride), op.Constant(value_ints=[0, 2])), grid)
    x = op.Where(tensorflow, rows, cols)  # (TensorFlow's swaps x and y)
    y = op.Where(tensorflow, cols, rows)
    x0 = op.Add(x, op.Gather(anchors, op.Constant(value_int=0), axis=1))  # [H, W, A]
    y0 = op.Add(y, op.Gather(anchors, op.Constant(value_int=1), axis=1))
    x1 = op.Add(x, op.Gather(anchors, op.Constant(value_int=2), axis=1))
    y1 = op.Add(y, op.Gather(anchors, op.Constant(value_int=3), axis=1))
    ax0, ay0, ax1, ay1 = _pr_clipped(x0, y0, x1, y1, img_w, img_h, tensorflow)  # TensorFlow's: the anchors first
    deltas = op.Transpose(op.Reshape(op.Cast(bbox_deltas, to=FLOAT.dtype),
                                     op.Concat(n, a, op.Constant(value_ints=[4]), h, w, axis=0)),
                          perm=[0, 3, 4, 1, 2])  # [N, H, W, A, 4]
    dx = op.Div(op.Gather(deltas, op.Constant(value_int=0), axis=4), coordinate_scale)
    dy = op.Div(op.Gather(deltas, op.Constant(value_int=1), axis=4), coordinate_scale)
    dw = op.Div(op.Gather(deltas, op.Constant(value_int=2), axis=4), size_scale)
    dh = op.Div(op.Gather(deltas, op.Constant(value_int=3), axis=4), size_scale)
    bx0, by0, bx1, by1 = _box_decode(ax0, ay0, ax1, ay1, dx, dy, dw, dh, offset)
    cx0, cy0, cx1, cy1 = _pr_clipped(bx0, by0, bx1, by1, op.Sub(img_w, offset), op.Sub(img_h, offset), clip_before)
    big = op.And(op.LessOrEqual(min_w, op.Add(op.Sub(cx1, cx0), offset)),
                 op.LessOrEqual(min_h, op.Add(op.Sub(cy1, cy0), offset)))
    fg = op.Slice(op.Cast(class_probs, to=FLOAT.dtype), a, op.Mul(a, op.Constant(value_ints=[2])), one1)
    scores = op.Mul(op.Cast(big, to=FLOAT.dtype), op.Transpose(fg, perm=[0, 2, 3, 1]))
    last = op.Constant(value_ints=[4])
    boxes = op.Concat(op.Unsqueeze(cx0, last), op.Unsqueeze(cy0, last), op.Unsqueeze(cx1, last),
                      op.Unsqueeze(cy1, last), axis=4)
    flat = op.Concat(n, op.Mul(op.Mul(h, w), a), axis=0)  # (not -1: onnxruntime cannot resolve it beside N = 0)
    proposals = op.Reshape(boxes, op.Concat(flat, op.Constant(value_ints=[4]), axis=0))
    return proposals, op.Reshape(scores, flat), img_h, img_w


@script(ov_ext, default_opset=op)
def _pr_select(boxes, scores, img_h, img_w, pre, post, nms_thresh, tensorflow, clip_after, normalize):
    # Each image's pre best proposals, the greedy NMS, the rows: rois [N * post, 5], probs [N * post].
    offset = op.Where(tensorflow, op.Constant(value_float=0.0), op.Constant(value_float=1.0))
    count = op.Slice(op.Shape(scores), op.Constant(value_ints=[1]), op.Constant(value_ints=[2]))
    k = op.Min(count, op.Reshape(pre, op.Constant(value_ints=[1])))
    best, order = op.TopK(scores, k, axis=1, largest=1, sorted=1)
    ranked = op.GatherElements(boxes, op.Expand(op.Unsqueeze(order, op.Constant(value_ints=[2])),
                                                op.Concat(op.Shape(order), op.Constant(value_ints=[4]), axis=0)),
                               axis=1)
    n = op.Squeeze(op.Slice(op.Shape(scores), op.Constant(value_ints=[0]), op.Constant(value_ints=[1])))
    post1 = op.Reshape(post, op.Constant(value_ints=[1]))
    limits = op.Concat(img_w, img_h, img_w, img_h, axis=0)
    end_row = op.Constant(value_floats=[-1.0, 0.0, 0.0, 0.0, 0.0])
    rois = op.Cast(op.ConstantOfShape(op.Constant(value_ints=[0, 5])), to=FLOAT.dtype)
    probs = op.Cast(op.ConstantOfShape(op.Constant(value_ints=[0])), to=FLOAT.dtype)
    for i in range(n):
        mine = op.Gather(ranked, i, axis=0)
        kept = _greedy_nms(mine, nms_thresh, offset, post, op.Constant(value_int=NMS_BLOCK))
        box = op.Gather(mine, kept, axis=0)
        if clip_after:
            clipped = op.Max(op.Constant(value_float=0.0), op.Min(box, limits))
        else:
            clipped = op.Identity(box)
        if normalize:
            out = op.Div(clipped, limits)
        else:
            out = op.Identity(clipped)
        m = op.Shape(kept)
        index = op.Expand(op.Cast(op.Reshape(i, op.Constant(value_ints=[1, 1])), to=FLOAT.dtype),
                          op.Concat(m, op.Constant(value_ints=[1]), axis=0))
        padding = op.Concat(op.Reshape(end_row, op.Constant(value_ints=[1, 5])),
                            op.Expand(op.Constant(value_float=0.0), op.Concat(post1, op.Constant(value_ints=[5]),
                                                                              axis=0)), axis=0)
        rows = op.Slice(op.Concat(op.Concat(index, out, axis=1), padding, axis=0), op.Constant(value_ints=[0]), post1,
                        op.Constant(value_ints=[0]))
        rois = op.Concat(rois, rows, axis=0)
        p = op.Concat(op.Gather(op.Gather(best, i, axis=0), kept), op.Expand(op.Constant(value_float=0.0), post1),
                      axis=0)
        probs = op.Concat(probs, op.Slice(p, op.Constant(value_ints=[0]), post1), axis=0)
    return rois, probs


@script(ov_ext, default_opset=op)
def _pr_checked_image(class_probs, bbox_deltas, image_shape, anchors):
    # image_shape as f32 [3 or 4], after the run-time checks: class_probs [N, 2A, H, W] and bbox_deltas
    # [N, 4A, H, W] for the A anchors of the attributes, image_shape of 3 or 4 values.
    a = op.Slice(op.Shape(anchors), op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    probs_shape = op.Shape(class_probs)
    n = op.Slice(probs_shape, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    hw = op.Slice(probs_shape, op.Constant(value_ints=[2]), op.Constant(value_ints=[4]))
    ok = op.And(op.Equal(op.Size(probs_shape), op.Constant(value_int=4)),
                op.Equal(op.Size(op.Shape(bbox_deltas)), op.Constant(value_int=4)))
    if ok:
        want = op.Concat(n, op.Mul(a, op.Constant(value_ints=[2])), hw, n, op.Mul(a, op.Constant(value_ints=[4])), hw,
                         axis=0)
        same = op.Equal(op.Concat(probs_shape, op.Shape(bbox_deltas), axis=0), want)
        shapes_ok = op.Cast(op.ReduceMin(op.Cast(same, to=INT64.dtype), keepdims=0), to=BOOL.dtype)
    else:
        shapes_ok = op.Identity(ok)
    image = op.Reshape(op.Cast(image_shape, to=FLOAT.dtype), op.Constant(value_ints=[-1]))
    size = op.Size(image)
    ok = op.And(shapes_ok, op.And(op.GreaterOrEqual(size, op.Constant(value_int=3)),
                                  op.LessOrEqual(size, op.Constant(value_int=4))))
    inputs_fit_the_anchors_and_image_shape_has_3_or_4_values = op.Gather(
        op.Constant(value_ints=[0]), op.Cast(op.Not(op.Reshape(ok, op.Constant(value_ints=[1]))), to=INT64.dtype))
    return op.Add(image, op.Cast(inputs_fit_the_anchors_and_image_shape_has_3_or_4_values, to=FLOAT.dtype))


@script(ov_ext, default_opset=op)
def _pr_proposals(class_probs, bbox_deltas, image_shape, base_size: int, pre_nms_topn: int, post_nms_topn: int,
                  nms_thresh: float, feat_stride: int, min_size: int, ratio: Sequence[float], scale: Sequence[float],
                  clip_before_nms: int, clip_after_nms: int, normalize: int, box_size_scale: float,
                  box_coordinate_scale: float, framework: str):
    # The two outputs in f32.
    tensorflow = op.Equal(op.Constant(value_string=framework), op.Constant(value_string="tensorflow"))
    anchors = _pr_anchors(op.Constant(value_int=base_size), op.Constant(value_floats=ratio),
                          op.Constant(value_floats=scale), tensorflow)
    image = _pr_checked_image(class_probs, bbox_deltas, image_shape, anchors)
    boxes, scores, img_h, img_w = _pr_decode(
        class_probs, bbox_deltas, image, anchors, op.Cast(op.Constant(value_int=feat_stride), to=FLOAT.dtype),
        op.Cast(op.Constant(value_int=min_size), to=FLOAT.dtype), op.Constant(value_float=box_coordinate_scale),
        op.Constant(value_float=box_size_scale), tensorflow,
        op.Cast(op.Constant(value_int=clip_before_nms), to=BOOL.dtype))
    rois, probs = _pr_select(boxes, scores, img_h, img_w, op.Constant(value_int=pre_nms_topn),
                             op.Constant(value_int=post_nms_topn), op.Constant(value_float=nms_thresh), tensorflow,
                             op.Cast(op.Constant(value_int=clip_after_nms), to=BOOL.dtype),
                             op.Cast(op.Constant(value_int=normalize), to=BOOL.dtype))
    return rois, probs


@script(ov_ext, default_opset=op)
def Proposal(class_probs, bbox_deltas, image_shape, base_size: int, pre_nms_topn: int, post_nms_topn: int,
             nms_thresh: float, feat_stride: int, min_size: int, ratio: Sequence[float], scale: Sequence[float],
             clip_before_nms: int = 1, clip_after_nms: int = 0, normalize: int = 0, box_size_scale: float = 1.0,
             box_coordinate_scale: float = 1.0, framework: str = "", version: int = 4):
    # Proposal-4(class_probs [N, 2A, H, W], bbox_deltas [N, 4A, H, W], image_shape [3 or 4]) -> rois [N * post, 5],
    # probs [N * post]. The general body (Proposal-1 nodes, of one output, get proposal_boxes).
    rois, probs = _pr_proposals(class_probs, bbox_deltas, image_shape, base_size=base_size,
                                pre_nms_topn=pre_nms_topn, post_nms_topn=post_nms_topn, nms_thresh=nms_thresh,
                                feat_stride=feat_stride, min_size=min_size, ratio=ratio, scale=scale,
                                clip_before_nms=clip_before_nms, clip_after_nms=clip_after_nms, normalize=normalize,
                                box_size_scale=box_size_scale, box_coordinate_scale=box_coordinate_scale,
                                framework=framework)
    return op.CastLike(rois, class_probs), op.CastLike(probs, class_probs)


@script(ov_ext, default_opset=op)
def proposal_boxes(class_probs, bbox_deltas, image_shape, base_size: int, pre_nms_topn: int, post_nms_topn: int,
                   nms_thresh: float, feat_stride: int, min_size: int, ratio: Sequence[float], scale: Sequence[float],
                   clip_before_nms: int = 1, clip_after_nms: int = 0, normalize: int = 0, box_size_scale: float = 1.0,
                   box_coordinate_scale: float = 1.0, framework: str = "", version: int = 1):
    # Proposal-1: the rois only.
    rois, _ = _pr_proposals(class_probs, bbox_deltas, image_shape, base_size=base_size, pre_nms_topn=pre_nms_topn,
                            post_nms_topn=post_nms_topn, nms_thresh=nms_thresh, feat_stride=feat_stride,
                            min_size=min_size, ratio=ratio, scale=scale, clip_before_nms=clip_before_nms,
                            clip_after_nms=clip_after_nms, normalize=normalize, box_size_scale=box_size_scale,
                            box_coordinate_scale=box_coordinate_scale, framework=framework)
    return op.CastLike(rois, class_probs)


#: Functions of the domain the bodies call.
HELPERS = (_pr_round, _pr_anchors, _pr_clipped, *BOX_DECODE, _pr_decode, _pr_select, _pr_checked_image, _pr_proposals,
           *GREEDY_NMS)
