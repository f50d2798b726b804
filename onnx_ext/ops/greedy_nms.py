"""Greedy NMS exact to OpenVINO's Caffe/Detectron-style references (Proposal, GenerateProposals, the
ExperimentalDetectron ops), as an onnxscript helper of the domain: ``_greedy_nms``.

Those references keep a box unless a kept box before it overlaps it (touching counts) with an intersection over
union above the threshold, widths and heights counted with a +1 ``offset`` in Caffe's pixel convention: ONNX
NonMaxSuppression computes neither the offset nor the overlap test (it would suppress boxes a gap below one
pixel apart). Here the candidates go by blocks of ``block`` in order: a block's boxes that a kept box suppresses
die, then the block's own greedy pass is ``_greedy_fixed_point`` (ExperimentalDetectronDetectionOutput runs it
for every class at once); its survivors are kept, up to ``max_out``. Cost: the IoU of each block against the
kept boxes and itself, so about as many blocks as it takes to keep ``max_out`` boxes.
"""

from __future__ import annotations

from onnxscript import BOOL, FLOAT, INT64, script

from ..domain import op, ov_ext


@script(ov_ext, default_opset=op)
def _nms_suppressed_by(kept, area_kept, blk, area_blk, threshold, offset):
    # kept [I, 4], blk [J, 4] (x0, y0, x1, y1), their areas [I], [J] -> [I, J]: kept i suppresses blk j. As the
    # references: the boxes overlap (x0_i <= x1_j, x0_j <= x1_i, the same in y: touching counts) and
    # max(0, min(x1) - max(x0) + offset) * max(0, ...y...) / (area_i + area_j - that) > threshold.
    kt = op.Unsqueeze(op.Transpose(kept, perm=[1, 0]), op.Constant(value_ints=[2]))  # [4, I, 1]
    bt = op.Unsqueeze(op.Transpose(blk, perm=[1, 0]), op.Constant(value_ints=[1]))  # [4, 1, J]
    near = op.Constant(value_ints=[0])
    mid = op.Constant(value_ints=[2])
    far = op.Constant(value_ints=[4])
    axis = op.Constant(value_ints=[0])
    k0 = op.Slice(kt, near, mid, axis)  # [2, I, 1]: x0, y0 of the kept
    k1 = op.Slice(kt, mid, far, axis)
    b0 = op.Slice(bt, near, mid, axis)
    b1 = op.Slice(bt, mid, far, axis)
    apart = op.Or(op.Greater(k0, b1), op.Greater(b0, k1))  # [2, I, J]
    overlap = op.Not(op.Or(op.Gather(apart, op.Constant(value_int=0), axis=0),
                           op.Gather(apart, op.Constant(value_int=1), axis=0)))
    sides = op.Max(op.Add(op.Sub(op.Min(k1, b1), op.Max(k0, b0)), offset), op.Constant(value_float=0.0))
    inter = op.Mul(op.Gather(sides, op.Constant(value_int=0), axis=0), op.Gather(sides, op.Constant(value_int=1),
                                                                                    axis=0))
    union = op.Sub(op.Add(op.Unsqueeze(area_kept, op.Constant(value_ints=[1])),
                          op.Unsqueeze(area_blk, op.Constant(value_ints=[0]))), inter)
    return op.And(overlap, op.Less(threshold, op.Div(inter, union)))


@script(ov_ext, default_opset=op)
def _greedy_fixed_point(free, within):
    # free [..., J] bool: the block's boxes nothing before it suppresses; within [..., J, J] f32: 1 where i < j of
    # the block and i suppresses j -> alive [..., J]: the block's greedy pass, the fixed point of alive[j] = free[j]
    # and no alive i suppresses j (Jacobi from all free: exact after as many steps as the longest suppression
    # chain, one MatMul each).
    alive = op.Identity(free)
    changed = op.Cast(op.Constant(value_int=1), to=BOOL.dtype)
    while changed:
        hits = op.MatMul(op.Unsqueeze(op.Cast(alive, to=FLOAT.dtype), op.Constant(value_ints=[-2])), within)
        now = op.And(free, op.Squeeze(op.LessOrEqual(hits, op.Constant(value_float=0.0)),
                                      op.Constant(value_ints=[-2])))
        changed = op.Cast(op.ReduceMax(op.Cast(op.Xor(now, alive), to=INT64.dtype), keepdims=0), to=BOOL.dtype)
        alive = op.Identity(now)
    return alive


@script(ov_ext, default_opset=op)
def _greedy_nms(boxes, threshold, offset, max_out, block):
    # boxes [K, 4] best first, threshold and offset f32 scalars, max_out and block int64 scalars -> the indices
    # [M] (M <= max_out) of the boxes the greedy pass keeps, in order.
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    k = op.Squeeze(op.Slice(op.Shape(boxes), op.Constant(value_ints=[0]), op.Constant(value_ints=[1])))
    x0 = op.Gather(boxes, zero, axis=1)
    y0 = op.Gather(boxes, one, axis=1)
    x1 = op.Gather(boxes, op.Constant(value_int=2), axis=1)
    y1 = op.Gather(boxes, op.Constant(value_int=3), axis=1)
    area = op.Mul(op.Add(op.Sub(x1, x0), offset), op.Add(op.Sub(y1, y0), offset))
    kept = op.Cast(op.ConstantOfShape(op.Constant(value_ints=[0])), to=INT64.dtype)
    start = op.Identity(zero)
    go = op.And(op.Less(start, k), op.Less(zero, max_out))
    while go:
        end = op.Min(op.Add(start, block), k)
        index = op.Range(start, end, one)
        blk = op.Gather(boxes, index, axis=0)
        area_blk = op.Gather(area, index, axis=0)
        by_kept = _nms_suppressed_by(op.Gather(boxes, kept, axis=0), op.Gather(area, kept, axis=0), blk, area_blk,
                                     threshold, offset)
        # (a sum, not a max: no kept box yet reduces an empty axis)
        free = op.Not(op.Greater(op.ReduceSum(op.Cast(by_kept, to=INT64.dtype), op.Constant(value_ints=[0]),
                                              keepdims=0), zero))
        n = op.Shape(index)
        earlier = op.Less(op.Unsqueeze(op.Range(zero, op.Squeeze(n), one), op.Constant(value_ints=[1])),
                          op.Unsqueeze(op.Range(zero, op.Squeeze(n), one), op.Constant(value_ints=[0])))
        within = op.Cast(op.And(_nms_suppressed_by(blk, area_blk, blk, area_blk, threshold, offset), earlier),
                         to=FLOAT.dtype)
        alive = _greedy_fixed_point(free, within)
        room = op.Reshape(op.Sub(max_out, op.Size(kept)), op.Constant(value_ints=[1]))
        kept = op.Concat(kept, op.Slice(op.Compress(index, alive), op.Constant(value_ints=[0]), room), axis=0)
        start = op.Identity(end)
        go = op.And(op.Less(start, k), op.Less(op.Size(kept), max_out))
    return kept


#: The helpers the bodies that run the greedy NMS attach.
HELPERS = (_nms_suppressed_by, _greedy_fixed_point, _greedy_nms)
