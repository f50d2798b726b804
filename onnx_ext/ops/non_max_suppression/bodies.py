"""NonMaxSuppression-5/-9's body in onnxscript (``NonMaxSuppression``) for soft-NMS (``soft_nms_sigma`` > 0; hard
NMS too, when the sigma read at run time is 0): every input read at run time, boxes and scores in f32 as the
reference reads them.

Soft-NMS is sequential, and its scores are products whose rounding depends on the order of their factors, so the
body runs the reference's own algorithm (reference.py), every (image, class) problem at once: each step of a Loop
takes each problem's top candidate (highest score, then lowest index) from its queue, decays it by the boxes
selected since it was last taken, newest first (the IoUs against them in one vectorised step; the factors that
are not exactly 1 multiplied one by one, usually a few), then selects it (score unchanged), puts it back (still
above score_threshold) or drops it. Steps: as many as the busiest problem takes candidates from its queue.
"""

from __future__ import annotations

from onnxscript import DOUBLE, FLOAT, INT64, script

from ...domain import op, ov_ext
from ..multiclass_nms.bodies import _mc_same, _nms_boxes_checked

_NEG_INF = float("-inf")


@script(ov_ext, default_opset=op)
def _snms_corners(b, center: int):
    # b [N, M, 4] -> (y_min, x_min, y_max, x_max): corners in either order sorted, or (x_c, y_c, w, h) decoded
    axis = op.Constant(value_ints=[2])
    c0 = op.Slice(b, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]), axis)
    c1 = op.Slice(b, op.Constant(value_ints=[1]), op.Constant(value_ints=[2]), axis)
    c2 = op.Slice(b, op.Constant(value_ints=[2]), op.Constant(value_ints=[3]), axis)
    c3 = op.Slice(b, op.Constant(value_ints=[3]), op.Constant(value_ints=[4]), axis)
    half = op.Constant(value_float=0.5)
    hw = op.Mul(c2, half)
    hh = op.Mul(c3, half)
    decoded = op.Concat(op.Sub(c1, hh), op.Sub(c0, hw), op.Add(c1, hh), op.Add(c0, hw), axis=2)
    ordered = op.Concat(op.Min(c0, c2), op.Min(c1, c3), op.Max(c0, c2), op.Max(c1, c3), axis=2)
    return op.Where(op.Equal(op.Constant(value_int=center), op.Constant(value_int=1)), decoded, ordered)


@script(ov_ext, default_opset=op)
def _snms_iou(cand, area_c, sel, area_s):
    # cand [P, 1, 4], area_c [P, 1], sel [P, L, 4], area_s [P, L] -> [P, L]: the reference's intersectionOverUnion
    # of the candidate (I) with each selected box (J), in f32 in its order of operations
    i0 = op.Constant(value_int=0)
    i1 = op.Constant(value_int=1)
    i2 = op.Constant(value_int=2)
    i3 = op.Constant(value_int=3)
    zero = op.Constant(value_float=0.0)
    h = op.Max(op.Sub(op.Min(op.Gather(cand, i2, axis=2), op.Gather(sel, i2, axis=2)),
                      op.Max(op.Gather(cand, i0, axis=2), op.Gather(sel, i0, axis=2))), zero)
    w = op.Max(op.Sub(op.Min(op.Gather(cand, i3, axis=2), op.Gather(sel, i3, axis=2)),
                      op.Max(op.Gather(cand, i1, axis=2), op.Gather(sel, i1, axis=2))), zero)
    inter = op.Mul(h, w)
    v = op.Div(inter, op.Sub(op.Add(area_c, area_s), inter))
    empty = op.Or(op.LessOrEqual(area_c, zero), op.LessOrEqual(area_s, zero))
    return op.Where(empty, zero, v)


