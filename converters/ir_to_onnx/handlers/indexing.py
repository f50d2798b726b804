"""Index-driven layers: OneHot-1/16, Roll-7, Bucketize-3, ReverseSequence-1, Eye-9,
BatchToSpace-2, SpaceToBatch-2, Unique-10, SearchSorted-15, Reverse-1.

- OneHot: Equal(indices, Range(depth)) then Where(on, off): OpenVINO gives all "off" for
  negative indices, which ONNX's OneHot would wrap around.
- Roll: per axis, two Slices and a Concat (ONNX has no Roll); shifts on a repeated axis
  add up. Shift and axes must be constants, the dims may be dynamic.
- Bucketize: the count of boundaries below the value (with_right_bound: strictly below;
  else below or equal), an Unsqueeze, a comparison and a ReduceSum.
- ReverseSequence: ONNX's, which wants batch and time axes 0 and 1: other axes are
  transposed there and back.
- Eye: (column - row) == diagonal_index, expanded over batch_shape.
- BatchToSpace / SpaceToBatch: OpenVINO's reshape/transpose/reshape (and crop or pad)
  recipe; block shape, crops and pads must be constants.
- Unique: ONNX's Unique (the same four outputs), indices cast to the layer's types.
- SearchSorted: like Bucketize, against the last axis of the sorted sequence.
- Reverse: a Slice with step -1 over the axes (given as indices or as a mask).
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..kernels import compute_type
from ..registry import op_version, translator
from .elementwise import where
from .shape import normalize_axes, const_ints

_I64 = from_ov("i64")
_U64 = from_ov("u64")
_BOOL = from_ov("boolean")


def _dim(ctx: Context, v: Value, axis: int) -> str:
    """Dim ``axis`` of ``v`` as a 1-element int64 tensor (a constant when static)."""
    if v.shape is not None and v.shape[axis] is not None:
        return ctx.i64([v.shape[axis]])
    return ctx.one("Shape", [v.name], start=axis, end=axis + 1)


def _shape_of(ctx: Context, v: Value) -> list[str]:
    return [_dim(ctx, v, i) for i in range(v.rank)]


# --- OneHot -------------------------------------------------------------------------------------


@translator("OneHot", since=1,
            emits=("Add", "Cast", "Equal", "Identity", "Less", "Range", "Reshape", "Unsqueeze", "Where"))
def one_hot(ctx: Context, layer) -> None:
    """OneHot-16's ``negative_indices_mode`` normalize counts negative indices from the end
    (index + depth); ignore_negative (and OneHot-1) leaves them all "off"."""
    indices, depth, on, off = (ctx.input(i) for i in range(4))
    if indices.rank is None:
        raise ctx.error("OneHot needs indices of known rank")
    axis = normalize_axes(ctx, [attr.integer(ctx, layer, "axis", 0)], indices.rank + 1)[0]
    mode = attr.choice(ctx, layer, "negative_indices_mode", ("ignore_negative", "normalize"), "ignore_negative") \
        if op_version(layer) >= 16 else "ignore_negative"
    n = ctx.one("Reshape", [ctx.as_i64(depth), ctx.i64([])])
    idx = ctx.as_i64(indices)
    if mode == "normalize":
        idx = ctx.one("Where", [ctx.one("Less", [idx, ctx.i64(0)]), ctx.one("Add", [idx, n]), idx])
    idx = ctx.one("Unsqueeze", [idx, ctx.i64([axis])])
    positions = ctx.one("Range", [ctx.i64(0), n, ctx.i64(1)])
    trailing = indices.rank - axis
    if trailing:
        positions = ctx.one("Reshape", [positions, ctx.i64([-1] + [1] * trailing)])
    hit = ctx.one("Equal", [idx, positions])
    where(ctx, hit, on, off, ctx.out(0))


# --- Roll ---------------------------------------------------------------------------------------


@translator("Roll", since=7, emits=("Concat", "Gather", "Identity", "Mod", "ReduceSum", "Shape", "Slice", "Sub"))
def roll(ctx: Context, layer) -> None:
    data, shift_input = ctx.input(0), ctx.input(1)
    if data.rank is None:
        raise ctx.error("Roll needs data of known rank")
    axes = normalize_axes(ctx, const_ints(ctx, ctx.input(2), "the Roll axes"), data.rank)
    if shift_input.const is None:
        return _roll_at_run_time(ctx, data, shift_input, axes)
    shifts = const_ints(ctx, shift_input, "the Roll shift")
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ctx.error(f"{len(shifts)} shifts for {len(axes)} axes")
    total: dict[int, int] = {}
    for a, s in zip(axes, shifts):
        total[a] = total.get(a, 0) + s
    current = data.name
    todo = [(a, s) for a, s in sorted(total.items()) if s != 0]
    for i, (axis, shift) in enumerate(todo):
        out = ctx.out(0) if i == len(todo) - 1 else None
        current = _roll_axis(ctx, data, current, axis, shift, out)
    if not todo:
        ctx.one("Identity", [data.name], ctx.out(0))


def _roll_at_run_time(ctx: Context, data: Value, shift_input: Value, axes: list[int]) -> None:
    """Shifts computed at run time (torch's ``roll(x, x.size(-1) // 2, -1)`` on dims known at run time only): each
    axis rolled by the sum of its shifts, gathered from the flat shift tensor."""
    count = 1 if shift_input.rank == 0 else (shift_input.shape[0] if shift_input.shape else None)
    if count is None:
        raise ctx.error("Roll shifts of unknown length")
    if count not in (1, len(axes)):
        raise ctx.error(f"{count} shifts for {len(axes)} axes")
    flat = ctx.as_i64(shift_input, flat=True)
    picks: dict[int, list[int]] = {}
    for j, a in enumerate(axes):
        picks.setdefault(a, []).append(0 if count == 1 else j)
    current = data.name
    for i, (axis, which) in enumerate(sorted(picks.items())):
        shift = ctx.one("ReduceSum", [ctx.one("Gather", [flat, ctx.i64(which)], axis=0)], keepdims=1)
        current = _roll_axis(ctx, data, current, axis, shift, ctx.out(0) if i == len(picks) - 1 else None)
    if not picks:
        ctx.one("Identity", [data.name], ctx.out(0))


def _roll_axis(ctx: Context, data: Value, x: str, axis: int, shift: int | str, output: str | None) -> str:
    """``x`` rolled by ``shift`` (a number, or the name of a [1] i64 tensor) along ``axis``: x[n - s:] then
    x[:n - s], s = shift mod n."""
    size = data.shape[axis]
    ax = ctx.i64([axis])
    if isinstance(shift, str):
        n = ctx.i64([size]) if size is not None else _dim(ctx, data, axis)
        cut = ctx.one("Sub", [n, ctx.one("Mod", [shift, n])]) if size != 0 else ctx.i64([0])
    elif size is not None:
        cut = ctx.i64([size - shift % size]) if size else ctx.i64([0])
    else:
        n = _dim(ctx, data, axis)
        cut = ctx.one("Sub", [n, ctx.one("Mod", [ctx.i64([shift]), n])])
    big = ctx.i64([np.iinfo(np.int64).max])
    tail = ctx.one("Slice", [x, cut, big, ax])
    head = ctx.one("Slice", [x, ctx.i64([0]), cut, ax])
    return ctx.one("Concat", [tail, head], output, axis=axis)


# --- Bucketize ----------------------------------------------------------------------------------


@translator("Bucketize", since=3, emits=("Cast", "Greater", "GreaterOrEqual", "Identity", "ReduceSum", "Unsqueeze"))
def bucketize(ctx: Context, layer) -> None:
    data, buckets = ctx.input(0), ctx.input(1)
    out_type = attr.element(ctx, layer, "output_type") or _I64  # absent: dynamic, which OpenVINO refuses
    right = attr.boolean(layer, "with_right_bound", True)
    # compare in a type both fit in losslessly
    ct = data.type if data.type == buckets.type else from_ov("f64")
    x = ctx.one("Unsqueeze", [ctx.cast(data.name, data.type, ct), ctx.i64([-1])])
    b = ctx.cast(buckets.name, buckets.type, ct)
    below = ctx.emit("Greater" if right else "GreaterOrEqual", [x, b], ct, result_type=_BOOL)
    count = ctx.one("ReduceSum", [ctx.one("Cast", [below], to=_I64.onnx), ctx.i64([-1])], keepdims=0)
    ctx.cast(count, _I64, out_type, ctx.out(0))


# --- ReverseSequence ----------------------------------------------------------------------------


@translator("ReverseSequence", since=1, emits=("Cast", "ReverseSequence", "Transpose"))
def reverse_sequence(ctx: Context, layer) -> None:
    data, lengths = ctx.input(0), ctx.input(1)
    if data.rank is None or data.rank < 2:
        raise ctx.error(f"ReverseSequence needs data of known rank >= 2, got shape {data.shape}")
    axes = [attr.integer(ctx, layer, "batch_axis", 0), attr.integer(ctx, layer, "seq_axis", 1)]
    batch, seq = normalize_axes(ctx, axes, data.rank)
    if batch == seq:
        raise ctx.error(f"batch_axis and seq_axis are both {batch}")
    lens = ctx.as_i64(lengths, flat=True, floats=True)  # any numeric type (ReverseSequence-1's T_IND)
    if {batch, seq} == {0, 1}:
        ctx.emit("ReverseSequence", [data.name], data.type, ctx.out(0), extra=[lens], batch_axis=batch,
                 time_axis=seq)
        return
    perm = [batch, seq] + [a for a in range(data.rank) if a not in (batch, seq)]
    moved = ctx.one("Transpose", [data.name], perm=perm)
    rev = ctx.emit("ReverseSequence", [moved], data.type, extra=[lens], batch_axis=0, time_axis=1)
    ctx.one("Transpose", [rev], ctx.out(0), perm=[perm.index(a) for a in range(data.rank)])


# --- Eye ----------------------------------------------------------------------------------------


@translator("Eye", since=9,
            emits=("Cast", "Concat", "Equal", "Expand", "Identity", "Range", "Reshape", "Squeeze", "Sub", "Unsqueeze"))
def eye(ctx: Context, layer) -> None:
    rows, cols, diag = (ctx.as_i64(ctx.input(i), flat=True) for i in range(3))
    out_type = ctx.out_type(0)
    one, zero = ctx.i64(1), ctx.i64(0)
    r = ctx.one("Range", [zero, ctx.one("Squeeze", [rows]), one])
    c = ctx.one("Range", [zero, ctx.one("Squeeze", [cols]), one])
    offset = ctx.one("Sub", [c, ctx.one("Unsqueeze", [r, ctx.i64([1])])])  # [rows, cols]: column - row
    matrix = ctx.one("Equal", [offset, diag])
    if ctx.n_inputs() > 3:
        shape = ctx.one("Concat", [ctx.as_i64(ctx.input(3), flat=True), rows, cols], axis=0)
        matrix = ctx.one("Expand", [matrix, shape])
    ctx.cast(matrix, _BOOL, out_type, ctx.out(0))


# --- BatchToSpace / SpaceToBatch ----------------------------------------------------------------


def _block_inputs(ctx: Context, begin_name: str, end_name: str) -> tuple[Value, list[int], list[int], list[int]]:
    """The data, the block shape past its leading 1, and the constant begin and end amounts per dim
    (crops or pads) of BatchToSpace and SpaceToBatch."""
    data = ctx.input(0)
    if data.rank is None:
        raise ctx.error(f"{ctx.layer.type} needs data of known rank")
    block = const_ints(ctx, ctx.input(1), "the block_shape")
    if len(block) != data.rank or block[0] != 1 or any(b < 1 for b in block):
        raise ctx.error(f"block_shape {block} must have {data.rank} entries >= 1, the first 1")
    return data, block[1:], const_ints(ctx, ctx.input(2), begin_name), const_ints(ctx, ctx.input(3), end_name)


@translator("BatchToSpace", since=2, emits=("Concat", "Div", "Mul", "Reshape", "Shape", "Slice", "Sub", "Transpose"))
def batch_to_space(ctx: Context, layer) -> None:
    data, blocks, begin, end = _block_inputs(ctx, "crops_begin", "crops_end")
    n = data.rank
    prod = int(np.prod(blocks))
    dims = _shape_of(ctx, data)
    batch = ctx.one("Div", [dims[0], ctx.i64([prod])])
    # [B1, ..., B(n-1), batch / prod, D1, ..., D(n-1)] (every target dim written, allowzero: a batch of 0 is 0)
    x = ctx.one("Reshape", [data.name, ctx.one("Concat", [ctx.i64(blocks), batch] + dims[1:], axis=0)],
                allowzero=1)
    # -> [batch / prod, D1, B1, D2, B2, ...]
    perm = [n - 1] + [i for k in range(n - 1) for i in (n + k, k)]
    x = ctx.one("Transpose", [x], perm=perm)
    spatial = [ctx.one("Mul", [d, ctx.i64([b])]) for d, b in zip(dims[1:], blocks)]
    x = ctx.one("Reshape", [x, ctx.one("Concat", [batch] + spatial, axis=0)], allowzero=1)
    starts = ctx.i64(begin)
    ends = ctx.one("Sub", [ctx.one("Concat", [batch] + spatial, axis=0), ctx.i64(end)])
    ctx.one("Slice", [x, starts, ends, ctx.i64(list(range(n)))], ctx.out(0))


@translator("SpaceToBatch", since=2, emits=("Concat", "Div", "Mul", "Pad", "Reshape", "Shape", "Transpose"))
def space_to_batch(ctx: Context, layer) -> None:
    data, blocks, begin, end = _block_inputs(ctx, "pads_begin", "pads_end")
    n = data.rank
    x = data.name
    if any(begin) or any(end):
        x = ctx.emit("Pad", [x], data.type, extra=[ctx.i64(begin + end)])
    padded = Value(x, data.type, tuple(
        None if d is None else d + b + e for d, b, e in zip(data.shape, begin, end)))
    dims = _shape_of(ctx, padded)
    per = [ctx.one("Div", [d, ctx.i64([b])]) for d, b in zip(dims[1:], blocks)]
    # [batch, D1/B1, B1, D2/B2, B2, ...] (every target dim written, allowzero: a batch of 0 is 0)
    split = [dims[0]] + [p for d, b in zip(per, blocks) for p in (d, ctx.i64([b]))]
    x = ctx.one("Reshape", [x, ctx.one("Concat", split, axis=0)], allowzero=1)
    # -> [B1, B2, ..., batch, D1/B1, D2/B2, ...]
    perm = [2 + 2 * k for k in range(n - 1)] + [0] + [1 + 2 * k for k in range(n - 1)]
    x = ctx.one("Transpose", [x], perm=perm)
    batch = ctx.one("Mul", [dims[0], ctx.i64([int(np.prod(blocks))])])
    ctx.one("Reshape", [x, ctx.one("Concat", [batch] + per, axis=0)], ctx.out(0), allowzero=1)


# --- Unique -------------------------------------------------------------------------------------


@translator("Unique", since=10, emits=("BitwiseXor", "Cast", "Identity", "Reshape", "Unique"))
def unique(ctx: Context, layer) -> None:
    data = ctx.input(0)
    attrs = {"sorted": int(attr.boolean(layer, "sorted", True))}
    if ctx.n_inputs() > 1:
        axis = const_ints(ctx, ctx.input(1), "the Unique axis")
        if len(axis) != 1:
            raise ctx.error(f"the Unique axis must be one integer, got {axis}")
        attrs["axis"] = axis[0]
    x, et = data.name, data.type
    if attrs.get("axis") is None:
        x = ctx.one("Reshape", [x, ctx.i64([-1])])  # OpenVINO flattens; ONNX's flat output is 1-D too
    if et == _U64:  # no u64 kernel: flipping the top bit maps u64 order (and equality) onto i64's
        top = ctx.const(np.array(-(2**63), dtype=np.int64))
        outs = ctx.node("Unique", [ctx.one("BitwiseXor", [ctx.cast(x, et, _I64), top])], 4, **attrs)
        ctx.cast(ctx.one("BitwiseXor", [outs[0], top]), _I64, et, ctx.out(0))
    else:
        ct = compute_type("Unique", et)
        if ct is None:
            raise ctx.error(f"onnxruntime has no Unique kernel for {et.ov} and no lossless widening applies")
        outs = ctx.node("Unique", [ctx.cast(x, et, ct)], 4, **attrs)
        ctx.cast(outs[0], ct, et, ctx.out(0))
    for i in range(1, 4):
        ctx.cast(outs[i], _I64, ctx.out_type(i), ctx.out(i))


# --- SearchSorted, Reverse ----------------------------------------------------------------------


@translator("SearchSorted", since=15, emits=("Cast", "Greater", "GreaterOrEqual", "Identity", "ReduceSum", "Unsqueeze"))
def search_sorted(ctx: Context, layer) -> None:
    """The count of sorted values below each value (right_mode: below or equal), over the
    last axis; a 1-D sequence serves every value."""
    seq, values = ctx.input(0), ctx.input(1)
    if seq.rank is None or values.rank is None:
        raise ctx.error("SearchSorted needs inputs of known rank")
    right = attr.boolean(layer, "right_mode", False)
    ct = seq.type if seq.type == values.type else from_ov("f64")
    v = ctx.one("Unsqueeze", [ctx.cast(values.name, values.type, ct), ctx.i64([-1])])  # [..., K, 1]
    s = ctx.cast(seq.name, seq.type, ct)
    if seq.rank > 1:
        s = ctx.one("Unsqueeze", [s, ctx.i64([-2])])  # [..., 1, M]
    below = ctx.emit("GreaterOrEqual" if right else "Greater", [v, s], ct, result_type=_BOOL)
    count = ctx.one("ReduceSum", [ctx.one("Cast", [below], to=_I64.onnx), ctx.i64([-1])], keepdims=0)
    ctx.cast(count, _I64, ctx.out_type(0), ctx.out(0))


@translator("Reverse", since=1, emits=("Identity", "Slice"))
def reverse(ctx: Context, layer) -> None:
    """Reverse-1: the axes as indices (mode index) or a boolean mask over the dims (mode mask)."""
    data, axes_v = ctx.input(0), ctx.input(1)
    if data.rank is None:
        raise ctx.error("Reverse needs data of known rank")
    mode = attr.choice(ctx, layer, "mode", ("index", "mask"), "index")
    given = const_ints(ctx, axes_v, "the Reverse axes")
    if mode == "mask":
        axes = [i for i, flag in enumerate(given) if flag]
    else:
        axes = sorted(set(normalize_axes(ctx, given, data.rank)))
    if not axes:
        ctx.one("Identity", [data.name], ctx.out(0))
        return
    n = len(axes)
    ctx.one("Slice", [data.name, ctx.i64([-1] * n), ctx.i64([np.iinfo(np.int64).min] * n), ctx.i64(axes),
                      ctx.i64([-1] * n)], ctx.out(0))
