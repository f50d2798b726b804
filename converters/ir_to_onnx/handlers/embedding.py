"""Embedding bags: EmbeddingBagPackedSum-3, EmbeddingBagOffsetsSum-3,
EmbeddingSegmentsSum-3 and the version-15 EmbeddingBagPacked / EmbeddingBagOffsets
(``reduction`` sum or mean). ONNX has no such op:

- packed bags ([batch, bag] indices): Gather the rows, weight them, ReduceSum/ReduceMean
  over the bag axis;
- offsets and segments: a [bags, indices] membership matrix (index j is in bag b when
  offsets[b] <= j < offsets[b + 1], or segment_ids[j] == b) times the gathered, weighted
  rows (a MatMul over the rows flattened to 2-D). A bag with no index is the row
  ``default_index`` when given, else zeros; ``mean`` divides by the bag's size.

Tables must be floating point (bf16/f16 computed in f32).
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..registry import translator

_F32 = from_ov("f32")


def _table(ctx: Context) -> tuple[Value, str, object]:
    table = ctx.input(0)
    et = table.type
    if et is None or not et.is_float:
        raise ctx.error(f"needs a floating-point embedding table, got {et.ov if et else None}")
    ct = et if et.ov in ("f32", "f64") else _F32
    return table, ctx.cast(table.name, et, ct), ct


def _reduction(ctx: Context, layer) -> bool:
    """Whether the reduction is mean (else sum)."""
    return attr.choice(ctx, layer, "reduction", ("sum", "mean"), "sum") == "mean"


def _weighted_rows(ctx: Context, table: str, indices: Value, weights: Value | None, ct) -> str:
    """table[indices] (times the per-sample weights, broadcast over the row dims)."""
    rows = ctx.one("Gather", [table, ctx.as_i64(indices)], axis=0)
    if weights is None:
        return rows
    w = ctx.cast(weights.name, weights.type, ct)
    # [..., 1, 1...]: as many trailing ones as the table has row dims
    w = ctx.one("Unsqueeze", [w, ctx.one("Range", [ctx.one("Size", [ctx.one("Shape", [w])]),
                                                   ctx.one("Size", [ctx.one("Shape", [rows])]), ctx.i64(1)])])
    return ctx.one("Mul", [rows, w])


#: What _packed may emit.
_PACKED_OPS = ("Cast", "Gather", "Identity", "Mul", "Range", "ReduceMean", "ReduceSum", "Shape", "Size", "Unsqueeze")


def _packed(ctx: Context, layer, mean: bool) -> None:
    table, t, ct = _table(ctx)
    indices = ctx.input(1)
    weights = ctx.input(2) if ctx.n_inputs() > 2 else None
    rows = _weighted_rows(ctx, t, indices, weights, ct)
    out = ctx.one("ReduceMean" if mean else "ReduceSum", [rows, ctx.i64([1])], keepdims=0)
    ctx.cast(out, ct, table.type, ctx.out(0))


def _bags(ctx: Context, table: Value, t: str, ct, indices: Value, member: str, weights: Value | None,
          default: Value | None, mean: bool) -> None:
    """Sum (or mean) of the rows in each bag, ``member`` the boolean [bags, indices] matrix."""
    rows = _weighted_rows(ctx, t, indices, weights, ct)
    flat = ctx.one("Reshape", [rows, ctx.i64([0, -1])])
    m = ctx.one("Cast", [member], to=ct.onnx)
    out = ctx.one("MatMul", [m, flat])
    count = ctx.one("ReduceSum", [m, ctx.i64([1])], keepdims=1)
    if mean:
        out = ctx.one("Div", [out, ctx.one("Max", [count, ctx.const(np.ones((), ct.numpy))])])
    # a negative default index leaves empty bags zeros, as OpenVINO's reference (was the row it counts from the end)
    if default is not None and not (default.const is not None and np.asarray(default.const).reshape(-1)[0] < 0):
        index = ctx.one("Reshape", [ctx.as_i64(default), ctx.i64([1])])
        row = ctx.one("Reshape", [ctx.one("Gather", [t, index], axis=0), ctx.i64([1, -1])])
        empty = ctx.one("Equal", [count, ctx.const(np.zeros((), ct.numpy))])
        if default.const is None:
            empty = ctx.one("And", [empty, ctx.one("GreaterOrEqual", [index, ctx.i64(0)])])
        out = ctx.one("Where", [empty, row, out])
    shape = ctx.one("Concat", [ctx.i64([-1]), ctx.one("Shape", [t], start=1)], axis=0)
    ctx.cast(ctx.one("Reshape", [out, shape]), ct, table.type, ctx.out(0))


def _positions(ctx: Context, indices: Value) -> str:
    """0 .. K-1 for the K indices."""
    k = ctx.one("Squeeze", [ctx.one("Shape", [indices.name], start=0, end=1)])
    return ctx.one("Range", [ctx.i64(0), k, ctx.i64(1)])


#: What _offsets may emit.
_OFFSETS_OPS = ("And", "Cast", "Concat", "Div", "Equal", "Gather", "GreaterOrEqual", "Identity", "LessOrEqual", "MatMul",
                "Max", "Mul", "Range", "ReduceSum", "Reshape", "Shape", "Size", "Squeeze", "Sub", "Unsqueeze", "Where")


def _offsets(ctx: Context, layer, mean: bool) -> None:
    table, t, ct = _table(ctx)
    indices, offsets = ctx.input(1), ctx.input(2)
    default = ctx.input(3) if ctx.n_inputs() > 3 else None
    weights = ctx.input(4) if ctx.n_inputs() > 4 else None
    j = _positions(ctx, indices)
    off = ctx.one("Unsqueeze", [ctx.as_i64(offsets), ctx.i64([1])])  # [B, 1]
    # bag of j: (number of offsets <= j) - 1
    started = ctx.one("Cast", [ctx.one("LessOrEqual", [off, j])], to=from_ov("i64").onnx)
    bag = ctx.one("Sub", [ctx.one("ReduceSum", [started, ctx.i64([0])], keepdims=1), ctx.i64(1)])  # [1, K]
    b = ctx.one("Range", [ctx.i64(0), ctx.one("Squeeze", [ctx.one("Shape", [offsets.name])]), ctx.i64(1)])
    member = ctx.one("Equal", [bag, ctx.one("Unsqueeze", [b, ctx.i64([1])])])
    _bags(ctx, table, t, ct, indices, member, weights, default, mean)


@translator("EmbeddingBagPackedSum", since=3, emits=_PACKED_OPS)
def embedding_bag_packed_sum(ctx: Context, layer) -> None:
    _packed(ctx, layer, mean=False)


@translator("EmbeddingBagPacked", since=15, emits=_PACKED_OPS)
def embedding_bag_packed(ctx: Context, layer) -> None:
    _packed(ctx, layer, _reduction(ctx, layer))


@translator("EmbeddingBagOffsetsSum", since=3, emits=_OFFSETS_OPS)
def embedding_bag_offsets_sum(ctx: Context, layer) -> None:
    _offsets(ctx, layer, mean=False)


@translator("EmbeddingBagOffsets", since=15, emits=_OFFSETS_OPS)
def embedding_bag_offsets(ctx: Context, layer) -> None:
    _offsets(ctx, layer, _reduction(ctx, layer))


@translator("EmbeddingSegmentsSum", since=3,
            emits=("And", "Cast", "Concat", "Div", "Equal", "Gather", "GreaterOrEqual", "Identity", "MatMul", "Max", "Mul",
                   "Range", "ReduceSum", "Reshape", "Shape", "Size", "Unsqueeze", "Where"))
def embedding_segments_sum(ctx: Context, layer) -> None:
    table, t, ct = _table(ctx)
    indices, segments, count = ctx.input(1), ctx.input(2), ctx.input(3)
    default = ctx.input(4) if ctx.n_inputs() > 4 else None
    weights = ctx.input(5) if ctx.n_inputs() > 5 else None
    b = ctx.one("Range", [ctx.i64(0), ctx.one("Reshape", [ctx.as_i64(count), ctx.i64([])]), ctx.i64(1)])
    member = ctx.one("Equal", [ctx.one("Unsqueeze", [ctx.as_i64(segments), ctx.i64([0])]),
                               ctx.one("Unsqueeze", [b, ctx.i64([1])])])
    _bags(ctx, table, t, ct, indices, member, weights, default, mean=False)
