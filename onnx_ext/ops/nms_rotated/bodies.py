"""NMSRotated-13's body in onnxscript (``NMSRotated``), every input read at run time; one body for every
element type (boxes and scores go to f32 first, as the reference reads them).

Per image, the boxes that are a candidate of some class (score > score_threshold) and have an area are paired
when their circumscribed circles can meet (one f64 MatMul by blocks of rows, with a margin for rounding: boxes
further apart have an intersection of exactly 0 in the reference too); only those pairs that are both candidates
of some class get the rotated IoU (``_nmsr_iou``: the reference's corners, computed once per box, edge crossings
and corners inside the other box, then the area of their convex hull).
The pairs whose IoU is above iou_threshold suppress, in each class, the one of the two that comes later in that
class's order (score descending, then index). The greedy pass over all (image, class) problems at once is the
fixed point of alive[j] = candidate[j] and no alive earlier i suppresses j (Jacobi from all alive: exact after as
many steps as the longest suppression chain, one ScatterND over the suppressing pairs each); then each class
keeps its first max_output_boxes_per_class alive ones (none of the later ones changes what comes before).
"""

from __future__ import annotations

from onnxscript import BOOL, DOUBLE, FLOAT, INT64, script

from ...domain import op, ov_ext
from ..multiclass_nms.bodies import _mc_same, _nms_boxes_checked
from ..non_max_suppression.bodies import _nms_outputs

#: The reference's parallel-edge test ``fabs(det) <= 1e-14`` (1e-14 as f32 is just above the double).
PARALLEL = 9.99999982e-15
_NEG_INF = float("-inf")


@script(ov_ext, default_opset=op)
def _nmsr_corners(box):
    # box [Q, 5] (x_ctr, y_ctr, w, h, angle) -> xs [Q, 4], ys [Q, 4]: the reference's get_rotated_vertices (cos
    # and sin of the angle in double, rounded to f32, times 0.5)
    axis = op.Constant(value_ints=[1])
    x = op.Slice(box, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]), axis)
    y = op.Slice(box, op.Constant(value_ints=[1]), op.Constant(value_ints=[2]), axis)
    w = op.Slice(box, op.Constant(value_ints=[2]), op.Constant(value_ints=[3]), axis)
    h = op.Slice(box, op.Constant(value_ints=[3]), op.Constant(value_ints=[4]), axis)
    a = op.Cast(op.Slice(box, op.Constant(value_ints=[4]), op.Constant(value_ints=[5]), axis), to=DOUBLE.dtype)
    half = op.Constant(value_float=0.5)
    c = op.Mul(op.Cast(op.Cos(a), to=FLOAT.dtype), half)
    s = op.Mul(op.Cast(op.Sin(a), to=FLOAT.dtype), half)
    p0x = op.Sub(op.Sub(x, op.Mul(s, h)), op.Mul(c, w))
    p0y = op.Sub(op.Add(y, op.Mul(c, h)), op.Mul(s, w))
    p1x = op.Sub(op.Add(x, op.Mul(s, h)), op.Mul(c, w))
    p1y = op.Sub(op.Sub(y, op.Mul(c, h)), op.Mul(s, w))
    two = op.Constant(value_float=2.0)
    x2 = op.Mul(two, x)
    y2 = op.Mul(two, y)
    xs = op.Concat(p0x, p1x, op.Sub(x2, p0x), op.Sub(x2, p1x), axis=1)
    ys = op.Concat(p0y, p1y, op.Sub(y2, p0y), op.Sub(y2, p1y), axis=1)
    return xs, ys


@script(ov_ext, default_opset=op)
def _nmsr_next(v):
    # v [Q, K] -> v rolled by one along axis 1 (each entry's successor, cyclically)
    axis = op.Constant(value_ints=[1])
    return op.Concat(op.Slice(v, op.Constant(value_ints=[1]), op.Constant(value_ints=[2**62]), axis),
                     op.Slice(v, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]), axis), axis=1)


