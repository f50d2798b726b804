"""Quantized IR: FakeQuantize-1, and the weight decompression subgraphs of compressed models.

**FakeQuantize** (OpenVINO's reference, computed in the data type)::

    x <= min(il, ih): ol;   x > max(il, ih): oh;
    else round_half_even((x - il) / (ih - il) * (L-1)) / (L-1) * (oh - ol) + ol

becomes QuantizeLinear + DequantizeLinear when that is what it computes: f32 data, constant
ranges that are per tensor or per one axis, levels 256 (u8 when il >= 0, else i8) or 255
(i8 narrow range -127..127), and an output range whose zero is a level. The level is
FakeQuantize's own ``(x - il) / (ih - il) * (L-1)`` (Sub, Div, Mul, as the reference
computes it), rounded half to even and saturated by a QuantizeLinear of scale 1 (a Max at
level 0 for levels 255, whose type has one value more): the levels are exact. The
DequantizeLinear's ``(q - zp) * scale`` differs from ``k / (L-1) * (oh - ol) + ol`` by float
rounding only (a few ulps of the range). Constant data (weights) is quantized here with
FakeQuantize's formula and stored as int8, followed by a
DequantizeLinear. Anything else (other level counts, ranges of other shapes, run-time
ranges, f16/bf16/f64 data) becomes the formula itself in ONNX arithmetic, op by op as the
reference computes it (in f32 for f16/bf16 data, rounded once at the end), which is exact.

**Weight decompression** (NNCF weight compression, and what ``save_model`` makes of
weight FakeQuantizes)::

    Const(u8/i8/u4/i4) -> Convert(float) [-> Subtract(zero point)] -> Multiply(scale)
        [-> Reshape(groups merged)] [-> Convert(f32)]

becomes one DequantizeLinear on the compressed constant (per tensor, per axis, or
blocked with ``block_size`` for group-wise 4-bit weights: [N, G, g] reshaped to [N, G*g]),
exact to OpenVINO's reference (the product is rounded to the scale's type, as there).
Where such a 4-bit group-wise weight [N, K] is the second input of a MatMul with
``transpose_b`` (PyTorch's Linear), the MatMul becomes onnxruntime's
``com.microsoft.MatMulNBits`` on the packed weights: DequantizeLinear is not folded by
onnxruntime and is re-run at every inference (benchmarks/bench_quantized.py measured
MatMulNBits 15-40x faster). MatMulNBits dequantizes in f32 (an f16 scale is widened
exactly, the product is not rounded to f16 as in OpenVINO's reference): within 2^-11 of
each weight. Patterns that do not fit (a zero point that is not an integer of the weight's
type, other broadcasts) are translated layer by layer, still on the compressed constant.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from onnx_ext.types import ElementType, from_numpy, from_ov

from ...ir import Layer
from ...ir_weights import pack_4bit
from .. import attributes as attr
from ..context import Context, Value
from ..registry import translator
from .elementwise import AUTO_BROADCAST, where
from .io import fold_convert

_F32 = from_ov("f32")
_QUANT_TYPES = ("u8", "i8", "u4", "i4")
MS_DOMAIN = "com.microsoft"
#: Whether 4-bit weights of a MatMul become MatMulNBits (else DequantizeLinear + MatMul);
#: benchmarks/bench_quantized.py switches it to compare the two.
USE_MATMUL_NBITS = True


# --- FakeQuantize ----------------------------------------------------------------------


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
    if qdq is None:
        _fake_quantize_arithmetic(ctx, x, (il, ih, ol, oh), levels)
    elif x.const is not None:
        _dequantize_constant(ctx, x, (il, ih, ol, oh), levels, qdq)
    else:
        _quantize_dequantize(ctx, x, qdq)


@dataclass
class _QDQ:
    qtype: ElementType  # u8 or i8
    axis: int | None  # of the output range; None: per tensor
    low: np.ndarray  # il, broadcastable to the data
    span: np.ndarray  # ih - il
    scale_out: np.ndarray  # (oh - ol) / (levels - 1): scalar or 1-D
    zp_out: np.ndarray  # qtype, same shape
    shift: int  # the quantized value of level 0
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
    if not _integral(zero_out):
        return None
    signed = levels == 255 or bool(np.any(il < 0))
    shift = (-127 if levels == 255 else -128) if signed else 0
    qtype = from_ov("i8" if signed else "u8")
    info = np.iinfo(qtype.numpy)
    zp_out = np.rint(zero_out) + shift
    if zp_out.min() < info.min or zp_out.max() > info.max:
        return None
    per = (lambda a: a.reshape(())) if not axes else (lambda a: a)
    return _QDQ(qtype, axes[0] if axes else None, np.ascontiguousarray(il), np.ascontiguousarray(ih - il),
                per(scale_out), per(zp_out.astype(qtype.numpy)), shift, levels)


def _integral(values: np.ndarray) -> bool:
    return bool(np.all(np.abs(values - np.rint(values)) <= 1e-3))


def _quantize_dequantize(ctx: Context, x: Value, p: _QDQ) -> None:
    """The level as FakeQuantize computes it, (x - il) / (ih - il) * (levels-1), rounded and
    saturated by a QuantizeLinear of scale 1; DequantizeLinear maps it to the output range."""
    low, span = ctx.const(p.low, hint="input_low"), ctx.const(p.span, hint="input_span")
    steps = ctx.const(np.array(p.levels - 1, np.float32), hint="levels")
    level = ctx.one("Mul", [ctx.one("Div", [ctx.one("Sub", [x.name, low]), span]), steps])
    if p.levels == 255:  # the type's -128 is no level: saturate at level 0 by hand
        level = ctx.one("Max", [level, ctx.const(np.array(0, np.float32), hint="zero")])
    q = ctx.one("QuantizeLinear", [level, ctx.const(np.array(1, np.float32), hint="one"),
                                   ctx.const(np.array(p.shift, p.qtype.numpy), hint="shift")])
    ctx.one("DequantizeLinear", [q, ctx.const(p.scale_out, hint="scale"), ctx.const(p.zp_out, hint="zero_point")],
            ctx.out(0), axis=p.axis)


def _dequantize_constant(ctx: Context, x: Value, ranges, levels: int, p: _QDQ) -> None:
    """Constant data: its levels by FakeQuantize's own formula, stored as int8, then DequantizeLinear."""
    data = np.asarray(x.const, np.float32)
    levels_of = fake_quantize_levels(data, *(np.asarray(r.const, np.float32) for r in ranges), levels)
    q = (levels_of.astype(np.int32) + p.shift).astype(p.qtype.numpy)
    ctx.one("DequantizeLinear", [ctx.const(q, hint="quantized"), ctx.const(p.scale_out, hint="scale"),
                                 ctx.const(p.zp_out, hint="zero_point")], ctx.out(0), axis=p.axis)


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