@script(ov_ext, default_opset=op)
def _snms_tail(score, ws):
    # score [P, 1] times the columns 4, 5, ... of ws [P, K] one after the other (K > 4: rare)
    k = op.Shape(ws, start=1, end=2)
    t = op.Constant(value_ints=[4])
    axis = op.Constant(value_ints=[1])
    more = op.Less(op.Squeeze(t), op.Squeeze(k))
    while more:
        score = op.Mul(score, op.Slice(ws, t, op.Add(t, op.Constant(value_ints=[1])), axis))
        t = op.Add(t, op.Constant(value_ints=[1]))
        more = op.Less(op.Squeeze(t), op.Squeeze(k))
    return score


@script(ov_ext, default_opset=op)
def _snms_decay(score, ws):
    # score [P, 1] times the factors ws [P, K] one after the other, in the reference's order (padded with ones,
    # which change nothing): the first four unrolled (most candidates have fewer), the rest in a Loop
    axis = op.Constant(value_ints=[1])
    padded = op.Concat(ws, op.Expand(op.Constant(value_floats=[1.0]), op.Concat(op.Shape(ws, start=0, end=1),
                                                                                 op.Constant(value_ints=[4]), axis=0)),
                       axis=1)
    score = op.Mul(score, op.Slice(padded, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]), axis))
    score = op.Mul(score, op.Slice(padded, op.Constant(value_ints=[1]), op.Constant(value_ints=[2]), axis))
    score = op.Mul(score, op.Slice(padded, op.Constant(value_ints=[2]), op.Constant(value_ints=[3]), axis))
    score = op.Mul(score, op.Slice(padded, op.Constant(value_ints=[3]), op.Constant(value_ints=[4]), axis))
    if op.Greater(op.Squeeze(op.Shape(ws, start=1, end=2)), op.Constant(value_int=4)):
        out = _snms_tail(score, ws)
    else:
        out = op.Identity(score)
    return out