@script(ov_ext, default_opset=op)
def _nmsr_inside(px, py, qx, qy, ex, ey):
    # the corners (px, py) [Q, 4] inside the box of corners (qx, qy) and edges (ex, ey): their projections on
    # the box's first edge AB and on AD (-DA) fall within them (the reference's test, >= and <=)
    first = op.Constant(value_ints=[0])
    second = op.Constant(value_ints=[1])
    last = op.Constant(value_ints=[3])
    end = op.Constant(value_ints=[4])
    axis = op.Constant(value_ints=[1])
    abx = op.Slice(ex, first, second, axis)
    aby = op.Slice(ey, first, second, axis)
    dax = op.Slice(ex, last, end, axis)
    day = op.Slice(ey, last, end, axis)
    apx = op.Sub(px, op.Slice(qx, first, second, axis))
    apy = op.Sub(py, op.Slice(qy, first, second, axis))
    ap_ab = op.Add(op.Mul(apx, abx), op.Mul(apy, aby))
    ap_ad = op.Neg(op.Add(op.Mul(apx, dax), op.Mul(apy, day)))
    ab_ab = op.Add(op.Mul(abx, abx), op.Mul(aby, aby))
    ad_ad = op.Add(op.Mul(dax, dax), op.Mul(day, day))
    zero = op.Constant(value_float=0.0)
    return op.And(op.And(op.GreaterOrEqual(ap_ab, zero), op.GreaterOrEqual(ap_ad, zero)),
                  op.And(op.LessOrEqual(ap_ab, ab_ab), op.LessOrEqual(ap_ad, ad_ad)))


@script(ov_ext, default_opset=op)
def _nmsr_geometry(box):
    # box [K, 5] -> [K, 17]: the corners' xs and ys, the edges' (each corner to the next) and the area w h, computed
    # once per box for all the pairs it is in
    xs, ys = _nmsr_corners(box)
    axis = op.Constant(value_ints=[1])
    area = op.Mul(op.Slice(box, op.Constant(value_ints=[2]), op.Constant(value_ints=[3]), axis),
                  op.Slice(box, op.Constant(value_ints=[3]), op.Constant(value_ints=[4]), axis))
    return op.Concat(xs, ys, op.Sub(_nmsr_next(xs), xs), op.Sub(_nmsr_next(ys), ys), area, axis=1)