# --- weight decompression subgraphs -----------------------------------------------------


@dataclass
class Decompression:
    """One decompression subgraph: what it reads, and the layers it replaces."""

    weights: np.ndarray  # the compressed constant (u8/i8/u4/i4), reshaped to ``shape``
    scale: np.ndarray  # float, DequantizeLinear's layout (scalar, 1-D or blocked)
    zero_point: np.ndarray | None  # the weights' type, scale's shape
    axis: int | None
    block_size: int | None
    float_type: ElementType  # the Multiply's type
    out_type: ElementType  # after the optional last Convert
    last: Layer  # the layer whose output the subgraph's result is
    inner: list[Layer]  # layers replaced (Convert, Subtract, Multiply, Reshape, Convert) but ``last``
    matmul: Layer | None = None  # a MatMul that becomes MatMulNBits

    def translate(self, ctx: Context, layer: Layer) -> None:
        if self.matmul is not None:
            _matmul_nbits(ctx, self)
        else:
            _dequantize_linear(ctx, self)


def decompression_subgraphs(ctx: Context, layers: list[Layer]) -> dict[int, Decompression]:
    """Layer id -> the subgraph translated in its place: for the last layer of each subgraph
    (or the MatMul that takes it), and for each inner layer (which then emits nothing)."""
    by_id = {layer.id: layer for layer in layers}
    consumers: dict[tuple[int, int], list[tuple[Layer, int]]] = {}
    producers = {}
    for e in ctx.ir.edges:
        if e.to_layer in by_id and e.from_layer in by_id:
            dst = by_id[e.to_layer]
            index = next(i for i, p in enumerate(dst.inputs) if p.id == e.to_port)
            consumers.setdefault((e.from_layer, e.from_port), []).append((dst, index))
            producers[(e.to_layer, index)] = (by_id[e.from_layer], e.from_port)
    found: dict[int, Decompression] = {}
    for layer in layers:
        if layer.type.lower() == "const" and layer.value is not None and layer.outputs and \
                from_numpy(layer.value.dtype).ov in _QUANT_TYPES:
            d = _match(ctx, layer, consumers, producers)
            if d is not None:
                for inner in d.inner:
                    found[inner.id] = None  # placeholder: emits nothing
                found[(d.matmul or d.last).id] = d
    return found


