"""Gather-8's general bodies in onnxscript, and the families that call their helpers, built node by node:
``PlainRanked``, ``BatchedRanked`` (ranks known, axis at run time)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import onnx
from onnxscript import INT64, script

from ...domain import op, ov_ext
from ..base import NAT, Overload
from ..builder import BodyBuilder

# --- function bodies -------------------------------------------------------------


@script(ov_ext, default_opset=op)
def _zero_filled(data3, idx, valid, n):
    # Gather data3 [P, n, I] on axis 1 with zeros where ~valid, for any element
    # type (Where has no kernel for bf16, i16, u16, u64, bool): gather the valid
    # rows, append one zero row, and gather again pointing invalid rows at it.
    zero = op.Constant(value_int=0)
    dshape = op.Shape(data3)
    p = op.Slice(dshape, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    inner = op.Slice(dshape, op.Constant(value_ints=[2]), op.Constant(value_ints=[3]))
    zero_row = op.CastLike(op.ConstantOfShape(op.Concat(p, op.Constant(value_ints=[1]), inner, axis=0)), data3)
    m = op.Size(idx)
    if op.Equal(op.ReduceSum(n, keepdims=0), zero):
        # n == 0: every index is invalid and data3 has no row to gather from.
        filled = op.CastLike(
            op.ConstantOfShape(op.Concat(p, op.Reshape(m, op.Constant(value_ints=[1])), inner, axis=0)), data3)
    else:
        safe = op.Gather(data3, op.Where(valid, idx, zero), axis=1)
        extended = op.Concat(safe, zero_row, axis=1)
        filled = op.Gather(extended, op.Where(valid, op.Range(zero, m, op.Constant(value_int=1)), m), axis=1)
    return filled


@script(ov_ext, default_opset=op)
def _gather_plain_rows(data, indices, axis):
    # batch_dims == 0: data seen as [P, n, I], one Gather on axis 1 -> [P, M, I] for the M
    # indices; and the axis, normalised and checked ([1]).
    shape = op.Shape(data)
    rank = op.Size(shape)
    zero = op.Constant(value_int=0)
    one = op.Constant(value_ints=[1])
    ax = op.Cast(op.Reshape(axis, op.Constant(value_ints=[-1])), to=INT64.dtype)
    ax = op.Where(op.Less(ax, zero), op.Add(ax, rank), ax)
    axis_in_range = op.And(op.GreaterOrEqual(ax, zero), op.Less(ax, rank))
    axis_checked = op.Add(ax, op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Not(axis_in_range), to=INT64.dtype)))
    ax1 = op.Add(axis_checked, one)
    n = op.Gather(shape, axis_checked)  # Gather, not Slice: OpenVINO's reader then knows n has one element
    outer = op.ReduceProd(op.Slice(shape, op.Constant(value_ints=[0]), axis_checked), keepdims=1)
    inner = op.ReduceProd(op.Slice(shape, ax1, op.Constant(value_ints=[9223372036854775807])), keepdims=1)
    data3 = op.Reshape(data, op.Concat(outer, n, inner, axis=0), allowzero=1)

    idx = op.Cast(op.Reshape(indices, op.Constant(value_ints=[-1])), to=INT64.dtype)
    # Fast path: every index in [-n, n-1], which ONNX Gather takes as they are
    # (two reductions instead of normalising and masking every index).
    n_scalar = op.ReduceSum(n, keepdims=0)
    lowest = op.ReduceMin(idx, keepdims=0)  # empty indices: max int64, so the fast path
    highest = op.ReduceMax(idx, keepdims=0)
    if op.And(op.GreaterOrEqual(lowest, op.Neg(n_scalar)), op.Less(highest, n_scalar)):
        gathered = op.Gather(data3, idx, axis=1)
    else:
        idx_normalized = op.Where(op.Less(idx, zero), op.Add(idx, n), idx)
        valid = op.And(op.GreaterOrEqual(idx_normalized, zero), op.Less(idx_normalized, n))
        gathered = _zero_filled(data3, idx_normalized, valid, n)
    return gathered, axis_checked


@script(ov_ext, default_opset=op)
def gather_plain(data, indices, axis, batch_dims: int = 0, version: int = 8):
    # batch_dims == 0, ranks unknown: the rows, reshaped to data.shape[:axis] + indices.shape + data.shape[axis+1:].
    gathered, ax = _gather_plain_rows(data, indices, axis)
    shape = op.Shape(data)
    out_shape = op.Concat(op.Slice(shape, op.Constant(value_ints=[0]), ax), op.Shape(indices),
                          op.Slice(shape, op.Add(ax, op.Constant(value_ints=[1])),
                                   op.Constant(value_ints=[9223372036854775807])), axis=0)
    return op.Reshape(gathered, out_shape, allowzero=1)




@script(ov_ext, default_opset=op)
def _gather_batched_rows(data, indices, axis, batch_dims: int):
    # Any batch_dims: data seen as [B*P*n, I]; flat row indices (b*P + p)*n + idx[b, m] select
    # rows with one Gather on axis 0 -> [B*P*M, I]; and batch_dims and the axis, normalised
    # and checked ([1] each).
    shape = op.Shape(data)
    rank = op.Size(shape)
    ishape = op.Shape(indices)
    irank = op.Size(ishape)
    zero = op.Constant(value_int=0)
    one = op.Constant(value_ints=[1])
    big = op.Constant(value_ints=[9223372036854775807])
    ax = op.Cast(op.Reshape(axis, op.Constant(value_ints=[-1])), to=INT64.dtype)
    ax = op.Where(op.Less(ax, zero), op.Add(ax, rank), ax)
    b = op.Reshape(op.Constant(value_int=batch_dims), op.Constant(value_ints=[1]))
    b = op.Where(op.Less(b, zero), op.Add(b, irank), b)
    # OpenVINO: 0 <= axis < rank, 0 <= batch_dims <= axis, batch_dims <= rank(indices)
    # and equal leading batch dims.
    ok = op.And(op.GreaterOrEqual(ax, zero), op.Less(ax, rank))
    ok = op.And(ok, op.And(op.GreaterOrEqual(b, zero), op.LessOrEqual(b, ax)))
    ok = op.And(ok, op.LessOrEqual(b, irank))
    axis_and_batch_dims_valid = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Not(ok), to=INT64.dtype))
    ax = op.Add(ax, axis_and_batch_dims_valid)
    batch_shape = op.Slice(shape, op.Constant(value_ints=[0]), b)
    batch_dims_equal = op.Gather(
        op.Constant(value_ints=[0]),
        op.Cast(op.Not(op.Equal(batch_shape, op.Slice(ishape, op.Constant(value_ints=[0]), b))), to=INT64.dtype),
    )
    b = op.Add(b, op.ReduceSum(batch_dims_equal, keepdims=1))

    ax1 = op.Add(ax, one)
    n = op.Gather(shape, ax)  # Gather, not Slice: OpenVINO then knows n has one element
    batch = op.ReduceProd(batch_shape, keepdims=1)
    bp = op.ReduceProd(op.Slice(shape, op.Constant(value_ints=[0]), ax), keepdims=1)
    p = op.ReduceProd(op.Slice(shape, b, ax), keepdims=1)
    inner = op.ReduceProd(op.Slice(shape, ax1, big), keepdims=1)
    rows = op.Reshape(data, op.Concat(op.Mul(bp, n), inner, axis=0), allowzero=1)

    idx = op.Cast(indices, to=INT64.dtype)
    m = op.ReduceProd(op.Slice(ishape, b, big), keepdims=1)
    idx = op.Reshape(idx, op.Concat(batch, one, m, axis=0), allowzero=1)  # [B, 1, M]
    idx = op.Where(op.Less(idx, zero), op.Add(idx, n), idx)
    valid = op.And(op.GreaterOrEqual(idx, zero), op.Less(idx, n))
    base = op.Reshape(
        op.Mul(op.Range(zero, op.ReduceSum(bp, keepdims=0), op.Constant(value_int=1)), n),
        op.Concat(batch, p, one, axis=0),
        allowzero=1,
    )  # [B, P, 1]
    flat = op.Reshape(op.Add(base, idx), op.Constant(value_ints=[-1]))
    valid_flat = op.Reshape(op.Expand(valid, op.Shape(op.Add(base, idx))), op.Constant(value_ints=[-1]))
    n_invalid = op.ReduceSum(op.Cast(op.Not(valid), to=INT64.dtype), keepdims=0)
    if op.Equal(n_invalid, zero):
        gathered = op.Gather(rows, flat, axis=0)
    else:
        zero_1d = op.Constant(value_ints=[0])
        gathered = op.Squeeze(
            _zero_filled(op.Unsqueeze(rows, zero_1d), op.Where(valid_flat, flat, zero), valid_flat, op.Mul(bp, n)),
            zero_1d,
        )
    return gathered, b, ax


@script(ov_ext, default_opset=op)
def Gather(data, indices, axis, batch_dims: int = 0, version: int = 8):
    # Gather-8(data: T, indices: int, axis: int scalar; batch_dims: int = 0) -> T
    # General body (any batch_dims, ranks unknown): the rows, reshaped to
    # data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis+1:].
    gathered, b, ax = _gather_batched_rows(data, indices, axis, batch_dims=batch_dims)
    shape = op.Shape(data)
    big = op.Constant(value_ints=[9223372036854775807])
    out_shape = op.Concat(op.Slice(shape, op.Constant(value_ints=[0]), ax), op.Slice(op.Shape(indices), b, big),
                          op.Slice(shape, op.Add(ax, op.Constant(value_ints=[1])), big), axis=0)
    return op.Reshape(gathered, out_shape, allowzero=1)


#: Functions of the domain the bodies call.
HELPERS = (_zero_filled, _gather_plain_rows, _gather_batched_rows)


# --- ranks known, axis at run time ---------------------------------------------------------------
#
# The general bodies end with a Reshape to a shape vector whose length depends on the axis: a
# Reshape of dynamic rank, which OpenVINO's CPU plugin refuses to compile. With the ranks r of
# data and k of indices known (and batch_dims, normalised, b), the output has r + k - b - 1
# dims: dim j is data dim j before the axis, then indices dim b + j - axis, then data dim
# j - (k - b) + 1, picked from Concat(Shape(data), Shape(indices)) by one Gather at indices
# that depend on the runtime axis.


@dataclass(frozen=True)
class PlainRanked(Overload):
    """Gather-8(data: rank r, indices: rank k, axis at run time; batch_dims 0)."""

    SPELLING = "plain_rank{rank}_{indices_rank}"
    rank: Annotated[int, NAT]
    indices_rank: Annotated[int, NAT]

    def valid(self) -> bool:
        return self.rank >= 1

    def build(self, g: BodyBuilder) -> str:
        return _ranked(g, self.rank, self.indices_rank, 0)


@dataclass(frozen=True)
class BatchedRanked(Overload):
    """Gather-8(data: rank r, indices: rank k, axis at run time; batch_dims b > 0, normalised)."""

    SPELLING = "batched_rank{rank}_{indices_rank}_b{batch_dims}"
    rank: Annotated[int, NAT]
    indices_rank: Annotated[int, NAT]
    batch_dims: Annotated[int, NAT]

    def valid(self) -> bool:
        return 1 <= self.batch_dims <= min(self.rank - 1, self.indices_rank)

    def build(self, g: BodyBuilder) -> str:
        return _ranked(g, self.rank, self.indices_rank, self.batch_dims)


def _ranked(g: BodyBuilder, r: int, k: int, b: int) -> str:
    rows, ax = g.fresh("rows"), g.fresh("axis")
    if b == 0:
        g.nodes.append(onnx.helper.make_node(_gather_plain_rows.name, ["data", "indices", "axis"], [rows, ax],
                                             domain=ov_ext.domain))
    else:
        g.nodes.append(onnx.helper.make_node(_gather_batched_rows.name, ["data", "indices", "axis"],
                                             [rows, g.fresh("batch_dims"), ax], domain=ov_ext.domain, batch_dims=b))
    m = k - b  # indices dims in the output
    j = g.const(list(range(r + k - b - 1)))
    from_indices = g("Where", g("Less", j, g("Add", ax, g.const([m]))), g("Add", g("Sub", j, ax), g.const([r + b])),
                     g("Add", j, g.const([1 - m])))
    pick = g("Where", g("Less", j, ax), j, from_indices)
    out_shape = g("Gather", g("Concat", g("Shape", "data"), g("Shape", "indices"), axis=0), pick)
    return g("Reshape", rows, out_shape, allowzero=1)
