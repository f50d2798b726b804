"""Normalisations: NormalizeL2-1, LRN-1, GRN-1, GroupNormalization-12.

- NormalizeL2: x / sqrt(eps_mode(sum(x^2 over axes), eps)), ``add`` or ``max``; empty
  axes: "each element divided by itself", 1 for every non-zero element (negative and NaN too)
  and 0 for zeros, whatever eps says, as the spec, the reference and the CPU plugin have it.
- LRN: x / (bias + alpha / size^len(axes) * sum(x^2 over a window of side ``size``))^beta.
  Over the channels (axes [1]) that is ONNX's LRN; over all the spatial dims
  (axes [2, ..., rank-1]) the windowed mean of x^2 is an AveragePool that counts the
  zero padding. Other axes, and even sizes, are refused.
- GRN: x / sqrt(sum(x^2 over the channels) + bias).
- GroupNormalization: decomposed, because its scale and bias are per group in ONNX opset 18
  but per channel in 21; the decomposition means the same in every opset the converter writes.
"""

from __future__ import annotations

import math

import numpy as np

from onnx_ext.types import ElementType, from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..registry import translator
from .shape import normalize_axes, const_ints

_F32 = from_ov("f32")


def _float_data(ctx: Context, v: Value):
    if v.type is None or not v.type.is_float:
        raise ctx.error(f"needs floating-point data, got {v.type.ov if v.type else None}")
    return v.type


def _compute(ctx: Context, v: Value) -> tuple[str, object]:
    """``v`` in a type the arithmetic ops have kernels for (bf16 -> f32)."""
    ct = v.type if v.type.ov in ("f16", "f32", "f64") else _F32
    return ctx.cast(v.name, v.type, ct), ct


def _data_and_axes(ctx: Context, op: str) -> tuple[Value, ElementType, list[int]]:
    """The floating-point data of known rank, its element type and the constant axes input."""
    data = ctx.input(0)
    et = _float_data(ctx, data)
    if data.rank is None:
        raise ctx.error(f"{op} needs data of known rank")
    return data, et, normalize_axes(ctx, const_ints(ctx, ctx.input(1), f"the {op} axes"), data.rank)


@translator("NormalizeL2", since=1,
            emits=("Add", "Cast", "Div", "Equal", "Identity", "Max", "Not", "ReduceSumSquare", "Sqrt"))
def normalize_l2(ctx: Context, layer) -> None:
    data, et, axes = _data_and_axes(ctx, "NormalizeL2")
    eps = attr.number(ctx, layer, "eps")
    mode = attr.choice(ctx, layer, "eps_mode", ("add", "max"), "add")
    x, ct = _compute(ctx, data)
    if not axes:  # x / x: 1 where x != 0 (NaN included), 0 at zeros; eps plays no part
        nonzero = ctx.one("Not", [ctx.one("Equal", [x, ctx.const(np.zeros((), ct.numpy))])])
        ctx.one("Cast", [nonzero], ctx.out(0), to=et.onnx)
        return
    sq = ctx.one("ReduceSumSquare", [x, ctx.i64(sorted(set(axes)))], keepdims=1)
    eps_c = ctx.const(np.asarray(eps, dtype=ct.numpy))
    norm = ctx.one("Sqrt", [ctx.one("Add" if mode == "add" else "Max", [sq, eps_c])])
    ctx.cast(ctx.one("Div", [x, norm]), ct, et, ctx.out(0))


@translator("LRN", since=1, emits=("Add", "AveragePool", "Cast", "Div", "Identity", "LRN", "Mul", "Pow"))
def lrn(ctx: Context, layer) -> None:
    data, et, axes = _data_and_axes(ctx, "LRN")
    axes = sorted(set(axes))
    alpha, beta, bias = (attr.number(ctx, layer, k) for k in ("alpha", "beta", "bias"))
    size = attr.integer(ctx, layer, "size")
    if size % 2 == 0:  # OpenVINO's CPU plugin sums other windows than the spec's; onnxruntime refuses them
        raise ctx.error(f"LRN with an even size ({size}) is not translated")
    if axes == [1]:
        ctx.emit("LRN", [data.name], et, ctx.out(0), size=size, alpha=alpha, beta=beta, bias=bias)
        return
    if axes != list(range(2, data.rank)) or not axes:
        raise ctx.error(f"LRN over axes {axes} of rank {data.rank}: only the channels [1] or all the spatial dims "
                        "[2, ...] are translated")
    x, ct = _compute(ctx, data)
    k = len(axes)
    half = (size - 1) // 2
    mean = ctx.one("AveragePool", [ctx.one("Mul", [x, x])], kernel_shape=[size] * k, strides=[1] * k,
                   pads=[half] * k + [size - 1 - half] * k, count_include_pad=1)
    c = lambda value: ctx.const(np.asarray(value, dtype=ct.numpy))  # noqa: E731
    scale = ctx.one("Pow", [ctx.one("Add", [c(bias), ctx.one("Mul", [mean, c(alpha)])]), c(beta)])
    ctx.cast(ctx.one("Div", [x, scale]), ct, et, ctx.out(0))