def _sole_consumer(layer: Layer, consumers) -> tuple[Layer, int] | None:
    users = consumers.get((layer.id, layer.outputs[0].id), []) if layer.outputs else []
    return users[0] if len(users) == 1 and len(layer.outputs) == 1 else None


def _constant(ctx: Context, layer: Layer, index: int, producers, consumers, side: list[Layer]) -> np.ndarray | None:
    """The value of input ``index`` when it is a Const, or a Convert of one (which joins
    ``side``, the layers replaced with the subgraph, when it feeds nothing else)."""
    src, _ = producers.get((layer.id, index), (None, None))
    if src is None:
        return None
    if src.type.lower() == "const":
        return src.value
    if src.type.lower() == "convert":
        inner, _ = producers.get((src.id, 0), (None, None))
        dst = _destination(ctx, src)
        if inner is not None and inner.type.lower() == "const" and inner.value is not None and dst is not None:
            if _sole_consumer(src, consumers) is not None:
                side.append(src)
            return fold_convert(inner.value, dst)
    return None


def _destination(ctx: Context, layer: Layer) -> ElementType | None:
    return attr.element(ctx, layer, "destination_type", "dynamic")


def _is(hit, op_type: str) -> bool:
    return hit is not None and hit[0].type.lower() == op_type.lower()


def _match(ctx: Context, const: Layer, consumers, producers) -> Decompression | None:
    weights = const.value
    wtype = from_numpy(weights.dtype)
    hit = _sole_consumer(const, consumers)
    ftype = _destination(ctx, hit[0]) if _is(hit, "Convert") else None
    if ftype is None or not ftype.is_float:
        return None
    convert = hit[0]
    if ftype.ov not in ("f32", "f16"):  # DequantizeLinear's float types that onnxruntime runs
        return None
    chain, cur = [convert], convert
    side: list[Layer] = []  # Converts of the zero point and scale
    zero_point = None
    hit = _sole_consumer(cur, consumers)
    if _is(hit, "Subtract") and hit[1] == 0:
        zero_point = _constant(ctx, hit[0], 1, producers, consumers, side)
        if zero_point is None:
            return None
        cur = hit[0]
        chain.append(cur)
        hit = _sole_consumer(cur, consumers)
    if not _is(hit, "Multiply"):
        return None
    scale = _constant(ctx, hit[0], 1 - hit[1], producers, consumers, side)
    if scale is None or from_numpy(scale.dtype) != ftype:
        return None
    cur = hit[0]
    chain.append(cur)
    layout = _layout(weights.shape, scale.shape, None if zero_point is None else zero_point.shape)
    if layout is None:
        return None
    hit = _sole_consumer(cur, consumers)
    blocked = None
    if _is(hit, "Reshape") and hit[1] == 0:
        blocked = _blocked(weights.shape, scale.shape, None if zero_point is None else zero_point.shape, hit[0])
        if blocked is not None:
            cur = hit[0]
            chain.append(cur)
            hit = _sole_consumer(cur, consumers)
    if blocked is None and layout == "blocked":
        return None
    out_type = ftype
    last = _destination(ctx, hit[0]) if _is(hit, "Convert") else None
    if last is not None and last.is_float:
        out_type = last
        cur = hit[0]
        chain.append(cur)
    zp = _zero_point(zero_point, wtype)
    if zero_point is not None and zp is None:
        return None
    d = _decompression(weights, scale, zp, layout, blocked, ftype, out_type, chain)
    d.matmul = _nbits_matmul(d, consumers)
    d.inner = side + (chain if d.matmul is not None else chain[:-1])
    return d


