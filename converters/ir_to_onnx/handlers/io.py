"""Parameter, Const, Result, Convert, ConvertLike, Identity."""

from __future__ import annotations

import numpy as np

from onnx_ext.types import ElementType, from_numpy, from_ov

from .. import attributes as attr
from ..context import LARGE_INITIALIZER_BYTES, Context, Value
from ..registry import translator

_I64 = from_ov("i64")


@translator("Parameter", since=1)
def parameter(ctx: Context, layer) -> None:
    port = layer.outputs[0]
    if ctx.in_body:  # stands for the outer value the body's port map connects
        outer = ctx.param_values[layer.id]
        ctx.values[(layer.id, port.id)] = Value(outer.name, outer.type, outer.shape, outer.const)
        return
    if layer.data.get("element_type", "").lower() == "u1":  # read as boolean, for BinaryConvolution's weights
        raise ctx.error("a Parameter of element type u1 (packed bits) cannot be an ONNX graph input: ONNX has "
                        "no 1-bit type, and OpenVINO runs no op on it (its CPU plugin refuses u1 inputs)")
    et = port.element_type or attr.element(ctx, layer, "element_type", "dynamic")
    if et is None:
        raise ctx.error("a Parameter of dynamic element type cannot be an ONNX graph input")
    # of dynamic rank (shape="..."): an ONNX input with no shape; the translators of ops that need the rank refuse it
    v = Value(ctx.out(0), et, ctx.out_value(0).shape)
    ctx.values[(layer.id, port.id)] = v
    ctx.graph_input(v.name, v.type, v.shape)


@translator("Const", since=1)
def const(ctx: Context, layer) -> None:
    if layer.value is None:
        raise ctx.error("Const has no value (was the .bin read?)")
    ctx.set_const(0, layer.value)


@translator("Result", since=1, emits=("Identity",))
def result(ctx: Context, layer) -> None:
    v = ctx.input(0)
    name = ctx.result_names[layer.id]
    if v.name != name:
        ctx.one("Identity", [v.name], name)
    # The IR's dims: hints, checked against the ops (shape_hints.py).
    ctx.graph_output(layer.id, Value(name, v.type, v.shape))


@translator("Identity", since=16, emits=("Identity",))
def identity(ctx: Context, layer) -> None:
    ctx.one("Identity", [ctx.input(0).name], ctx.out(0))


# DequantizeLinear, Sub, Mul: the last Convert of a compressed weight's decompression (decompression.py)
@translator("Convert", since=1, emits=("Cast", "DequantizeLinear", "Identity", "Mul", "Sub"))
def convert(ctx: Context, layer) -> None:
    dst = attr.element(ctx, layer, "destination_type")
    if dst is None:
        raise ctx.error("destination_type dynamic is not a concrete element type")
    _convert_to(ctx, ctx.input(0), dst)


@translator("ConvertLike", since=1, emits=("Cast", "Identity"))
def convert_like(ctx: Context, layer) -> None:
    like = ctx.input(1)
    if like.type is None:
        raise ctx.error("the second input has no element type")
    _convert_to(ctx, ctx.input(0), like.type)


def _convert_to(ctx: Context, v: Value, dst: ElementType) -> None:
    folded = fold_convert(v.const, dst) if v.const is not None and not _compressed_weights(v) else None
    if folded is not None:  # f16 decompression and other exact conversions of constants
        ctx.set_const(0, folded)
        return
    if dst.ov in _FP8_RANGE:
        _cast_to_fp8(ctx, v.name, v.type, dst, ctx.out(0))
    elif v.type is not None and v.type.ov in _FP8_RANGE:  # f8 -> f32 is exact; then as from f32
        cast_like_openvino(ctx, ctx.cast(v.name, v.type, _F32), _F32, dst, ctx.out(0))
    else:
        cast_like_openvino(ctx, v.name, v.type, dst, ctx.out(0))
    ctx.set_type(0, dst)


