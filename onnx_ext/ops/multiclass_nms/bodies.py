"""MulticlassNms-8/-9's bodies in onnxscript, every attribute read at run time: ``MulticlassNms`` (the public body:
boxes, scores and roisnum; scores [N, C, M] with boxes shared by the classes, or [C, M] per class with roisnum
splitting M by image) and ``multiclass_nms_shared`` (nodes without roisnum).

Each (image, class) is one NMS problem: its candidates are the scores >= score_threshold of a class other than
the background, the nms_top_k best (stable TopK); non-candidates are -inf. With nms_eta 1, one ONNX
NonMaxSuppression solves them all: it keeps scores > -inf and suppresses at IoU > the f32 just below
iou_threshold (the reference's >=), an IoU threshold <= 0 keeping one box (every IoU is >= it); boxes not
normalized get +1 on their far corners (the reference's +1 widths), and a box of no area overlaps nothing there
(a point). With nms_eta < 1 the threshold changes with each box kept: a Loop over candidate ranks runs every
problem's greedy pass at once (``_mc_adaptive_nms``, the reference's IoU in f32). Then each image's detections
by score, class, index; keep_top_k; the order sort_result_type / sort_result_across_batch ask for: stable TopKs.
"""

from __future__ import annotations

from onnxscript import BOOL, FLOAT, INT64, script

from ...domain import op, ov_ext

_NEG_INF = float("-inf")


@script(ov_ext, default_opset=op)
def _mc_same(a, b):
    # two shapes equal, as a [1] bool (shapes of any lengths: the general body's If branch for the other input
    # form is inferred too)
    pad = op.Constant(value_ints=[-1, -1, -1, -1])
    length = op.Constant(value_ints=[4])
    same = op.Equal(op.Slice(op.Concat(a, pad, axis=0), op.Constant(value_ints=[0]), length),
                    op.Slice(op.Concat(b, pad, axis=0), op.Constant(value_ints=[0]), length))
    lengths = op.Equal(op.Shape(a), op.Shape(b))
    return op.And(lengths, op.Cast(op.ReduceMin(op.Cast(same, to=INT64.dtype), keepdims=1), to=BOOL.dtype))


