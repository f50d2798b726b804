"""Reductions (axes as an input, ``keep_dims``; an empty axes list reduces nothing,
as in OpenVINO), CumSum, MatMul, Softmax."""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context, declare
from ..registry import op_version, translator

_I64 = from_ov("i64")
_U64 = from_ov("u64")
_BOOL = from_ov("boolean")
_U8 = from_ov("u8")
_F32 = from_ov("f32")


_REDUCE = {"ReduceSum": ("ReduceSum", "bits"), "ReduceProd": ("ReduceProd", "bits"),
           "ReduceMax": ("ReduceMax", "value"), "ReduceMin": ("ReduceMin", "value"),
           "ReduceMean": ("ReduceMean", "value"), "ReduceL1": ("ReduceL1", "value"),
           "ReduceL2": ("ReduceL2", "value"), "ReduceLogicalAnd": ("ReduceMin", "value"),
           "ReduceLogicalOr": ("ReduceMax", "value")}


def _reduce(ctx: Context, layer) -> None:
    onnx_op, kind = {k.lower(): v for k, v in _REDUCE.items()}[layer.type.lower()]
    data, axes = ctx.input(0), ctx.input(1)
    keep = int(attr.boolean(layer, "keep_dims", False))
    et = data.type
    attrs = dict(keepdims=keep, noop_with_empty_axes=1)
    ax = ctx.as_i64(axes, flat=True)  # (constant ones written non-negative: assemble.py)
    empty = _reduces_nothing(data, axes)
    if layer.type.lower().startswith("reducelogical"):
        x = ctx.cast(data.name, et, _BOOL)
        if empty:  # onnxruntime's bool ReduceMax/Min refuse an empty set: u8's give 0 and 255
            x = ctx.one("Cast", [x], to=_U8.onnx)
            ctx.cast(ctx.emit(onnx_op, [x], _U8, extra=[ax], **attrs), _U8, _BOOL, ctx.out(0))
            return
        ctx.one(onnx_op, [x, ax], ctx.out(0), **attrs)
        return
    if empty and et == _F32 and onnx_op == "ReduceMax":
        # OpenVINO's reference starts f32's maximum at the lowest finite value, onnxruntime at -inf (f16, bf16 and
        # every minimum start at the infinities in both)
        lowest = ctx.const(np.array(np.finfo(np.float32).min, np.float32))
        ctx.one("Max", [ctx.emit(onnx_op, [data.name], et, kind=kind, extra=[ax], **attrs), lowest], ctx.out(0))
        return
    if et == _U64 and onnx_op in ("ReduceMax", "ReduceMin"):
        # No u64 kernel: flipping the top bit maps u64 order onto i64 order.
        top = ctx.const(np.array(-(2**63), dtype=np.int64))
        flipped = ctx.one("BitwiseXor", [ctx.cast(data.name, et, _I64), top])
        red = ctx.one(onnx_op, [flipped, ax], **attrs)
        ctx.cast(ctx.one("BitwiseXor", [red, top]), _I64, et, ctx.out(0))
        return
    ctx.emit(onnx_op, [data.name], et, ctx.out(0), kind=kind, extra=[ax], **attrs)


def _reduces_nothing(data, axes) -> bool:
    """A reduced axis has a static dim of 0."""
    if axes.const is None or not data.rank:
        return False
    return any(data.shape[int(a) % data.rank] == 0 for a in np.asarray(axes.const).reshape(-1))


for _op, (_onnx_op, _) in _REDUCE.items():
    translator(_op, since=4 if _op in ("ReduceL1", "ReduceL2") else 1,
               emits=(_onnx_op, "BitwiseXor", "Cast", "Identity", "Max"))(_reduce)


@translator("CumSum", since=3, emits=("Cast", "CumSum"))
def cum_sum(ctx: Context, layer) -> None:
    data = ctx.input(0)
    axis = ctx.as_i64(ctx.input(1)) if ctx.n_inputs() > 1 else ctx.i64(0)
    ctx.emit("CumSum", [data.name], data.type, ctx.out(0), kind="bits", extra=[axis],
             exclusive=int(attr.boolean(layer, "exclusive", False)),
             reverse=int(attr.boolean(layer, "reverse", False)))


# MatMulNBits: compressed 4/8-bit weights (decompression.py)
@translator("MatMul", since=1, emits=("MatMul", "com.microsoft.MatMulNBits", "Split", "Concat", "Squeeze", "Transpose",
                                      "Unsqueeze", "Shape", "ReduceProd", "Reshape", "ReduceMin", "Equal", "If"))
def mat_mul(ctx: Context, layer) -> None:
    a, b = ctx.input(0), ctx.input(1)
    flags = []
    for v, flag in ((a, "transpose_a"), (b, "transpose_b")):
        flags.append(attr.boolean(layer, flag, False) and v.rank != 1)
        if flags[-1] and v.rank is None:
            raise ctx.error(f"{flag} needs an input of known rank")
    if flags[0] and _batch_may_be_empty(a) and _batch_of_ones(b):
        _unless_empty_batch(ctx, a, b, flags)
        return
    _product(ctx, a, b, _transposed(ctx, (a, b), flags), ctx.out(0))


def _transposed(ctx: Context, values, flags: list[bool]) -> list[str]:
    """The inputs' names, their last two axes swapped where flagged (rank 2+)."""
    names = []
    for v, flag in zip(values, flags):
        perm = list(range(v.rank - 2)) + [v.rank - 1, v.rank - 2] if flag and v.rank >= 2 else None
        names.append(ctx.one("Transpose", [v.name], perm=perm) if perm else v.name)
    return names


