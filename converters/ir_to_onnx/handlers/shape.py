"""Shape plumbing: ShapeOf, Concat, Reshape, Squeeze, Unsqueeze, Transpose, Slice,
Tile, Split, VariadicSplit, NonZero."""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..kernels import compute_type
from ..registry import op_version, translator
from . import domain_seq

_I64 = from_ov("i64")
_BOOL = from_ov("boolean")


def const_ints(ctx: Context, v: Value, what: str) -> list[int]:
    if v.const is None:
        raise ctx.error(f"{what} must be a constant (it is computed at run time, which ONNX cannot express here)")
    return [int(x) for x in np.asarray(v.const).reshape(-1)]


def normalize_axes(ctx: Context, axes: list[int], rank: int, what: str = "axis") -> list[int]:
    out = []
    for a in axes:
        n = a + rank if a < 0 else a
        if not 0 <= n < rank:
            raise ctx.error(f"{what} {a} is out of range for rank {rank}")
        out.append(n)
    return out


@translator("ShapeOf", since=1, emits=("Cast", "Identity", "Shape"))
def shape_of(ctx: Context, layer) -> None:
    v = ctx.input(0)
    out_type = _I64 if op_version(layer) == 1 else attr.element(ctx, layer, "output_type")  # ShapeOf-1 has none
    if out_type is None or out_type.ov not in ("i32", "i64"):  # as OpenVINO's node checks
        raise ctx.error(f"output_type {out_type.ov if out_type else 'dynamic'} is not i32 or i64")
    if v.static_shape:  # known now: a constant, which later shape arithmetic can use
        ctx.set_const(0, np.array(v.shape, dtype=np.int64).astype(out_type.numpy))
        return
    shape = ctx.one("Shape", [v.name], ctx.out(0) if out_type == _I64 else None)
    if out_type != _I64:
        ctx.cast(shape, _I64, out_type, ctx.out(0))


@translator("Concat", since=1, emits=("Concat",))
def concat(ctx: Context, layer) -> None:
    values = [ctx.input(i) for i in range(ctx.n_inputs())]
    axis = attr.integer(ctx, layer, "axis", 0)
    ctx.one("Concat", [v.name for v in values], ctx.out(0), axis=axis)


@translator("Reshape", since=1, emits=("Cast", "Reshape"))
def reshape(ctx: Context, layer) -> None:
    data, shape = ctx.input(0), ctx.input(1)
    special_zero = attr.boolean(layer, "special_zero", False)
    if _packed_constant(data) and shape.const is not None:  # 4-bit weights (Const -> Reshape -> Convert ...)
        ctx.set_const(0, _reshaped(ctx, np.asarray(data.const), shape.const, special_zero))
        return
    # special_zero: a 0 copies the input dim (ONNX allowzero=0); otherwise 0 is a real 0.
    allowzero = 0 if special_zero else 1
    if shape.const is not None and not np.any(np.asarray(shape.const) == 0):
        allowzero = 0  # no zeros: both readings agree, and allowzero=0 admits -1 everywhere
    _moved(ctx, "Reshape", data, [ctx.as_i64(shape, flat=shape.rank == 0)], ctx.out(0), allowzero=allowzero)


def _packed_constant(v: Value) -> bool:
    return v.const is not None and v.type is not None and v.type.packed_bits > 0


def ov_reshaped(array: np.ndarray, shape, special_zero: bool) -> np.ndarray | None:
    """``array`` reshaped as OpenVINO's Reshape does to the constant ``shape`` (``special_zero``: a 0 copies the
    input's dim), or None where it does not fit."""
    if shape is None:
        return None
    try:
        return array.reshape(_ov_dims(array, shape, special_zero))
    except ValueError:
        return None


def _ov_dims(array: np.ndarray, shape, special_zero: bool) -> list[int]:
    dims = [int(d) for d in np.asarray(shape).reshape(-1)]
    return [array.shape[i] if special_zero and d == 0 and i < array.ndim else d for i, d in enumerate(dims)]


def _reshaped(ctx: Context, array: np.ndarray, shape, special_zero: bool) -> np.ndarray:
    reshaped = ov_reshaped(array, shape, special_zero)
    if reshaped is None:
        raise ctx.error(f"cannot reshape the constant of shape {list(array.shape)} to "
                        f"{_ov_dims(array, shape, special_zero)}")
    return reshaped