@translator("GRN", since=1, emits=("Add", "Cast", "Div", "Identity", "ReduceSumSquare", "Sqrt"))
def grn(ctx: Context, layer) -> None:
    data = ctx.input(0)
    et = _float_data(ctx, data)
    x, ct = _compute(ctx, data)
    bias = ctx.const(np.asarray(attr.number(ctx, layer, "bias"), dtype=ct.numpy))
    norm = ctx.one("Sqrt", [ctx.one("Add", [ctx.one("ReduceSumSquare", [x, ctx.i64([1])], keepdims=1), bias])])
    ctx.cast(ctx.one("Div", [x, norm]), ct, et, ctx.out(0))


_FLOATS = frozenset({"f16", "f32", "f64"})


def _float_type(ctx: Context, v):
    """The type to compute in: the data's, or f32 for bf16 (no kernels)."""
    if v.type is None or not v.type.is_float:
        raise ctx.error(f"needs floating-point data, got {v.type.ov if v.type else None}")
    return v.type if v.type.ov in _FLOATS else from_ov("f32")


@translator("GroupNormalization", since=12,
            emits=("Add", "Cast", "Div", "Identity", "Mul", "ReduceMean", "Reshape", "Shape", "Sqrt", "Sub"))
def group_normalization(ctx: Context, layer) -> None:
    """[N, C, ...] seen as [N, G, C/G * ...]: normalised per (n, g), then scale and bias
    per channel."""
    data, scale, bias = ctx.input(0), ctx.input(1), ctx.input(2)
    if data.rank is None or data.rank < 2:
        raise ctx.error(f"needs data of known rank >= 2 (N, C, ...), got shape {data.shape}")
    groups = attr.integer(ctx, layer, "num_groups")
    eps = attr.number(ctx, layer, "epsilon")
    channels = data.shape[1]
    if groups < 1 or (channels is not None and channels % groups):
        raise ctx.error(f"num_groups {groups} does not divide the {channels} channels")
    et = data.type
    ct = _float_type(ctx, data)
    x = ctx.cast(data.name, et, ct)
    rest = data.shape[1:]
    # every dim but the batch's written where they are static: its -1 then resolves to a batch of 0 too (0 copied
    # beside a -1 is refused by onnx's inference and onnxruntime on empty data)
    target = [-1, groups, math.prod(rest) // groups] if all(isinstance(d, int) for d in rest) else [0, groups, -1]
    grouped = ctx.one("Reshape", [x, ctx.i64(target)])
    mean = ctx.one("ReduceMean", [grouped, ctx.i64([2])], keepdims=1)
    centred = ctx.one("Sub", [grouped, mean])
    var = ctx.one("ReduceMean", [ctx.one("Mul", [centred, centred]), ctx.i64([2])], keepdims=1)
    std = ctx.one("Sqrt", [ctx.one("Add", [var, ctx.const(np.array(eps, dtype=ct.numpy))])])
    normed = ctx.one("Reshape", [ctx.one("Div", [centred, std]), ctx.one("Shape", [x])])
    per_channel = ctx.i64([-1] + [1] * (data.rank - 2))
    s = ctx.one("Reshape", [ctx.cast(scale.name, scale.type, ct), per_channel])
    b = ctx.one("Reshape", [ctx.cast(bias.name, bias.type, ct), per_channel])
    y = ctx.one("Add", [ctx.one("Mul", [normed, s]), b], ctx.out(0) if ct == et else None)
    if ct != et:
        ctx.cast(y, ct, et, ctx.out(0))