#: f8 type -> (the smallest magnitude OpenVINO's Convert takes past the largest finite value, whether that one is
#: included, what it gives there). It rounds to nearest even and does not saturate: e4m3 (no infinities) gives NaN
#: above 464 (448 and the next step's tie, which rounds to 448's even mantissa) and for infinities, e5m2 infinity
#: from 61440 (the tie between 57344 and 65536, whose mantissa is even). onnxruntime 1.31's Cast (saturate 0)
#: gives 448 for (480, 512) on e4m3 and NaN for 61440 on e5m2: these values are set before the Cast.
_FP8_RANGE = {"f8e4m3": (464.0, False, np.nan), "f8e5m2": (61440.0, True, np.inf)}
_F16, _F32 = from_ov("f16"), from_ov("f32")


def _cast_to_fp8(ctx: Context, name: str, src: ElementType | None, dst: ElementType, output: str) -> None:
    """OpenVINO's Convert to f8e4m3/f8e5m2 (``_FP8_RANGE``). Its reference and CPU plugin round to f16 first,
    then to f8 (twice: 303.875 is 320 in e4m3, not 288): so does this, the f16 value held in f32 (exact) for
    the range checks."""
    if src is None or src.ov != "f16":
        name = cast_like_openvino(ctx, name, src, _F16)
    name = ctx.cast(name, _F16, _F32)
    limit, inclusive, past = _FP8_RANGE[dst.ov]
    magnitude = ctx.one("Abs", [name])
    out = ctx.one("GreaterOrEqual" if inclusive else "Greater", [magnitude, ctx.const(np.float32(limit))])
    # past the range: NaN, or the value times infinity (its sign's infinity)
    replaced = ctx.const(np.float32(np.nan)) if np.isnan(past) else ctx.one("Mul", [name, ctx.const(np.float32(past))])
    name = ctx.one("Where", [out, replaced, name])
    ctx.one("Cast", [name], output, to=dst.onnx, saturate=0)


def _compressed_weights(v: Value) -> bool:
    """4-bit constants, and large 8-bit ones: compressed weights, which stay compressed
    (converted at run time; decompression subgraphs become DequantizeLinear, decompression.py)."""
    return v.type is not None and (v.type.packed_bits > 0 or (
        v.type.ov in ("u8", "i8") and v.const.nbytes >= LARGE_INITIALIZER_BYTES))


def fold_convert(value: np.ndarray, dst: ElementType) -> np.ndarray | None:
    """``value`` converted as OpenVINO's Convert does, or None where numpy could differ
    (float -> integer outside the int64 range or not finite)."""
    value = np.asarray(value)
    src_float = from_numpy(value.dtype).is_float
    if src_float and dst.is_integer:
        wide = value.astype(np.float64)
        if not np.all(np.isfinite(wide)) or np.any(np.abs(wide) >= 2.0**63):
            return None
        return np.trunc(wide).astype(np.int64).astype(dst.numpy)
    if dst.kind == "bool":
        return value != 0
    if dst.ov in _FP8_RANGE and from_numpy(value.dtype).ov != dst.ov:  # through f16, as OpenVINO (_cast_to_fp8)
        with np.errstate(over="ignore"):
            return value.astype(np.float16).astype(dst.numpy)
    return value.astype(dst.numpy)


def cast_like_openvino(ctx: Context, name: str, src: ElementType, dst: ElementType, output: str | None = None) -> str:
    """OpenVINO's Convert: float -> small integers truncates and wraps (through i64),
    which ONNX Cast leaves undefined out of range (onnxruntime rounds floats to i4/u4 half away from zero)."""
    if src is not None and src.is_float and dst.is_integer and dst.ov in ("i8", "u8", "i16", "u16", "u32", "i4", "u4"):
        name = ctx.cast(name, src, _I64)
        src = _I64
    return ctx.cast(name, src, dst, output)
