"""MatrixNms-8's body in onnxscript (``MatrixNms``), every attribute read at run time.

Each (image, class) is one problem: its candidates, the scores above score_threshold of a class other than the
background, the nms_top_k best (stable TopK; equal scores keep the boxes' order), with their boxes; the IoU matrix
of every problem's candidates, K x K, the reference's f32 formula; each candidate's max IoU with the better ones;
the decay (gaussian: exp in f64 rounded to f32, as std::exp of a float; linear: in f64, as the reference) and its
minimum over the better ones; the decayed scores above post_threshold. Problems go in chunks whose K x K matrices
hold at most 2^16 values. Then the sorts MulticlassNms's bodies make (``_mc_finish``).
"""

from __future__ import annotations

from onnxscript import DOUBLE, FLOAT, INT64, script

from ...domain import op, ov_ext
from ..multiclass_nms.bodies import _mc_attributes, _mc_finish, _mc_same, _mc_stable_sort, _nms_boxes_checked

_NEG_INF = float("-inf")
#: Values of the IoU matrices computed at once (a few hundred KB: the dozens of element-wise passes over them
#: stay in the cache).
CHUNK_VALUES = 2**16


@script(ov_ext, default_opset=op)
def _mx_area(x1, y1, x2, y2, norm):
    # the reference's BBoxArea: 0 for an inverted box, else width * height (+1 each unless normalized)
    area = op.Mul(op.Add(op.Sub(x2, x1), norm), op.Add(op.Sub(y2, y1), norm))
    return op.Where(op.Or(op.Less(x2, x1), op.Less(y2, y1)), op.Constant(value_float=0.0), area)


@script(ov_ext, default_opset=op)
def _mx_iou(boxes, norm):
    # boxes [P, K, 4] -> [P, K, K]: the reference's intersectionOverUnion of candidate i and candidate j, in f32
    # coordinates [P, K, 1] (candidate i) and [P, 1, K] (candidate j): the pairs' innermost axis is K (a
    # trailing axis of 1 would send every element-wise op to onnxruntime's slow broadcast path)
    t = op.Transpose(boxes, perm=[2, 0, 1])  # [4, P, K]
    x1 = op.Gather(t, op.Constant(value_int=0), axis=0)
    y1 = op.Gather(t, op.Constant(value_int=1), axis=0)
    x2 = op.Gather(t, op.Constant(value_int=2), axis=0)
    y2 = op.Gather(t, op.Constant(value_int=3), axis=0)
    i_axis = op.Constant(value_ints=[2])
    j_axis = op.Constant(value_ints=[1])
    ax1, ay1, ax2, ay2 = op.Unsqueeze(x1, i_axis), op.Unsqueeze(y1, i_axis), op.Unsqueeze(x2, i_axis), op.Unsqueeze(y2, i_axis)
    bx1, by1, bx2, by2 = op.Unsqueeze(x1, j_axis), op.Unsqueeze(y1, j_axis), op.Unsqueeze(x2, j_axis), op.Unsqueeze(y2, j_axis)
    span_x = op.Sub(op.Min(ax2, bx2), op.Max(ax1, bx1))
    span_y = op.Sub(op.Min(ay2, by2), op.Max(ay1, by1))
    zero = op.Constant(value_float=0.0)
    union = op.Add(_mx_area(ax1, ay1, ax2, ay2, norm), _mx_area(bx1, by1, bx2, by2, norm))
    inverted = op.ReduceMax(op.Cast(op.Or(op.Less(bx2, bx1), op.Less(by2, by1)), to=INT64.dtype), keepdims=0)
    if op.Greater(inverted, op.Constant(value_int=0)):
        # a box with x2 < x1 or y2 < y1: the reference's own test of disjoint boxes, its raw widths
        disjoint = op.Or(op.Or(op.Greater(bx1, ax2), op.Less(bx2, ax1)), op.Or(op.Greater(by1, ay2), op.Less(by2, ay1)))
        inter = op.Mul(op.Add(span_x, norm), op.Add(span_y, norm))
        iou = op.Where(disjoint, zero, op.Div(inter, op.Sub(union, inter)))
    else:
        # boxes in order: disjoint is a negative span; its side counts 0, so the intersection is 0 (and a union of
        # 0, two empty boxes, gives 0 / the least float)
        w = op.Mul(op.Add(span_x, norm), op.Cast(op.GreaterOrEqual(span_x, zero), to=FLOAT.dtype))
        h = op.Mul(op.Add(span_y, norm), op.Cast(op.GreaterOrEqual(span_y, zero), to=FLOAT.dtype))
        inter = op.Mul(w, h)
        iou = op.Div(inter, op.Max(op.Sub(union, inter), op.Constant(value_float=1.401298464324817e-45)))
    return iou


