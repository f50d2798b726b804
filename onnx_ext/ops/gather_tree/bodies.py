"""GatherTree-1's bodies: the helpers (onnxscript), the general body (the doubling steps in a Loop), ``Looped``
(the same for element types with a Where kernel) and ``Unrolled`` (MAX_TIME known: the steps unrolled).

Back-tracking is a composition of maps: the beam at time t of the path ending at beam j is
a[t] = Q_t(Q_t+1(...Q_T-1(j))), Q_t = parent_ids[t + 1] (the identity past the sequence's length).
Composing by doubling, R_t <- R_t o R_t+s for s = 1, 2, 4, ... (one GatherElements each, past the end the
identity), gives every a[t] in ceil(log2 T) steps instead of T sequential ones. The maps are flat indices into
the flattened [T, B, W] (the entry of (t, b, k) is the index of (t, b, R_t(k))): a step is one 1-D
GatherElements (onnxruntime's fastest form: ~7x faster than along an axis of [W, T, B] when B is 1), the final
maps index step_ids directly, and no Transpose is needed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from onnxscript import FLOAT, INT32, INT64, script

from ...domain import op, ov_ext
from ..base import NAT, Overload, words
from ..builder import BodyBuilder

@script(ov_ext, default_opset=op)
def _maps(step_ids, parent_ids, max_seq_len):
    # The maps R_t = Q_t as indices within a row of [T, B * W] (INT32: (t, b, k) -> b * W + Q_t(k), Q_t clipped
    # into [0, W)); `past` ([T, B * W] bool): t >= L, L = min(T, max_seq_len) per batch (a negative max_seq_len
    # read as unsigned: T); `q` (INT64 [T, B * W]): Q_t as it is; `stray`: some Q_t is outside [0, W).
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
    # (every comparison and Where at full shape or broadcasting a row over the steps: onnxruntime is slow when
    # it broadcasts anything else)
    width = op.Add(op.Mul(op.Shape(step_ids, start=1, end=2), op.Shape(step_ids, start=2, end=3)),
                   shapes_agree)  # (after the check: parent_ids is reshaped to it)
    rows = op.Concat(op.Shape(step_ids, start=0, end=1), width, axis=0)
    ends = op.Reshape(op.Expand(op.Unsqueeze(lengths, op.Constant(value_ints=[1])), op.Slice(
        shape, op.Constant(value_ints=[1]), op.Constant(value_ints=[3]))), op.Constant(value_ints=[1, -1]))
    times = op.Unsqueeze(op.Range(zero, t_len, one), op.Constant(value_ints=[1]))
    past = op.GreaterOrEqual(times, ends)
    # Q_t = parent_ids[t + 1] where t + 1 < L, else the identity; parent_ids rotated one step back (its row 0
    # lands on row T - 1: unused)
    follows = op.Less(op.Add(times, one), ends)
    raw = op.Reshape(op.Cast(parent_ids, to=INT64.dtype), rows)
    later = op.Concat(op.Slice(raw, op.Constant(value_ints=[1]), op.Constant(value_ints=[9223372036854775807])),
                      op.Slice(raw, op.Constant(value_ints=[0]), op.Constant(value_ints=[1])), axis=0)
    columns = op.Range(zero, op.ReduceSum(width, keepdims=0), one)
    beam = op.Unsqueeze(op.Mod(columns, beams), op.Constant(value_ints=[0]))  # [1, B * W]: k
    q = op.Where(follows, later, beam)
    # (the min and max of q: two vectorised reductions, no full-size comparison)
    stray = op.Or(op.Less(op.ReduceMin(q, keepdims=0), zero),
                  op.GreaterOrEqual(op.ReduceMax(q, keepdims=0), beams))
    maps = op.Cast(op.Add(op.Clip(q, zero, op.Sub(beams, one)), op.Sub(columns, beam)), to=INT32.dtype)
    return maps, past, q, stray


@script(ov_ext, default_opset=op)
def _composed(maps, shift, back):
    # One doubling step on [T, B * W] maps: R_t <- R_t o R_t+s for the rows t < T - s (shift: s, back: -s, [1]
    # INT64; GatherElements along the rows with fewer index rows than data rows), the last s rows as they are.
    end = op.Constant(value_ints=[9223372036854775807])
    return op.Concat(op.GatherElements(maps, op.Slice(maps, shift, end), axis=1), op.Slice(maps, back, end), axis=0)


@script(ov_ext, default_opset=op)
def _checked_maps(maps, q, stray):
    # The maps, after checking that each parent the paths follow (q of row t - 1 at the path's beam of row t)
    # lies in [0, W): when some q is outside it (else nothing to do), the followed ones are gathered.
    zero = op.Constant(value_int=0)
    if stray:
        followed = op.GatherElements(q, op.Slice(maps, op.Constant(value_ints=[1]), op.Constant(
            value_ints=[9223372036854775807])), axis=1)
        width = op.Shape(q, start=1, end=2)
        bad = op.Or(op.Less(op.ReduceMin(followed, keepdims=0), zero),
                    op.GreaterOrEqual(op.ReduceMax(followed, keepdims=0), op.ReduceSum(op.Div(
                        width, op.Shape(maps, start=1, end=2)), keepdims=0)))
        parent_ids_in_range = op.Gather(op.Constant(value_ints=[0]), op.Reshape(op.Cast(bad, to=INT64.dtype),
                                                                                op.Constant(value_ints=[1])))
        check = op.ReduceSum(parent_ids_in_range, keepdims=0)
    else:
        check = zero
    return op.Add(maps, op.Cast(check, to=INT32.dtype))


@script(ov_ext, default_opset=op)
def _values(step_ids, maps):
    # step_ids along the paths ([T, B * W]).
    return op.GatherElements(op.Reshape(step_ids, op.Shape(maps)), maps, axis=1)


@script(ov_ext, default_opset=op)
def _ended(values, end_token, past):
    # Where the output is end_token: past L, and after the first end_token within it (values compared
    # truncated to integers, as the reference's indices; before L the exclusive CumSum counts rows t' < L only).
    is_end = op.Equal(op.Cast(values, to=INT64.dtype), op.Cast(end_token, to=INT64.dtype))
    before = op.CumSum(op.Cast(is_end, to=INT32.dtype), op.Constant(value_int=0), exclusive=1)
    return op.Or(op.Greater(before, op.Cast(op.Constant(value_int=0), to=INT32.dtype)), past)


@script(ov_ext, default_opset=op)
def _tree_where(step_ids, end_token, maps, past):
    # The output, for types Where has a kernel for: step_ids along the paths, end_token where it ends.
    values = _values(step_ids, maps)
    return op.Reshape(op.Where(_ended(values, end_token, past), end_token, values), op.Shape(step_ids))


@script(ov_ext, default_opset=op)
def _tree_gather(step_ids, end_token, maps, past):
    # The output, for any type: step_ids ([T, B * W]) with a column of end_token appended, gathered along the
    # paths (at index B * W where it ends).
    values = _values(step_ids, maps)
    rows = op.Shape(maps)
    column = op.Concat(op.Shape(maps, start=0, end=1), op.Constant(value_ints=[1]), axis=0)
    end_column = op.Gather(op.Reshape(end_token, op.Constant(value_ints=[1])),
                           op.Cast(op.ConstantOfShape(column), to=INT64.dtype))  # (Expand: not for bf16)
    width = op.Cast(op.Shape(maps, start=1, end=2), to=INT32.dtype)
    at = op.Where(_ended(values, end_token, past), width, maps)
    return op.Reshape(op.GatherElements(op.Concat(op.Reshape(step_ids, rows), end_column, axis=1), at, axis=1),
                      op.Shape(step_ids))


@script(ov_ext, default_opset=op)
def _looped_maps(step_ids, parent_ids, max_seq_len):
    # The checked maps and `past` with MAX_TIME unknown: ceil(log2(MAX_TIME - 1)) doubling steps; up to 8 of them
    # (MAX_TIME <= 257) unrolled in an If (a step past the end changes nothing), more in a Loop, two per
    # iteration (onnxruntime's Loop costs about a step per iteration).
    maps, past, q, stray = _maps(step_ids, parent_ids, max_seq_len)
    spans = op.Cast(op.Shape(step_ids, start=0, end=1), to=FLOAT.dtype)
    steps = op.Cast(op.Ceil(op.Div(op.Log(op.Max(op.Sub(spans, op.Constant(value_floats=[1.0])),
                                                 op.Constant(value_floats=[1.0]))),
                                   op.Log(op.Constant(value_floats=[2.0])))), to=INT64.dtype)
    if op.ReduceSum(steps, keepdims=0) <= op.Constant(value_int=8):
        r = _composed(maps, op.Constant(value_ints=[1]), op.Constant(value_ints=[-1]))
        r = _composed(r, op.Constant(value_ints=[2]), op.Constant(value_ints=[-2]))
        r = _composed(r, op.Constant(value_ints=[4]), op.Constant(value_ints=[-4]))
        r = _composed(r, op.Constant(value_ints=[8]), op.Constant(value_ints=[-8]))
        r = _composed(r, op.Constant(value_ints=[16]), op.Constant(value_ints=[-16]))
        r = _composed(r, op.Constant(value_ints=[32]), op.Constant(value_ints=[-32]))
        r = _composed(r, op.Constant(value_ints=[64]), op.Constant(value_ints=[-64]))
        composed = _composed(r, op.Constant(value_ints=[128]), op.Constant(value_ints=[-128]))
    else:
        pairs = op.Div(op.Add(op.ReduceSum(steps, keepdims=0), op.Constant(value_int=1)), op.Constant(value_int=2))
        composed = maps
        for i in range(pairs):  # (one loop-carried value: onnxscript orders several by
            shift = op.Pow(op.Constant(value_ints=[4]), i)  # set iteration, which changes per process)
            twice = op.Mul(shift, op.Constant(value_ints=[2]))
            composed = _composed(_composed(composed, shift, op.Neg(shift)), twice, op.Neg(twice))
    return _checked_maps(composed, q, stray), past


@script(ov_ext, default_opset=op)
def GatherTree(step_ids, parent_ids, max_seq_len, end_token):
    # GatherTree-1(step_ids: T [MAX_TIME, BATCH, BEAM], parent_ids: T [..], max_seq_len: T [BATCH],
    #              end_token: T scalar) -> T [MAX_TIME, BATCH, BEAM]
    # General body: the doubling steps in a Loop; end_token gathered (any type).
    maps, past = _looped_maps(step_ids, parent_ids, max_seq_len)
    return _tree_gather(step_ids, end_token, maps, past)


HELPERS = (_maps, _composed, _checked_maps, _looped_maps, _values, _ended, _tree_where, _tree_gather)


@dataclass(frozen=True)
class Unrolled(Overload):
    """GatherTree-1 with MAX_TIME known: its doubling steps unrolled (``steps``); ``where``: the element type
    has a Where kernel (one GatherElements of step_ids, then Where), else ``anytype`` (step_ids and end_token
    gathered: two GatherElements)."""

    SPELLING = "steps{steps}[_{where}]"
    steps: Annotated[int, NAT]
    where: Annotated[bool, words({"anytype": False})] = True

    def build(self, g: BodyBuilder) -> str:
        maps, past, q, stray = g.call(_maps, "step_ids", "parent_ids", "max_seq_len", outputs=4)
        for k in range(self.steps):  # (constant shifts: nothing computed at run time but the steps)
            maps = g.call(_composed, maps, g.const([2**k]), g.const([-2**k]))
        maps = g.call(_checked_maps, maps, q, stray)
        return g.call(_tree_where if self.where else _tree_gather, "step_ids", "end_token", maps, past)


@dataclass(frozen=True)
class Looped(Overload):
    """GatherTree-1 with MAX_TIME unknown and an element type Where has a kernel for: the general body's Loop,
    then one GatherElements of step_ids and Where (the general body gathers end_token too: two)."""

    SPELLING = "looped"

    def build(self, g: BodyBuilder) -> str:
        maps, past = g.call(_looped_maps, "step_ids", "parent_ids", "max_seq_len", outputs=2)
        return g.call(_tree_where, "step_ids", "end_token", maps, past)


def doubling_steps(max_time: int) -> int:
    """The doubling steps that compose the T - 1 maps Q_0..Q_T-2 (Q_T-1 is the identity): 2^k >= T - 1."""
    return max(max_time - 2, 0).bit_length()