def _aligned(shape: tuple, rank: int) -> tuple | None:
    return None if len(shape) > rank else (1,) * (rank - len(shape)) + tuple(shape)


def _layout(wshape: tuple, sshape: tuple, zshape: tuple | None) -> str | None:
    """"tensor", "axis" or "blocked" (scale [.., G, 1] on weights [.., G, g]); None: no match."""
    rank = len(wshape)
    shapes = [_aligned(sshape, rank)] + ([] if zshape is None else [_aligned(zshape, rank)])
    if any(s is None or any(n not in (1, w) for n, w in zip(s, wshape)) for s in shapes):
        return None
    varying = sorted({d for s in shapes for d, n in enumerate(s) if n != 1 and wshape[d] != 1})
    if not varying:
        return "tensor"
    if len(varying) == 1:
        return "axis"
    return "blocked"


def _blocked(wshape: tuple, sshape: tuple, zshape: tuple | None, reshape: Layer) -> tuple[int, int] | None:
    """(axis, block size) when the Reshape merges a group dim with the group-size dim that the
    scale and zero point do not vary along: [.., G, g, ..] -> [.., G*g, ..]."""
    out = reshape.outputs[0].dims if reshape.outputs else None
    if out is None or any(d is None for d in out) or len(out) != len(wshape) - 1:
        return None
    s = _aligned(sshape, len(wshape))
    z = _aligned(zshape, len(wshape)) if zshape is not None else (1,) * len(wshape)
    for b in range(1, len(wshape)):
        merged = list(wshape[:b - 1]) + [wshape[b - 1] * wshape[b]] + list(wshape[b + 1:])
        if merged == list(out) and s[b] == 1 and z[b] == 1 and wshape[b] > 1:
            return b - 1, wshape[b]
    return None


def _zero_point(zero_point: np.ndarray | None, wtype: ElementType) -> np.ndarray | None:
    """The zero point as the weights' type, when it is an integer in the type's range."""
    if zero_point is None:
        return None
    z = np.asarray(zero_point, dtype=np.float64)
    lo, hi = (0, 15) if wtype.ov == "u4" else (-8, 7) if wtype.ov == "i4" else \
        (np.iinfo(wtype.numpy).min, np.iinfo(wtype.numpy).max)
    if not np.all(np.isfinite(z)) or np.any(z != np.rint(z)) or z.min() < lo or z.max() > hi:
        return None
    return z.astype(np.int8 if wtype.kind == "int" else np.uint8).astype(wtype.numpy)


def _decompression(weights, scale, zp, layout, blocked, ftype, out_type, chain) -> Decompression:
    """DequantizeLinear's operands: the scale and zero point per tensor (0-d), per axis (1-D),
    or blocked (the weights' shape after the Reshape, one value per group)."""
    wshape = weights.shape
    rank = len(wshape)
    params = [a.reshape(_aligned(a.shape, rank)) for a in ([scale] if zp is None else [scale, zp])]
    axis = block = None
    if blocked is not None:
        axis, block = blocked
        per_group = wshape[:axis + 1] + (1,) + wshape[axis + 2:]
        target = wshape[:axis + 1] + wshape[axis + 2:]
        params = [_filled(a, per_group).reshape(target) for a in params]
        weights = weights.reshape(wshape[:axis] + (wshape[axis] * wshape[axis + 1],) + wshape[axis + 2:])
    elif layout == "axis":
        axis = next(d for d in range(rank) if wshape[d] != 1 and any(a.shape[d] != 1 for a in params))
        params = [_filled(a, (1,) * axis + (wshape[axis],) + (1,) * (rank - axis - 1)).reshape(-1) for a in params]
    else:
        params = [a.reshape(()) for a in params]
    return Decompression(weights, params[0], params[1] if zp is not None else None, axis, block, ftype, out_type,
                         chain[-1], chain[:-1])


