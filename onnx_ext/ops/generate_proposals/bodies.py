"""GenerateProposals-9's body in onnxscript (``GenerateProposals``) and the decode it shares with
ExperimentalDetectronGenerateProposalsSingleImage-6 (``_gp_refine``), every attribute read at run time.

Per image: the anchors moved by the deltas (``box_decode._box_decode``, the log sizes capped at log(1000 / 16)),
clipped to the image; a stable TopK for pre_nms_count (equal scores: the proposals' order); the boxes under
min_size removed; the exact greedy NMS (``greedy_nms._greedy_nms``: the
references' overlap test and +1 widths unless normalized) up to post_nms_count; the kept rows of every image
concatenated.
"""

from __future__ import annotations

from onnxscript import FLOAT, INT64, script

from ...domain import op, ov_ext
from ..box_decode import HELPERS as BOX_DECODE
from ..box_decode import _box_decode
from ..greedy_nms import HELPERS as GREEDY_NMS
from ..greedy_nms import _greedy_nms
from ..proposal.bodies import NMS_BLOCK
from .reference import MAX_DELTA_LOG_WH


@script(ov_ext, default_opset=op)
def _gp_refine(anchors, deltas, scores, img_h, img_w, min_h, min_w, offset):
    # anchors [H*W*A, 4], deltas [4A, H, W], scores [A, H, W] (f32) -> boxes [P, 4], scores [P], big [P]: cell by
    # cell, anchor by anchor.
    zero = op.Constant(value_float=0.0)
    shape = op.Shape(scores)
    a = op.Slice(shape, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    hw = op.Slice(shape, op.Constant(value_ints=[1]), op.Constant(value_ints=[3]))
    d = op.Reshape(op.Transpose(op.Reshape(deltas, op.Concat(a, op.Constant(value_ints=[4]), hw, axis=0),
                                           allowzero=1), perm=[2, 3, 0, 1]), op.Constant(value_ints=[-1, 4]))
    s = op.Reshape(op.Transpose(scores, perm=[1, 2, 0]), op.Constant(value_ints=[-1]))
    x0 = op.Gather(anchors, op.Constant(value_int=0), axis=1)
    y0 = op.Gather(anchors, op.Constant(value_int=1), axis=1)
    x1 = op.Gather(anchors, op.Constant(value_int=2), axis=1)
    y1 = op.Gather(anchors, op.Constant(value_int=3), axis=1)
    limit = op.Constant(value_float=float(MAX_DELTA_LOG_WH))
    nx0, ny0, nx1, ny1 = _box_decode(x0, y0, x1, y1, op.Gather(d, op.Constant(value_int=0), axis=1),
                                     op.Gather(d, op.Constant(value_int=1), axis=1),
                                     op.Min(op.Gather(d, op.Constant(value_int=2), axis=1), limit),
                                     op.Min(op.Gather(d, op.Constant(value_int=3), axis=1), limit), offset)
    lim_w = op.Sub(img_w, offset)
    lim_h = op.Sub(img_h, offset)
    bx0 = op.Max(zero, op.Min(nx0, lim_w))
    by0 = op.Max(zero, op.Min(ny0, lim_h))
    bx1 = op.Max(zero, op.Min(op.Sub(nx1, offset), lim_w))
    by1 = op.Max(zero, op.Min(op.Sub(ny1, offset), lim_h))
    big = op.And(op.LessOrEqual(min_w, op.Add(op.Sub(bx1, bx0), offset)),
                 op.LessOrEqual(min_h, op.Add(op.Sub(by1, by0), offset)))
    column = op.Constant(value_ints=[1])
    boxes = op.Concat(op.Unsqueeze(bx0, column), op.Unsqueeze(by0, column), op.Unsqueeze(bx1, column),
                      op.Unsqueeze(by1, column), axis=1)
    return boxes, s, big


@script(ov_ext, default_opset=op)
def GenerateProposals(im_info, anchors, deltas, scores, min_size: float, nms_threshold: float, pre_nms_count: int,
                      post_nms_count: int, normalized: int = 1, nms_eta: float = 1.0, roi_num_type: int = 7):
    # GenerateProposals-9(im_info [N, 3 or 4], anchors [H, W, A, 4], deltas [N, 4A, H, W], scores [N, A, H, W]) ->
    # rois [R, 4], scores [R], roi_num [N] (roi_num_type, an ONNX element type).
    info = op.Cast(im_info, to=FLOAT.dtype)
    a = op.Reshape(op.Cast(anchors, to=FLOAT.dtype), op.Constant(value_ints=[-1, 4]))
    d = op.Cast(deltas, to=FLOAT.dtype)
    s = op.Cast(scores, to=FLOAT.dtype)
    shape = op.Shape(s)
    cells = op.ReduceProd(op.Slice(shape, op.Constant(value_ints=[1]), op.Constant(value_ints=[4])), keepdims=1)
    ok = op.Equal(op.Size(a), op.Mul(cells, op.Constant(value_ints=[4])))
    width = op.Slice(op.Shape(info), op.Constant(value_ints=[1]), op.Constant(value_ints=[2]))
    ok = op.And(ok, op.And(op.GreaterOrEqual(width, op.Constant(value_ints=[3])),
                           op.LessOrEqual(width, op.Constant(value_ints=[4]))))
    anchors_fit_the_map_and_im_info_has_3_or_4_values = op.Gather(op.Constant(value_ints=[0]),
                                                                  op.Cast(op.Not(ok), to=INT64.dtype))
    a = op.Add(a, op.Cast(op.ReduceSum(anchors_fit_the_map_and_im_info_has_3_or_4_values, keepdims=1),
                          to=FLOAT.dtype))
    offset = op.Sub(op.Constant(value_float=1.0), op.Cast(op.Constant(value_int=normalized), to=FLOAT.dtype))
    min_size_f = op.Constant(value_float=min_size)
    threshold = op.Constant(value_float=nms_threshold)
    pre = op.Reshape(op.Constant(value_int=pre_nms_count), op.Constant(value_ints=[1]))
    post = op.Constant(value_int=post_nms_count)
    n = op.Squeeze(op.Slice(shape, op.Constant(value_ints=[0]), op.Constant(value_ints=[1])))
    rois = op.Cast(op.ConstantOfShape(op.Constant(value_ints=[0, 4])), to=FLOAT.dtype)
    probs = op.Cast(op.ConstantOfShape(op.Constant(value_ints=[0])), to=FLOAT.dtype)
    counts = op.Cast(op.ConstantOfShape(op.Constant(value_ints=[0])), to=INT64.dtype)
    for i in range(n):
        image = op.Gather(info, i, axis=0)
        scale_h = op.Gather(image, op.Constant(value_int=2))
        scale_w = op.Gather(image, op.Sub(op.Size(image), op.Constant(value_int=1)))  # the third when three
        boxes, score, big = _gp_refine(a, op.Gather(d, i, axis=0), op.Gather(s, i, axis=0),
                                       op.Gather(image, op.Constant(value_int=0)),
                                       op.Gather(image, op.Constant(value_int=1)), op.Mul(min_size_f, scale_h),
                                       op.Mul(min_size_f, scale_w), offset)
        _, order = op.TopK(score, op.Min(op.Shape(score), pre), axis=0, largest=1, sorted=1)
        order = op.Compress(order, op.Gather(big, order))  # boxes under min_size are dead from the start
        kept = op.Gather(order, _greedy_nms(op.Gather(boxes, order, axis=0), threshold, offset, post,
                                            op.Constant(value_int=NMS_BLOCK)))
        rois = op.Concat(rois, op.Gather(boxes, kept, axis=0), axis=0)
        probs = op.Concat(probs, op.Gather(score, kept), axis=0)
        counts = op.Concat(counts, op.Shape(kept), axis=0)
    return op.CastLike(rois, scores), op.CastLike(probs, scores), op.Cast(counts, to=roi_num_type)


#: Functions of the domain the bodies call.
HELPERS = (*BOX_DECODE, _gp_refine, *GREEDY_NMS)
