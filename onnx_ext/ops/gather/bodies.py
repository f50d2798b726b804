"""Gather-8's bodies: the general ones in onnxscript, and the overload families built node by node
(``PlainRanked``, ``BatchedRanked``: ranks known, axis at run time; ``OnAxis``: a constant axis).

One module: the families call the onnxscript helpers (their names are the FunctionProtos' names)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np
import onnx
from onnxscript import BOOL, INT64, script

from ...domain import op, ov_ext
from ..base import INT, NAT, BodyBuilder, Overload, words

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
        filled = op.CastLike(op.ConstantOfShape(op.Concat(p, op.Reshape(m, op.Constant(value_ints=[1])), inner, axis=0)), data3)
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


# --- a constant axis ---------------------------------------------------------------------------


@dataclass(frozen=True)
class OnAxis(Overload):
    """Gather-8(data, indices, axis: the constant a; batch_dims 0, or b == a > 0 normalised).

    ONNX Gather (b = 0) or GatherND (b == a) on the data as it is: no Reshape, nothing copied
    (the axis is a Const in every IR seen). A check of the indices' min and max against n picks
    that path at run time; otherwise out-of-range indices are gathered as index 0 and their rows
    zeroed. The name says everything the body needs, so that attach_functions can rebuild it:

    - ``n``: the axis has the static size n (else it is read from the data's shape); with constant
      indices onnxruntime then folds the check and the If (docs/onnxruntime.md#if-folding);
    - ``zero``: how out-of-range rows are zeroed: ``i`` (integer data) and ``f`` (float data whose
      row at index 0 is finite and >= +0, so that x * 0 is +0: checked at run time) by a Mul with a
      0/1 mask (docs/onnxruntime.md#scatternd-runs-on-one-thread), else (None: bf16, bool, unknown
      types) by one ScatterND; ``inrange``: the indices are constants within [-n, n-1].
    """

    SPELLING = "[batch{batch_dims}_]axis{axis}[_n{n}][_{zero}]"
    batch_dims: Annotated[int, NAT] = 0
    axis: Annotated[int, INT] = 0
    n: Annotated[int | None, NAT] = None
    zero: Annotated[str | None, words({"zi": "i", "zf": "f", "inrange": "inrange"})] = None

    def valid(self) -> bool:
        return (not self.batch_dims or self.axis == self.batch_dims) and (self.zero != "inrange" or self.n is not None)

    def build(self, g: BodyBuilder) -> str:
        b, a, n_static = self.batch_dims, self.axis, self.n
        if self.zero == "inrange":
            return _in_range(g, b, a)
        # n, the size of the gathered axis, as a scalar
        if n_static is not None:
            n = g.const(n_static)
        else:
            n = g("Squeeze", g("Shape", "data", start=a, **({} if a == -1 else {"end": a + 1})), g.const([0]))
        lo = g("Cast", g("ReduceMin", "indices", keepdims=0), to=INT64.dtype)  # empty indices: the type's max
        hi = g("Cast", g("ReduceMax", "indices", keepdims=0), to=INT64.dtype)
        if b:
            lo = g("Add", lo, _batch_dims_equal(g, b))
        in_range = g("And", g("GreaterOrEqual", lo, g("Neg", n)), g("Less", hi, n))

        plain = g.branch()
        if b:
            y_plain = plain("GatherND", "data", plain("Unsqueeze", plain("Cast", "indices", to=INT64.dtype),
                                                       plain.const([-1])), batch_dims=b)
        else:
            y_plain = plain("Gather", "data", "indices", axis=a)
        zf = g.branch()
        y_filled = self._zeroed_rows(zf, n)
        orelse, y_else = zf, y_filled
        if n_static is None or n_static == 0:
            # n == 0: every index is out of range and there is no row to gather index 0 from.
            empty = g.branch()
            y_empty = _zeros_like_output(empty, a, b)
            if n_static == 0:
                orelse, y_else = empty, y_empty
            else:
                outer_if = g.branch()
                y_else = outer_if.if_(outer_if("Equal", n, outer_if.const(0)), empty, y_empty, zf, y_filled)
                orelse = outer_if
        return g.if_(in_range, plain, y_plain, orelse, y_else)

    def _zeroed_rows(self, zf: BodyBuilder, n: str) -> str:
        """Out-of-range indices present: gather index 0 there, then zero those rows."""
        b, a = self.batch_dims, self.axis
        idx = zf("Cast", "indices", to=INT64.dtype)
        bad = zf("Or", zf("Less", idx, zf("Neg", n)), zf("GreaterOrEqual", idx, n))
        safe = zf("Where", bad, zf.const(0), idx)
        if b:
            gathered = zf("GatherND", "data", zf("Unsqueeze", safe, zf.const([-1])), batch_dims=b)
        else:
            gathered = zf("Gather", "data", safe, axis=a)
        if self.zero == "i":
            return _zeroed_by_mask(zf, a, bad, gathered)
        if self.zero == "f":
            mul, scatter = zf.branch(), zf.branch()
            return zf.if_(_row0_times_zero_is_plus_zero(zf, a), mul, _zeroed_by_mask(mul, a, bad, gathered),
                          scatter, _zeroed_by_scatter(scatter, a, b, bad, gathered))
        return _zeroed_by_scatter(zf, a, b, bad, gathered)


def _zeros_like_output(empty: BodyBuilder, a: int, b: int) -> str:
    if b:
        out_shape = empty("Concat", empty("Shape", "indices"), empty("Shape", "data", start=a + 1), axis=0)
    else:
        none = np.zeros(0, np.int64)
        out_shape = empty("Concat", empty("Shape", "data", start=0, end=a) if a != 0 else empty.const(none),
                          empty("Shape", "indices"),
                          empty("Shape", "data", start=a + 1) if a != -1 else empty.const(none),
                          axis=0)
    return empty("CastLike", empty("ConstantOfShape", out_shape), "data")


def _batch_dims_equal(g: BodyBuilder, b: int) -> str:
    """0, after a check that data and indices have equal leading batch dims (OpenVINO wants
    them equal; GatherND only checks that they divide)."""
    same = g("Equal", g("Shape", "data", start=0, end=b), g("Shape", "indices", start=0, end=b))
    ok = g("Equal", g("ReduceSum", g("Cast", g("Not", same), to=INT64.dtype), keepdims=0), g.const(0))
    return g.check("batch_dims_equal", ok)


def _in_range(g: BodyBuilder, b: int, a: int) -> str:
    """Constant indices within [-n, n-1]: one Gather / GatherND, no If (docs/onnxruntime.md#if-data-propagation).
    ONNX Gather fails on an index out of range: never a wrong result."""
    if b:
        indices = g("Add", g("Cast", "indices", to=INT64.dtype), _batch_dims_equal(g, b))
        return g("GatherND", "data", g("Unsqueeze", indices, g.const([-1])), batch_dims=b)
    return g("Gather", "data", "indices", axis=a)


def _zeroed_by_scatter(zf: BodyBuilder, a: int, b: int, bad: str, gathered: str) -> str:
    """gathered with the rows of bad indices set to zeros by one ScatterND (any element type)."""
    big = 9223372036854775807
    first = len(zf.nodes)
    dshape = zf("Shape", "data")
    upper = a + 1 if a != -1 else big  # data dims after the axis
    inner_shape = zf("Slice", dshape, zf.const([upper]), zf.const([big]))
    if a >= 0:
        # One ScatterND writes zeros at (p, m) on the output [P dims..., indices dims..., inner dims...],
        # for every position p of the dims before the axis and each bad index position m.
        bad_coords = zf("Transpose", zf("NonZero", bad), perm=[1, 0])  # [K, rank(indices)]
        k = zf("Shape", bad_coords, start=0, end=1)
        if a == 0 or b:
            coords, upd_shape = bad_coords, zf("Concat", k, inner_shape, axis=0)
        else:
            true = zf("Cast", zf.const([1]), to=BOOL.dtype)
            pre_coords = zf("Transpose", zf("NonZero", zf("Expand", true, zf("Shape", "data", start=0, end=a))),
                            perm=[1, 0])  # [P, a]
            p = zf("Shape", pre_coords, start=0, end=1)
            pk = zf("Concat", p, k, axis=0)
            coords = zf("Concat",
                        zf("Expand", zf("Unsqueeze", pre_coords, zf.const([1])),
                           zf("Concat", pk, zf.const([a]), axis=0)),
                        zf("Expand", zf("Unsqueeze", bad_coords, zf.const([0])),
                           zf("Concat", pk, zf("Shape", bad_coords, start=1, end=2), axis=0)),
                        axis=2)
            upd_shape = zf("Concat", pk, inner_shape, axis=0)
        zeros = zf("CastLike", zf("ConstantOfShape", upd_shape), "data")
        y_filled = zf("ScatterND", gathered, coords, zeros)
        if not b:
            # 0-d indices (NonZero would see a 1-D tensor): the one index is bad, all zeros.
            scalar = zf.branch()
            y_scalar = scalar("CastLike", scalar("ConstantOfShape", scalar("Shape", gathered)), "data")
            scatter = zf.branch()
            scatter.nodes, zf.nodes = zf.nodes[first:], zf.nodes[:first]
            y_filled = zf.if_(zf("Equal", zf("Size", zf("Shape", "indices")), zf.const(0)), scalar, y_scalar,
                              scatter, y_filled)
    else:
        # Rank unknown, negative axis: data seen as [P, M, I], rows (p, m) zeroed.
        inner = zf("ReduceProd", inner_shape, keepdims=1)
        outer = zf("ReduceProd", zf("Slice", dshape, zf.const([0]), zf.const([a])), keepdims=1)
        m = zf("Reshape", zf("Size", "indices"), zf.const([1]))
        rows = zf("Reshape", gathered, zf("Concat", outer, m, inner, axis=0))
        bad_m = zf("NonZero", zf("Reshape", bad, zf.const([-1])))  # [1, K]
        k = zf("Shape", bad_m, start=1, end=2)
        one = zf.const([1])
        pk1 = zf("Concat", outer, k, one, axis=0)
        p_col = zf("Reshape", zf("Range", zf.const(0), zf("Squeeze", outer, zf.const([0])), zf.const(1)),
                   zf("Concat", outer, one, one, axis=0))
        m_col = zf("Reshape", bad_m, zf("Concat", one, k, one, axis=0))
        coords = zf("Concat", zf("Expand", p_col, pk1), zf("Expand", m_col, pk1), axis=2)
        zeros = zf("CastLike", zf("ConstantOfShape", zf("Concat", outer, k, inner, axis=0)), "data")
        y_filled = zf("Reshape", zf("ScatterND", rows, coords, zeros), zf("Shape", gathered), allowzero=1)
    return y_filled


def _zeroed_by_mask(b: BodyBuilder, a: int, bad: str, gathered: str) -> str:
    """gathered * (0 where bad, else 1), broadcast over the dims after the axis."""
    after_axis = (b("Sub", b("Size", b("Shape", "data")), b.const(a + 1)) if a >= 0
                  else b.const(-a - 1))  # the rank of the dims after the axis
    ones = b("ConstantOfShape", b("Reshape", after_axis, b.const([1])),
             value=onnx.numpy_helper.from_array(np.array([1], np.int64)))
    mask = b("Reshape", b("CastLike", b("Not", bad), "data"), b("Concat", b("Shape", bad), ones, axis=0))
    return b("Mul", gathered, mask)


def _row0_times_zero_is_plus_zero(b: BodyBuilder, a: int) -> str:
    """Whether every x of data's index 0 on the axis has 1 / x > 0 (finite, +0 or positive): then
    x * 0 is +0. In f32: exact for f16; for f64 it can only turn a safe row unsafe (1e300 -> inf)."""
    row0 = b("Cast", b("Slice", "data", b.const([0]), b.const([1]), b.const([a])), to=onnx.TensorProto.FLOAT)
    positive = b("Cast", b("Greater", b("Reciprocal", row0), b.const(0.0, np.float32)), to=onnx.TensorProto.INT32)
    return b("Equal", b("ReduceMin", positive, keepdims=0), b.const(1, np.int32))
