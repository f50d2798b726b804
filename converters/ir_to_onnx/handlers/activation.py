"""Swish and GroupNormalization, decomposed: ONNX has Swish only from opset 24, and
GroupNormalization's scale and bias are per group in opset 18 but per channel in
21, so a decomposition means the same in every opset the converter writes."""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from ..context import Context, compute_type
from ..registry import handler
from .nn import _float
from .shape import _int

_FLOATS = frozenset({"f16", "f32", "f64"})


def _float_type(ctx: Context, v):
    """The type to compute in: the data's, or f32 for bf16 (no kernels)."""
    if v.type is None or not v.type.is_float:
        raise ctx.error(f"needs floating-point data, got {v.type.ov if v.type else None}")
    return v.type if v.type.ov in _FLOATS else from_ov("f32")


@handler("Swish", "opset4")
def swish(ctx: Context, layer) -> None:
    """x * sigmoid(beta * x), beta 1 when the input is absent."""
    data = ctx.input(0)
    et = data.type
    ct = compute_type("Sigmoid", et)
    if ct is None:
        raise ctx.error(f"onnxruntime has no Sigmoid kernel for {et.ov} and no lossless widening applies")
    x = ctx.cast(data.name, et, ct)
    arg = x
    if ctx.n_inputs() > 1:
        beta = ctx.input(1)
        if beta.const is None or not np.all(np.asarray(beta.const) == 1):
            arg = ctx.one("Mul", [x, ctx.cast(beta.name, beta.type, ct)])
    y = ctx.one("Mul", [x, ctx.one("Sigmoid", [arg])], ctx.out(0) if ct == et else None)
    if ct != et:
        ctx.cast(y, ct, et, ctx.out(0))


@handler("GroupNormalization", "opset12")
def group_normalization(ctx: Context, layer) -> None:
    """[N, C, ...] seen as [N, G, C/G * ...]: normalised per (n, g), then scale and bias
    per channel."""
    data, scale, bias = ctx.input(0), ctx.input(1), ctx.input(2)
    if data.rank is None or data.rank < 2:
        raise ctx.error(f"needs data of known rank >= 2 (N, C, ...), got shape {data.shape}")
    groups = _int(ctx, layer, "num_groups")
    eps = _float(ctx, layer, "epsilon")
    channels = data.shape[1]
    if groups < 1 or (channels is not None and channels % groups):
        raise ctx.error(f"num_groups {groups} does not divide the {channels} channels")
    et = data.type
    ct = _float_type(ctx, data)
    x = ctx.cast(data.name, et, ct)
    grouped = ctx.one("Reshape", [x, ctx.i64([0, groups, -1])])
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