def _moved(ctx: Context, op: str, data: Value, extra: list[str], output: str, **attrs) -> str:
    """``op`` on ``data``, widened where onnxruntime has no kernel for its type (4-bit integers travel in 8
    bits: the values are only moved, so the cast back is exact; none when only wider Converts read them)."""
    if data.type is None:
        return ctx.one(op, [data.name, *extra], output, **attrs)
    wide = compute_type(op, data.type, "move")
    if wide is not None and wide != data.type and _read_by_wider_converts(ctx):
        ctx.one(op, [ctx.cast(data.name, data.type, wide), *extra], output, **attrs)
        ctx.set_type(0, wide)
        return output
    return ctx.emit(op, [data.name], data.type, output, kind="move", extra=extra, **attrs)


def _read_by_wider_converts(ctx: Context) -> bool:
    """Whether output 0 of the layer is read only by Converts to a float or an integer of 8 bits or more, which
    convert its 4-bit values carried in 8 bits to the same results (the usual Reshape -> Convert -> Subtract ->
    Multiply of decompression): then the 8-bit value is the output, with no cast back to 4 bits."""
    layer = ctx.layer
    readers = ctx.ir.readers().get((layer.id, layer.outputs[0].id), [])
    for layer_id, _ in readers:
        reader = ctx.ir.layer(layer_id)
        if reader.type.lower() != "convert":
            return False
        dst = from_ov(reader.data.get("destination_type", "")) if reader.data.get("destination_type") in _WIDE else None
        if dst is None:
            return False
    return bool(readers)