@script(ov_ext, default_opset=op)
def _nmsr_iou(geo_i, geo_j):
    # geo_i, geo_j [Q, 17] (_nmsr_geometry of the pairs' boxes) -> [Q] f32: the reference's
    # rotated_intersection_over_union of each pair
    axis = op.Constant(value_ints=[1])
    at0 = op.Constant(value_ints=[0])
    at4 = op.Constant(value_ints=[4])
    at8 = op.Constant(value_ints=[8])
    at12 = op.Constant(value_ints=[12])
    at16 = op.Constant(value_ints=[16])
    ax, ay = op.Slice(geo_i, at0, at4, axis), op.Slice(geo_i, at4, at8, axis)
    aex, aey = op.Slice(geo_i, at8, at12, axis), op.Slice(geo_i, at12, at16, axis)
    bx, by = op.Slice(geo_j, at0, at4, axis), op.Slice(geo_j, at4, at8, axis)
    bex, bey = op.Slice(geo_j, at8, at12, axis), op.Slice(geo_j, at12, at16, axis)
    # edge i of box i (axis 1) against edge j of box j (axis 2): t1, t2 by Cramer's rule as the reference
    e1 = op.Constant(value_ints=[2])
    e2 = op.Constant(value_ints=[1])
    v1x, v1y, p1x, p1y = op.Unsqueeze(aex, e1), op.Unsqueeze(aey, e1), op.Unsqueeze(ax, e1), op.Unsqueeze(ay, e1)
    v2x, v2y = op.Unsqueeze(bex, e2), op.Unsqueeze(bey, e2)
    wx = op.Sub(op.Unsqueeze(bx, e2), p1x)
    wy = op.Sub(op.Unsqueeze(by, e2), p1y)
    det = op.Sub(op.Mul(v2x, v1y), op.Mul(v1x, v2y))
    crossing = op.Greater(op.Abs(det), op.Constant(value_float=PARALLEL))
    safe = op.Where(crossing, det, op.Constant(value_float=1.0))
    t1 = op.Div(op.Sub(op.Mul(v2x, wy), op.Mul(wx, v2y)), safe)
    t2 = op.Div(op.Sub(op.Mul(v1x, wy), op.Mul(wx, v1y)), safe)
    zero = op.Constant(value_float=0.0)
    one = op.Constant(value_float=1.0)
    on_both = op.And(op.And(op.GreaterOrEqual(t1, zero), op.LessOrEqual(t1, one)),
                     op.And(op.GreaterOrEqual(t2, zero), op.LessOrEqual(t2, one)))
    q = op.Slice(op.Shape(geo_i), op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    flat = op.Concat(q, op.Constant(value_ints=[16]), axis=0)
    xs = op.Concat(op.Reshape(op.Add(p1x, op.Mul(v1x, t1)), flat), ax, bx, axis=1)  # [Q, 24]
    ys = op.Concat(op.Reshape(op.Add(p1y, op.Mul(v1y, t1)), flat), ay, by, axis=1)
    valid = op.Concat(op.Reshape(op.And(crossing, on_both), flat), _nmsr_inside(ax, ay, bx, by, bex, bey),
                      _nmsr_inside(bx, by, ax, ay, aex, aey), axis=1)
    # The points lie on the boundary of the intersection, a convex polygon: its area is that of the points in
    # angular order around their centroid (inside it unless the polygon is flat), by the shoelace formula
    # (the reference: a Graham scan and a fan from the lowest point; the same area up to rounding).
    count = op.ReduceSum(op.Cast(valid, to=FLOAT.dtype), op.Constant(value_ints=[1]), keepdims=1)
    denominator = op.Max(count, one)
    cx = op.Div(op.ReduceSum(op.Where(valid, xs, zero), op.Constant(value_ints=[1]), keepdims=1), denominator)
    cy = op.Div(op.ReduceSum(op.Where(valid, ys, zero), op.Constant(value_ints=[1]), keepdims=1), denominator)
    dx = op.Sub(xs, cx)
    dy = op.Sub(ys, cy)
    spread = op.Add(op.Abs(dx), op.Abs(dy))
    slope = op.Div(dy, op.Where(op.Greater(spread, zero), spread, one))  # a pseudo-angle in [0, 4): monotone
    angle = op.Where(op.GreaterOrEqual(dx, zero),
                     op.Where(op.GreaterOrEqual(dy, zero), slope, op.Add(op.Constant(value_float=4.0), slope)),
                     op.Sub(op.Constant(value_float=2.0), slope))
    angle = op.Where(valid, angle, op.Constant(value_float=8.0))  # the invalid points last
    # only as many as the most any pair has (8 unless edges meet at corners): the rest are invalid
    most = op.ReduceMax(op.Concat(op.Constant(value_ints=[0]), op.ReduceSum(op.Cast(valid, to=INT64.dtype),
                                                                            op.Constant(value_ints=[1]), keepdims=0),
                                  axis=0), keepdims=1)
    _, order = op.TopK(angle, most, axis=1, largest=0, sorted=1)
    sx = op.GatherElements(dx, order, axis=1)
    sy = op.GatherElements(dy, order, axis=1)
    kept = op.GatherElements(valid, order, axis=1)
    # the invalid points repeat the first valid one: edges of length 0, which add no area
    sx = op.Where(kept, sx, op.Slice(sx, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]),
                                     op.Constant(value_ints=[1])))
    sy = op.Where(kept, sy, op.Slice(sy, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]),
                                     op.Constant(value_ints=[1])))
    cross = op.Sub(op.Mul(sx, _nmsr_next(sy)), op.Mul(_nmsr_next(sx), sy))
    area = op.Mul(op.Abs(op.ReduceSum(cross, op.Constant(value_ints=[1]), keepdims=0)), op.Constant(value_float=0.5))
    inter = op.Where(op.Greater(op.Squeeze(count, op.Constant(value_ints=[1])), op.Constant(value_float=2.0)),
                     area, zero)
    area_i = op.Gather(geo_i, op.Constant(value_int=16), axis=1)
    area_j = op.Gather(geo_j, op.Constant(value_int=16), axis=1)
    iou = op.Div(inter, op.Sub(op.Add(area_i, area_j), inter))
    return op.Where(op.And(op.Greater(area_i, zero), op.Greater(area_j, zero)), iou, zero)