@script(ov_ext, default_opset=op)
def _snms_select(bb, area, q, limit, iou_t, score_t, sigma, v5):
    # bb [P, M, 4] corners, area [P, M], q [P, M] scores, limit int64 [] (>= 0), thresholds f32 [], v5 bool []
    # -> sel [P, L] indices and their decayed scores sel_score [P, L] (L = max(1, min(limit, M))), cnt [P]
    zero = op.Constant(value_float=0.0)
    one = op.Constant(value_float=1.0)
    i0 = op.Constant(value_int=0)
    i1 = op.Constant(value_int=1)
    p = op.Shape(q, start=0, end=1)
    m = op.Shape(q, start=1, end=2)
    cap = op.Max(op.Min(op.Reshape(limit, op.Constant(value_ints=[1])), m), op.Constant(value_ints=[1]))
    soft = op.Greater(sigma, zero)
    scale = op.Where(soft, op.Div(op.Constant(value_float=-0.5), sigma), zero)
    hard_mode = op.Not(soft)
    alive = op.Cast(op.Greater(q, score_t), to=INT64.dtype)
    begin = op.Expand(op.Constant(value_ints=[0]), op.Shape(q))
    shape_l = op.Concat(p, cap, axis=0)
    sel = op.Expand(op.Constant(value_ints=[0]), shape_l)
    sel_score = op.Expand(op.Constant(value_floats=[0.0]), shape_l)
    cnt = op.Expand(op.Constant(value_ints=[0]), op.Concat(p, op.Constant(value_ints=[1]), axis=0))  # [P, 1]
    j = op.Unsqueeze(op.Range(i0, op.Squeeze(cap), i1), op.Constant(value_ints=[0]))  # [1, L]
    last = op.Sub(cap, op.Constant(value_ints=[1]))
    active = op.And(op.Greater(op.ReduceSum(alive, op.Constant(value_ints=[1]), keepdims=1), i0),
                    op.Less(cnt, limit))
    go = op.Greater(op.ReduceSum(op.Cast(active, to=INT64.dtype), keepdims=0), i0)
    while go:
        c = op.ArgMax(op.Where(op.Cast(alive, to=9), q, op.Constant(value_float=_NEG_INF)), axis=1, keepdims=1)
        qc = op.GatherElements(q, c, axis=1)
        bc = op.GatherElements(begin, c, axis=1)
        three = op.Constant(value_ints=[2])
        cand = op.GatherElements(bb, op.Expand(op.Unsqueeze(c, three), op.Concat(p, op.Constant(value_ints=[1, 4]),
                                                                                   axis=0)), axis=1)
        sel_boxes = op.GatherElements(bb, op.Expand(op.Unsqueeze(sel, three), op.Concat(
            shape_l, op.Constant(value_ints=[4]), axis=0)), axis=1)
        v = _snms_iou(cand, op.GatherElements(area, c, axis=1), sel_boxes, op.GatherElements(area, sel, axis=1))
        seg = op.And(op.GreaterOrEqual(j, bc), op.Less(j, cnt))  # the boxes selected since c was last taken
        w = op.Cast(op.Exp(op.Cast(op.Mul(op.Mul(scale, v), v), to=DOUBLE.dtype)), to=FLOAT.dtype)
        below = op.LessOrEqual(v, iou_t)
        keep = op.Or(below, op.And(op.Not(v5), soft))  # (onnxruntime's Where has no bool kernel)
        w = op.Where(keep, w, zero)
        hard_j = op.Or(op.And(v5, op.GreaterOrEqual(v, iou_t)), op.And(op.Not(v5), op.And(op.Greater(v, iou_t),
                                                                                         hard_mode)))
        hard = op.Greater(op.ReduceSum(op.Cast(op.And(seg, hard_j), to=INT64.dtype), op.Constant(value_ints=[1]),
                                       keepdims=1), i0)
        # newest first; factors of exactly 1 change nothing and are skipped
        factor = op.And(seg, op.Not(op.Equal(w, one)))
        key = op.Where(factor, j, op.Constant(value_int=-1))
        k = op.ReduceMax(op.ReduceSum(op.Cast(factor, to=INT64.dtype), op.Constant(value_ints=[1]), keepdims=0),
                         keepdims=1)
        _, pos = op.TopK(key, k, axis=1, largest=1, sorted=1)
        decayed = _snms_decay(qc, op.GatherElements(op.Where(factor, w, one), pos, axis=1))
        ok = op.And(active, op.Not(hard))
        picked = op.And(ok, op.Equal(decayed, qc))
        back = op.And(op.And(ok, op.Not(picked)), op.Greater(decayed, score_t))
        alive = op.ScatterElements(alive, c, op.Where(active, op.Cast(back, to=INT64.dtype),
                                                      op.GatherElements(alive, c, axis=1)), axis=1)
        q = op.ScatterElements(q, c, op.Where(active, decayed, qc), axis=1)
        begin = op.ScatterElements(begin, c, op.Where(active, cnt, bc), axis=1)
        slot = op.Min(cnt, last)
        sel = op.ScatterElements(sel, slot, op.Where(picked, c, op.GatherElements(sel, slot, axis=1)), axis=1)
        sel_score = op.ScatterElements(sel_score, slot, op.Where(picked, decayed, op.GatherElements(
            sel_score, slot, axis=1)), axis=1)
        cnt = op.Add(cnt, op.Cast(picked, to=INT64.dtype))
        active = op.And(op.Greater(op.ReduceSum(alive, op.Constant(value_ints=[1]), keepdims=1), i0),
                        op.Less(cnt, limit))
        go = op.Greater(op.ReduceSum(op.Cast(active, to=INT64.dtype), keepdims=0), i0)
    return sel, sel_score, op.Less(j, cnt)


