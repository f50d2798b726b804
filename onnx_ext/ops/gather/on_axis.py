"""Gather-8 with a constant axis: the ``OnAxis`` family, built node by node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np
import onnx
from onnxscript import BOOL, INT64

from ..base import INT, NAT, Overload, words
from ..builder import BodyBuilder


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


@dataclass(frozen=True)
class OnTable(Overload):
    """Gather-8(data: a constant, indices: ``i32`` or ``i64``, axis: the constant a >= 0; batch_dims 0), n = the
    size of axis a.

    No check and no If (an embedding's table, read once per step): the body appends a row of zeros to the data
    on the axis, a Concat of constants that onnxruntime folds once, at load; it maps negative indices to i + n
    and every index out of [-n, n-1] onto that row (Where, Clip to [-1, n]: -1 is the zero row too), and
    gathers once. Right for data at run time as well (the Concat then runs at each call). The constants are
    of the indices' type, which the name says (no Cast of the indices).
    """

    SPELLING = "table_axis{axis}_n{n}_{indices}"
    axis: Annotated[int, NAT]
    n: Annotated[int, NAT]
    indices: Annotated[str, words(("i32", "i64"))]

    def valid(self) -> bool:
        return self.indices == "i64" or self.n < 2**31  # n in the indices' type

    def build(self, g: BodyBuilder) -> str:
        a, n = self.axis, self.n
        dtype = np.int32 if self.indices == "i32" else np.int64
        row_shape = g("Concat", g("Shape", "data", start=0, end=a), g.const([1]), g("Shape", "data", start=a + 1),
                      axis=0)
        table = g("Concat", "data", g("CastLike", g("ConstantOfShape", row_shape), "data"), axis=a)
        # i + n for i < 0 (no overflow: n >= 0); the sum computed for i >= 0 too, and dropped by the Where
        rows = g("Where", g("Less", "indices", g.const(0, dtype)), g("Add", "indices", g.const(n, dtype)), "indices")
        rows = g("Clip", rows, g.const(-1, dtype), g.const(n, dtype))
        return g("Gather", table, rows, axis=a)
