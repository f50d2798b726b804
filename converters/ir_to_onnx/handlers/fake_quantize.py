"""FakeQuantize-1 (quantized IR: NNCF post-training quantization).

**FakeQuantize** (OpenVINO's reference, computed in the data type)::

    x <= min(il, ih): ol;   x > max(il, ih): oh;
    else round_half_even((x - il) / (ih - il) * (L-1)) / (L-1) * (oh - ol) + ol

becomes QuantizeLinear + DequantizeLinear when that is what it computes: f32 data, constant
ranges that are per tensor or per one axis, levels 256 or 255, and an output range whose zero
is a level. The level is FakeQuantize's own ``(x - il) / (ih - il) * (L-1)`` (Sub, Div, Mul,
as the reference computes it), rounded half to even and saturated by a QuantizeLinear of scale
1 to u8 (a Min at level 254 for levels 255): the levels are exact. The
DequantizeLinear's ``(q - zp) * scale`` differs from ``k / (L-1) * (oh - ol) + ol`` by float
rounding only (a few ulps of the range). Constant data (weights) is quantized here with
FakeQuantize's formula and stored as u8 levels too, followed by a DequantizeLinear. Anything
else (other level counts, ranges of other shapes, run-time ranges, f16/bf16/f64 data) becomes the formula itself in ONNX arithmetic, op by op as the
reference computes it (in f32 for f16/bf16 data, rounded once at the end), which is exact.

The weight decompression subgraphs of compressed models: ``decompression.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from onnx_ext.types import ElementType, from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..registry import translator
from .elementwise import AUTO_BROADCAST, where

_F32 = from_ov("f32")


@translator("FakeQuantize", since=1,
            emits=("Add", "Cast", "DequantizeLinear", "Div", "Greater", "Identity", "LessOrEqual", "Max", "Min", "Mul",
                   "QuantizeLinear", "Round", "Sub", "Where"))
def fake_quantize(ctx: Context, layer) -> None:
    x, il, ih, ol, oh = (ctx.input(i) for i in range(5))
    levels = attr.integer(ctx, layer, "levels")
    if levels < 2:
        raise ctx.error(f"levels={levels} must be at least 2")
    mode = attr.choice(ctx, layer, "auto_broadcast", AUTO_BROADCAST, "numpy")
    if mode == "pdpd":
        raise ctx.error(f"auto_broadcast {mode!r} is not supported (numpy and none are)")
    if x.type is None or not x.type.is_float:
        raise ctx.error(f"FakeQuantize needs float data, got {x.type.ov if x.type else 'an unknown type'}")
    qdq = _qdq_params(x, (il, ih, ol, oh), levels)
    if qdq is not None:
        if x.const is not None:
            _dequantize_constant(ctx, x, (il, ih, ol, oh), levels, qdq)
        else:
            _quantize_dequantize(ctx, x, qdq)
    else:
        _fake_quantize_arithmetic(ctx, x, (il, ih, ol, oh), levels)


@dataclass
class _QDQ:
    axis: int | None  # of the output range; None: per tensor
    low: np.ndarray  # il, broadcastable to the data
    span: np.ndarray  # ih - il
    scale_out: np.ndarray  # (oh - ol) / (levels - 1): scalar or 1-D
    zero_level: np.ndarray  # u8, the level of output 0 (DequantizeLinear's zero point), same shape
    levels: int


def _qdq_params(x: Value, ranges: tuple[Value, ...], levels: int) -> _QDQ | None:
    """Q/DQ parameters that compute this FakeQuantize, or None (see the module doc)."""
    if levels not in (255, 256) or x.type.ov != "f32" or x.rank is None:
        return None
    if any(r.const is None for r in ranges):
        return None
    arrays = [np.asarray(r.const, dtype=np.float32) for r in ranges]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    if len(shape) > x.rank:
        return None
    shape = (1,) * (x.rank - len(shape)) + shape
    axes = [d for d, n in enumerate(shape) if n != 1]
    if len(axes) > 1 or (axes and x.shape[axes[0]] not in (None, shape[axes[0]])):
        return None
    il, ih, ol, oh = (np.broadcast_to(a.reshape((1,) * (len(shape) - a.ndim) + a.shape), shape) for a in arrays)
    if not (np.all(ih > il) and np.all(oh > ol) and all(np.all(np.isfinite(a)) for a in arrays)):
        return None
    scale_out = (oh - ol).reshape(-1) / np.float32(levels - 1)
    zero_out = -ol.reshape(-1).astype(np.float64) / scale_out  # the level of output 0
    if not _integral(zero_out) or np.rint(zero_out).min() < 0 or np.rint(zero_out).max() > 255:
        return None
    per = (lambda a: a.reshape(())) if not axes else (lambda a: a)
    return _QDQ(axes[0] if axes else None, np.ascontiguousarray(il), np.ascontiguousarray(ih - il),
                per(scale_out), per(np.rint(zero_out).astype(np.uint8)), levels)


def _integral(values: np.ndarray) -> bool:
    return bool(np.all(np.abs(values - np.rint(values)) <= 1e-3))


def _quantize_dequantize(ctx: Context, x: Value, p: _QDQ) -> None:
    """The level as FakeQuantize computes it, (x - il) / (ih - il) * (levels-1), rounded and
    saturated by a QuantizeLinear of scale 1 to u8 (the level itself); DequantizeLinear maps it to
    the output range. Activations are u8 whatever the range's sign: onnxruntime's QDQ propagation
    and its int8-to-uint8 rewrite together make an int8 Q/DQ before a Reshape or Transpose fail to
    load (``QuantizeLinear ... output_dtype INT8 does not match y_zero_point type UINT8``), and u8
    activations are what its x86 kernels take."""
    low, span = ctx.const(p.low, hint="input_low"), ctx.const(p.span, hint="input_span")
    steps = ctx.const(np.array(p.levels - 1, np.float32), hint="levels")
    level = ctx.one("Mul", [ctx.one("Div", [ctx.one("Sub", [x.name, low]), span]), steps])
    if p.levels < 256:  # u8's 255 is no level: saturate at the top level by hand
        level = ctx.one("Min", [level, ctx.const(np.array(p.levels - 1, np.float32), hint="top")])
    q = ctx.one("QuantizeLinear", [level, ctx.const(np.array(1, np.float32), hint="one"),
                                   ctx.const(np.array(0, np.uint8), hint="level_zero")])
    ctx.one("DequantizeLinear", [q, ctx.const(p.scale_out, hint="scale"),
                                 ctx.const(p.zero_level, hint="zero_point")], ctx.out(0), axis=p.axis)


def _dequantize_constant(ctx: Context, x: Value, ranges, levels: int, p: _QDQ) -> None:
    """Constant data: its levels by FakeQuantize's own formula, stored as u8 (the level itself, as
    for activations: u8 x u8 is what onnxruntime's integer kernels compute exactly; decompression.py),
    then DequantizeLinear."""
    data = np.asarray(x.const, np.float32)
    levels_of = fake_quantize_levels(data, *(np.asarray(r.const, np.float32) for r in ranges), levels)
    q = levels_of.astype(np.uint8)
    ctx.one("DequantizeLinear", [ctx.const(q, hint="quantized"), ctx.const(p.scale_out, hint="scale"),
                                 ctx.const(p.zero_level, hint="zero_point")], ctx.out(0), axis=p.axis)


def fake_quantize_levels(x, il, ih, ol, oh, levels: int) -> np.ndarray:
    """The level (0 .. levels-1) FakeQuantize picks for each element, computed as OpenVINO's
    reference does in the data type (below il: 0; above ih: levels-1)."""
    dtype = np.result_type(x, il)
    steps = dtype.type(levels - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        k = np.rint((x - il) / (ih - il) * steps)
    k = np.where(x <= np.minimum(il, ih), 0, np.where(x > np.maximum(il, ih), steps, k))
    return np.broadcast_to(k, np.broadcast_shapes(x.shape, il.shape, ih.shape, ol.shape, oh.shape))


def _fake_quantize_arithmetic(ctx: Context, x: Value, ranges: tuple[Value, ...], levels: int) -> None:
    """The reference formula op by op: in f32 for f16/bf16 data (the reference's half types
    compute in float and round once, at the end), else in the data type."""
    et = x.type if x.type.ov in ("f32", "f64") else _F32
    il, ih, ol, oh = (_as_type(ctx, r, et) for r in ranges)
    steps = ctx.const(np.array(levels - 1, et.numpy), hint="levels")
    span_in = _sub(ctx, ranges[1], ranges[0], ih, il, et)
    span_out = _sub(ctx, ranges[3], ranges[2], oh, ol, et)
    data = ctx.cast(x.name, x.type, et)
    t = ctx.emit("Mul", [ctx.emit("Div", [ctx.emit("Sub", [data, il], et), span_in], et), steps], et)
    y = ctx.emit("Add", [ctx.emit("Mul", [ctx.emit("Div", [ctx.emit("Round", [t], et), steps], et), span_out], et),
                         ol], et)
    lowest = ctx.emit("Min", [il, ih], et)
    highest = ctx.emit("Max", [il, ih], et)
    above = ctx.emit("Greater", [data, highest], et, result_type=from_ov("boolean"))
    at_or_below = ctx.emit("LessOrEqual", [data, lowest], et, result_type=from_ov("boolean"))
    upper = where(ctx, above, Value(oh, et, None), Value(y, et, None))
    out = where(ctx, at_or_below, Value(ol, et, None), Value(upper, et, None), ctx.out(0) if et == x.type else None)
    if et != x.type:
        ctx.cast(out, et, x.type, ctx.out(0))


def _as_type(ctx: Context, v: Value, et: ElementType) -> str:
    if v.const is not None:
        return ctx.const(np.asarray(v.const).astype(et.numpy), hint="range")
    return ctx.cast(v.name, v.type, et)


def _sub(ctx: Context, a: Value, b: Value, a_name: str, b_name: str, et: ElementType) -> str:
    """a - b, folded when both are constants (numpy rounds like OpenVINO in the same type)."""
    if a.const is not None and b.const is not None:
        return ctx.const(np.asarray(a.const).astype(et.numpy) - np.asarray(b.const).astype(et.numpy), hint="span")
    return ctx.emit("Sub", [a_name, b_name], et)