@script(ov_ext, default_opset=op)
def _nmsr_pairs(b, usable):
    # b [N, M, 5], usable [N, M] -> [Q, 3] rows (image, i, j), i < j, of the usable boxes of an image whose
    # circumscribed circles meet (with a margin for the rounding of the corners: 2^-10 of the radii, 2^-16 of the
    # centres' magnitude). The test (reach_i + reach_j)^2 - |c_i - c_j|^2 >= 0 is one f64 MatMul of per-box
    # features (its rounding far below the margin), by blocks of rows of about 2^20 pairs (memory); the usable
    # boxes of an image are consecutive (NonZero is image-major), so row i pairs with the columns i < j < end_i.
    where = op.Transpose(op.NonZero(usable), perm=[1, 0])  # [U, 2] (image, box)
    image = op.Gather(where, op.Constant(value_int=0), axis=1)
    box = op.Gather(where, op.Constant(value_int=1), axis=1)
    m = op.Slice(op.Shape(b), op.Constant(value_ints=[1]), op.Constant(value_ints=[2]))
    kept = op.Gather(op.Reshape(b, op.Constant(value_ints=[-1, 5])), op.Add(op.Mul(image, op.ReduceSum(m, keepdims=0)),
                                                                            box))
    cx = op.Gather(kept, op.Constant(value_int=0), axis=1)
    cy = op.Gather(kept, op.Constant(value_int=1), axis=1)
    w = op.Gather(kept, op.Constant(value_int=2), axis=1)
    h = op.Gather(kept, op.Constant(value_int=3), axis=1)
    radius = op.Mul(op.Sqrt(op.Add(op.Mul(w, w), op.Mul(h, h))), op.Constant(value_float=0.5 + 2.0**-11))
    reach = op.Add(radius, op.Mul(op.Add(op.Abs(cx), op.Abs(cy)), op.Constant(value_float=2.0**-16)))
    column = op.Constant(value_ints=[1])
    x = op.Unsqueeze(op.Cast(cx, to=DOUBLE.dtype), column)
    y = op.Unsqueeze(op.Cast(cy, to=DOUBLE.dtype), column)
    r = op.Unsqueeze(op.Cast(reach, to=DOUBLE.dtype), column)
    g = op.Sub(op.Mul(r, r), op.Add(op.Mul(x, x), op.Mul(y, y)))
    ones = op.Expand(op.Cast(op.Constant(value_float=1.0), to=DOUBLE.dtype), op.Shape(x))
    two = op.Cast(op.Constant(value_float=2.0), to=DOUBLE.dtype)
    nought = op.Cast(op.Constant(value_float=0.0), to=DOUBLE.dtype)
    left = op.Concat(op.Mul(two, x), op.Mul(two, y), op.Mul(two, r), g, ones, axis=1)  # [U, 5]
    right = op.Transpose(op.Concat(x, y, r, ones, g, axis=1), perm=[1, 0])  # [5, U]
    per_image = op.ReduceSum(op.Cast(usable, to=INT64.dtype), column, keepdims=0)
    end = op.Unsqueeze(op.Gather(op.CumSum(per_image, op.Constant(value_int=0)), image), column)
    u = op.Size(image)
    index = op.Range(op.Constant(value_int=0), u, op.Constant(value_int=1))
    block = op.Max(op.Div(op.Constant(value_int=2**20), op.Max(u, op.Constant(value_int=1))), op.Constant(value_int=1))
    blocks = op.Div(op.Sub(op.Add(u, block), op.Constant(value_int=1)), block)
    found = op.Cast(op.ConstantOfShape(op.Constant(value_ints=[0, 2])), to=INT64.dtype)
    for k in range(blocks):
        start = op.Mul(k, block)
        rows = op.Range(start, op.Min(op.Add(start, block), u), op.Constant(value_int=1))
        near = op.GreaterOrEqual(op.MatMul(op.Gather(left, rows), right), nought)
        later = op.Trilu(near, op.Add(start, op.Constant(value_int=1)), upper=1)  # j > i
        local = op.Transpose(op.NonZero(op.And(later, op.Less(index, op.Gather(end, rows)))), perm=[1, 0])
        found = op.Concat(found, op.Add(local, op.Concat(op.Reshape(start, op.Constant(value_ints=[1])),
                                                         op.Constant(value_ints=[0]), axis=0)), axis=0)
    first = op.Gather(found, op.Constant(value_int=0), axis=1)
    second = op.Gather(found, op.Constant(value_int=1), axis=1)
    return op.Concat(op.Unsqueeze(op.Gather(image, first), column), op.Unsqueeze(op.Gather(box, first), column),
                     op.Unsqueeze(op.Gather(box, second), column), axis=1)