@script(ov_ext, default_opset=op)
def _mx_decayed(boxes, scores, norm, gaussian, sigma):
    # boxes [P, K, 4], scores [P, K] (best first) -> each candidate's score times its minimum decay
    iou = _mx_iou(boxes, norm)
    k = op.Slice(op.Shape(scores), op.Constant(value_ints=[1]), op.Constant(value_ints=[2]))
    ranks = op.Range(op.Constant(value_int=0), op.ReduceSum(k, keepdims=0), op.Constant(value_int=1))
    better = op.Less(op.Unsqueeze(ranks, op.Constant(value_ints=[0])), op.Unsqueeze(ranks, op.Constant(value_ints=[1])))
    # additive masks (0 where j < i, an infinity elsewhere): Where with a broadcast condition is slow
    inf = op.Constant(value_float=float("inf"))
    above = op.Where(better, op.Constant(value_float=0.0), inf)  # [K, K]
    below = op.Neg(above)
    max_iou = op.Max(op.ReduceMax(op.Add(iou, below), op.Constant(value_ints=[2]), keepdims=0),
                     op.Constant(value_float=0.0))  # [P, K]: each candidate's max IoU with the better ones
    m = op.Unsqueeze(max_iou, op.Constant(value_ints=[1]))  # [P, 1, K]: candidate j's
    # The minimum decay over the better candidates j. Rounding to f32, products by sigma and exp are monotone, so
    # the extremes are taken first, on [P, K]: exp((m_j^2 - iou^2) * sigma) is least where m_j^2 - iou^2 is (the
    # greatest for a negative sigma); (1 - iou) / (1 - m_j + 1e-10) in f64, as the reference, rounded once.
    if gaussian:
        d = op.Sub(op.Mul(m, m), op.Mul(iou, iou))
        if op.Less(sigma, op.Constant(value_float=0.0)):
            extreme = op.ReduceMax(op.Add(d, below), op.Constant(value_ints=[2]), keepdims=0)
        else:
            extreme = op.ReduceMin(op.Add(d, above), op.Constant(value_ints=[2]), keepdims=0)
        least = op.Cast(op.Exp(op.Cast(op.Mul(extreme, sigma), to=DOUBLE.dtype)), to=FLOAT.dtype)
    else:
        one = op.Cast(op.Constant(value_float=1.0), to=DOUBLE.dtype)
        tiny = op.Cast(op.Constant(value_float=1e-10), to=DOUBLE.dtype)
        ratio = op.Div(op.Sub(one, op.Cast(iou, to=DOUBLE.dtype)),
                       op.Add(op.Sub(one, op.Cast(m, to=DOUBLE.dtype)), tiny))
        least = op.Cast(op.ReduceMin(op.Add(ratio, op.Cast(above, to=DOUBLE.dtype)), op.Constant(value_ints=[2]),
                                     keepdims=0), to=FLOAT.dtype)
    return op.Mul(op.Min(least, op.Constant(value_float=1.0)), scores)


