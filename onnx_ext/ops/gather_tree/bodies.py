"""GatherTree-1's bodies: the helpers (onnxscript), the general body (the doubling steps in a Loop), ``Looped``
(the same for element types with a Where kernel) and ``Unrolled`` (MAX_TIME known: the steps unrolled).

Back-tracking is a composition of maps: the beam at time t of the path ending at beam j is
a[t] = Q_t(Q_t+1(...Q_T-1(j))), Q_t = parent_ids[t + 1] (the identity past the sequence's length).
Composing by doubling, R_t <- R_t o R_t+s for s = 1, 2, 4, ... (one GatherElements each, past the end the
identity), gives every a[t] in ceil(log2 T) steps instead of T sequential ones."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import onnx
from onnxscript import FLOAT, INT32, INT64, UINT8, script

from ...domain import op, ov_ext
from ..base import NAT, Overload, words
from ..builder import BodyBuilder


@script(ov_ext, default_opset=op)
def _maps(step_ids, parent_ids, max_seq_len):
    # The maps Q_t ([T, B, W] INT32, clipped into [0, W)), the identity maps I ([T, B, W]), and where
    # t < L ([T, B, W] bool), L = min(T, max_seq_len) per batch (a negative max_seq_len read as unsigned: T).
    # (Full-shape operands: onnxruntime's Where and And are slow when they broadcast.)
    shape = op.Shape(step_ids)
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    t_len = op.Gather(shape, zero)
    beams = op.Gather(shape, op.Constant(value_int=2))
    same = op.And(op.Equal(op.Size(shape), op.Constant(value_int=3)),
                  op.Equal(op.ReduceSum(op.Cast(op.Not(op.Equal(shape, op.Shape(parent_ids))), to=INT64.dtype),
                                        keepdims=0), zero))
    same = op.And(same, op.Equal(op.Shape(max_seq_len), op.Slice(shape, op.Constant(value_ints=[1]),
                                                                   op.Constant(value_ints=[2]))))
    shapes_agree = op.Gather(op.Constant(value_ints=[0]), op.Reshape(op.Cast(op.Not(same), to=INT64.dtype),
                                                                    op.Constant(value_ints=[1])))
    msl = op.Cast(max_seq_len, to=INT64.dtype)
    lengths = op.Add(op.Where(op.Less(msl, zero), t_len, op.Min(msl, t_len)), shapes_agree)
    times = op.Reshape(op.Range(zero, t_len, one), op.Constant(value_ints=[-1, 1, 1]))
    # (the lengths expanded over the beams before the comparison: a bool Expand takes twice as long)
    row = op.Concat(op.Constant(value_ints=[1]), op.Slice(shape, op.Constant(value_ints=[1]),
                                                          op.Constant(value_ints=[3])), axis=0)
    inside = op.Less(times, op.Expand(op.Reshape(lengths, op.Constant(value_ints=[1, -1, 1])), row))
    iota = op.Cast(op.Reshape(op.Range(zero, beams, one), op.Constant(value_ints=[1, 1, -1])), to=INT32.dtype)
    identity = op.Expand(iota, shape)
    # Q_t = parent_ids[t + 1] where t + 1 < L: parent_ids (INT32: onnxruntime's GatherElements takes 4 ns
    # per int32 element, 7 per int64) shifted one step back, and `inside` likewise
    p = op.Cast(parent_ids, to=INT32.dtype)
    after = op.Reshape(t_len, op.Constant(value_ints=[1]))
    following = op.Concat(op.Slice(p, op.Constant(value_ints=[1]), after), op.Slice(identity, op.Constant(
        value_ints=[0]), op.Constant(value_ints=[1])), axis=0)
    next_inside = op.Concat(op.Slice(inside, op.Constant(value_ints=[1]), after), op.Slice(
        op.Not(inside), op.Constant(value_ints=[0]), op.Constant(value_ints=[1])), axis=0)
    q = op.Clip(op.Where(next_inside, following, identity), op.Cast(zero, to=INT32.dtype),
                op.Cast(op.Sub(beams, one), to=INT32.dtype))
    return q, identity, inside


@script(ov_ext, default_opset=op)
def _composed(r, identity, shift):
    # One doubling step on beam-first maps ([W, T, B]): R_t o R_t+shift, the identity past the end (shift: [1]).
    axis = op.Constant(value_ints=[1])
    later = op.Concat(op.Slice(r, shift, op.Constant(value_ints=[9223372036854775807]), axis),
                      op.Slice(identity, op.Constant(value_ints=[0]), shift, axis), axis=1)
    return op.GatherElements(r, later, axis=0)


@script(ov_ext, default_opset=op)
def _checked_paths(parent_ids, paths, inside):
    # The paths, after checking that each parent they follow (parent_ids at 1 <= t < L along them) lies in
    # [0, W): when some parent there is outside it (else nothing to do), the followed ones are gathered.
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    raw = op.Cast(parent_ids, to=INT64.dtype)
    beams = op.Gather(op.Shape(raw), op.Constant(value_int=2))
    first = op.Slice(inside, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    at = op.Concat(op.Xor(first, first), op.Slice(inside, op.Constant(value_ints=[1]),
                                                  op.Shape(raw, start=0, end=1)), axis=0)  # 1 <= t < L
    outside = op.Or(op.Less(raw, zero), op.GreaterOrEqual(raw, beams))
    # (any: ReduceMax of uint8, ~20x faster than ReduceSum of int64 in onnxruntime)
    if op.ReduceMax(op.Cast(op.And(at, outside), to=UINT8.dtype), keepdims=0) > op.Cast(zero, to=UINT8.dtype):
        followed = op.GatherElements(outside, paths, axis=2)  # (bool: every type)
        bad = op.ReduceSum(op.Cast(op.And(at, followed), to=INT64.dtype), keepdims=0)
        parent_ids_in_range = op.Gather(op.Constant(value_ints=[0]), op.Reshape(op.Min(bad, one),
                                                                                op.Constant(value_ints=[1])))
        check = op.ReduceSum(parent_ids_in_range, keepdims=0)
    else:
        check = zero
    return op.Add(paths, op.Cast(check, to=INT32.dtype))


@script(ov_ext, default_opset=op)
def _ended(values, end_token, inside):
    # Where the output is end_token: past L, and after the first end_token within it (values compared
    # truncated to integers, as the reference's indices).
    is_end = op.And(op.Equal(op.Cast(values, to=INT64.dtype), op.Cast(end_token, to=INT64.dtype)), inside)
    before = op.CumSum(op.Cast(is_end, to=INT32.dtype), op.Constant(value_int=0), exclusive=1)
    return op.Or(op.Greater(before, op.Cast(op.Constant(value_int=0), to=INT32.dtype)), op.Not(inside))


@script(ov_ext, default_opset=op)
def _tree_where(step_ids, end_token, paths, inside):
    # The output, for types Where has a kernel for: step_ids along the paths, end_token where it ends.
    values = op.GatherElements(step_ids, paths, axis=2)
    return op.Where(_ended(values, end_token, inside), end_token, values)


@script(ov_ext, default_opset=op)
def _tree_gather(step_ids, end_token, paths, inside):
    # The output, for any type: step_ids with a column of end_token appended, gathered along the paths
    # (at index W where it ends).
    values = op.GatherElements(step_ids, paths, axis=2)
    shape = op.Shape(step_ids)
    beams = op.Cast(op.Gather(shape, op.Constant(value_int=2)), to=INT32.dtype)
    column = op.Concat(op.Slice(shape, op.Constant(value_ints=[0]), op.Constant(value_ints=[2])),
                       op.Constant(value_ints=[1]), axis=0)
    end_column = op.Gather(op.Reshape(end_token, op.Constant(value_ints=[1])),
                           op.Cast(op.ConstantOfShape(column), to=INT64.dtype))  # (Expand: not for bf16)
    return op.GatherElements(op.Concat(step_ids, end_column, axis=2),
                             op.Where(_ended(values, end_token, inside), beams, paths), axis=2)


@script(ov_ext, default_opset=op)
def _looped_paths(step_ids, parent_ids, max_seq_len):
    # The checked paths and `inside` with MAX_TIME unknown: the doubling steps in a Loop, ceil(log2(MAX_TIME - 1))
    # of them, two per iteration (shifts 4^i and 2 * 4^i: onnxruntime's Loop costs about a step per iteration;
    # a step past the end composes with the identity: no change).
    q, identity, inside = _maps(step_ids, parent_ids, max_seq_len)
    maps = op.Cast(op.Shape(step_ids, start=0, end=1), to=FLOAT.dtype)
    steps = op.Cast(op.Ceil(op.Div(op.Log(op.Max(op.Sub(maps, op.Constant(value_floats=[1.0])),
                                                 op.Constant(value_floats=[1.0]))),
                                   op.Log(op.Constant(value_floats=[2.0])))), to=INT64.dtype)
    r = op.Transpose(q, perm=[2, 0, 1])  # (beam-first: onnxruntime's GatherElements is ~1.6x faster on axis 0)
    beams_first = op.Transpose(identity, perm=[2, 0, 1])
    pairs = op.Div(op.Add(op.ReduceSum(steps, keepdims=0), op.Constant(value_int=1)), op.Constant(value_int=2))
    for i in range(pairs):  # (one loop-carried value: onnxscript orders several by
        shift = op.Pow(op.Constant(value_ints=[4]), i)  # set iteration, which changes from process to process)
        r = _composed(_composed(r, beams_first, shift), beams_first, op.Mul(shift, op.Constant(value_ints=[2])))
    paths = _checked_paths(parent_ids, op.Transpose(r, perm=[1, 2, 0]), inside)
    return paths, inside


@script(ov_ext, default_opset=op)
def GatherTree(step_ids, parent_ids, max_seq_len, end_token):
    # GatherTree-1(step_ids: T [MAX_TIME, BATCH, BEAM], parent_ids: T [..], max_seq_len: T [BATCH],
    #              end_token: T scalar) -> T [MAX_TIME, BATCH, BEAM]
    # General body: the doubling steps in a Loop; end_token gathered (any type).
    paths, inside = _looped_paths(step_ids, parent_ids, max_seq_len)
    return _tree_gather(step_ids, end_token, paths, inside)


HELPERS = (_maps, _composed, _checked_paths, _looped_paths, _ended, _tree_where, _tree_gather)


@dataclass(frozen=True)
class Unrolled(Overload):
    """GatherTree-1 with MAX_TIME known: its doubling steps unrolled (``steps``); ``where``: the element type
    has a Where kernel (one GatherElements of step_ids, then Where), else ``anytype`` (step_ids and a column of
    end_token gathered: two GatherElements)."""

    SPELLING = "steps{steps}[_{where}]"
    steps: Annotated[int, NAT]
    where: Annotated[bool, words({"anytype": False})] = True

    def build(self, g: BodyBuilder) -> str:
        q, identity, inside = g.fresh("maps"), g.fresh("identity"), g.fresh("inside")
        _call(g, _maps, ["step_ids", "parent_ids", "max_seq_len"], [q, identity, inside])
        # beam-first maps ([W, T, B]): onnxruntime's GatherElements is ~1.6x faster on axis 0 than on the last
        r, beams_first = g("Transpose", q, perm=[2, 0, 1]), g("Transpose", identity, perm=[2, 0, 1])
        for k in range(self.steps):  # (constant slice bounds: nothing computed at run time but the gather)
            later = g("Concat", g("Slice", r, g.const([2**k]), g.const([2**63 - 1]), g.const([1])),
                      g("Slice", beams_first, g.const([0]), g.const([2**k]), g.const([1])), axis=1)
            r = g("GatherElements", r, later, axis=0)
        paths = _call(g, _checked_paths, ["parent_ids", g("Transpose", r, perm=[1, 2, 0]), inside])
        return _call(g, _tree_where if self.where else _tree_gather, ["step_ids", "end_token", paths, inside])


@dataclass(frozen=True)
class Looped(Overload):
    """GatherTree-1 with MAX_TIME unknown and an element type Where has a kernel for: the general body's Loop,
    then one GatherElements of step_ids and Where (the general body gathers end_token too: two)."""

    SPELLING = "looped"

    def build(self, g: BodyBuilder) -> str:
        paths, inside = g.fresh("paths"), g.fresh("inside")
        _call(g, _looped_paths, ["step_ids", "parent_ids", "max_seq_len"], [paths, inside])
        return _call(g, _tree_where, ["step_ids", "end_token", paths, inside])


def _call(g: BodyBuilder, fn, inputs: list[str], outputs: list[str] | None = None) -> str:
    outputs = outputs or [g.fresh(fn.name.lstrip("_"))]
    g.nodes.append(onnx.helper.make_node(fn.name, inputs, outputs, domain=ov_ext.domain))
    return outputs[0]


def doubling_steps(max_time: int) -> int:
    """The doubling steps that compose the T - 1 maps Q_0..Q_T-2 (Q_T-1 is the identity): 2^k >= T - 1."""
    return max(max_time - 2, 0).bit_length()
