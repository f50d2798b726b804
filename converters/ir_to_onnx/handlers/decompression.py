"""Weight decompression subgraphs of compressed models (quantized IR; FakeQuantize: ``fake_quantize.py``).

**Weight decompression** (NNCF weight compression, and what ``save_model`` makes of
weight FakeQuantizes)::

    Const(u8/i8/u4/i4) -> Convert(float) [-> Subtract(zero point)] -> Multiply(scale)
        [-> Reshape(groups merged)] [-> Convert(f32)]

becomes one DequantizeLinear on the compressed constant (per tensor, per axis, or
blocked with ``block_size`` for group-wise 4-bit weights: [N, G, g] reshaped to [N, G*g]),
exact to OpenVINO's reference (the product is rounded to the scale's type, as there).
Weights of MatMuls not taken compressed (8-bit ones, ...), and weights with f16 scales into any layer that takes
them as weights (convolutions, backprop ones, Gathers; per channel or group-wise), are instead ``(w - zp) * scale``
in f32 on the initializers (folded by onnxruntime at load): OpenVINO's CPU plugin at f32 computes them in f32, bit
for bit (``_folds_in_f32``).
i8 weights of a MatMul or convolution whose other input is a FakeQuantize (int8 PTQ: u8 Q/DQ
activations) are stored as u8, shifted by 128 with the zero point: onnxruntime fuses such Q/DQ
pairs into integer kernels, whose u8 x i8 products saturate int16 on x86 without VNNI (0.05 off
on BERT's pooler, 0.7 of max on a ViT); u8 x u8 is exact.
Where such a 4-bit group-wise weight [N, K] is the second input of a MatMul with
``transpose_b`` (PyTorch's Linear; or [K, N] without it, transposed here), the MatMul becomes
onnxruntime's ``com.microsoft.MatMulNBits`` on the packed weights (experts' weights [E, N, K] or
[E, K, N] under a batched MatMul: one MatMulNBits per expert): DequantizeLinear is not folded by
onnxruntime and is re-run at every inference (benchmarks/results/bench_quantized.md: MatMulNBits
90-611x faster for one row of input, 8-12x for 32, at 1 thread). MatMulNBits dequantizes in f32
(an f16 scale is widened exactly, the product is not rounded to f16 as in OpenVINO's reference): within 2^-11 of
each weight. The rows of 8- and 4-bit tables (embeddings, tied or not to a MatMulNBits lm_head) become
``com.microsoft.GatherBlockQuantized`` on the compressed bytes, bit for bit the plugin's rows
(``_gather_block_quantized``; benchmarks/bench_embedding.py: 4-bit tables no longer f32 in memory). Patterns
that do not fit (a zero point that is not an integer of the weight's type, other broadcasts) are translated layer
by layer, still on the compressed constant.

**NF4 weights** (NNCF ``CompressWeightsMode.NF4``; the reader makes each ``nf4`` Const u4 codes -> Convert(i32)
-> Gather into ``ir_nf4.NF4_TABLE``) into MatMuls only, f32 out: dequantized as OpenVINO's CPU plugin does it at
f32, ``table[code] (f32) * scale (widened to f32)``, one rounding (bit for bit its weights; the reference rounds
the table value and the product to the f16 scale's type). ``NF4_MATMUL`` picks the form:

- "folded" (the default): Gather(f32 table) -> Mul -> Reshape on the initializers, which onnxruntime folds
  at load: an f32 MatMul at run time (the file keeps the 4-bit codes; memory holds f32 weights, as for
  8-bit ones). benchmarks/bench_nf4.py: 5-7.6x faster than "bnb4" for one row of x, 1.7-2.1x for 32.
- "bnb4": onnxruntime's ``com.microsoft.MatMulBnb4`` (quant_type 1 = NF4; bitsandbytes' table, the same f32
  values bit for bit; codes high nibble first; one absmax (any float: the scale) per block of 16..256 along
  K, blocks of the flattened [N, K], so K a multiple of the block). Weights stay 4-bit in memory, but its
  CPU kernel dequantizes all of them in a scalar loop at every run, then runs an f32 GEMM: mostly 1.0-1.7x faster
  than "layers".
- "layers": the IR's layers one by one (the f16 Multiply is not folded: onnxruntime has no f16 Mul kernel).
(MatMulNBits cannot hold NF4: it dequantizes (q - zero point) * scale, and the table is not evenly spaced.)
MXFP4/FP4 (f4e2m1) and MXFP8/FP8 (f8e4m3/f8e5m2) weights take the "folded" form the same way, with their own tables
(``ir_nf4.TABLES``; MatMulBnb4 is NF4's only). NNCF's CB4 (u4 codes -> Convert -> Gather into an f8e4m3 codebook
Convert to f16) takes it with the codebook as the table; scales computed from Consts (NVFP4's f8e4m3 scale times an f32
global scale, rounded to f16) are folded at conversion as OpenVINO folds them (``_evaluated``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import ml_dtypes
import numpy as np

from onnx_ext.types import ElementType, from_numpy, from_ov

from ...ir import Layer
from ...ir_nf4 import NF4_TABLE, lookup_table
from .. import attributes as attr
from ..context import Context, Value, declare
from .io import fold_convert
from .shape import ov_reshaped

_QUANT_TYPES = ("u8", "i8", "u4", "i4")
MS_DOMAIN = "com.microsoft"
#: Whether 4-bit weights of a MatMul become MatMulNBits (else DequantizeLinear + MatMul);
#: benchmarks/bench_quantized.py switches it to compare the two.
USE_MATMUL_NBITS = True
#: Whether the rows of 4- and 8-bit tables become GatherBlockQuantized (``_block_quantized``);
#: benchmarks/bench_embedding.py switches it to compare with the forms before (folded in f32 at load).
USE_GATHER_BLOCK_QUANTIZED = True
#: How NF4 weights of MatMuls run: "folded", "bnb4" or "layers" (the module doc).
NF4_MATMUL = "folded"
#: MatMulBnb4's block sizes (onnxruntime's DequantizeBlockwiseBnb4 instantiates these only).
_BNB4_BLOCKS = (16, 32, 64, 128, 256)
_I32 = from_ov("i32")


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
    #: The layers that take the weights compressed, when they are all the subgraph feeds: MatMuls that
    #: become MatMulNBits, Gathers of rows (embeddings) that dequantize only the rows they gather.
    users: list[Layer] = field(default_factory=list)
    #: 8-bit weights of a MatMul: dequantized in f32 by ops on constants, which onnxruntime folds at load.
    folded: bool = False
    unsigned: bool = False  # i8 weights stored as u8 + 128 (see the module doc)
    #: The weights [.., K, N] of a MatMul without ``transpose_b`` (MatMulNBits takes them [N, K]: transposed).
    k_first: bool = False
    #: Scale and zero point varying along several dims with no group Reshape (experts' 8-bit weights [E, N, K],
    #: a scale per expert and row [E, N, 1]): no DequantizeLinear layout, kept in the weights' rank; folded only.
    broadcast: bool = False
    #: NF4 weights: ``weights`` are the codes (u4), the values ``table[codes]`` (f32); else None.
    table: np.ndarray | None = None
    #: A table both gathered (GatherBlockQuantized) and multiplied by (MatMulNBits: a tied lm_head): the
    #: initializers the two share, by role, made by whichever is translated first (``_packed``).
    shared: dict | None = None

    def translate(self, ctx: Context, layer: Layer) -> None:
        if layer is self.last:
            (_folded_nf4 if self.table is not None else _folded_f32 if self.folded else _dequantize_linear)(ctx, self)
        elif layer.type.lower() == "matmul":
            (_matmul_bnb4 if self.table is not None else _matmul_nbits)(ctx, self)
        else:
            _gather_rows(ctx, self)


def decompression_subgraphs(ctx: Context, layers: list[Layer]) -> dict[int, Decompression]:
    """Layer id -> the subgraph translated in its place: for the last layer of each subgraph
    (or the MatMul that takes it), and for each inner layer (which then emits nothing)."""
    by_id = {layer.id: layer for layer in layers}
    consumers: dict[tuple[int, int], list[tuple[Layer, int]]] = {}
    producers = {}
    for src, reads in ctx.ir.readers().items():
        for to_layer, to_port in reads:
            if to_layer in by_id and src[0] in by_id:
                dst = by_id[to_layer]
                index = next(i for i, p in enumerate(dst.inputs) if p.id == to_port)
                consumers.setdefault(src, []).append((dst, index))
                producers[(to_layer, index)] = (by_id[src[0]], src[1])
    found: dict[int, Decompression] = {}
    for layer in layers:
        if layer.type.lower() == "const" and layer.value is not None and layer.outputs and \
                from_numpy(layer.value.dtype).ov in _QUANT_TYPES:
            d = _match(ctx, layer, consumers, producers)
            if d is not None:
                for inner in d.inner:
                    found[inner.id] = None  # placeholder: emits nothing
                for user in d.users or [d.last]:
                    found[user.id] = d
    return found


def _sole_consumer(layer: Layer, consumers) -> tuple[Layer, int] | None:
    users = consumers.get((layer.id, layer.outputs[0].id), []) if layer.outputs else []
    return users[0] if len(users) == 1 and len(layer.outputs) == 1 else None


def _constant(ctx: Context, layer: Layer, index: int, producers, consumers, side: list[Layer]) -> np.ndarray | None:
    """The value of input ``index`` when it is computed from Consts only (``_evaluated``); the layers computing it
    join ``side``, the layers replaced with the subgraph, where each feeds nothing else."""
    src, _ = producers.get((layer.id, index), (None, None))
    return None if src is None else _evaluated(ctx, src, producers, consumers, side, 0)


def _evaluated(ctx: Context, src: Layer, producers, consumers, side: list[Layer], depth: int) -> np.ndarray | None:
    """``src``'s value when it is a Const, or a Convert, Multiply (same types, numpy broadcast) or Gather (axis 0, no
    batch dims, indices in range) of such values, computed as OpenVINO folds them: NNCF's scales and tables, as the
    CPU plugin holds them (NVFP4's scale: the f8e4m3 scale widened to f32, times the f32 global scale, rounded to
    f16; CB4's f8e4m3 codebook converted to f16). None for anything else."""
    kind = src.type.lower()
    if kind == "const":
        return src.value
    arity = {"convert": 1, "multiply": 2, "gather": 3}.get(kind)
    if arity is None or depth > 4 or len(src.inputs) != arity or len(src.outputs) != 1:
        return None
    mine: list[Layer] = []
    values = []
    for i in range(arity):
        inner, _ = producers.get((src.id, i), (None, None))
        value = None if inner is None else _evaluated(ctx, inner, producers, consumers, mine, depth + 1)
        if value is None:
            return None
        values.append(np.asarray(value))
    if kind == "convert":
        dst = _destination(ctx, src)
        value = None if dst is None else fold_convert(values[0], dst)
    elif kind == "multiply":
        if values[0].dtype != values[1].dtype or not from_numpy(values[0].dtype).is_float or \
                attr.string(ctx, src, "auto_broadcast", "numpy").lower() != "numpy":
            return None
        value = np.multiply(values[0], values[1])  # (f16: the product rounded once, as ov::float16's)
    else:
        table, indices, axis = values
        batch_dims = 0 if src.version == "opset1" else attr.integer(ctx, src, "batch_dims", 0)
        if axis.size != 1 or int(axis.reshape(-1)[0]) != 0 or batch_dims != 0 or table.ndim == 0 or \
                indices.dtype.kind not in "iu" or np.any(indices.astype(np.int64) < 0) or \
                np.any(indices.astype(np.int64) >= table.shape[0]):
            return None
        value = np.take(table, indices.astype(np.int64), axis=0)
    if value is not None and _sole_consumer(src, consumers) is not None:
        side.extend(mine + [src])
    return value


def _destination(ctx: Context, layer: Layer) -> ElementType | None:
    return attr.element(ctx, layer, "destination_type", "dynamic")


def _is(hit, op_type: str) -> bool:
    return hit is not None and hit[0].type.lower() == op_type.lower()


def _nf4_lookup(ctx: Context, const: Layer, consumers, producers, side: list[Layer]) -> tuple[list[Layer], object]:
    """([Convert, Gather], the table) after ``const`` when it holds the codes of an nf4, f4e2m1 or f8 Const
    (ir_nf4.py), or of NNCF's codebook (CB4: u4 codes -> Convert -> Gather(a constant 1-D float table, codes, axis
    0), f16 values whose Gather the scale Multiply reads directly); else ([], None). The codebook's layers join
    ``side``."""
    hit = _sole_consumer(const, consumers)
    gather = _sole_consumer(hit[0], consumers) if _is(hit, "Convert") else None
    if gather is None or gather[1] != 1 or not _is(gather, "Gather"):
        return [], None
    if lookup_table(gather[0]) is not None:
        return [hit[0], gather[0]], lookup_table(gather[0])
    mine: list[Layer] = []
    table = _constant(ctx, gather[0], 0, producers, consumers, mine)
    axis = _constant(ctx, gather[0], 2, producers, consumers, [])
    batch_dims = 0 if gather[0].version == "opset1" else attr.integer(ctx, gather[0], "batch_dims", 0)
    if table is None or table.ndim != 1 or table.dtype not in (np.float16, np.float32) or axis is None or \
            axis.size != 1 or int(axis.reshape(-1)[0]) != 0 or batch_dims != 0 or \
            int(np.asarray(const.value).astype(np.int64).max(initial=0)) >= table.size:
        return [], None
    side.extend(mine)
    return [hit[0], gather[0]], table


def _match(ctx: Context, const: Layer, consumers, producers) -> Decompression | None:
    weights = const.value
    wtype = from_numpy(weights.dtype)
    side: list[Layer] = []  # layers computing the zero point, scale (and codebook) from Consts
    lookup, table = _nf4_lookup(ctx, const, consumers, producers, side)
    if lookup and NF4_MATMUL == "layers":
        return None
    hit = _sole_consumer(lookup[-1] if lookup else const, consumers)
    reshape = []  # Const(4-bit) -> Reshape(a Const shape) first, as OpenVINO's frontends write some weights
    if not lookup and _is(hit, "Reshape") and hit[1] == 0:
        weights = ov_reshaped(weights, _constant(ctx, hit[0], 1, producers, consumers, []),
                            attr.boolean(hit[0], "special_zero", False))
        if weights is None:
            return None
        reshape = [hit[0]]
        hit = _sole_consumer(hit[0], consumers)
    if lookup and lookup_table(lookup[-1]) is None:  # a codebook's values: the Gather's type, no Convert
        ftype, chain, cur = from_numpy(table.dtype), list(lookup), lookup[-1]
    else:
        ftype = _destination(ctx, hit[0]) if _is(hit, "Convert") else None
        if ftype is None or ftype.ov not in ("f32", "f16"):  # DequantizeLinear's float types that onnxruntime runs
            return None
        chain, cur = reshape + lookup + [hit[0]], hit[0]
    zero_point = None
    hit = _sole_consumer(cur, consumers)
    if _is(hit, "Subtract") and hit[1] == 0 and not lookup:  # (NF4 has none)
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
    if blocked is None and layout == "blocked" and from_numpy(weights.dtype).bits != 8:
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
    d.table = None if table is None else table if table is NF4_TABLE else np.asarray(table, np.float32)
    d.users = _compressed_users(ctx, d, consumers, producers)
    if (d.broadcast or d.table is not None) and not (d.folded or d.users):
        return None
    d.unsigned = wtype.ov == "i8" and not d.folded and _beside_quantized_activation(d.last, consumers, producers)
    d.inner = side + (chain if d.users else chain[:-1])
    return d


_INTEGER_KERNEL_OPS = ("matmul", "convolution", "groupconvolution")


def _beside_quantized_activation(last: Layer, consumers, producers) -> bool:
    """Whether the weights feed a MatMul or convolution whose other input is a FakeQuantize."""
    hit = _sole_consumer(last, consumers)
    if hit is None or hit[0].type.lower() not in _INTEGER_KERNEL_OPS:
        return False
    other, _ = producers.get((hit[0].id, 1 - hit[1]), (None, None))
    return other is not None and other.type.lower() == "fakequantize"


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
    elif layout == "blocked":  # (no group Reshape: ``broadcast``)
        return Decompression(weights, params[0], params[1] if zp is not None else None, None, None, ftype, out_type,
                             chain[-1], chain[:-1], broadcast=True)
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
    weights, zero_point = d.weights, d.zero_point
    if d.unsigned:  # (w + 128) - (zp + 128): the same products
        weights = (weights.astype(np.int16) + 128).astype(np.uint8)
        zero_point = ((np.zeros(d.scale.shape, np.int16) if zero_point is None else zero_point.astype(np.int16))
                      + 128).astype(np.uint8)
    inputs = [ctx.const(weights, hint="weights"), ctx.const(d.scale, hint="scale")]
    if zero_point is not None:
        inputs.append(ctx.const(zero_point, hint="zero_point"))
    out = ctx.out(0) if d.out_type == d.float_type else None
    y = ctx.one("DequantizeLinear", inputs, out, axis=d.axis, block_size=d.block_size)
    if out is None:
        ctx.cast(y, d.float_type, d.out_type, ctx.out(0))
    ctx.set_type(0, d.out_type)


def _folded_f32(ctx: Context, d: Decompression) -> None:
    """(w - zp) * scale in f32 on the constants: exact to OpenVINO's CPU plugin at f32 (which dequantizes in
    f32), and onnxruntime's constant folding computes it once, at load; the file keeps the 8- or 4-bit weights.
    Group-wise weights are multiplied as the IR holds them, [.., G, g, ..] by [.., G, 1, ..], then reshaped.
    (DequantizeLinear is neither: with f16 scales it rounds the weights to f16, and with f32 ones onnxruntime
    rewrites it with a MatMul into a kernel that quantizes the activations.)"""
    f32, shape = d.out_type, d.weights.shape
    held, params = shape, [1] * len(shape)  # the weights' shape while multiplied, the scale's
    if d.block_size is not None:
        a, g = d.axis, d.block_size
        held = shape[:a] + (shape[a] // g, g) + shape[a + 1:]
        params = list(held[:a + 1]) + [1] + list(held[a + 2:])
    elif d.axis is not None:
        params[d.axis] = shape[d.axis]
    if d.broadcast:
        params = None  # (the IR's own broadcast shape)

    def widened(array: np.ndarray, hint: str, to_shape=None) -> str:  # stored as the IR stores it (u8, f16)
        array = np.asarray(array) if to_shape is None else np.asarray(array).reshape(to_shape)
        return ctx.cast(ctx.const(array, hint=hint), from_numpy(array.dtype), f32)

    w = widened(d.weights, "weights", held)
    if d.zero_point is not None:
        w = ctx.one("Sub", [w, widened(d.zero_point, "zero_point", params)])
    if held == shape:
        ctx.one("Mul", [w, widened(d.scale, "scale", params)], ctx.out(0))
    else:
        ctx.one("Reshape", [ctx.one("Mul", [w, widened(d.scale, "scale", params)]), ctx.i64(np.array(shape))],
                ctx.out(0))
    ctx.set_type(0, f32)


# --- MatMulNBits and row gathers -------------------------------------------------------------


def _folds_in_f32(ctx: Context, d: Decompression, users, consumers, producers) -> bool:
    """Whether weights no consumer takes compressed become ``(w - zp) * scale`` in f32 on the initializers
    (``_folded_f32``) instead of DequantizeLinear: OpenVINO's CPU plugin at f32 computes that product in f32 for
    every consumer, bit for bit, where DequantizeLinear with the IR's f16 scale rounds each weight to f16 as the
    reference does (WavLM's NNCF int8: 5e-4 of max|output| off). So: an f16 chain (or Multiply) with an f32 result,
    per channel or group-wise, whatever takes it; a scale along several dims (no DequantizeLinear layout); and the
    weights of a MatMul (onnxruntime rewrites DequantizeLinear + MatMul into kernels that quantize the activations,
    3e-3 of max off; 8-bit MatMulNBits is exact but 30x slower than f32: no 8-bit kernel) unless int8 activations
    are asked for. f32 scales into other layers (DequantizeLinear exact), int8 PTQ's Q/DQ pairs (a FakeQuantize
    beside: onnxruntime's integer kernels) and 4-bit weights of MatMuls in standard ONNX (``contrib`` off: 4-bit in
    memory, as the user chose over MatMulNBits) keep DequantizeLinear."""
    if d.out_type.ov != "f32":
        return False
    if any(_is(u, "MatMul") for u in users):
        standard = not (ctx.root.weight_options.contrib and USE_MATMUL_NBITS)  # (the bench's DequantizeLinear form)
        return not _int8_activations(ctx) and not (from_numpy(d.weights.dtype).bits == 4 and standard)
    return _weighted(users) and (d.float_type.ov == "f16" or d.broadcast) and \
        not _beside_quantized_activation(d.last, consumers, producers)


def _weighted(users) -> bool:
    """Whether every consumer takes the weights as its weights (``_WEIGHT_OPS``)."""
    return bool(users) and all(u.type.lower() in _WEIGHT_OPS and index == _WEIGHT_OPS[u.type.lower()]
                               for u, index in users)


#: The layers whose input (at that index) OpenVINO's CPU plugin takes as weights, decompressed in f32 at f32
#: (other consumers, a graph output among them, keep the reference's product rounded to the scale's type).
_WEIGHT_OPS = {"matmul": 1, "convolution": 1, "groupconvolution": 1, "convolutionbackpropdata": 1,
               "groupconvolutionbackpropdata": 1, "gather": 0}


def _compressed_users(ctx: Context, d: Decompression, consumers, producers) -> list[Layer]:
    """Every consumer of the subgraph, when each can take the weights compressed: a MatMul as MatMulNBits
    (``_nbits_block``), a Gather of rows (``_row_gather``); else none: folded in f32 (``_folds_in_f32``) or one
    DequantizeLinear."""
    users = consumers.get((d.last.id, d.last.outputs[0].id), []) if len(d.last.outputs) == 1 else []
    if d.table is not None:
        return _nf4_users(ctx, d, users)
    taking = _taking_compressed(ctx, d, users, producers)
    if not taking and _folds_in_f32(ctx, d, users, consumers, producers):
        d.folded = True
    return taking


def _taking_compressed(ctx: Context, d: Decompression, users, producers) -> list[Layer]:
    if not users or not USE_MATMUL_NBITS:
        return []
    if not ctx.root.weight_options.contrib:  # standard ONNX only: the rows of an embedding still, no MatMulNBits
        users = users if all(_is(u, "Gather") for u in users) else []
    block = None
    for layer, index in users:
        if _is((layer, index), "MatMul") and index == 1:
            k_first = not attr.boolean(layer, "transpose_b", False)
            if block is not None and k_first != d.k_first:
                break
            d.k_first = k_first
            block = _nbits_block(d, layer, eight_bits=_int8_activations(ctx))
            if block is None:
                break
        elif not (_is((layer, index), "Gather") and index == 0 and _row_gather(ctx, d, layer, producers)):
            break
    else:
        if block is not None:
            d.block_size = block
            if not d.k_first and any(_is(u, "Gather") for u in users):
                d.shared = {"of": d.weights}
        return [layer for layer, _ in users]
    d.k_first = False
    return []


def _row_block(k: int) -> int:
    """MatMulNBits' block for weights with one scale per row: any block gives the same weights."""
    return next((b for b in (128, 64, 32, 16) if k % b == 0), 32)


def _int8_activations(ctx: Context) -> bool:
    """Whether compressed weights run with int8 activations (MatMulNBits at accuracy level 4, 8-bit ones too)."""
    return ctx.root.weight_options.contrib and ctx.root.weight_options.int8_activations


def _nbits_block(d: Decompression, matmul: Layer, eight_bits: bool = False) -> int | None:
    """MatMulNBits' block size when ``matmul`` can take ``d`` as MatMulNBits: 4-bit weights (and 8-bit ones
    with ``eight_bits``) [N, K] (the MatMul's second input, transposed; or [K, N], ``d.k_first``) in groups
    along K or per row (or tensor), a float input of the result's type. Or experts' weights [E, N, K] (or
    [E, K, N]) in groups along K (or per tensor) under a batched MatMul whose first input is [E, M, K]: one
    MatMulNBits per expert."""
    rank = d.weights.ndim
    experts = rank == 3
    if d.broadcast or rank not in (2, 3) or d.out_type.ov not in ("f32", "f16") or \
            from_numpy(d.weights.dtype).bits not in ((4, 8) if eight_bits else (4,)):
        return None  # (8-bit MatMulNBits is exact but, at accuracy level 0, has no fast CPU kernel: folded instead)
    k_axis = rank - 2 if d.k_first else rank - 1
    if d.block_size is not None and d.axis == k_axis:
        block = d.block_size
    elif d.block_size is None and (d.axis is None or (d.axis == (1 if d.k_first else 0) and not experts)):
        block = _row_block(d.weights.shape[k_axis])
    else:
        return None
    if block < 16 or block & (block - 1):
        return None
    a = matmul.inputs[0]
    if attr.boolean(matmul, "transpose_a", False) or a.element_type != d.out_type or len(a.dims) < 2:
        return None
    if experts and (len(a.dims) != 3 or a.dims[0] != d.weights.shape[0]):
        return None
    return block


def _per_block(a: np.ndarray, n: int, blocks: int) -> np.ndarray:
    """A scale or zero point (per tensor, per row or per block) as [N, blocks]."""
    a = np.asarray(a)
    return np.ascontiguousarray(np.broadcast_to(a.reshape(n, -1) if a.size > 1 else a.reshape(1, 1), (n, blocks)))


def _nbits_values(d: Decompression) -> tuple[np.ndarray, int]:
    """MatMulNBits' B: the weights as uint8 [N, blocks, block * bits / 8] (signed weights shifted by
    2^(bits-1), the op's default zero point; K padded to whole blocks), and the shift."""
    n, k = d.weights.shape
    wtype = from_numpy(d.weights.dtype)
    bits, block = wtype.bits, d.block_size
    blocks = -(-k // block)
    shift = 1 << (bits - 1) if wtype.kind == "int" else 0
    values = np.zeros((n, blocks * block), np.uint8)
    values[:, :k] = (d.weights.astype(np.int16) + shift).astype(np.uint8)
    packed = _pack_rows(values) if bits == 4 else values
    return packed.reshape(n, blocks, block * bits // 8), shift


def _matmul_nbits(ctx: Context, d: Decompression) -> None:
    """MatMulNBits(A, B, scales, zero_points), computed in f32 as OpenVINO's CPU plugin does at f32 (scales
    widened exactly), B from ``_nbits_values``, scales and zero points per block (4-bit ones packed). Experts'
    weights [E, N, K]: A [E, M, K] split along E, one MatMulNBits per expert, the results concatenated (exact
    as the 2-D ones; one DequantizeLinear on the [E, N, K] weights would round them to the IR's f16 scales, or,
    with f32 scales, dequantize every expert at every run: benchmarks/bench_experts.py).
    ONNX's shape inference has no schema for com.microsoft ops: their outputs' types and shapes are declared
    (value_info), or nothing after them gets a type (and a graph output none at all)."""
    a = ctx.input(0)
    if d.weights.ndim == 2:
        d = _rows(d)
        out = _nbits_node(ctx, d, a.name, ctx.out(0))
        declare(ctx.value(out), d.out_type, None if a.shape is None else tuple(a.shape[:-1]) + (d.weights.shape[0],))
        return
    experts, n = d.weights.shape[0], d.weights.shape[2 if d.k_first else 1]
    rows = None if a.shape is None else (1,) + tuple(a.shape[1:-1]) + (n,)
    parts = []
    for e, part in enumerate(ctx.node("Split", [a.name], experts, axis=0, num_outputs=experts)):
        parts.append(_nbits_node(ctx, _expert(d, e), part, ctx.tmp("expert")))
        declare(ctx.value(parts[-1]), d.out_type, rows)
    ctx.one("Concat", parts, ctx.out(0), axis=0)


def _expert(d: Decompression, e: int) -> Decompression:
    """Expert ``e``'s weights [N, K] of experts' weights [E, N, K] or [E, K, N] (in groups along K, or per
    tensor)."""
    if d.axis is None:
        return _rows(replace(d, weights=d.weights[e]))
    return _rows(replace(d, weights=d.weights[e], scale=d.scale[e], axis=d.axis - 1,
                         zero_point=None if d.zero_point is None else d.zero_point[e]))


def _rows(d: Decompression) -> Decompression:
    """2-D weights as MatMulNBits takes them, [N, K] (groups along K, axis 1): [K, N] ones transposed, with
    their scales and zero points."""
    if not d.k_first:
        return d
    if d.axis is None:
        return replace(d, weights=d.weights.T, k_first=False)
    return replace(d, weights=np.ascontiguousarray(d.weights.T), scale=np.ascontiguousarray(d.scale.T), axis=1,
                   zero_point=None if d.zero_point is None else np.ascontiguousarray(d.zero_point.T), k_first=False)


def _nbits_node(ctx: Context, d: Decompression, a: str, out: str) -> str:
    """One MatMulNBits of ``a`` by the 2-D weights of ``d`` into ``out`` (its type and shape left to declare)."""
    if ctx.root.weight_options.requantize_int4 and _int8_activations(ctx) and from_numpy(d.weights.dtype).bits == 8:
        d = _requantized_int4(d)
    n, k = d.weights.shape
    packed = _packed(ctx, d)
    inputs = [a, packed["weights"], packed["scale"]] + ([packed["zero_point"]] if "zero_point" in packed else [])
    # accuracy level 4: the activations quantized to int8 per block, int8 products (OpenVINO's CPU default for
    # compressed weights, its dynamic quantization); 0 (the default): dequantized weights, f32 products, exact
    level = {"accuracy_level": 4} if _int8_activations(ctx) else {}
    out = ctx.node("MatMulNBits", inputs, [out], domain=MS_DOMAIN, K=k, N=n, bits=from_numpy(d.weights.dtype).bits,
                   block_size=d.block_size, **level)[0]
    ctx.root.extra_opsets[MS_DOMAIN] = 1
    return out


def _packed(ctx: Context, d: Decompression) -> dict[str, str]:
    """MatMulNBits' initializers by role: B (``_nbits_values``), the scales per block in the result's type, flat,
    and the zero points (``_block_params``), flat; made once for a table that a GatherBlockQuantized reads too."""
    shared = d.shared if d.shared is not None and d.shared["of"] is d.weights else None
    if shared is not None and "weights" in shared:
        return {role: name for role, name in shared.items() if role != "of"}
    packed, shift = _nbits_values(d)
    scales, zero_points = _block_params(d, packed.shape[1], shift)
    names = {"weights": ctx.const(packed, hint="weights"), "scale": ctx.const(scales.reshape(-1), hint="scale")}
    if zero_points is not None:
        names["zero_point"] = ctx.const(zero_points.reshape(-1), hint="zero_point")
    if shared is not None:
        shared.update(names)
    return names


def _block_params(d: Decompression, blocks: int, shift: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The scales [N, blocks] in the result's type (an f16 scale widened exactly), and the zero points [N, blocks]
    (4-bit ones two a byte, low nibble first: [N, blocks / 2 rounded up]) as uint8 shifted by ``shift`` as the
    weights; None for signed weights without one (the ops' default zero point, 2^(bits-1), is the shift). As
    MatMulNBits and GatherBlockQuantized (on uint8 data) take them."""
    n = d.weights.shape[0]
    scales = _per_block(d.scale, n, blocks).astype(d.out_type.numpy)
    if d.zero_point is None and from_numpy(d.weights.dtype).kind == "int":
        return scales, None
    zp = np.zeros((n, blocks), np.int16) if d.zero_point is None else \
        _per_block(d.zero_point.astype(np.int16), n, blocks)
    zp = (zp + shift).astype(np.uint8)
    if from_numpy(d.weights.dtype).bits == 4:
        rows = np.zeros((n, blocks + blocks % 2), np.uint8)
        rows[:, :blocks] = zp
        zp = _pack_rows(rows)
    return scales, zp


#: The block of requantized weights: onnxruntime-genai's model builder's default for int4.
REQUANTIZED_BLOCK = 32


def _requantized_int4(d: Decompression) -> Decompression:
    """8-bit weights [N, K] dequantized in f32 and requantized to signed 4 bits, blocks of ``REQUANTIZED_BLOCK``
    along K (or of K), one f32 scale each, no zero point: round to nearest, the value of largest magnitude to
    -8 (onnxruntime's MatMulNBits quantizer's symmetric rule). Not exact: the weights move by up to half a
    4-bit step (``requantize_int4``)."""
    n, k = d.weights.shape
    if d.axis == 1 and k % d.block_size:
        return d  # (8-bit blocks that pad K: left as they are)
    groups = k // d.block_size if d.axis == 1 else 1  # 8-bit blocks along K, or one scale per row / tensor
    weights = d.weights.astype(np.float32)
    if d.zero_point is not None:
        weights -= np.repeat(_per_block(d.zero_point.astype(np.float32), n, groups), k // groups, axis=1)
    weights *= np.repeat(_per_block(d.scale.astype(np.float32), n, groups), k // groups, axis=1)
    block = REQUANTIZED_BLOCK if k % REQUANTIZED_BLOCK == 0 else k
    blocks = weights.reshape(n, k // block, block)
    peak = np.take_along_axis(blocks, np.abs(blocks).argmax(axis=-1)[..., None], axis=-1)
    scale = peak / -8
    scale[scale == 0] = 1
    values = np.clip(np.rint(blocks / scale), -8, 7).astype(ml_dtypes.int4).reshape(n, k)
    return replace(d, weights=values, scale=scale.reshape(n, -1), zero_point=None, axis=1, block_size=block)


def _pack_rows(rows: np.ndarray) -> np.ndarray:
    """uint8 values < 16 of shape [N, even] -> [N, even/2], two per byte, low nibble first."""
    return (rows[:, 0::2] | (rows[:, 1::2] << 4)).astype(np.uint8)


def _row_gather(ctx: Context, d: Decompression, gather: Layer, producers) -> bool:
    """``gather`` takes rows (axis 0, no batch dims) of weights [V, H] (an embedding table, tied or not to the
    lm_head) that it can gather compressed: ones GatherBlockQuantized holds (``_block_quantized``), or 8-bit ones
    with a scale (and zero point) per row or per tensor (their rows, scales and zero points gathered)."""
    if d.weights.ndim != 2 or gather.type.lower() != "gather" or len(gather.inputs) != 3:
        return False
    if not _block_quantized(ctx, d) and (from_numpy(d.weights.dtype).bits != 8 or d.block_size is not None or
                                         d.axis not in (0, None)):
        return False
    src, _ = producers.get((gather.id, 2), (None, None))
    axis = src.value if src is not None and src.type.lower() == "const" else None
    batch_dims = 0 if gather.version == "opset1" else attr.integer(ctx, gather, "batch_dims", 0)
    return axis is not None and axis.size == 1 and int(axis.reshape(-1)[0]) in (0, -2) and batch_dims == 0


def _block_quantized(ctx: Context, d: Decompression) -> bool:
    """Whether the rows of 2-D weights [V, H] become onnxruntime's ``com.microsoft.GatherBlockQuantized``: 8- or
    4-bit weights (4-bit ones of even H: its uint8 data holds two a byte), a scale (and zero point) per tensor, per
    row, or per group along H of a power of two >= 16 (its blocks), an f32 result."""
    bits = from_numpy(d.weights.dtype).bits
    if not (ctx.root.weight_options.contrib and USE_GATHER_BLOCK_QUANTIZED) or d.weights.ndim != 2 or \
            d.broadcast or d.out_type.ov != "f32" or bits not in (4, 8) or (bits == 4 and d.weights.shape[1] % 2):
        return False
    if d.axis in (0, None) and d.scale.ndim <= 1:  # per row or tensor (a block set by MatMulNBits: tied)
        return True
    return d.axis == 1 and d.block_size >= 16 and not d.block_size & (d.block_size - 1)


def _gather_block_quantized(ctx: Context, d: Decompression) -> None:
    """GatherBlockQuantized(data, indices, scales, zero_points): data the weights as uint8 [V, H * bits / 8]
    (signed ones shifted by 2^(bits-1), 4-bit ones two a byte, low nibble first: MatMulNBits' bytes, and its
    scales and zero points, ``_block_params``; f16 scales Cast to f32), gather_axis 0, quantize_axis 1,
    block_size the group (a row one block: a power of two >= H). Its CPU kernel computes ``float(w - zp) *
    scale`` with the f32 scales (an f16 one widened exactly): OpenVINO's CPU plugin's rows at f32, bit for bit;
    an index out of range gives zeros, as Gather-8 (the plugin reads past the table). A table a MatMulNBits
    reads too (tied: the lm_head) shares its initializers, reshaped (onnxruntime folds the Reshapes at load:
    the file holds the table once)."""
    v, k = d.weights.shape
    bits = from_numpy(d.weights.dtype).bits
    block = d.block_size or max(16, 1 << (k - 1).bit_length())
    blocks = -(-k // block)
    shift = 1 << (bits - 1) if from_numpy(d.weights.dtype).kind == "int" else 0
    shared = d.shared if d.shared is not None and d.shared["of"] is d.weights and d.block_size else None
    if shared is not None:
        _packed(ctx, d)  # (made here when the Gather comes first)

    def reshaped(role: str, shape: tuple) -> str:
        return ctx.one("Reshape", [shared[role], ctx.i64(np.array(shape))])

    if shared is not None and k % block == 0:  # (else MatMulNBits' B is padded to whole blocks)
        data = reshaped("weights", (v, k * bits // 8))
    else:
        values = (d.weights.astype(np.int16) + shift).astype(np.uint8)
        data = ctx.const(_pack_rows(values) if bits == 4 else values, hint="weights")
    if shared is not None:
        scales = reshaped("scale", (v, blocks))
        zero_point = reshaped("zero_point", (v, -1)) if "zero_point" in shared else None
    else:
        # the scales stored in the IR's type (f16: half the bytes), widened at load (a Cast onnxruntime folds)
        scale_array, zp_array = _block_params(replace(d, out_type=d.float_type), blocks, shift)
        scales = ctx.cast(ctx.const(scale_array, hint="scale"), d.float_type, d.out_type)
        zero_point = None if zp_array is None else ctx.const(zp_array, hint="zero_point")
    indices = ctx.input(1)
    ids = indices.name if indices.type is not None and indices.type.ov in ("i32", "i64") else \
        ctx.cast(indices.name, indices.type, from_ov("i64"))
    inputs = [data, ids, scales] + ([zero_point] if zero_point is not None else [])
    out = ctx.node("GatherBlockQuantized", inputs, [ctx.out(0)], domain=MS_DOMAIN, bits=bits, block_size=block,
                   gather_axis=0, quantize_axis=1)[0]
    ctx.root.extra_opsets[MS_DOMAIN] = 1
    declare(ctx.value(out), d.out_type, None if indices.shape is None else tuple(indices.shape) + (k,))


def _gather_rows(ctx: Context, d: Decompression) -> None:
    """The rows of the weights, then of the scales and zero points, gathered (Gather-8: out-of-range indices
    give zero rows, as zero weights, scales and zero points do), dequantized in f32: (w - zp) * scale; or one
    GatherBlockQuantized (``_block_quantized``)."""
    from onnx_ext.model import ir_node

    if _block_quantized(ctx, d):
        return _gather_block_quantized(ctx, d)

    indices, axis = ctx.input(1), ctx.input(2)
    v = d.weights.shape[0]

    def gathered(array: np.ndarray, hint: str) -> str:
        values = [Value(ctx.const(array, hint=hint), from_numpy(array.dtype), array.shape, array), indices, axis]
        out = ctx.tmp(f"{hint}_rows")
        ctx.add(ir_node("Gather", [ctx.value(x.name) for x in values], [out], operands=[x.operand for x in values],
                        name=ctx.names.node(ctx.layer.name, "Gather"), batch_dims=0, version=8))
        ctx.domain_used = True
        return out

    f32 = d.out_type
    zero_point = d.zero_point
    rows = ctx.cast(gathered(d.weights, "weights"), from_numpy(d.weights.dtype), f32)
    per_row = d.scale.size > 1 or (zero_point is not None and zero_point.size > 1)
    if zero_point is not None:
        zp = np.asarray(zero_point).astype(f32.numpy)
        zp_name = gathered(_per_block(zp, v, 1), "zero_point") if per_row else ctx.const(zp.reshape(()))
        rows = ctx.one("Sub", [rows, zp_name])
    scale = np.asarray(d.scale).astype(f32.numpy)
    scale_name = gathered(_per_block(scale, v, 1), "scale") if per_row else ctx.const(scale.reshape(()))
    ctx.one("Mul", [rows, scale_name], ctx.out(0))
    ctx.set_type(0, f32)


# --- NF4 weights ---------------------------------------------------------------------------------


def _nf4_users(ctx: Context, d: Decompression, users) -> list[Layer]:
    """NF4 weights with an f32 result into weights (else as the IR's layers: ``_match`` drops them): with ``NF4_MATMUL``
    "bnb4" and only MatMuls taking them, each MatMul as MatMulBnb4 when all can be (``_bnb4_block``); else folded
    (any consumer: a convolution's too, in f32 as the CPU plugin computes them, not rounded to an f16 scale)."""
    if d.out_type.ov != "f32" or not _weighted(users):
        return []
    flags = {not attr.boolean(layer, "transpose_b", False) for layer, _ in users}
    if NF4_MATMUL == "bnb4" and d.table is NF4_TABLE and ctx.root.weight_options.contrib and len(flags) == 1 and \
            all(index == 1 and _is((u, index), "MatMul") for u, index in users):
        d.k_first = flags.pop()
        blocks = {_bnb4_block(d, layer) for layer, _ in users}
        if len(blocks) == 1 and None not in blocks:
            d.block_size = blocks.pop()
            return [layer for layer, _ in users]
        d.k_first = False
    if d.float_type.ov == "f16" and not all(_is(u, "MatMul") for u in users):
        # the CPU plugin folds Convert(nf4 -> f16) for other layers: the table rounded to f16, times the scale in
        # f32 (its MatMuls decompress from the f32 table)
        d.table = d.table.astype(np.float16).astype(np.float32)
    d.folded = True
    return []


def _bnb4_block(d: Decompression, matmul: Layer) -> int | None:
    """MatMulBnb4's block for 2-D NF4 weights into ``matmul``: MatMulNBits' (``_nbits_block``), when its kernel
    has it and it divides K (its blocks run over the flattened [N, K]: no padding per row)."""
    block = _nbits_block(d, matmul)
    k = d.weights.shape[0 if d.k_first else 1]
    return block if d.weights.ndim == 2 and block in _BNB4_BLOCKS and k % block == 0 else None


def _matmul_bnb4(ctx: Context, d: Decompression) -> None:
    """MatMulBnb4(A, B, absmax), quant_type 1 (NF4): B the codes [N, K] (``_rows``), two per byte, HIGH nibble
    first (the IR's are low first), flattened; absmax the f32 scale of each block (its kernel multiplies the
    table's f32 value by it: the CPU plugin's f32 weights). transB stays 1 (the default): the kernel reads B as
    [N, K] whatever it says. Output declared as for MatMulNBits (no ONNX schema)."""
    a = ctx.input(0)
    d = _rows(d)
    n, k = d.weights.shape
    codes = d.weights.astype(np.uint8)
    packed = ((codes[:, 0::2] << 4) | codes[:, 1::2]).astype(np.uint8)
    absmax = _per_block(d.scale, n, k // d.block_size).astype(np.float32)
    out = ctx.node("MatMulBnb4", [a.name, ctx.const(packed.reshape(-1), hint="weights"),
                                  ctx.const(absmax.reshape(-1), hint="scale")], [ctx.out(0)], domain=MS_DOMAIN,
                   K=k, N=n, block_size=d.block_size, quant_type=1)[0]
    ctx.root.extra_opsets[MS_DOMAIN] = 1
    declare(ctx.value(out), d.out_type, None if a.shape is None else tuple(a.shape[:-1]) + (n,))


def _folded_nf4(ctx: Context, d: Decompression) -> None:
    """table[codes] * scale in f32 on the initializers (grouped weights as the IR has them, [.., G, g, ..] by
    a scale [.., G, 1, ..], then reshaped): ops on constants only, which onnxruntime folds at load."""
    f32, shape = d.out_type, d.weights.shape
    codes, scale = d.weights, np.asarray(d.scale)
    if d.block_size is not None:
        a, g = d.axis, d.block_size
        codes = codes.reshape(shape[:a] + (shape[a] // g, g) + shape[a + 1:])
        scale = scale.reshape(shape[:a] + (shape[a] // g, 1) + shape[a + 1:])
    elif d.axis is not None:
        scale = scale.reshape((1,) * d.axis + (-1,) + (1,) * (len(shape) - d.axis - 1))
    index = ctx.cast(ctx.const(codes, hint="nf4_codes"), from_numpy(codes.dtype), _I32)
    values = ctx.one("Gather", [ctx.const(d.table, hint="nf4_table"), index], axis=0)
    scaled = ctx.cast(ctx.const(scale, hint="scale"), from_numpy(scale.dtype), f32)
    if d.block_size is None:
        ctx.one("Mul", [values, scaled], ctx.out(0))
    else:
        ctx.one("Reshape", [ctx.one("Mul", [values, scaled]), ctx.i64(np.array(shape))], ctx.out(0))
    ctx.set_type(0, f32)
