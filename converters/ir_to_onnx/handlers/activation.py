"""Activations and value tests: Swish, PRelu, Selu, HardSigmoid, IsNaN, IsInf, IsFinite.

Swish is decomposed (x * Sigmoid(beta * x)): ONNX has Swish only from opset 24.

PRelu's slope broadcasts per channel (dim 1) when it is 1-D with the channel count
(OpenVINO's reference), else numpy-style, which is ONNX's unidirectional broadcast.
Selu's alpha and lambda are inputs in OpenVINO and attributes in ONNX: constants
become the attributes (run-time ones are refused, as OpenVINO's CPU plugin does), and
so do HardSigmoid's alpha and beta.
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..kernels import compute_type
from ..registry import translator
from . import float64

_BOOL = from_ov("boolean")


def _float_data(ctx: Context, v: Value):
    if v.type is None or not v.type.is_float:
        raise ctx.error(f"needs floating-point data, got {v.type.ov if v.type else None}")
    return v.type


@translator("PRelu", since=1, emits=("Cast", "Identity", "Less", "Mul", "PRelu", "Reshape", "Where"))
def prelu(ctx: Context, layer) -> None:
    data, slope = ctx.input(0), ctx.input(1)
    et = data.type
    if et is not None and et.kind in ("uint", "bool"):  # never negative
        ctx.one("Identity", [data.name], ctx.out(0))
        return
    s = slope.name
    if slope.rank == 1 and data.rank is not None and data.rank >= 2:
        channels, n = data.shape[1], slope.shape[0]
        if n is None or (channels is None and n != 1):
            raise ctx.error(f"a 1-D slope of shape {slope.shape} on data {data.shape}: whether it is per channel "
                            "is decided at run time, which the translation cannot")
        if n == channels and n != 1:
            s = ctx.one("Reshape", [s, ctx.i64([n] + [1] * (data.rank - 2))])
    if et is not None and et.is_float:
        ctx.emit("PRelu", [data.name, s], et, ctx.out(0))
        return
    # integers: x < 0 ? x * slope : x
    negative = ctx.emit("Less", [data.name, ctx.const(np.zeros((), et.numpy))], et, result_type=_BOOL)
    scaled = ctx.emit("Mul", [data.name, s], et, kind="bits")
    ct = compute_type("Where", et, "bits")  # i16 -> i32
    ctx.cast(ctx.one("Where", [negative, ctx.cast(scaled, et, ct), ctx.cast(data.name, et, ct)]), ct, et, ctx.out(0))


def _constant_attributes(ctx: Context, op: str, names: tuple[str, str], what: str) -> None:
    """``op`` with inputs 1 and 2, constant one-element tensors, as its attributes ``names``."""
    data, a, b = (ctx.input(i) for i in range(3))
    et = _float_data(ctx, data)
    if any(v.const is None or v.const.size != 1 for v in (a, b)):
        raise ctx.error(f"{op} needs constant one-element {what} (ONNX's are attributes)")
    values = {name: float(v.const.reshape(())) for name, v in zip(names, (a, b))}
    float64.unary(ctx, op, data.name, et, ctx.out(0), **values)


@translator("Selu", since=1, emits=("Selu", *float64.EMITS))
def selu(ctx: Context, layer) -> None:
    """Constant alpha and lambda (what frontends write; OpenVINO's CPU plugin runs no other)."""
    _constant_attributes(ctx, "Selu", ("alpha", "gamma"), "alpha and lambda")


@translator("HardSigmoid", since=1, emits=("HardSigmoid", *float64.EMITS))
def hard_sigmoid(ctx: Context, layer) -> None:
    """max(0, min(1, alpha * x + beta)), constant alpha and beta (ONNX's attributes)."""
    _constant_attributes(ctx, "HardSigmoid", ("alpha", "beta"), "alpha and beta")


@translator("IsNaN", since=10, emits=("IsNaN",))
def is_nan(ctx: Context, layer) -> None:
    data = ctx.input(0)
    ctx.emit("IsNaN", [data.name], _float_data(ctx, data), ctx.out(0), result_type=_BOOL)


@translator("IsInf", since=10, emits=("IsInf",))
def is_inf(ctx: Context, layer) -> None:
    data = ctx.input(0)
    ctx.emit("IsInf", [data.name], _float_data(ctx, data), ctx.out(0), result_type=_BOOL,
             **{flag: int(attr.boolean(layer, flag, True)) for flag in ("detect_negative", "detect_positive")})


@translator("IsFinite", since=10, emits=("IsInf", "IsNaN", "Not", "Or"))
def is_finite(ctx: Context, layer) -> None:
    data = ctx.input(0)
    et = _float_data(ctx, data)
    nan = ctx.emit("IsNaN", [data.name], et, result_type=_BOOL)
    inf = ctx.emit("IsInf", [data.name], et, result_type=_BOOL)
    ctx.one("Not", [ctx.one("Or", [nan, inf])], ctx.out(0))


@translator("Swish", since=4, emits=("Cast", "Identity", "Mul", "Sigmoid"))
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