@script(ov_ext, default_opset=op)
def _nms_boxes_checked(b, s, values):
    # boxes b [N, M, values] checked against the scores s [N, C, M] (shapes of any lengths, see _mc_same) -> b
    # reshaped to [N, M, values] after the check (MulticlassNms, MatrixNms: 4 values; NMSRotated: 5)
    shape = op.Shape(s)
    n = op.Slice(shape, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    m = op.Slice(shape, op.Constant(value_ints=[2]), op.Constant(value_ints=[3]))
    ok = _mc_same(op.Shape(b), op.Concat(n, m, values, axis=0))
    boxes_are_batch_by_boxes_by_box_values = op.Gather(op.Constant(value_ints=[0]),
                                                       op.Cast(op.Not(ok), to=INT64.dtype))
    m = op.Add(m, op.ReduceSum(boxes_are_batch_by_boxes_by_box_values, keepdims=1))
    return op.Reshape(b, op.Concat(n, m, values, axis=0), allowzero=1)


@script(ov_ext, default_opset=op)
def _mc_rank(shape, ones):
    # ``shape`` cut or padded with ones to the length of ``ones``
    return op.Slice(op.Concat(shape, ones, axis=0), op.Constant(value_ints=[0]), op.Shape(ones))


@script(ov_ext, default_opset=op)
def _mc_below(t):
    # the f32 just below t (t finite): the strict comparisons of NonMaxSuppression become >=
    zero = op.Constant(value_float=0.0)
    factor = op.Where(op.Less(t, zero), op.Constant(value_float=1.0 + 2.0**-23), op.Constant(value_float=1 - 2.0**-24))
    return op.Where(op.Equal(t, zero), op.Constant(value_float=-1.1754943508222875e-38), op.Mul(t, factor))


@script(ov_ext, default_opset=op)
def _mc_top_k_only(scores, k):
    # scores [..., M] with all but the k best of each row (ties: the lower index) set to -inf; 0 <= k <= M
    values, indices = op.TopK(scores, k, axis=-1, largest=1, sorted=1)
    return op.ScatterElements(op.Expand(op.Constant(value_float=_NEG_INF), op.Shape(scores)), indices, values,
                              axis=-1)


@script(ov_ext, default_opset=op)
def _mc_iou_at_least(box, others, norm, threshold):
    # box [P, 1, 4], others [P, T, 4] (x1, y1, x2, y2) -> [P, T]: the reference's IoU >= threshold [P, 1], in f32
    # in its order (heights first); an IoU of 0 when an area is <= 0.
    zero = op.Constant(value_float=0.0)
    x1i, y1i, x2i, y2i = op.Split(box, axis=-1, num_outputs=4)
    x1j, y1j, x2j, y2j = op.Split(others, axis=-1, num_outputs=4)
    area_i = op.Mul(op.Add(op.Sub(y2i, y1i), norm), op.Add(op.Sub(x2i, x1i), norm))
    area_j = op.Mul(op.Add(op.Sub(y2j, y1j), norm), op.Add(op.Sub(x2j, x1j), norm))
    ih = op.Max(op.Add(op.Sub(op.Min(y2i, y2j), op.Max(y1i, y1j)), norm), zero)
    iw = op.Max(op.Add(op.Sub(op.Min(x2i, x2j), op.Max(x1i, x1j)), norm), zero)
    inter = op.Mul(ih, iw)
    iou = op.Div(inter, op.Sub(op.Add(area_i, area_j), inter))
    iou = op.Where(op.Or(op.LessOrEqual(area_i, zero), op.LessOrEqual(area_j, zero)), zero, iou)
    return op.Squeeze(op.GreaterOrEqual(iou, op.Unsqueeze(threshold, op.Constant(value_ints=[2]))),
                      op.Constant(value_ints=[2]))


@script(ov_ext, default_opset=op)
def _mc_adaptive_nms(boxes, candidates, norm, iou_threshold, eta):
    # boxes [B, M, 4], candidates [B, K, M] (-inf: not one) -> [R, 3] rows (b, k, m) as NonMaxSuppression gives
    # them, with the adaptive threshold: after each box kept, threshold *= eta while it is above 0.5. Every
    # problem (b, k) at once, one Loop step per candidate rank.
    shape = op.Shape(candidates)
    b = op.Slice(shape, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    k = op.Slice(shape, op.Constant(value_ints=[1]), op.Constant(value_ints=[2]))
    m = op.Slice(shape, op.Constant(value_ints=[2]), op.Constant(value_ints=[3]))
    p = op.Mul(b, k)
    flat = op.Reshape(candidates, op.Concat(p, m, axis=0), allowzero=1)
    ranked, order = op.TopK(flat, m, axis=1, largest=1, sorted=1)  # [P, M]
    valid = op.Greater(ranked, op.Constant(value_float=_NEG_INF))
    rounds = op.ReduceMax(op.ReduceSum(op.Cast(valid, to=INT64.dtype), op.Constant(value_ints=[1]), keepdims=0),
                          keepdims=0)
    # each problem's boxes in its candidates' order: [P, M, 4]
    owner = op.Div(op.Range(op.Constant(value_int=0), op.ReduceSum(p, keepdims=0), op.Constant(value_int=1)),
                   op.ReduceSum(k, keepdims=0))
    rows = op.Add(op.Mul(op.Unsqueeze(owner, op.Constant(value_ints=[1])), op.ReduceSum(m, keepdims=0)), order)
    sorted_boxes = op.Gather(op.Reshape(boxes, op.Constant(value_ints=[-1, 4])), rows)
    threshold = op.Expand(op.Reshape(iou_threshold, op.Constant(value_ints=[1, 1])), op.Concat(p, op.Constant(value_ints=[1]), axis=0))
    kept = op.Cast(op.ConstantOfShape(op.Concat(p, op.Constant(value_ints=[0]), axis=0)), to=BOOL.dtype)
    for t in range(rounds):
        t1 = op.Reshape(t, op.Constant(value_ints=[1]))
        box = op.Slice(sorted_boxes, t1, op.Add(t1, op.Constant(value_ints=[1])), op.Constant(value_ints=[1]))
        earlier = op.Slice(sorted_boxes, op.Constant(value_ints=[0]), t1, op.Constant(value_ints=[1]))
        hit = op.And(_mc_iou_at_least(box, earlier, norm, threshold), kept)
        suppressed = op.Greater(op.ReduceSum(op.Cast(hit, to=INT64.dtype), op.Constant(value_ints=[1]), keepdims=1),
                                op.Constant(value_int=0))
        now = op.And(op.Slice(valid, t1, op.Add(t1, op.Constant(value_ints=[1])), op.Constant(value_ints=[1])),
                     op.Not(suppressed))
        adapt = op.And(now, op.Greater(threshold, op.Constant(value_float=0.5)))
        adapt = op.And(adapt, op.Less(eta, op.Constant(value_float=1.0)))
        threshold = op.Where(adapt, op.Mul(threshold, eta), threshold)
        kept = op.Concat(kept, now, axis=1)
    where = op.Transpose(op.NonZero(kept), perm=[1, 0])  # (problem, rank), problem-major, rank ascending
    problem = op.Gather(where, op.Constant(value_int=0), axis=1)
    chosen = op.GatherND(order, where)
    kk = op.ReduceSum(k, keepdims=0)
    return op.Concat(op.Unsqueeze(op.Div(problem, kk), op.Constant(value_ints=[1])),
                     op.Unsqueeze(op.Mod(problem, kk), op.Constant(value_ints=[1])),
                     op.Unsqueeze(chosen, op.Constant(value_ints=[1])), axis=1)


@script(ov_ext, default_opset=op)
def _mc_nms(boxes, candidates, norm, iou_threshold, eta):
    # boxes [B, M, 4], candidates [B, K, M] (-inf: not one) -> [R, 3] rows (b, k, m) of the kept boxes
    if op.Less(eta, op.Constant(value_float=1.0)):
        rows = _mc_adaptive_nms(boxes, candidates, norm, iou_threshold, eta)
    else:
        x1, y1, x2, y2 = op.Split(boxes, axis=-1, num_outputs=4)
        far_x = op.Add(x2, norm)
        far_y = op.Add(y2, norm)
        empty = op.Or(op.LessOrEqual(far_x, x1), op.LessOrEqual(far_y, y1))  # (no Reduce: M may be 0)
        near = op.Concat(x1, y1, axis=-1)
        far = op.Concat(far_x, far_y, axis=-1)
        nms_boxes = op.Where(empty, op.Concat(near, near, axis=-1), op.Concat(near, far, axis=-1))
        m = op.Slice(op.Shape(boxes), op.Constant(value_ints=[1]), op.Constant(value_ints=[2]))
        positive = op.Greater(iou_threshold, op.Constant(value_float=0.0))
        max_out = op.Where(positive, m, op.Min(m, op.Constant(value_ints=[1])))
        below = op.Reshape(_mc_below(iou_threshold), op.Constant(value_ints=[1]))
        rows = op.NonMaxSuppression(nms_boxes, candidates, max_out, op.Where(positive, below, op.Constant(value_floats=[0.0])),
                                    op.Constant(value_floats=[_NEG_INF]))
    return rows


@script(ov_ext, default_opset=op)
def _mc_candidates(scores, classes, valid, attrs_f, attrs_i):
    # scores [B, K, M], the class of each problem row classes [B, K], valid [B or 1, K or 1, M] -> candidates: valid
    # scores >= score_threshold of classes other than the background, each row's nms_top_k best; -inf elsewhere
    # (NaN scores are never candidates). attrs_f: [score_threshold]; attrs_i: [nms_top_k, background_class].
    neg_inf = op.Constant(value_float=_NEG_INF)
    score_threshold = op.Gather(attrs_f, op.Constant(value_int=0))
    top_k = op.Gather(attrs_i, op.Constant(value_ints=[0]))
    background = op.Gather(attrs_i, op.Constant(value_int=1))
    ok = op.And(op.And(op.GreaterOrEqual(scores, score_threshold), valid),
                op.Unsqueeze(op.Not(op.Equal(classes, background)), op.Constant(value_ints=[2])))
    s = op.Where(ok, scores, neg_inf)
    m = op.Slice(op.Shape(scores), op.Constant(value_ints=[2]), op.Constant(value_ints=[3]))
    cut = op.Squeeze(op.And(op.GreaterOrEqual(top_k, op.Constant(value_ints=[0])), op.Less(top_k, m)))
    if cut:
        out = _mc_top_k_only(s, top_k)
    else:
        out = op.Identity(s)
    return out


@script(ov_ext, default_opset=op)
def _mc_stable_sort(order, key, largest: int):
    # ``order`` (row indices) stably re-sorted by key[order] (ascending, or descending with largest=1)
    _, by = op.TopK(op.Gather(key, order), op.Shape(order), axis=0, largest=largest, sorted=1)
    return op.Gather(order, by)


@script(ov_ext, default_opset=op)
def _mc_finish(image, label, index, flat, score, box, num_images, attrs_i, output_type: int):
    # The detections (image, class, index in the image, flat index, score, box), any order -> selected_outputs
    # [R, 6] f32, selected_indices [R, 1], selected_num [N] of output_type. attrs_i: [keep_top_k, sort type
    # (0 classid, 1 score, 2 none), across batch].
    r = op.Shape(score)
    order = op.Range(op.Constant(value_int=0), op.ReduceSum(r, keepdims=0), op.Constant(value_int=1))
    # each image's detections by score, class, index (stable sorts from the last key)
    order = _mc_stable_sort(order, index, largest=0)
    order = _mc_stable_sort(order, label, largest=0)
    order = _mc_stable_sort(order, score, largest=1)
    order = _mc_stable_sort(order, image, largest=0)
    images = op.Range(op.Constant(value_int=0), num_images, op.Constant(value_int=1))
    sorted_image = op.Gather(image, order)
    counts = op.ReduceSum(op.Cast(op.Equal(op.Unsqueeze(sorted_image, op.Constant(value_ints=[1])), images),
                                  to=INT64.dtype), op.Constant(value_ints=[0]), keepdims=0)
    starts = op.CumSum(counts, op.Constant(value_int=0), exclusive=1)
    rank = op.Sub(op.Range(op.Constant(value_int=0), op.ReduceSum(r, keepdims=0), op.Constant(value_int=1)),
                  op.Gather(starts, sorted_image))
    keep = op.Gather(attrs_i, op.Constant(value_int=0))
    within = op.Or(op.Less(keep, op.Constant(value_int=0)), op.Less(rank, keep))
    order = op.Compress(order, within)
    kept_image = op.Gather(image, order)
    selected_num = op.ReduceSum(op.Cast(op.Equal(op.Unsqueeze(kept_image, op.Constant(value_ints=[1])), images),
                                        to=INT64.dtype), op.Constant(value_ints=[0]), keepdims=0)
    sort_type = op.Gather(attrs_i, op.Constant(value_int=1))
    across = op.Cast(op.Gather(attrs_i, op.Constant(value_int=2)), to=BOOL.dtype)
    by_class = op.Equal(sort_type, op.Constant(value_int=0))
    if by_class:
        by_label = _mc_stable_sort(order, label, largest=0)  # class, then (image,) score, index
        if across:
            final = op.Identity(by_label)
        else:
            final = _mc_stable_sort(by_label, image, largest=0)
    else:
        if op.And(across, op.Equal(sort_type, op.Constant(value_int=1))):
            final = _mc_stable_sort(order, score, largest=1)  # score, then image, class, index
        else:
            final = op.Identity(order)
    outputs = op.Concat(op.Unsqueeze(op.Cast(op.Gather(label, final), to=FLOAT.dtype), op.Constant(value_ints=[1])),
                        op.Unsqueeze(op.Gather(score, final), op.Constant(value_ints=[1])), op.Gather(box, final),
                        axis=1)
    indices = op.Cast(op.Unsqueeze(op.Gather(flat, final), op.Constant(value_ints=[1])), to=output_type)
    return outputs, indices, op.Cast(selected_num, to=output_type)


@script(ov_ext, default_opset=op)
def _mc_shared(boxes, scores, attrs_f, attrs_i, output_type: int):
    # boxes [N, M, 4], scores [N, C, M] -> the three outputs (selected_outputs in f32).
    # attrs_f: [score_threshold, iou_threshold, nms_eta, normalized]; attrs_i: [nms_top_k, background_class,
    # keep_top_k, sort type, across batch].
    b = op.Cast(boxes, to=FLOAT.dtype)
    # scores seen with rank 3 whatever they have: the general body's If branch for the other form is inferred too
    s = op.Reshape(op.Cast(scores, to=FLOAT.dtype), _mc_rank(op.Shape(scores), op.Constant(value_ints=[1, 1, 1])),
                   allowzero=1)
    shape = op.Shape(s)
    n = op.Slice(shape, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    c = op.Slice(shape, op.Constant(value_ints=[1]), op.Constant(value_ints=[2]))
    m = op.Slice(shape, op.Constant(value_ints=[2]), op.Constant(value_ints=[3]))
    b = _nms_boxes_checked(b, s, op.Constant(value_ints=[4]))
    classes = op.Expand(op.Unsqueeze(op.Range(op.Constant(value_int=0), op.ReduceSum(c, keepdims=0),
                                              op.Constant(value_int=1)), op.Constant(value_ints=[0])),
                        op.Concat(n, c, axis=0))
    candidates = _mc_candidates(s, classes, op.Cast(op.Constant(value_ints=[1]), to=BOOL.dtype),
                                op.Slice(attrs_f, op.Constant(value_ints=[0]), op.Constant(value_ints=[1])),
                                op.Slice(attrs_i, op.Constant(value_ints=[0]), op.Constant(value_ints=[2])))
    norm = op.Sub(op.Constant(value_float=1.0), op.Gather(attrs_f, op.Constant(value_int=3)))
    rows = _mc_nms(b, candidates, norm, op.Gather(attrs_f, op.Constant(value_int=1)),
                   op.Gather(attrs_f, op.Constant(value_int=2)))
    image = op.Gather(rows, op.Constant(value_int=0), axis=1)
    label = op.Gather(rows, op.Constant(value_int=1), axis=1)
    index = op.Gather(rows, op.Constant(value_int=2), axis=1)
    flat = op.Add(op.Mul(image, op.ReduceSum(m, keepdims=0)), index)
    score = op.GatherND(candidates, rows)
    box = op.Gather(op.Reshape(b, op.Constant(value_ints=[-1, 4])), flat)
    outputs, indices, num = _mc_finish(image, label, index, flat, score, box, op.ReduceSum(n, keepdims=0),
                                       op.Slice(attrs_i, op.Constant(value_ints=[2]), op.Constant(value_ints=[5])),
                                       output_type=output_type)
    return outputs, indices, num


@script(ov_ext, default_opset=op)
def _mc_per_class(boxes, scores, roisnum, attrs_f, attrs_i, output_type: int):
    # boxes [C, T, 4], scores [C, T], roisnum [N] (image n owns boxes start_n .. start_n + roisnum_n) -> the
    # three outputs; one NMS problem per (class, image): the class's boxes, scores of the image's only.
    b = op.Cast(boxes, to=FLOAT.dtype)
    # scores seen with rank 2 whatever they have (see _mc_shared)
    s = op.Reshape(op.Cast(scores, to=FLOAT.dtype), _mc_rank(op.Shape(scores), op.Constant(value_ints=[1, 1])),
                   allowzero=1)
    counts = op.Cast(op.Reshape(roisnum, op.Constant(value_ints=[-1])), to=INT64.dtype)
    n = op.Shape(counts)
    shape = op.Shape(s)
    c = op.Slice(shape, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    t = op.Slice(shape, op.Constant(value_ints=[1]), op.Constant(value_ints=[2]))
    ok = op.And(_mc_same(op.Shape(b), op.Concat(c, t, op.Constant(value_ints=[4]), axis=0)),
                op.Equal(op.ReduceSum(counts, keepdims=1), t))
    boxes_match_scores_and_roisnum_sums_to_the_boxes = op.Gather(op.Constant(value_ints=[0]),
                                                                 op.Cast(op.Not(ok), to=INT64.dtype))
    t = op.Add(t, op.ReduceSum(boxes_match_scores_and_roisnum_sums_to_the_boxes, keepdims=1))
    b = op.Reshape(b, op.Concat(c, t, op.Constant(value_ints=[4]), axis=0), allowzero=1)  # (after the check)
    starts = op.CumSum(counts, op.Constant(value_int=0), exclusive=1)
    position = op.Range(op.Constant(value_int=0), op.ReduceSum(t, keepdims=0), op.Constant(value_int=1))
    inside = op.And(op.GreaterOrEqual(position, op.Unsqueeze(starts, op.Constant(value_ints=[1]))),
                    op.Less(position, op.Unsqueeze(op.Add(starts, counts), op.Constant(value_ints=[1]))))  # [N, T]
    cn = op.Mul(c, n)
    problems = op.Reshape(op.Expand(op.Unsqueeze(b, op.Constant(value_ints=[1])),
                                    op.Concat(c, n, t, op.Constant(value_ints=[4]), axis=0)),
                          op.Concat(cn, t, op.Constant(value_ints=[4]), axis=0), allowzero=1)
    problem_scores = op.Reshape(op.Expand(op.Unsqueeze(s, op.Constant(value_ints=[1])), op.Concat(c, n, t, axis=0)),
                                op.Concat(cn, op.Constant(value_ints=[1]), t, axis=0), allowzero=1)
    nn = op.ReduceSum(n, keepdims=0)
    problem = op.Range(op.Constant(value_int=0), op.ReduceSum(cn, keepdims=0), op.Constant(value_int=1))
    classes = op.Unsqueeze(op.Div(problem, nn), op.Constant(value_ints=[1]))
    valid = op.Unsqueeze(op.Gather(inside, op.Mod(problem, nn)), op.Constant(value_ints=[1]))  # [CN, 1, T]
    candidates = _mc_candidates(problem_scores, classes, valid,
                                op.Slice(attrs_f, op.Constant(value_ints=[0]), op.Constant(value_ints=[1])),
                                op.Slice(attrs_i, op.Constant(value_ints=[0]), op.Constant(value_ints=[2])))
    norm = op.Sub(op.Constant(value_float=1.0), op.Gather(attrs_f, op.Constant(value_int=3)))
    rows = _mc_nms(problems, candidates, norm, op.Gather(attrs_f, op.Constant(value_int=1)),
                   op.Gather(attrs_f, op.Constant(value_int=2)))
    which = op.Gather(rows, op.Constant(value_int=0), axis=1)
    position = op.Gather(rows, op.Constant(value_int=2), axis=1)
    label = op.Div(which, nn)
    image = op.Mod(which, nn)
    index = op.Sub(position, op.Gather(starts, image))
    flat = op.Add(op.Mul(position, op.ReduceSum(c, keepdims=0)), label)
    score = op.GatherND(candidates, rows)
    box = op.Gather(op.Reshape(b, op.Constant(value_ints=[-1, 4])), op.Add(op.Mul(label, op.ReduceSum(t, keepdims=0)),
                                                                          position))
    outputs, indices, num = _mc_finish(image, label, index, flat, score, box, nn,
                                       op.Slice(attrs_i, op.Constant(value_ints=[2]), op.Constant(value_ints=[5])),
                                       output_type=output_type)
    return outputs, indices, num


@script(ov_ext, default_opset=op)
def _mc_attributes(iou_threshold: float, score_threshold: float, nms_top_k: int, keep_top_k: int,
                   background_class: int, normalized: int, nms_eta: float, sort_result_type: str,
                   sort_result_across_batch: int):
    # The attributes as the helpers read them: [score_threshold, iou_threshold, nms_eta, normalized] f32, and
    # [nms_top_k, background_class, keep_top_k, sort type (0 classid, 1 score, 2 none), across batch] int64.
    one = op.Constant(value_ints=[1])
    attrs_f = op.Concat(op.Reshape(op.Constant(value_float=score_threshold), one),
                        op.Reshape(op.Constant(value_float=iou_threshold), one),
                        op.Reshape(op.Constant(value_float=nms_eta), one),
                        op.Reshape(op.Cast(op.Constant(value_int=normalized), to=FLOAT.dtype), one), axis=0)
    sort_name = op.Constant(value_string=sort_result_type)
    sort_type = op.Where(op.Equal(sort_name, op.Constant(value_string="classid")), op.Constant(value_int=0),
                         op.Where(op.Equal(sort_name, op.Constant(value_string="score")), op.Constant(value_int=1),
                                  op.Constant(value_int=2)))
    attrs_i = op.Concat(op.Reshape(op.Constant(value_int=nms_top_k), one),
                        op.Reshape(op.Constant(value_int=background_class), one),
                        op.Reshape(op.Constant(value_int=keep_top_k), one), op.Reshape(sort_type, one),
                        op.Reshape(op.Constant(value_int=sort_result_across_batch), one), axis=0)
    return attrs_f, attrs_i


@script(ov_ext, default_opset=op)
def MulticlassNms(boxes, scores, roisnum, sort_result_type: str = "none", sort_result_across_batch: int = 0,
                  output_type: int = 7, iou_threshold: float = 0.0, score_threshold: float = 0.0, nms_top_k: int = -1,
                  keep_top_k: int = -1, background_class: int = -1, normalized: int = 1, nms_eta: float = 1.0,
                  version: int = 9):
    # MulticlassNms-8/-9(boxes [N, M, 4], scores [N, C, M]; or boxes [C, T, 4], scores [C, T], roisnum [N]) ->
    # selected_outputs [R, 6] (class, score, x1, y1, x2, y2), selected_indices [R, 1], selected_num [N] (of
    # output_type, an ONNX element type). The general body (nodes without roisnum get multiclass_nms_shared).
    attrs_f, attrs_i = _mc_attributes(iou_threshold=iou_threshold, score_threshold=score_threshold,
                                      nms_top_k=nms_top_k, keep_top_k=keep_top_k, background_class=background_class,
                                      normalized=normalized, nms_eta=nms_eta, sort_result_type=sort_result_type,
                                      sort_result_across_batch=sort_result_across_batch)
    if op.Equal(op.Size(op.Shape(scores)), op.Constant(value_int=3)):
        outputs, indices, num = _mc_shared(boxes, scores, attrs_f, attrs_i, output_type=output_type)
    else:
        outputs, indices, num = _mc_per_class(boxes, scores, roisnum, attrs_f, attrs_i, output_type=output_type)
    return op.CastLike(outputs, boxes), indices, num


@script(ov_ext, default_opset=op)
def multiclass_nms_shared(boxes, scores, roisnum, sort_result_type: str = "none", sort_result_across_batch: int = 0,
                          output_type: int = 7, iou_threshold: float = 0.0, score_threshold: float = 0.0,
                          nms_top_k: int = -1, keep_top_k: int = -1, background_class: int = -1, normalized: int = 1,
                          nms_eta: float = 1.0, version: int = 9):
    # boxes shared by the classes: scores [N, C, M] (roisnum, when there is one, is not read)
    attrs_f, attrs_i = _mc_attributes(iou_threshold=iou_threshold, score_threshold=score_threshold,
                                      nms_top_k=nms_top_k, keep_top_k=keep_top_k, background_class=background_class,
                                      normalized=normalized, nms_eta=nms_eta, sort_result_type=sort_result_type,
                                      sort_result_across_batch=sort_result_across_batch)
    outputs, indices, num = _mc_shared(boxes, scores, attrs_f, attrs_i, output_type=output_type)
    return op.CastLike(outputs, boxes), indices, num


#: Functions of the domain the bodies call.
HELPERS = (_mc_same, _nms_boxes_checked, _mc_rank, _mc_below, _mc_top_k_only, _mc_iou_at_least, _mc_adaptive_nms, _mc_nms, _mc_candidates, _mc_stable_sort,
           _mc_finish, _mc_shared, _mc_per_class, _mc_attributes)


@script(ov_ext, default_opset=op)
def multiclass_nms_per_class(boxes, scores, roisnum, sort_result_type: str = "none",
                             sort_result_across_batch: int = 0, output_type: int = 7, iou_threshold: float = 0.0,
                             score_threshold: float = 0.0, nms_top_k: int = -1, keep_top_k: int = -1,
                             background_class: int = -1, normalized: int = 1, nms_eta: float = 1.0, version: int = 9):
    # boxes per class: scores [C, T], roisnum [N] (the general body's If, whose condition onnxruntime would fold
    # and inline, left out when the rank is known)
    attrs_f, attrs_i = _mc_attributes(iou_threshold=iou_threshold, score_threshold=score_threshold,
                                      nms_top_k=nms_top_k, keep_top_k=keep_top_k, background_class=background_class,
                                      normalized=normalized, nms_eta=nms_eta, sort_result_type=sort_result_type,
                                      sort_result_across_batch=sort_result_across_batch)
    outputs, indices, num = _mc_per_class(boxes, scores, roisnum, attrs_f, attrs_i, output_type=output_type)
    return op.CastLike(outputs, boxes), indices, num
