"""Layers built on ONNX's scatters: SliceScatter-15, SegmentMax-16, SparseFillEmptyRows-16
(as OpenVINO's reference computes them, src/core/reference/include/openvino/reference/).

- SliceScatter: the data with the slice Slice-8 takes (start, stop, step, axes) replaced
  by the updates: the same Slice of the data's flat positions says where ScatterND
  writes them.
- SegmentMax: ONNX ScatterElements with the ``max`` reduction over rows that start at
  the type's lowest value; NaNs count as the lowest value (std::max(m, NaN) is m in the
  reference, where onnxruntime's max keeps the NaN). Empty segments get the
  ``fill_mode`` value (0 or the lowest; the specification calls it empty_segment_value),
  picked per row by whether any id names it. The output has ``num_segments`` rows, or
  max(id) + 1; rows whose id is out of range go to one extra row that is cut off (the
  reference stops at the first of them: the ids are sorted).
- SparseFillEmptyRows: a row of ``dense_shape`` that no index names gets one entry
  (row, 0) with the default value; the entries are ordered by (row, column), as the
  reference sorts them: two stable sorts (ONNX TopK breaks ties by index), by column
  then by row.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from onnx_ext.types import ElementType, from_ov

from .. import attributes as attr
from ..context import Context
from ..kernels import compute_type
from ..registry import translator

_I64 = from_ov("i64")


def _lowest(et: ElementType) -> np.ndarray:
    info = ml_dtypes.finfo(et.numpy) if et.is_float else np.iinfo(et.numpy)
    return np.asarray(info.min, dtype=et.numpy)


def _column(ctx: Context, x: str, i: int) -> str:
    return ctx.one("Gather", [x, ctx.i64(i)], axis=1)


def _named(ctx: Context, rows: str, count: str) -> str:
    """[count] i64: 1 where some entry of ``rows`` is that row, else 0."""
    zeros = ctx.one("Expand", [ctx.i64([0]), count])
    ones = ctx.one("Expand", [ctx.i64([1]), ctx.one("Shape", [rows])])
    return ctx.one("ScatterElements", [zeros, rows, ones], axis=0, reduction="max")


def _nan_to_lowest(ctx: Context, x: str, et: ElementType, ct: ElementType) -> str:
    """``x`` (data of type ``et`` computed in ``ct``, a type Where has a kernel for) with NaNs made
    the lowest value of ``et``."""
    if not et.is_float:
        return x
    lowest = ctx.const(_lowest(et).astype(ct.numpy), hint="lowest")
    return ctx.one("Where", [ctx.one("IsNaN", [x]), lowest, x])


@translator("SegmentMax", since=16,
            emits=("Add", "Cast", "Concat", "Expand", "Gather", "IsNaN", "Min", "ReduceMax", "Reshape",
                   "ScatterElements", "Shape", "Slice", "Where"))
def segment_max(ctx: Context, layer) -> None:
    data, ids = ctx.input(0), ctx.input(1)
    if data.rank is None or data.rank < 1 or data.type is None or not (data.type.is_float or data.type.is_integer):
        raise ctx.error(f"needs numeric data of known rank >= 1, got {data.type.ov if data.type else None} "
                        f"of shape {data.shape}")
    fill = attr.choice(ctx, layer, "fill_mode", ("zero", "lowest"), "zero")  # absent: zero, as OpenVINO reads it
    et, ones = data.type, [1] * (data.rank - 1)
    # bf16 -> f32: no bf16 Expand, Where nor max-scatter kernel (widened exactly, as every step only selects)
    ct = compute_type("ScatterElements", et, attrs={"reduction": "max"})
    if ct is None or compute_type("Expand", ct) != ct or (et.is_float and compute_type("Where", ct, "bits") != ct):
        raise ctx.error(f"onnxruntime has no max-scatter kernel for {et.ov} and no lossless widening applies")
    idx = ctx.as_i64(ids, flat=True)
    if ctx.n_inputs() > 2:
        count = ctx.as_i64(ctx.input(2), flat=True)
    else:
        count = ctx.one("Add", [ctx.one("ReduceMax", [idx], keepdims=1), ctx.i64([1])])
    rows = ctx.one("Min", [idx, count])  # out-of-range ids -> the extra row `count`
    total = ctx.one("Add", [count, ctx.i64([1])])
    lowest = ctx.const(_lowest(et).astype(ct.numpy).reshape(1), hint="lowest")
    if fill == "zero":
        table = ctx.const(np.concatenate([np.zeros(1, ct.numpy), _lowest(et).astype(ct.numpy).reshape(1)]), hint="fill")
        lowest = ctx.one("Reshape", [ctx.one("Gather", [table, _named(ctx, rows, total)]), ctx.i64([-1] + ones)])
    start = ctx.one("Expand", [lowest, ctx.one("Concat", [total, ctx.one("Shape", [data.name], start=1)], axis=0)])
    index = ctx.one("Expand", [ctx.one("Reshape", [rows, ctx.i64([-1] + ones)]), ctx.one("Shape", [data.name])])
    values = _nan_to_lowest(ctx, ctx.cast(data.name, et, ct), et, ct)
    out = ctx.one("ScatterElements", [start, index, values], axis=0, reduction="max")
    sliced = ctx.one("Slice", [out, ctx.i64([0]), count, ctx.i64([0])], ctx.out(0) if ct == et else None)
    if ct != et:
        ctx.cast(sliced, ct, et, ctx.out(0))


def _stable_order(ctx: Context, keys: str, order: str | None = None) -> str:
    """Positions sorting ``keys`` ascending, equal keys in their order (TopK's tie rule);
    with ``order``: the keys taken in that order first, the result composed with it."""
    if order is not None:
        keys = ctx.one("Gather", [keys, order])
    k = ctx.one("Shape", [keys])
    found = ctx.node("TopK", [keys, k], 2, largest=0, sorted=1)[1]
    return found if order is None else ctx.one("Gather", [order, found])


@translator("SparseFillEmptyRows", since=16,
            emits=("Cast", "Concat", "Equal", "Expand", "Gather", "Identity", "NonZero", "Pad", "Reshape",
                   "ScatterElements", "Shape", "Slice", "TopK", "Transpose"))
def sparse_fill_empty_rows(ctx: Context, layer) -> None:
    values, dense_shape, indices, default = (ctx.input(i) for i in range(4))
    idx = ctx.as_i64(indices)
    shape = ctx.as_i64(dense_shape, flat=True)
    row = _column(ctx, idx, 0)
    named = _named(ctx, row, ctx.one("Slice", [shape, ctx.i64([0]), ctx.i64([1])]))
    empty = ctx.one("Equal", [named, ctx.i64([0])], ctx.out(2))
    empty_rows = ctx.one("NonZero", [empty])  # [1, E]
    new_idx = ctx.one("Pad", [ctx.one("Transpose", [empty_rows], perm=[1, 0]), ctx.i64([0, 0, 0, 1])])
    all_idx = ctx.one("Concat", [idx, new_idx], axis=0)
    new_values = ctx.emit("Expand", [ctx.one("Reshape", [default.name, ctx.i64([1])])], values.type,
                          extra=[ctx.one("Shape", [empty_rows], start=1)])
    all_values = ctx.one("Concat", [values.name, new_values], axis=0)
    order = _stable_order(ctx, _column(ctx, all_idx, 0), _stable_order(ctx, _column(ctx, all_idx, 1)))
    ctx.cast(ctx.one("Gather", [all_idx, order], axis=0), _I64, ctx.out_type(0), ctx.out(0))
    ctx.one("Gather", [all_values, order], ctx.out(1), axis=0)


@translator("SliceScatter", since=15, emits=("Cast", "Range", "ReduceProd", "Reshape", "ScatterND", "Shape", "Slice"))
def slice_scatter(ctx: Context, layer) -> None:
    data, updates, start, stop, step = (ctx.input(i) for i in range(5))
    axes = ctx.as_i64(ctx.input(5), flat=True) if ctx.n_inputs() > 5 else ""
    shape = ctx.one("Shape", [data.name])
    size = ctx.one("ReduceProd", [shape], keepdims=0)  # (Size has no bf16 kernel)
    positions = ctx.one("Reshape", [ctx.one("Range", [ctx.i64(0), size, ctx.i64(1)]), shape])
    picked = ctx.one("Slice", [positions, ctx.as_i64(start, flat=True), ctx.as_i64(stop, flat=True), axes,
                               ctx.as_i64(step, flat=True)])
    flat = ctx.one("ScatterND", [ctx.one("Reshape", [data.name, ctx.i64([-1])]),
                                 ctx.one("Reshape", [picked, ctx.i64([-1, 1])]),
                                 ctx.one("Reshape", [updates.name, ctx.i64([-1])])])
    ctx.one("Reshape", [flat, shape], ctx.out(0))