@script(ov_ext, default_opset=op)
def NonMaxSuppression(boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold, soft_nms_sigma,
                      version: int = 9, center_point_box: int = 0, sort_result_descending: int = 1,
                      output_type: int = 7):
    # NonMaxSuppression-5/-9(boxes [N, M, 4], scores [N, C, M], max_output_boxes_per_class, iou_threshold,
    # score_threshold, soft_nms_sigma) -> selected_indices [R, 3] (of output_type, an ONNX element type),
    # selected_scores [R, 3] f32 (batch, class, decayed score), valid_outputs [1] (of output_type)
    s = op.Cast(scores, to=FLOAT.dtype)
    b = _snms_corners(_nms_boxes_checked(op.Cast(boxes, to=FLOAT.dtype), s, op.Constant(value_ints=[4])),
                      center_point_box)
    n = op.Shape(s, start=0, end=1)
    c = op.Shape(s, start=1, end=2)
    m = op.Shape(s, start=2, end=3)
    p = op.Mul(n, c)
    bb = op.Reshape(op.Expand(op.Unsqueeze(b, op.Constant(value_ints=[1])), op.Concat(n, c, m, op.Constant(
        value_ints=[4]), axis=0)), op.Concat(p, m, op.Constant(value_ints=[4]), axis=0), allowzero=1)
    i0 = op.Constant(value_int=0)
    i1 = op.Constant(value_int=1)
    i2 = op.Constant(value_int=2)
    i3 = op.Constant(value_int=3)
    area = op.Mul(op.Sub(op.Gather(bb, i2, axis=2), op.Gather(bb, i0, axis=2)),
                  op.Sub(op.Gather(bb, i3, axis=2), op.Gather(bb, i1, axis=2)))
    q = op.Reshape(s, op.Concat(p, m, axis=0), allowzero=1)
    limit = op.ReduceSum(op.Reshape(op.Cast(max_output_boxes_per_class, to=INT64.dtype), op.Constant(
        value_ints=[-1])), keepdims=0)
    limit = op.Where(op.Less(limit, i0), op.Squeeze(m), limit)  # (size_t)(negative): no limit
    scalar = op.Constant(value_ints=[-1])
    iou_t = op.ReduceSum(op.Reshape(op.Cast(iou_threshold, to=FLOAT.dtype), scalar), keepdims=0)
    score_t = op.ReduceSum(op.Reshape(op.Cast(score_threshold, to=FLOAT.dtype), scalar), keepdims=0)
    sigma = op.ReduceSum(op.Reshape(op.Cast(soft_nms_sigma, to=FLOAT.dtype), scalar), keepdims=0)
    v5 = op.Equal(op.Constant(value_int=version), op.Constant(value_int=5))
    sel, sel_score, kept = _snms_select(bb, area, q, limit, iou_t, score_t, sigma, v5)
    at = op.Transpose(op.NonZero(kept), perm=[1, 0])  # [R, 2] (problem, slot) in problem then selection order
    problem = op.Gather(at, i0, axis=1)
    index = op.GatherND(sel, at)
    picked = op.GatherND(sel_score, at)
    cc = op.Squeeze(c)
    one = op.Constant(value_ints=[1])
    ids = op.Concat(op.Unsqueeze(op.Div(problem, cc), one), op.Unsqueeze(op.Mod(problem, cc), one),
                    op.Unsqueeze(index, one), axis=1)
    if op.Equal(op.Constant(value_int=sort_result_descending), op.Constant(value_int=1)):
        # by score, then image, class, box index (as the spec and OpenVINO's CPU plugin): box order within each
        # problem first, then a stable TopK by score
        count = op.Shape(picked)
        _, by_box = op.TopK(op.Add(op.Mul(problem, op.Squeeze(m)), index), count, axis=0, largest=0, sorted=1)
        _, by_score = op.TopK(op.Gather(picked, by_box, axis=0), count, axis=0, largest=1, sorted=1)
        order = op.Gather(by_box, by_score, axis=0)
        rows = op.Gather(ids, order, axis=0)
        values = op.Gather(picked, order, axis=0)
    else:
        rows = op.Identity(ids)
        values = op.Identity(picked)
    triples = op.Concat(op.Cast(op.Slice(rows, op.Constant(value_ints=[0]), op.Constant(value_ints=[2]),
                                         op.Constant(value_ints=[1])), to=FLOAT.dtype),
                        op.Unsqueeze(values, op.Constant(value_ints=[1])), axis=1)
    valid = op.Shape(rows, start=0, end=1)
    return op.Cast(rows, to=output_type), triples, op.Cast(valid, to=output_type)


#: Functions of the domain the body calls.
HELPERS = (_mc_same, _nms_boxes_checked, _snms_corners, _snms_iou, _snms_tail, _snms_decay, _snms_select)