#: Convert destinations that take 4-bit values carried in 8 bits to what they take the 4-bit values to.
_WIDE = ("f64", "f32", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")


@translator("Unsqueeze", since=1, emits=("Cast", "Reshape", "Unsqueeze"))
def unsqueeze(ctx: Context, layer) -> None:
    data, axes = ctx.input(0), ctx.input(1)
    _moved(ctx, "Unsqueeze", data, [ctx.as_i64(axes, flat=True)], ctx.out(0))


@translator("Squeeze", since=1,
            emits=("Add", "And", "Cast", "Compress", "Equal", "Identity", "Less", "Mul", "Not", "Or", "Range",
                   "ReduceSum", "Reshape", "Shape", "Size", "Squeeze", "Unsqueeze"))
def squeeze(ctx: Context, layer) -> None:
    """OpenVINO squeezes the listed axes whose dim is 1 and skips the others (Squeeze-1
    at run time too); no axes (or an empty list) squeezes every dim of 1. 4-bit data is squeezed in 8 bits
    (onnxruntime has no 4-bit Squeeze, Reshape or Identity), then cast back: exact."""
    data = ctx.input(0)
    wide = compute_type("Squeeze", data.type, "move") if data.type is not None else None
    if wide is None or wide == data.type:
        _squeeze(ctx, data, ctx.out(0))
        return
    if _read_by_wider_converts(ctx):
        _squeeze(ctx, Value(ctx.cast(data.name, data.type, wide), wide, data.shape), ctx.out(0))
        ctx.set_type(0, wide)
        return
    out = ctx.tmp("squeezed")
    _squeeze(ctx, Value(ctx.cast(data.name, data.type, wide), wide, data.shape), out)
    ctx.cast(out, wide, data.type, ctx.out(0))


def _squeeze(ctx: Context, data: Value, output: str) -> None:
    axes_v = ctx.input(1) if ctx.n_inputs() > 1 else None
    if axes_v is not None and axes_v.const is None:  # axes computed at run time: the same rule, then
        _squeeze_at_run_time(ctx, data, ctx.as_i64(axes_v, flat=True), output, negative=True, empty_is_all=True)
        return
    axes = [] if axes_v is None else [int(a) for a in np.asarray(axes_v.const).reshape(-1)]
    if data.rank is None:
        if axes:
            _squeeze_at_run_time(ctx, data, ctx.i64(axes), output, negative=min(axes) < 0)
        else:
            ctx.one("Squeeze", [data.name], output)
        return
    shape = data.shape
    if not axes:
        if all(d is not None for d in shape):
            listed = [i for i, d in enumerate(shape) if d == 1]
            _squeeze_static(ctx, data, listed, output)
        else:
            ctx.one("Squeeze", [data.name], output)
        return
    listed = sorted(set(normalize_axes(ctx, axes, data.rank)))
    listed = [a for a in listed if shape[a] is None or shape[a] == 1]  # a static dim other than 1 is skipped
    if all(shape[a] == 1 for a in listed):
        _squeeze_static(ctx, data, listed, output)
        return
    # Some listed dims are dynamic: squeeze those that are 1 at run time.
    dims = ctx.one("Shape", [data.name])
    mask = ctx.const(np.array([i in listed for i in range(data.rank)]))
    is_one = ctx.one("Equal", [dims, ctx.i64(1)])
    keep = ctx.one("Not", [ctx.one("And", [mask, is_one])])
    new_shape = ctx.one("Compress", [dims, keep], axis=0)
    ctx.one("Reshape", [data.name, new_shape], output, allowzero=1)


def _squeeze_at_run_time(ctx: Context, data: Value, listed: str, output: str, negative: bool,
                         empty_is_all: bool = False) -> None:
    """The listed axes (an i64 vector) whose dim is 1 at run time go, the others stay (ONNX's Squeeze fails on
    them): data of a rank known only at run time, or axes computed in the graph; ``negative``: some axes may be
    negative, counted from the rank; ``empty_is_all``: an empty list squeezes every dim of 1."""
    dims = ctx.one("Shape", [data.name])
    # (not Size(dims): onnxruntime's shape inference takes that for the product of the dims, 6 for [2, 1, 3, 1],
    # and then refuses the model as Range's length contradicts the rank)
    rank = ctx.one("Squeeze", [ctx.one("Shape", [dims]), ctx.i64([0])])
    if negative:
        below = ctx.one("Cast", [ctx.one("Less", [listed, ctx.i64(0)])], to=_I64.onnx)
        listed = ctx.one("Add", [listed, ctx.one("Mul", [rank, below])])
    positions = ctx.one("Unsqueeze", [ctx.one("Range", [ctx.i64(0), rank, ctx.i64(1)]), ctx.i64([1])])
    hits = ctx.one("Cast", [ctx.one("Equal", [positions, listed])], to=from_ov("i32").onnx)
    # (how often each position is listed: a sum, 0 over an empty list, where a max would give its identity)
    is_listed = ctx.one("Cast", [ctx.one("ReduceSum", [hits, ctx.i64([1])], keepdims=0)], to=_BOOL.onnx)
    if empty_is_all:
        is_listed = ctx.one("Or", [is_listed, ctx.one("Equal", [ctx.one("Size", [listed]), ctx.i64(0)])])
    keep = ctx.one("Not", [ctx.one("And", [is_listed, ctx.one("Equal", [dims, ctx.i64(1)])])])
    ctx.one("Reshape", [data.name, ctx.one("Compress", [dims, keep], axis=0)], output, allowzero=1)


def _squeeze_static(ctx: Context, data: Value, axes: list[int], output: str) -> None:
    if not axes:
        ctx.one("Identity", [data.name], output)
    else:
        ctx.one("Squeeze", [data.name, ctx.i64(axes)], output)


@translator("Transpose", since=1, emits=("Transpose", "onnx_ext.Transpose"))
def transpose(ctx: Context, layer) -> None:
    data, order = ctx.input(0), ctx.input(1)
    if order.const is None:
        return domain_seq.runtime_transpose(ctx, data, order)
    perm = const_ints(ctx, order, "the Transpose order")
    if not perm:
        ctx.one("Transpose", [data.name], ctx.out(0))  # ONNX's default: reverse the dims
        return
    if data.rank is not None:
        if len(perm) != data.rank:
            raise ctx.error(f"order {perm} does not fit data of rank {data.rank}")
        perm = normalize_axes(ctx, perm, data.rank, "order entry")
    ctx.one("Transpose", [data.name], ctx.out(0), perm=perm)


@translator("Slice", since=8, emits=("Cast", "Slice"))
def slice_(ctx: Context, layer) -> None:
    data, start, stop, step = (ctx.input(i) for i in range(4))
    inputs = [data.name, ctx.as_i64(start, flat=True), ctx.as_i64(stop, flat=True)]
    axes = ctx.input(4) if ctx.n_inputs() > 4 else None
    inputs.append(ctx.as_i64(axes, flat=True) if axes is not None else "")
    inputs.append(ctx.as_i64(step, flat=True))
    ctx.one("Slice", inputs, ctx.out(0))


@translator("Tile", since=1, emits=("Cast", "Concat", "Tile", "Unsqueeze"))
def tile(ctx: Context, layer) -> None:
    """OpenVINO pads the shorter of data rank and repeats with leading ones."""
    data, repeats = ctx.input(0), ctx.input(1)
    k = len(repeats.const.reshape(-1)) if repeats.const is not None else (repeats.shape[0] if repeats.shape else None)
    if data.rank is None or k is None:
        raise ctx.error("Tile needs data of known rank and repeats of known length")
    reps = ctx.as_i64(repeats, flat=True)
    x = data.name
    if k < data.rank:
        reps = ctx.one("Concat", [ctx.i64([1] * (data.rank - k)), reps], axis=0)
    elif k > data.rank:
        x = ctx.one("Unsqueeze", [x, ctx.i64(list(range(k - data.rank)))])
    ctx.emit("Tile", [x], data.type, ctx.out(0), kind="bits", extra=[reps])


@translator("Split", since=1, emits=("Div", "Shape", "Split"))
def split(ctx: Context, layer) -> None:
    data, axis_v = ctx.input(0), ctx.input(1)
    axis = const_ints(ctx, axis_v, "the Split axis")[0]
    n = attr.integer(ctx, layer, "num_splits")
    if n != len(layer.outputs):
        raise ctx.error(f"num_splits is {n} but the layer has {len(layer.outputs)} outputs")
    dim = None
    if data.rank is not None:
        axis = normalize_axes(ctx, [axis], data.rank)[0]
        dim = data.shape[axis]
        if isinstance(dim, (int, np.integer)) and dim % n:
            raise ctx.error(f"dim {dim} of axis {axis} does not split into {n} equal parts")
    outs = [ctx.out(i) for i in range(n)]
    if isinstance(dim, (int, np.integer)) and dim > 0:
        ctx.node("Split", [data.name], outs, axis=axis, num_outputs=n)
        return
    # onnxruntime (1.31) refuses num_outputs for a split dim of 0 ("Invalid num_outputs value"): the sizes
    if isinstance(dim, (int, np.integer)):
        sizes = ctx.i64([0] * n)
    else:  # [dim] / [n] * n: the n equal sizes in one Div broadcasting the dim
        dim = ctx.one("Shape", [data.name], start=axis, end=axis + 1 if axis != -1 else None)
        sizes = ctx.one("Div", [dim, ctx.i64([n] * n)])
    ctx.node("Split", [data.name, sizes], outs, axis=axis)


@translator("VariadicSplit", since=1, emits=("Cast", "Less", "ReduceSum", "Shape", "Split", "Sub", "Where"))
def variadic_split(ctx: Context, layer) -> None:
    data, axis_v, lengths = ctx.input(0), ctx.input(1), ctx.input(2)
    axis = const_ints(ctx, axis_v, "the VariadicSplit axis")[0]
    if data.rank is not None:
        axis = normalize_axes(ctx, [axis], data.rank)[0]
    n = len(layer.outputs)
    if lengths.const is not None:
        sizes = [int(x) for x in np.asarray(lengths.const).reshape(-1)]
        if len(sizes) != n:
            raise ctx.error(f"{len(sizes)} split lengths for {n} outputs")
        if -1 in sizes and data.rank is not None and data.shape[axis] is not None:
            sizes[sizes.index(-1)] = data.shape[axis] - sum(s for s in sizes if s != -1)
        if -1 not in sizes:
            ctx.node("Split", [data.name, ctx.i64(sizes)], [ctx.out(i) for i in range(n)], axis=axis)
            return
    # A -1 in lengths takes what the others leave, computed at run time.
    lens = ctx.as_i64(lengths, flat=True)
    dim = ctx.one("Shape", [data.name], start=axis, end=axis + 1 if axis != -1 else None)
    zero = ctx.i64(0)
    neg = ctx.one("Less", [lens, zero])
    others = ctx.one("ReduceSum", [ctx.one("Where", [neg, zero, lens])], keepdims=1)
    rest = ctx.one("Sub", [dim, others])
    sizes = ctx.one("Where", [neg, rest, lens])
    ctx.node("Split", [data.name, sizes], [ctx.out(i) for i in range(n)], axis=axis)


@translator("NonZero", since=3, emits=("Cast", "Equal", "Identity", "NonZero", "Not"))
def non_zero(ctx: Context, layer) -> None:
    v = ctx.input(0)
    out_type = attr.element(ctx, layer, "output_type", "i64") or _I64
    x = v.name
    if v.type.ov not in ("f16", "f32", "i32", "i64", "u8", "boolean"):
        x = ctx.one("Not", [ctx.emit("Equal", [x, ctx.const(np.zeros((), v.type.numpy))], v.type, result_type=_BOOL)])
    idx = ctx.one("NonZero", [x], ctx.out(0) if out_type == _I64 else None)
    if out_type != _I64:
        ctx.cast(idx, _I64, out_type, ctx.out(0))
