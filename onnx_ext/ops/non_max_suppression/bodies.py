"""NonMaxSuppression-5/-9's body in onnxscript (``NonMaxSuppression``) for soft-NMS (``soft_nms_sigma`` > 0; hard
NMS too, when the sigma read at run time is 0): every input read at run time, boxes and scores in f32 as the
reference reads them.

Soft-NMS is sequential, and its scores are products whose rounding depends on the order of their factors, so the
body runs the reference's own algorithm (reference.py, a lazy priority queue), every (image, class) problem at
once, a block of candidates per step of a Loop: each problem's 8 best queued candidates in the queue's order
(highest score, then lowest index) are decayed by the boxes selected since each was last taken from the queue,
newest first (the IoUs in one vectorised step; the factors that are not exactly 1 multiplied one after the other,
12 unrolled, more in a Loop); the first that comes out unchanged is selected unless one put back before it now
scores above it (then that one is), and with it the candidates right after it that come out unchanged too and
whose IoU with it and with each other gives factors of exactly 1 (IoU 0: exp(0) = 1, so the products do not
change). Steps: about one per selected box (fewer where the best candidates are disjoint), more where a box's
selection takes more than 8 candidates from the queue.
"""

from __future__ import annotations

from onnxscript import DOUBLE, FLOAT, INT64, script

from ...domain import op, ov_ext
from ..multiclass_nms.bodies import _mc_same, _nms_boxes_checked

_NEG_INF = float("-inf")


@script(ov_ext, default_opset=op)
def _nms_outputs(rows, values, output_type: int):
    # rows [R, 3] i64 (image, class, box) in output order, values [R] f32 -> NonMaxSuppression-5's outputs
    # (NMSRotated's too): selected_indices [R, 3] and valid_outputs [1] of output_type, selected_scores [R, 3] f32
    # (image, class, score)
    triples = op.Concat(op.Cast(op.Slice(rows, op.Constant(value_ints=[0]), op.Constant(value_ints=[2]),
                                         op.Constant(value_ints=[1])), to=FLOAT.dtype),
                        op.Unsqueeze(values, op.Constant(value_ints=[1])), axis=1)
    valid = op.Shape(rows, start=0, end=1)
    return op.Cast(rows, to=output_type), triples, op.Cast(valid, to=output_type)


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
def _snms_tail(score, ws):
    # score [..., 1] times the factors 12, 13, ... of ws [..., K] one after the other (K > 12: rare)
    k = op.Shape(ws, start=-1)
    t = op.Constant(value_ints=[12])
    axis = op.Constant(value_ints=[-1])
    more = op.Less(op.Squeeze(t), op.Squeeze(k))
    while more:
        score = op.Mul(score, op.Slice(ws, t, op.Add(t, op.Constant(value_ints=[1])), axis))
        t = op.Add(t, op.Constant(value_ints=[1]))
        more = op.Less(op.Squeeze(t), op.Squeeze(k))
    return score


@script(ov_ext, default_opset=op)
def _snms_decay(score, ws):
    # score [...] times the factors ws [..., K] (K >= 12: padded with ones, which change nothing) one after the
    # other, in the reference's order: the first 12 unrolled (a Loop step costs more than a few Muls), the rest in
    # a Loop
    axis = op.Constant(value_ints=[-1])
    w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11 = op.Split(
        op.Slice(ws, op.Constant(value_ints=[0]), op.Constant(value_ints=[12]), axis), axis=-1, num_outputs=12)
    x = op.Mul(op.Unsqueeze(score, axis), w0)
    x = op.Mul(x, w1)
    x = op.Mul(x, w2)
    x = op.Mul(x, w3)
    x = op.Mul(x, w4)
    x = op.Mul(x, w5)
    x = op.Mul(x, w6)
    x = op.Mul(x, w7)
    x = op.Mul(x, w8)
    x = op.Mul(x, w9)
    x = op.Mul(x, w10)
    x = op.Mul(x, w11)
    if op.Greater(op.Squeeze(op.Shape(ws, start=-1)), op.Constant(value_int=12)):
        out = _snms_tail(x, ws)
    else:
        out = op.Identity(x)
    return op.Squeeze(out, axis)


@script(ov_ext, default_opset=op)
def _snms_take(x, at):
    # x [P, M], at [P, T] -> [P, T]
    return op.GatherElements(x, at, axis=1)