@script(ov_ext, default_opset=op)
def _mx_select(boxes, scores, attrs_f, attrs_i, gaussian, output_type: int):
    # boxes [N, M, 4], scores [N, C, M] -> the three outputs (selected_outputs f32). attrs_f: [score_threshold,
    # post_threshold, gaussian_sigma, normalized]; attrs_i: [nms_top_k, background_class, keep_top_k, sort type,
    # across batch].
    b = op.Cast(boxes, to=FLOAT.dtype)
    s = op.Cast(scores, to=FLOAT.dtype)
    shape = op.Shape(s)
    n = op.Slice(shape, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    c = op.Slice(shape, op.Constant(value_ints=[1]), op.Constant(value_ints=[2]))
    m = op.Slice(shape, op.Constant(value_ints=[2]), op.Constant(value_ints=[3]))
    b = _nms_boxes_checked(b, s, op.Constant(value_ints=[4]))
    score_threshold = op.Gather(attrs_f, op.Constant(value_int=0))
    post_threshold = op.Gather(attrs_f, op.Constant(value_int=1))
    sigma = op.Gather(attrs_f, op.Constant(value_int=2))
    norm = op.Sub(op.Constant(value_float=1.0), op.Gather(attrs_f, op.Constant(value_int=3)))
    top_k = op.Gather(attrs_i, op.Constant(value_ints=[0]))
    background = op.Gather(attrs_i, op.Constant(value_int=1))
    classes = op.Range(op.Constant(value_int=0), op.ReduceSum(c, keepdims=0), op.Constant(value_int=1))
    eligible = op.Unsqueeze(op.Not(op.Equal(classes, background)), op.Constant(value_ints=[0, 2]))
    masked = op.Where(op.And(op.Greater(s, score_threshold), eligible), s, op.Constant(value_float=_NEG_INF))
    k = op.Where(op.GreaterOrEqual(top_k, op.Constant(value_ints=[0])), op.Min(top_k, m), m)
    best, order = op.TopK(masked, k, axis=2, largest=1, sorted=1)  # [N, C, K]
    p = op.Mul(n, c)
    flat_best = op.Reshape(best, op.Concat(p, k, axis=0), allowzero=1)
    flat_order = op.Reshape(order, op.Concat(p, k, axis=0), allowzero=1)
    image_of = op.Div(op.Range(op.Constant(value_int=0), op.ReduceSum(p, keepdims=0), op.Constant(value_int=1)),
                      op.ReduceSum(c, keepdims=0))
    rows = op.Add(op.Mul(op.Unsqueeze(image_of, op.Constant(value_ints=[1])), op.ReduceSum(m, keepdims=0)),
                  flat_order)
    candidates = op.Gather(op.Reshape(b, op.Constant(value_ints=[-1, 4])), rows)  # [P, K, 4]
    kk = op.ReduceSum(k, keepdims=0)
    chunk = op.Max(op.Div(op.Constant(value_int=CHUNK_VALUES), op.Max(op.Mul(kk, kk), op.Constant(value_int=1))),
                   op.Constant(value_int=1))
    count = op.ReduceSum(p, keepdims=0)
    chunks = op.Div(op.Sub(op.Add(count, chunk), op.Constant(value_int=1)), chunk)
    decayed = op.Cast(op.ConstantOfShape(op.Concat(op.Constant(value_ints=[0]), k, axis=0)), to=FLOAT.dtype)
    for i in range(chunks):
        start = op.Reshape(op.Mul(i, chunk), op.Constant(value_ints=[1]))
        end = op.Add(start, op.Reshape(chunk, op.Constant(value_ints=[1])))
        part = _mx_decayed(op.Slice(candidates, start, end, op.Constant(value_ints=[0])),
                           op.Slice(flat_best, start, end, op.Constant(value_ints=[0])), norm, gaussian, sigma)
        decayed = op.Concat(decayed, part, axis=0)
    valid = op.Greater(flat_best, op.Constant(value_float=_NEG_INF))
    chosen = op.And(valid, op.Greater(decayed, post_threshold))
    where = op.Transpose(op.NonZero(chosen), perm=[1, 0])  # (problem, rank)
    problem = op.Gather(where, op.Constant(value_int=0), axis=1)
    cc = op.ReduceSum(c, keepdims=0)
    image = op.Div(problem, cc)
    label = op.Mod(problem, cc)
    index = op.GatherND(flat_order, where)
    flat = op.Add(op.Mul(image, op.ReduceSum(m, keepdims=0)), index)
    score = op.GatherND(decayed, where)
    box = op.Gather(op.Reshape(b, op.Constant(value_ints=[-1, 4])), flat)
    # (per image the order is by score whatever sort_result_type says: the reference sorts by class across the
    # batch only)
    sort_type = op.Gather(attrs_i, op.Constant(value_ints=[3]))
    across = op.Gather(attrs_i, op.Constant(value_ints=[4]))
    sort_type = op.Where(op.Equal(across, op.Constant(value_ints=[0])), op.Constant(value_ints=[1]), sort_type)
    finish = op.Concat(op.Gather(attrs_i, op.Constant(value_ints=[2])), sort_type, across, axis=0)
    outputs, indices, num = _mc_finish(image, label, index, flat, score, box, op.ReduceSum(n, keepdims=0), finish,
                                       output_type=output_type)
    return outputs, indices, num


@script(ov_ext, default_opset=op)
def MatrixNms(boxes, scores, sort_result_type: str = "none", sort_result_across_batch: int = 0, output_type: int = 7,
              score_threshold: float = 0.0, nms_top_k: int = -1, keep_top_k: int = -1, background_class: int = -1,
              normalized: int = 1, decay_function: str = "linear", gaussian_sigma: float = 2.0,
              post_threshold: float = 0.0):
    # MatrixNms-8(boxes [N, M, 4], scores [N, C, M]) -> selected_outputs [R, 6] (class, score, x1, y1, x2, y2),
    # selected_indices [R, 1], selected_num [N] (of output_type, an ONNX element type).
    one = op.Constant(value_ints=[1])
    attrs_f = op.Concat(op.Reshape(op.Constant(value_float=score_threshold), one),
                        op.Reshape(op.Constant(value_float=post_threshold), one),
                        op.Reshape(op.Constant(value_float=gaussian_sigma), one),
                        op.Reshape(op.Cast(op.Constant(value_int=normalized), to=FLOAT.dtype), one), axis=0)
    _, attrs_i = _mc_attributes(iou_threshold=0.0, score_threshold=score_threshold, nms_top_k=nms_top_k,
                                keep_top_k=keep_top_k, background_class=background_class, normalized=normalized,
                                nms_eta=1.0, sort_result_type=sort_result_type,
                                sort_result_across_batch=sort_result_across_batch)
    gaussian = op.Equal(op.Constant(value_string=decay_function), op.Constant(value_string="gaussian"))
    outputs, indices, num = _mx_select(boxes, scores, attrs_f, attrs_i, gaussian, output_type=output_type)
    return op.CastLike(outputs, boxes), indices, num


#: Functions of the domain the bodies call (MulticlassNms's too).
HELPERS = (_mx_area, _mx_iou, _mx_decayed, _mx_select, _mc_attributes, _mc_finish, _mc_stable_sort, _mc_same,
           _nms_boxes_checked)