def _product(ctx: Context, a, b, names: list[str], out: str) -> str:
    if b.rank == 1 and (names[0] != a.name or not _static_nonzero(a.shape, -1)):
        # B as a column [K, 1], the product's last axis dropped: onnxruntime (1.31, ORT_ENABLE_EXTENDED) fuses
        # Transpose -> MatMul into a FusedMatMul that is wrong for a 1-D second input, and its MatMul puts A's
        # rows among the broadcast dims against B's padded 1, which refuses a dim of 0 ([0, K] x [K]: "left
        # operand cannot broadcast on dim 0"); a column goes through its flattened [M, K] x [K, N] path
        column = ctx.one("Unsqueeze", [names[1], ctx.i64([-1])])
        product = ctx.emit("MatMul", [names[0], column], a.type, kind="bits")
        return ctx.one("Squeeze", [product, ctx.i64([-1])], out)
    return ctx.emit("MatMul", names, a.type, out, kind="bits")


def _batch_may_be_empty(a) -> bool:
    """A has batch dims (rank 3+) and one of them may be 0."""
    return a.rank is not None and a.rank > 2 and not all(
        isinstance(d, (int, np.integer)) and d > 0 for d in a.shape[:-2])


def _batch_of_ones(b) -> bool:
    """B broadcasts over A's batch: rank 1 or 2, or batch dims that are all 1."""
    return b.rank is not None and (b.rank <= 2 or all(d == 1 for d in b.shape[:-2]))


def _unless_empty_batch(ctx: Context, a, b, flags: list[bool]) -> None:
    """A transposed, of a batch that may be 0, times a B that broadcasts: onnxruntime (1.31) fuses Transpose ->
    MatMul into a FusedMatMul whose broadcast of A's 0 against B's 1 fails ("left operand cannot broadcast on dim
    0"). An If on an empty batch: its then branch multiplies A^T's rows flattened (``_flat_product``), its else
    branch is the plain product, Transposes inside so that onnxruntime still fuses them into its FusedMatMul (the
    flattened form copies A^T: 1.12x the fused one on [8, 64, 128]^T x [64, 64]; the If costs ~5 us an inference,
    1.04x there: benchmarks/bench_ops.py --ops guards)."""
    batch = ctx.one("ReduceMin", [ctx.one("Shape", [a.name], end=-2)], keepdims=0)
    empty = ctx.one("Equal", [batch, ctx.i64(0)])
    then, other = ctx.body(), ctx.body()
    outs = [_flat_product(then, a, b, _transposed(then, (a, b), flags)),
            _product(other, a, b, _transposed(other, (a, b), flags), other.tmp("MatMul"))]
    graphs = [c.graph(c.tmp(name), [], [declare(c.value(y), a.type, None)])
              for c, name, y in ((then, "empty_batch", outs[0]), (other, "batch", outs[1]))]
    ctx.node("If", [empty], [ctx.out(0)], then_branch=graphs[0], else_branch=graphs[1])


def _flat_product(ctx: Context, a, b, names: list[str]) -> str:
    """A^T [..., M, K] (``names[0]``) times B as a matrix ([K, N]; a 1-D B a column), A^T's rows flattened to
    [P, K] (its Transpose then feeds a Reshape, not fused) and reshaped back; the Reshapes write every dim
    (allowzero: a 0 is 0)."""
    rows = ctx.one("Shape", [names[0]], end=-1)
    flat = ctx.one("Concat", [ctx.one("ReduceProd", [rows], keepdims=1), ctx.one("Shape", [names[0]], start=-1)],
                   axis=0)
    matrix = ctx.one("Reshape", [names[0], flat], allowzero=1)
    if b.rank == 1:
        right = ctx.one("Unsqueeze", [names[1], ctx.i64([-1])])
    elif b.rank == 2:
        right = names[1]
    else:
        right = ctx.one("Reshape", [names[1], ctx.one("Shape", [names[1]], start=-2)], allowzero=1)
    product = ctx.emit("MatMul", [matrix, right], a.type, kind="bits")
    out = rows if b.rank == 1 else ctx.one("Concat", [rows, ctx.one("Shape", [product], start=-1)], axis=0)
    return ctx.one("Reshape", [product, out], allowzero=1)


def _static_nonzero(shape, drop: int) -> bool:
    """Every dim but the ``drop`` axis is known and not 0 (and the rank is known)."""
    if shape is None:
        return False
    dims = list(shape)
    del dims[drop]
    return all(isinstance(d, (int, np.integer)) and d > 0 for d in dims)


def _floating(ctx: Context, v) -> None:
    """(Log)Softmax are of floating-point data (the spec's T): on booleans, which ctx.emit would widen to f32
    and cast back, OpenVINO's reference fails and its CPU plugin truncates the probabilities to 0."""
    if v.type is not None and v.type.ov == "boolean":
        raise ctx.error(f"{ctx.layer.type} takes floating-point data, not boolean")


@translator("SoftMax", since=1, emits=("Softmax",))
def softmax(ctx: Context, layer) -> None:
    v = ctx.input(0)
    _floating(ctx, v)
    axis = attr.integer(ctx, layer, "axis", 0 if op_version(layer) == 1 else 1)  # absent: the constructors' axis
    ctx.emit("Softmax", [v.name], v.type, ctx.out(0), axis=axis)


@translator("LogSoftmax", since=5, emits=("LogSoftmax",))
def log_softmax(ctx: Context, layer) -> None:
    v = ctx.input(0)
    _floating(ctx, v)
    axis = attr.integer(ctx, layer, "axis", 1)
    ctx.emit("LogSoftmax", [v.name], v.type, ctx.out(0), axis=axis)