@script(ov_ext, default_opset=op)
def _snms_select(y0, x0, y1, x1, area, q, limit, iou_t, score_t, sigma, v5):
    # the corners y0, x0, y1, x1 and area [P, M], q [P, M] scores, limit int64 [] (>= 0), thresholds f32 [], v5
    # bool [] -> sel [P, L] indices and their decayed scores sel_score [P, L] (L = max(1, min(limit, M))), and
    # [P, L] which of them are selected.
    # Each step takes a block of each problem's T (8) best queued candidates (and looks at the next one): the
    # reference pops them in that order, decaying each by the boxes selected since it was last popped; the
    # first that comes out unchanged is selected, unless a decayed one put back before it now beats it (then
    # that one is); the block's candidates popped before the selection are updated (decayed and put back, or
    # dropped); when f wins, so do the candidates right after it whose factors against it and each other are 1.
    zero = op.Constant(value_float=0.0)
    one = op.Constant(value_float=1.0)
    i0 = op.Constant(value_int=0)
    i1 = op.Constant(value_int=1)
    neg_inf = op.Constant(value_float=_NEG_INF)
    p = op.Shape(q, start=0, end=1)
    m = op.Shape(q, start=1, end=2)
    cap = op.Max(op.Min(op.Reshape(limit, op.Constant(value_ints=[1])), m), op.Constant(value_ints=[1]))
    # one column more, never queued: a block that reaches it has reached the end of the queue
    pad = op.Concat(p, op.Constant(value_ints=[1]), axis=0)
    # (y0, x0, y1, x1, area) per box, [P, M + 1, 5]: one gather per step
    axis2 = op.Constant(value_ints=[2])
    box5 = op.Concat(op.Concat(op.Unsqueeze(y0, axis2), op.Unsqueeze(x0, axis2), op.Unsqueeze(y1, axis2),
                               op.Unsqueeze(x1, axis2), op.Unsqueeze(area, axis2), axis=2),
                     op.Expand(zero, op.Concat(p, op.Constant(value_ints=[1, 5]), axis=0)), axis=1)
    width = op.Min(op.Constant(value_ints=[9]), op.Add(m, op.Constant(value_ints=[1])))  # T = 8 and the next
    soft = op.Greater(sigma, zero)
    scale = op.Where(soft, op.Div(op.Constant(value_float=-0.5), sigma), zero)
    # a factor is 0 above keep_t; a candidate is suppressed at IoU >= ge_t (NMS-5) or above gt_t (NMS-9, hard)
    inf = op.Constant(value_float=float("inf"))
    keep_t = op.Where(op.And(op.Not(v5), soft), inf, iou_t)
    ge_t = op.Where(v5, iou_t, inf)
    gt_t = op.Where(op.Or(v5, soft), inf, iou_t)
    queued = op.Concat(op.Where(op.Greater(q, score_t), q, neg_inf), op.Expand(neg_inf, pad), axis=1)
    begin = op.Expand(op.Constant(value_ints=[0]), op.Shape(queued))
    # sel and sel_score: L slots, then 12 more a step writes what it does not select to (one per column; 12:
    # the IoUs' columns are at least the 12 factors _snms_decay takes)
    spare = op.Constant(value_ints=[12])
    shape_l = op.Concat(p, op.Add(cap, spare), axis=0)
    sel = op.Expand(op.Constant(value_ints=[0]), shape_l)
    sel_score = op.Expand(op.Constant(value_floats=[0.0]), shape_l)
    cnt = op.Expand(op.Constant(value_ints=[0]), op.Concat(p, op.Constant(value_ints=[1]), axis=0))  # [P, 1]
    # the columns of the IoUs: the slots, then the block's own candidates (never selected since last popped)
    own = op.Add(cap, spare)
    j = op.Unsqueeze(op.Range(i0, op.Squeeze(op.Add(own, width)), i1),
                     op.Constant(value_ints=[0, 1]))  # [1, 1, L + 12 + T + 1]
    axis1 = op.Constant(value_ints=[1])
    twelve = op.Constant(value_ints=[12])
    order = op.Range(i0, op.Squeeze(width), i1)
    pos = op.Unsqueeze(order, op.Constant(value_ints=[0]))  # [1, T + 1]
    before = op.Less(op.Unsqueeze(order, op.Constant(value_ints=[1])), pos)  # [T + 1, T + 1]: j < i
    is_last = op.Equal(pos, op.Sub(width, op.Constant(value_ints=[1])))
    live = op.Greater(op.ReduceMax(queued, axis1, keepdims=1), neg_inf)
    active = op.And(live, op.Less(cnt, limit))
    go = op.Greater(op.ReduceSum(op.Cast(active, to=INT64.dtype), keepdims=0), i0)
    while go:
        key, at = op.TopK(queued, width, axis=1, largest=1, sorted=1)  # [P, T + 1]: best first, then lowest index
        real = op.Greater(key, neg_inf)
        bc = op.Unsqueeze(_snms_take(begin, at), axis2)  # [P, T + 1, 1]
        # the IoU of each candidate (I) with each selected box (J), as the reference's intersectionOverUnion
        # (and of each with the block's candidates: the ones after a selection whose factors against it and
        # those selected with it are exactly 1 are selected in the same step)
        cb = op.GatherND(box5, op.Unsqueeze(at, axis2), batch_dims=1)  # [P, T + 1, 5]
        cy0, cx0, cy1, cx1, area_c = op.Split(cb, axis=2, num_outputs=5)  # [P, T + 1, 1]
        sb = op.Transpose(op.Concat(op.GatherND(box5, op.Unsqueeze(sel, axis2), batch_dims=1), cb, axis=1),
                          perm=[0, 2, 1])
        sy0, sx0, sy1, sx1, area_s = op.Split(sb, axis=1, num_outputs=5)  # [P, 1, L + 12 + T + 1]
        h = op.Max(op.Sub(op.Min(cy1, sy1), op.Max(cy0, sy0)), zero)
        w = op.Max(op.Sub(op.Min(cx1, sx1), op.Max(cx0, sx0)), zero)
        inter = op.Mul(h, w)
        v = op.Where(op.Or(op.LessOrEqual(area_c, zero), op.LessOrEqual(area_s, zero)), zero,
                     op.Div(inter, op.Sub(op.Add(area_c, area_s), inter)))  # [P, T + 1, L]
        seg = op.And(op.GreaterOrEqual(j, bc), op.Less(j, op.Unsqueeze(cnt, axis2)))  # selected since last popped
        wt = op.Cast(op.Exp(op.Cast(op.Mul(op.Mul(scale, v), v), to=DOUBLE.dtype)), to=FLOAT.dtype)
        wt = op.Where(op.Greater(v, keep_t), zero, wt)
        hard_j = op.Or(op.GreaterOrEqual(v, ge_t), op.Greater(v, gt_t))
        hard = op.Greater(op.ReduceSum(op.Cast(op.And(seg, hard_j), to=INT64.dtype), axis2, keepdims=0), i0)
        # newest first; factors of exactly 1 change nothing and are skipped
        factor = op.And(seg, op.Less(wt, one))  # (wt <= 1)
        # at least 12 (the columns that are not factors are ones): _snms_decay needs no padding
        k = op.Max(op.Reshape(op.ReduceMax(op.ReduceSum(op.Cast(factor, to=INT64.dtype), axis2, keepdims=0),
                                           keepdims=1), op.Constant(value_ints=[1])), twelve)
        _, newest = op.TopK(op.Where(factor, j, op.Constant(value_int=-1)), k, axis=2, largest=1, sorted=1)
        u = _snms_decay(key, op.GatherElements(op.Where(factor, wt, one), newest, axis=2))  # [P, T + 1]
        ok = op.And(real, op.Not(hard))
        same = op.And(ok, op.Equal(u, key))
        back = op.And(op.And(ok, op.Not(same)), op.Greater(u, score_t))
        # candidate i is beaten when a candidate j before it was put back with a better key (score, then index)
        uj = op.Unsqueeze(u, axis2)  # [P, T + 1, 1] (j)
        ki = op.Unsqueeze(key, axis1)  # [P, 1, T + 1] (i)
        idx_j = op.Unsqueeze(at, axis2)
        idx_i = op.Unsqueeze(at, axis1)
        better = op.Or(op.Greater(uj, ki), op.And(op.Equal(uj, ki), op.Less(idx_j, idx_i)))
        beaten = op.Greater(op.ReduceSum(op.Cast(op.And(op.And(before, op.Unsqueeze(back, axis2)), better),
                                                 to=INT64.dtype), axis1, keepdims=0), i0)  # [P, T + 1]
        # the last column only looks ahead (or, when the queue ends, stands for its end: every put back beats it)
        lookahead = op.And(is_last, real)
        beaten = op.Or(beaten, op.And(op.Not(real), op.Greater(op.ReduceSum(op.Cast(back, to=INT64.dtype), axis1,
                                                                            keepdims=1), i0)))
        stop = op.Or(beaten, op.And(same, op.Not(lookahead)))
        any_stop = op.Greater(op.ReduceSum(op.Cast(stop, to=INT64.dtype), axis1, keepdims=1), i0)  # [P, 1]
        f = op.ArgMax(op.Cast(stop, to=INT64.dtype), axis=1, keepdims=1)  # the first stop
        f = op.Where(any_stop, f, op.Sub(width, op.Constant(value_ints=[1])))  # none: the T popped, no selection
        popped = op.And(op.Less(pos, f), real)  # [P, T + 1]
        beaten_f = op.And(any_stop, op.GatherElements(beaten, f, axis=1))
        # the winner: f itself, or the best put back before it
        cands = op.And(popped, back)
        best = op.ReduceMax(op.Where(cands, u, neg_inf), axis1, keepdims=1)
        top = op.And(cands, op.Equal(u, best))
        low = op.ReduceMin(op.Where(top, at, op.Constant(value_int=2**62)), axis1, keepdims=1)
        win_back = op.ArgMax(op.Cast(op.And(top, op.Equal(at, low)), to=INT64.dtype), axis=1, keepdims=1)
        win = op.Where(beaten_f, win_back, f)
        picked = op.And(active, any_stop)
        # more selected in the same step: the candidates right after f (when f wins) that come out unchanged,
        # are not beaten and have factors of exactly 1 (IoU 0, not suppressed) against f and the ones between
        later = op.Greater(pos, f)
        ones = op.Slice(op.And(op.Equal(wt, one), op.Not(hard_j)), own, op.Add(own, width), axis2)  # [P, i, j]
        pj = op.Unsqueeze(pos, axis1)  # [1, 1, T + 1]
        since_f = op.And(op.GreaterOrEqual(pj, op.Unsqueeze(f, axis2)), op.Less(pj, op.Unsqueeze(pos, axis2)))
        clash = op.Greater(op.ReduceSum(op.Cast(op.And(since_f, op.Not(ones)), to=INT64.dtype), axis2, keepdims=0),
                           i0)
        fits = op.And(op.And(same, op.Not(beaten)), op.Not(clash))
        end = op.ReduceMin(op.Where(op.And(later, op.Not(fits)), pos, width), axis1, keepdims=1)  # [P, 1]
        room = op.Sub(op.Sub(op.Reshape(limit, op.Constant(value_ints=[1])), cnt), op.Constant(value_ints=[1]))
        more = op.Where(op.And(picked, op.Not(beaten_f)), op.Min(op.Sub(op.Sub(end, f), op.Constant(
            value_ints=[1])), room), op.Constant(value_ints=[0]))  # [P, 1]
        extra = op.And(later, op.LessOrEqual(pos, op.Add(f, more)))
        # updates of the popped (and the selected): decayed scores, begin, still queued or not
        won = op.And(picked, op.Equal(pos, win))
        step = op.And(active, op.Or(op.Or(popped, won), extra))
        stays = op.And(back, op.Not(won))
        queued = op.ScatterElements(queued, at, op.Where(step, op.Where(stays, u, neg_inf), key), axis=1)
        begin = op.ScatterElements(begin, at, op.Where(step, op.Expand(cnt, op.Shape(at)), _snms_take(begin, at)),
                                   axis=1)
        # the selected into slots cnt, cnt + 1, ...; every other column into a spare slot of its own
        slot = op.Where(won, cnt, op.Where(extra, op.Add(cnt, op.Sub(pos, f)), op.Add(cap, pos)))  # (T + 1 <= 12)
        sel = op.ScatterElements(sel, slot, at, axis=1)
        sel_score = op.ScatterElements(sel_score, slot, u, axis=1)
        cnt = op.Add(cnt, op.Add(op.Cast(picked, to=INT64.dtype), more))
        live = op.Greater(op.ReduceMax(queued, axis1, keepdims=1), neg_inf)
        active = op.And(live, op.Less(cnt, limit))
        go = op.Greater(op.ReduceSum(op.Cast(active, to=INT64.dtype), keepdims=0), i0)
    first = op.Constant(value_ints=[0])
    kept = op.Less(op.Unsqueeze(op.Range(i0, op.Squeeze(cap), i1), op.Constant(value_ints=[0])), cnt)
    return op.Slice(sel, first, cap, axis1), op.Slice(sel_score, first, cap, axis1), kept


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
    y0 = op.Gather(bb, i0, axis=2)
    x0 = op.Gather(bb, i1, axis=2)
    y1 = op.Gather(bb, i2, axis=2)
    x1 = op.Gather(bb, i3, axis=2)
    sel, sel_score, kept = _snms_select(y0, x0, y1, x1, area, q, limit, iou_t, score_t, sigma, v5)
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
    indices, triples, valid = _nms_outputs(rows, values, output_type=output_type)
    return indices, triples, valid


#: Functions of the domain the body calls.
HELPERS = (_mc_same, _nms_boxes_checked, _nms_outputs, _snms_corners, _snms_tail, _snms_decay, _snms_take,
           _snms_select)
