"""Parameter, Const, Result, Convert, ConvertLike, Identity."""

from __future__ import annotations

import numpy as np

from onnx_ext.types import ElementType, from_ov

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
    et = port.element_type or attr.element(ctx, layer, "element_type", "dynamic")
    if et is None:
        raise ctx.error("a Parameter of dynamic element type cannot be an ONNX graph input")
    v = Value(ctx.out(0), et, ctx.out_value(0).shape)
    if v.shape is None:
        raise ctx.error(f"Parameter shape {attr.string(ctx, layer, 'shape', '')!r} has a dynamic rank, which an ONNX "
                        "graph input cannot declare")
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
    cast_like_openvino(ctx, v.name, v.type, dst, ctx.out(0))
    ctx.set_type(0, dst)


def _compressed_weights(v: Value) -> bool:
    """4-bit constants, and large 8-bit ones: compressed weights, which stay compressed
    (converted at run time; decompression subgraphs become DequantizeLinear, decompression.py)."""
    return v.type is not None and (v.type.packed_bits > 0 or (
        v.type.ov in ("u8", "i8") and v.const.nbytes >= LARGE_INITIALIZER_BYTES))


def fold_convert(value: np.ndarray, dst: ElementType) -> np.ndarray | None:
    """``value`` converted as OpenVINO's Convert does, or None where numpy could differ
    (float -> integer outside the int64 range or not finite)."""
    value = np.asarray(value)
    src_float = value.dtype.kind == "f" or value.dtype.name == "bfloat16"
    if src_float and dst.is_integer:
        wide = value.astype(np.float64)
        if not np.all(np.isfinite(wide)) or np.any(np.abs(wide) >= 2.0**63):
            return None
        return np.trunc(wide).astype(np.int64).astype(dst.numpy)
    if dst.kind == "bool":
        return value != 0
    return value.astype(dst.numpy)


def cast_like_openvino(ctx: Context, name: str, src: ElementType, dst: ElementType, output: str | None = None) -> str:
    """OpenVINO's Convert: float -> small integers truncates and wraps (through i64),
    which ONNX Cast leaves undefined out of range."""
    if src is not None and src.is_float and dst.is_integer and dst.ov in ("i8", "u8", "i16", "u16", "u32"):
        name = ctx.cast(name, src, _I64)
        src = _I64
    return ctx.cast(name, src, dst, output)