def _filled(a: np.ndarray, shape: tuple) -> np.ndarray:
    return np.ascontiguousarray(np.broadcast_to(a, shape))


def _dequantize_linear(ctx: Context, d: Decompression) -> None:
    inputs = [ctx.const(d.weights, hint="weights"), ctx.const(d.scale, hint="scale")]
    if d.zero_point is not None:
        inputs.append(ctx.const(d.zero_point, hint="zero_point"))
    out = ctx.out(0) if d.out_type == d.float_type else None
    y = ctx.one("DequantizeLinear", inputs, out, axis=d.axis, block_size=d.block_size)
    if out is None:
        ctx.cast(y, d.float_type, d.out_type, ctx.out(0))
    ctx.set_type(0, d.out_type)


# --- MatMulNBits --------------------------------------------------------------------------


def _nbits_matmul(d: Decompression, consumers) -> Layer | None:
    """The MatMul that can take ``d`` as MatMulNBits: 4-bit weights [N, K] in groups along K
    (or per row), the MatMul's second input, transposed; a float input of the result's type."""
    if not USE_MATMUL_NBITS or from_numpy(d.weights.dtype).bits != 4 or d.weights.ndim != 2 or \
            d.out_type.ov not in ("f32", "f16"):
        return None
    n, k = d.weights.shape
    if d.block_size is not None and d.axis == 1:
        block = d.block_size
    elif d.axis == 0 and d.block_size is None:
        block = k  # one scale per row
    else:
        return None
    if block < 16 or block & (block - 1):
        return None
    hit = _sole_consumer(d.last, consumers)
    if not _is(hit, "MatMul") or hit[1] != 1:
        return None
    matmul = hit[0]
    a = matmul.inputs[0]
    transposed = attr.boolean(matmul, "transpose_b", False) and not attr.boolean(matmul, "transpose_a", False)
    if not transposed or a.element_type != d.out_type or len(a.dims) < 2:
        return None
    d.block_size = block
    return matmul


def _matmul_nbits(ctx: Context, d: Decompression) -> None:
    """MatMulNBits(A, B, scales[, zero_points]): B uint8 [N, K/block, block/2] (u4 values;
    i4 ones shifted by 8, the op's default zero point), scales and packed zero points per block."""
    n, k = d.weights.shape
    blocks = k // d.block_size
    wtype = from_numpy(d.weights.dtype)
    packed = pack_4bit(d.weights)
    if wtype.kind == "int":
        packed = packed ^ np.uint8(0x88)  # i4 v -> u4 v + 8, in both nibbles
    inputs = [ctx.input(0).name, ctx.const(packed.reshape(n, blocks, d.block_size // 2), hint="weights"),
              ctx.const(np.ascontiguousarray(d.scale.reshape(n, blocks).astype(d.out_type.numpy)).reshape(-1),
                        hint="scale")]
    zp = d.zero_point
    if zp is not None or wtype.kind == "uint":
        values = np.zeros((n, blocks), np.int16) if zp is None else \
            np.broadcast_to(zp.astype(np.int16).reshape(n, -1), (n, blocks))
        values = values + (8 if wtype.kind == "int" else 0)
        rows = np.zeros((n, blocks + blocks % 2), np.uint8)
        rows[:, :blocks] = values
        inputs.append(ctx.const(_pack_rows(rows), hint="zero_point"))
    ctx.node("MatMulNBits", inputs, [ctx.out(0)], domain=MS_DOMAIN, K=k, N=n, bits=4, block_size=d.block_size)
    ctx.root.extra_opsets[MS_DOMAIN] = 1


def _pack_rows(rows: np.ndarray) -> np.ndarray:
    """uint8 values < 16 of shape [N, even] -> [N, even/2], two per byte, low nibble first."""
    return (rows[:, 0::2] | (rows[:, 1::2] << 4)).astype(np.uint8)