@script(ov_ext, default_opset=op)
def _nmsr_select(b, s, limit, iou_threshold, score_threshold):
    # b [N, M, 5] f32, s [N, C, M] f32, limit (i64), thresholds (f32) scalars -> rows [R, 3] (image, class, box)
    # i64 and their scores [R], by image, class and selection order
    shape = op.Shape(s)
    n = op.Slice(shape, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    c = op.Slice(shape, op.Constant(value_ints=[1]), op.Constant(value_ints=[2]))
    m = op.Slice(shape, op.Constant(value_ints=[2]), op.Constant(value_ints=[3]))
    mm = op.ReduceSum(m, keepdims=0)
    candidate = op.Greater(s, score_threshold)
    best, order = op.TopK(op.Where(candidate, s, op.Constant(value_float=_NEG_INF)), m, axis=2, largest=1, sorted=1)
    positions = op.Expand(op.Range(op.Constant(value_int=0), mm, op.Constant(value_int=1)), op.Shape(order))
    rank = op.ScatterElements(positions, order, positions, axis=2)  # rank[n, c, box]: its place in the order
    area = op.Mul(op.Gather(b, op.Constant(value_int=2), axis=2), op.Gather(b, op.Constant(value_int=3), axis=2))
    any_class = op.Greater(op.ReduceMax(op.Cast(candidate, to=FLOAT.dtype), op.Constant(value_ints=[1]),
                                        keepdims=0), op.Constant(value_float=0.0))
    pairs = _nmsr_pairs(b, op.And(any_class, op.Greater(area, op.Constant(value_float=0.0))))
    # per class: the earlier of the two (in that class's order) suppresses the later, both candidates; only the
    # pairs that are both candidates of some class get the IoU
    cc = op.ReduceSum(c, keepdims=0)
    by_box = op.Concat(op.Constant(value_ints=[-1]), c, axis=0)
    rank_t = op.Reshape(op.Transpose(rank, perm=[0, 2, 1]), by_box)  # [N M, C]
    cand_t = op.Reshape(op.Transpose(candidate, perm=[0, 2, 1]), by_box)
    image = op.Gather(pairs, op.Constant(value_int=0), axis=1)
    first = op.Add(op.Mul(image, mm), op.Gather(pairs, op.Constant(value_int=1), axis=1))
    second = op.Add(op.Mul(image, mm), op.Gather(pairs, op.Constant(value_int=2), axis=1))
    both = op.And(op.Gather(cand_t, first), op.Gather(cand_t, second))  # [Q, C]
    shared = op.Greater(op.ReduceMax(op.Cast(both, to=INT64.dtype), op.Constant(value_ints=[1]), keepdims=0),
                        op.Constant(value_int=0))
    i_first = op.Compress(op.Less(op.Gather(rank_t, first), op.Gather(rank_t, second)), shared, axis=0)
    both = op.Compress(both, shared, axis=0)
    pairs = op.Compress(pairs, shared, axis=0)
    geometry = _nmsr_geometry(op.Reshape(b, op.Constant(value_ints=[-1, 5])))
    iou = _nmsr_iou(op.Gather(geometry, op.Compress(first, shared)), op.Gather(geometry, op.Compress(second, shared)))
    over = op.Greater(iou, iou_threshold)
    pairs = op.Compress(pairs, over, axis=0)  # [P, 3]: the suppressing pairs
    i_first = op.Compress(i_first, over, axis=0)  # [P, C]
    both = op.Compress(both, over, axis=0)
    box_i = op.Unsqueeze(op.Gather(pairs, op.Constant(value_int=1), axis=1), op.Constant(value_ints=[1]))
    box_j = op.Unsqueeze(op.Gather(pairs, op.Constant(value_int=2), axis=1), op.Constant(value_ints=[1]))
    problem = op.Mul(op.Add(op.Mul(op.Unsqueeze(op.Gather(pairs, op.Constant(value_int=0), axis=1),
                                                op.Constant(value_ints=[1])), cc),
                            op.Range(op.Constant(value_int=0), cc, op.Constant(value_int=1))), mm)  # [P, C]
    src = op.Add(problem, op.Where(i_first, box_i, box_j))
    dst = op.Add(problem, op.Where(i_first, box_j, box_i))
    keep = op.Reshape(both, op.Constant(value_ints=[-1]))
    src = op.Compress(op.Reshape(src, op.Constant(value_ints=[-1])), keep)
    dst = op.Unsqueeze(op.Compress(op.Reshape(dst, op.Constant(value_ints=[-1])), keep), op.Constant(value_ints=[1]))
    live = op.Reshape(op.Cast(candidate, to=FLOAT.dtype), op.Constant(value_ints=[-1]))
    none = op.Mul(live, op.Constant(value_float=0.0))
    alive = op.Identity(live)
    changed = op.Cast(op.Constant(value_int=1), to=BOOL.dtype)
    while changed:
        hits = op.ScatterND(none, dst, op.Gather(alive, src), reduction="add")
        now = op.Mul(live, op.Cast(op.LessOrEqual(hits, op.Constant(value_float=0.0)), to=FLOAT.dtype))
        changed = op.Greater(op.ReduceSum(op.Abs(op.Sub(now, alive)), keepdims=0), op.Constant(value_float=0.0))
        alive = op.Identity(now)
    # each class's first `limit` alive boxes in its order (a negative limit: none; IoU >= 0 is above a negative
    # threshold, so the first candidate suppresses every other one)
    limit = op.Where(op.Less(limit, op.Constant(value_int=0)), mm, limit)
    limit = op.Where(op.Less(iou_threshold, op.Constant(value_float=0.0)), op.Min(limit, op.Constant(value_int=1)),
                     limit)
    in_order = op.GatherElements(op.Reshape(alive, shape, allowzero=1), order, axis=2)
    count = op.CumSum(in_order, op.Constant(value_int=2))
    chosen = op.And(op.Greater(in_order, op.Constant(value_float=0.0)),
                    op.LessOrEqual(count, op.Cast(limit, to=FLOAT.dtype)))
    rows = op.Transpose(op.NonZero(chosen), perm=[1, 0])  # (image, class, rank)
    box = op.Unsqueeze(op.GatherND(order, rows), op.Constant(value_ints=[1]))
    ids = op.Concat(op.Slice(rows, op.Constant(value_ints=[0]), op.Constant(value_ints=[2]),
                             op.Constant(value_ints=[1])), box, axis=1)
    return ids, op.GatherND(best, rows)


@script(ov_ext, default_opset=op)
def NMSRotated(boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold,
               sort_result_descending: int = 1, output_type: int = 7, clockwise: int = 1):
    # NMSRotated-13(boxes [N, M, 5] (x_ctr, y_ctr, w, h, angle), scores [N, C, M], max_output_boxes_per_class,
    # iou_threshold, score_threshold) -> selected_indices [R, 3] (of output_type, an ONNX element type),
    # selected_scores [R, 3] f32, valid_outputs [1] (of output_type).
    s = op.Cast(scores, to=FLOAT.dtype)
    b = _nms_boxes_checked(op.Cast(boxes, to=FLOAT.dtype), s, op.Constant(value_ints=[5]))
    # counterclockwise angles turn clockwise, as the reference does
    sign = op.Where(op.Equal(op.Constant(value_int=clockwise), op.Constant(value_int=0)),
                    op.Constant(value_float=-1.0), op.Constant(value_float=1.0))
    b = op.Mul(b, op.Concat(op.Constant(value_floats=[1.0, 1.0, 1.0, 1.0]), op.Reshape(sign, op.Constant(
        value_ints=[1])), axis=0))
    limit = op.ReduceSum(op.Reshape(op.Cast(max_output_boxes_per_class, to=INT64.dtype), op.Constant(
        value_ints=[-1])), keepdims=0)
    iou = op.ReduceSum(op.Reshape(op.Cast(iou_threshold, to=FLOAT.dtype), op.Constant(value_ints=[-1])), keepdims=0)
    score = op.ReduceSum(op.Reshape(op.Cast(score_threshold, to=FLOAT.dtype), op.Constant(value_ints=[-1])),
                         keepdims=0)
    ids, picked = _nmsr_select(b, s, limit, iou, score)
    if op.Equal(op.Constant(value_int=sort_result_descending), op.Constant(value_int=1)):
        # by score, equal ones as they are (image, class, box ascending: within a class equal scores are in box
        # order), as the reference's stable sort
        _, by = op.TopK(picked, op.Shape(picked), axis=0, largest=1, sorted=1)
        rows = op.Gather(ids, by, axis=0)
        values = op.Gather(picked, by, axis=0)
    else:
        rows = op.Identity(ids)
        values = op.Identity(picked)
    indices, triples, valid = _nms_outputs(rows, values, output_type=output_type)
    return indices, triples, valid


#: Functions of the domain the body calls.
HELPERS = (_mc_same, _nms_boxes_checked, _nms_outputs, _nmsr_corners, _nmsr_next, _nmsr_inside, _nmsr_geometry,
           _nmsr_iou, _nmsr_pairs, _nmsr_select)
