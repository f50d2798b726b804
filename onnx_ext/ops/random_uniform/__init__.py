"""RandomUniform-8: the op's record (checks, body selection) and numpy reference. Streams: ``streams.py``;
reference: ``reference.py``; semantics: docs/ops/random_uniform.md.

OpenVINO: RandomUniform-8(shape: i32/i64 [r], min, max: output_type scalars or [1]; output_type, global_seed,
op_seed, alignment) -> output_type of the given shape, bit-exact to OpenVINO's reference for given seeds
(its first evaluation: OpenVINO's node keeps a state that moves on at each evaluation; an ONNX graph has none).
Seeds both 0: a non-deterministic stream (the key, or MT19937's state, drawn by ONNX RandomUniform).

Bodies: ``Stream`` (``{alignment}_{type}_g{global_seed}_o{op_seed}``), one per output type, alignment and seeds,
the seeds folded into constants. ``output_type`` is an attribute, so every node gets one; the public
``RandomUniform`` (for onnxscript users) is the tensorflow-aligned f32 stream and fails at run time
(``public_body_is_tensorflow_f32``) on any other attributes.

Errors at run time: ``shape_non_negative``, ``max_differs_from_min`` (integer output: the reference divides
by max - min).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Sequence

import numpy as np
import onnx
from onnxscript import FLOAT, INT64, script

from ...domain import op, ov_ext
from ...errors import OpAttributeError, OpInputError
from ...types import ElementType, from_onnx, from_ov
from ..base import NAT, Attr, Bodies, OpSpec, Operand, Overload, words
from ..builder import BodyBuilder
from .reference import BF16, pytorch_values, tensorflow_values
from .streams import TABLE_WORDS, U64, Words, interleaved, mersenne, philox_stream

__all__ = ["SPEC", "Stream", "random_uniform_reference"]

TYPES = ("f16", "bf16", "f32", "f64", "i32", "i64")
ALIGNMENTS = ("tensorflow", "pytorch")
F32, F64 = onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE


def random_uniform_reference(shape, min_value, max_value, output_type: int, global_seed: int = 0, op_seed: int = 0,
                             alignment: str = "tensorflow") -> np.ndarray:
    et = _output_type(output_type)
    dims = [int(d) for d in np.asarray(shape).reshape(-1)]
    if any(d < 0 for d in dims):
        raise OpInputError("RandomUniform", f"shape {dims} has a negative dim")
    count = int(np.prod(dims, dtype=np.int64))
    dtype = et.numpy
    lo, hi = (np.asarray(v).reshape(-1)[0] for v in (min_value, max_value))
    global_seed, op_seed = seed(global_seed), seed(op_seed)
    if global_seed == 0 and op_seed == 0:  # non-deterministic, as OpenVINO's reference (std::rand)
        global_seed = int(np.random.default_rng().integers(0, 2**31))
    if alignment == "tensorflow":
        values = tensorflow_values(count, dtype, lo, hi, global_seed, op_seed)
    else:
        values = pytorch_values(count, dtype, lo, hi, global_seed)
    return np.asarray(values, dtype).reshape(dims)


def _output_type(code) -> ElementType:
    try:
        et = from_onnx(code)
    except ValueError:
        et = None
    if et is None or et.ov not in TYPES:
        raise OpAttributeError("RandomUniform", "output_type", f"is {code}: must be FLOAT16, BFLOAT16, FLOAT, DOUBLE, "
                               f"INT32 or INT64")
    return et


def check_attributes(attrs: dict) -> dict:
    _output_type(attrs["output_type"])
    attrs = dict(attrs, alignment=attrs["alignment"].lower())
    if attrs["alignment"] not in ALIGNMENTS:
        raise OpAttributeError("RandomUniform", "alignment", f"is {attrs['alignment']!r}: must be one of {ALIGNMENTS}")
    return attrs


def seed(value: int) -> int:
    """A seed attribute (INT, int64) as OpenVINO's uint64: seeds from 2^63 on are written negative."""
    return value & 0xFFFFFFFFFFFFFFFF


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    shape, lo, hi = operands
    et = _output_type(attrs["output_type"])
    if shape.type is not None and shape.type.ov not in ("i32", "i64"):
        raise OpInputError("RandomUniform", f"shape must be i32 or i64, got {shape.type.ov}")
    if shape.shape is not None and len(shape.shape) != 1:
        raise OpInputError("RandomUniform", f"shape must be a 1-D vector, got shape {list(shape.shape)}")
    for name, o in (("min", lo), ("max", hi)):
        if o.type is not None and o.type != et:
            raise OpInputError("RandomUniform", f"{name} must have the output type {et.ov}, got {o.type.ov}")
        if o.shape is not None and not (len(o.shape) == 0 or tuple(o.shape) in ((1,), (None,))):
            raise OpInputError("RandomUniform", f"{name} must be a scalar or a 1-element vector, got {list(o.shape)}")
    if shape.value is not None and np.any(np.asarray(shape.value) < 0):
        raise OpInputError("RandomUniform", f"shape {np.asarray(shape.value).tolist()} has a negative dim")
    if et.is_integer and lo.value is not None and hi.value is not None and \
            int(np.asarray(lo.value).reshape(-1)[0]) == int(np.asarray(hi.value).reshape(-1)[0]):
        raise OpInputError("RandomUniform", "max - min must not be 0 for integer output")


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple | None:
    shape = operands[0]
    if shape.value is not None:
        return tuple(int(d) for d in np.asarray(shape.value).reshape(-1))
    if shape.shape is not None and isinstance(shape.shape[0], int):
        return (None,) * shape.shape[0]
    return None


@dataclass(frozen=True)
class Stream(Overload):
    """RandomUniform-8 of one output type, alignment and pair of seeds (both 0: drawn at run time)."""

    SPELLING = "{alignment}_{type}_g{global_seed}_o{op_seed}"
    alignment: Annotated[str, words(ALIGNMENTS)]
    type: Annotated[str, words(TYPES)]
    global_seed: Annotated[int, NAT]
    op_seed: Annotated[int, NAT]

    def valid(self) -> bool:
        return self.global_seed < 2**64 and self.op_seed < 2**64

    def build(self, g: BodyBuilder) -> str:
        et = from_ov(self.type)
        dims = g("Cast", g("Reshape", "shape", g.const([-1])), to=INT64.dtype)
        ok = g("Equal", g("ReduceMin", g("Concat", dims, g.const([0]), axis=0), keepdims=0), g.const(0))
        dims = g("Add", dims, g.check("shape_non_negative", ok))
        lo, hi = g("Reshape", "min", g.const([])), g("Reshape", "max", g.const([]))
        if et.is_integer:
            same = g("Equal", g("Cast", lo, to=INT64.dtype), g("Cast", hi, to=INT64.dtype))
            dims = g("Add", dims, g.check("max_differs_from_min", g("Not", same)))
        count = g("ReduceProd", dims, keepdims=0)
        if self.global_seed == 0 and self.op_seed == 0:
            values = _drawn(g, et, dims, lo, hi)
        elif self.alignment == "tensorflow":
            values = philox_values(g, et, count, lo, hi, self.global_seed, self.op_seed)
        else:
            values = _pytorch(g, et, count, lo, hi, self.global_seed)
        return g("Reshape", values, dims, allowzero=1)


def _drawn(g: BodyBuilder, et: ElementType, dims: str, lo: str, hi: str) -> str:
    """Seeds both 0: the spec asks for a non-deterministic sequence (OpenVINO seeds its generator with the
    time): onnxruntime's RandomUniformLike draws it, u in [0, 1) as u * (max - min) + min (integers: its floor,
    at most max - min - 1, plus min)."""
    compute = F64 if et.ov in ("f64", "i32", "i64") else F32
    u = g("RandomUniformLike", g("ConstantOfShape", dims), dtype=compute, high=1.0, low=0.0)
    if et.is_float:
        low, high = (x if et.onnx == compute else g("Cast", x, to=compute) for x in (lo, hi))
        value = g("Add", g("Mul", u, g("Sub", high, low)), low)
        return value if et.onnx == compute else g("Cast", value, to=et.onnx)
    span = g("Sub", g("Cast", hi, to=INT64.dtype), g("Cast", lo, to=INT64.dtype))
    steps = g("Cast", g("Floor", g("Mul", u, g("Cast", span, to=F64))), to=INT64.dtype)
    steps = g("Min", steps, g("Sub", span, g.const(1)))
    return g("Cast", g("Add", steps, g("Cast", lo, to=INT64.dtype)), to=et.onnx)


def _in(g: BodyBuilder, w, bits: int, to: int, scale: float) -> str:
    """The low ``bits`` of the UINT32 words ``w`` as a float of type ``to`` in [0, 1): times ``scale`` (exact)."""
    masked = w if bits == 32 else g("BitwiseAnd", w, g.const((1 << bits) - 1, np.uint32))
    return g("Mul", g("Cast", masked, to=to), g.const(scale, onnx.helper.tensor_dtype_to_np_dtype(to)))


def _scaled(g: BodyBuilder, et: ElementType, u: str, lo: str, hi: str) -> str:
    """u * (max - min) + min, each operation in the output type (f16, bf16: in f32, rounded after each by an
    explicit Cast: onnxruntime runs chains of f16 ops in f32, skipping the roundings between them)."""
    if et.ov not in ("f16", "bf16"):
        return g("Add", g("Mul", u, g("Sub", hi, lo)), lo)
    f32 = (lambda x: g("Cast", x, to=F32))
    bf = (lambda x: g("Cast", x, to=et.onnx))
    span = bf(g("Sub", f32(hi), f32(lo)))
    return bf(g("Add", f32(bf(g("Mul", f32(u), f32(span)))), f32(lo)))


def _integer(g: BodyBuilder, et: ElementType, w: str, lo: str, hi: str, bits: int) -> str:
    """w % (max - min) + min in unsigned arithmetic of ``bits`` (``w``: UINT64), as the output type (C's
    conversions)."""
    words_ = Words(g)
    to_bits = (lambda x: g("Cast", g("Cast", x, to=INT64.dtype), to=U64))  # (two's complement bits)
    span, base = to_bits(g("Sub", g("Cast", hi, to=INT64.dtype), g("Cast", lo, to=INT64.dtype))), to_bits(lo)
    if bits == 32:
        span, base = words_.low(span), words_.low(base)
        value = words_.low(words_.add(g("Mod", w, span), base))
        return g("Cast", g("Cast", value, to=onnx.TensorProto.UINT32), to=et.onnx)
    return g("Cast", words_.add(g("Mod", w, span), base), to=et.onnx)


def _u64(g: BodyBuilder, w: str) -> str:
    return g("Cast", w, to=U64)


def philox_values(g: BodyBuilder, et: ElementType, count: str, lo: str, hi: str, global_seed: int, op_seed: int,
                  table_words: int = TABLE_WORDS) -> str:
    """The tensorflow-aligned values ([count]) for the seeds: f32, f16 and bf16 from a table of the stream's first
    values in [0, 1) (one word a value, converted when the body is built: only the computed words are converted at
    run time), the other types from the stream's words."""
    wide = et.numpy.itemsize > 4
    words = g("Mul", count, g.const(2 if wide else 1))
    key, counter = (global_seed & 0xFFFFFFFF, global_seed >> 32), (op_seed & 0xFFFFFFFF, op_seed >> 32)
    if et.ov in ("f32", "f16", "bf16"):
        bits = {"f32": 23, "f16": 10, "bf16": 7}[et.ov]
        convert = (lambda w: (w & np.uint32((1 << bits) - 1)).astype(np.float32) * np.float32(2.0**-bits),
                   lambda b, w: _in(b, w, bits, F32, 2.0**-bits))  # (exact in the output type)
        u = philox_stream(g, words, key, counter, table_words, convert)
        return _scaled(g, et, g("Cast", u, to=et.onnx) if et.ov != "f32" else u, lo, hi)
    return _tensorflow(g, et, philox_stream(g, words, key, counter, table_words), count, lo, hi)


def _tensorflow(g: BodyBuilder, et: ElementType, stream: str, count: str, lo: str, hi: str) -> str:
    """The values of the Philox ``stream`` of words for f64 and i64 (two words each) and i32 (one)."""
    if et.ov in ("f64", "i64"):
        a, b = interleaved(g, stream, count, 2)
        if et.ov == "i64":
            w = Words(g)
            return _integer(g, et, w.or_(w.shl(_u64(g, b), 32), _u64(g, a)), lo, hi, 64)
        u = g("Add", _in(g, a, 20, F64, 2.0**-20), _in(g, b, 32, F64, 2.0**-52))
        return _scaled(g, et, u, lo, hi)
    return _integer(g, et, _u64(g, stream), lo, hi, 32)  # (i32: a word a value, the stream has ``count`` words)


def _pytorch(g: BodyBuilder, et: ElementType, count: str, lo: str, hi: str, seed: int | None) -> str:
    wide = et.numpy.itemsize > 4
    calls = g("Div", g("Add", count, g.const(1 if wide else 3)), g.const(2 if wide else 4))
    stream = mersenne(g, g("Mul", calls, g.const(4)), seed)
    if et.ov == "i64":  # min and max within uint32: one word per value, signed arithmetic
        small = g("And", g("LessOrEqual", g("Cast", lo, to=INT64.dtype), g.const(0xFFFFFFFF)),
                  g("LessOrEqual", g("Cast", hi, to=INT64.dtype), g.const(0xFFFFFFFF)))
        one, two = g.branch(), g.branch()
        w1 = one("Cast", one("Slice", stream, one.const([0]), one("Reshape", count, one.const([1]))),
                 to=INT64.dtype)
        y1 = one("Add", one("Mod", w1, one("Sub", hi, lo), fmod=1), lo)
        w = Words(two)
        a, b = interleaved(two, stream, count, 2)
        y2 = _integer(two, et, w.or_(w.shl(_u64(two, a), 32), _u64(two, b)), lo, hi, 64)
        return g.if_(small, one, y1, two, y2)
    if wide:
        a, b = interleaved(g, stream, count, 2)
        u = g("Add", _in(g, a, 21, F64, 2.0**-21), _in(g, b, 32, F64, 2.0**-53))
        return _scaled(g, et, u, lo, hi)
    w = g("Slice", stream, g.const([0]), g("Reshape", count, g.const([1])))
    if et.ov == "i32":
        return _integer(g, et, _u64(g, w), lo, hi, 32)
    digits = {"f32": 24, "f16": 11, "bf16": 8}[et.ov]
    u = _in(g, w, digits, F32, 2.0**-digits)
    f32 = (lambda x: g("Cast", x, to=F32))
    span = f32(g("Cast", g("Sub", f32(hi), f32(lo)), to=et.onnx)) if et.ov != "f32" else g("Sub", hi, lo)
    value = g("Add", g("Mul", u, span), f32(lo) if et.ov != "f32" else lo)
    return g("Cast", value, to=et.onnx) if et.ov != "f32" else value


@script(ov_ext, default_opset=op)
def _philox_round(n_lo, n_hi, c_lo, c_hi, k_lo, k_hi):
    # One Philox-4x32 round on UINT64 words, and the next round's key.
    mask = op.Cast(op.Constant(value_int=4294967295), to=13)
    thirty_two = op.Cast(op.Constant(value_int=32), to=13)
    p0 = op.Mul(n_lo, op.Cast(op.Constant(value_int=0xD2511F53), to=13))
    p1 = op.Mul(c_lo, op.Cast(op.Constant(value_int=0xCD9E8D57), to=13))
    new_n_lo = op.BitwiseXor(op.BitwiseXor(op.BitShift(p1, thirty_two, direction="RIGHT"), n_hi), k_lo)
    new_c_lo = op.BitwiseXor(op.BitwiseXor(op.BitShift(p0, thirty_two, direction="RIGHT"), c_hi), k_hi)
    next_k_lo = op.BitwiseAnd(op.Add(k_lo, op.Cast(op.Constant(value_int=0x9E3779B9), to=13)), mask)
    next_k_hi = op.BitwiseAnd(op.Add(k_hi, op.Cast(op.Constant(value_int=0xBB67AE85), to=13)), mask)
    return new_n_lo, op.BitwiseAnd(p1, mask), new_c_lo, op.BitwiseAnd(p0, mask), next_k_lo, next_k_hi


@script(ov_ext, default_opset=op)
def RandomUniform(shape, min, max, output_type: int = 1, global_seed: int = 0, op_seed: int = 0,  # noqa: A002
                  alignment: str = "tensorflow"):
    # RandomUniform-8(shape: int [r], min, max: output_type scalars; output_type, global_seed, op_seed,
    #   alignment) -> output_type [shape]
    # The public body: Philox (tensorflow alignment) to f32, seeds from the attributes at run time, for
    # onnxscript users; attach_functions gives every node the stream of its attributes. Other output types
    # fail, naming the check.
    public_body_is_f32 = op.Gather(op.Constant(value_ints=[0]), op.Reshape(op.Cast(op.Not(op.Equal(
        op.Constant(value_int=output_type), op.Constant(value_int=1))), to=INT64.dtype), op.Constant(value_ints=[1])))
    dims = op.Add(op.Cast(op.Reshape(shape, op.Constant(value_ints=[-1])), to=INT64.dtype),
                  op.ReduceSum(public_body_is_f32, keepdims=0))
    count = op.ReduceProd(dims, keepdims=0)
    mask = op.Cast(op.Constant(value_int=4294967295), to=13)
    thirty_two = op.Cast(op.Constant(value_int=32), to=13)
    g64 = op.Cast(op.Constant(value_int=global_seed), to=13)
    o64 = op.Cast(op.Constant(value_int=op_seed), to=13)
    calls = op.Div(op.Add(count, op.Constant(value_int=3)), op.Constant(value_int=4))
    i = op.Cast(op.Range(op.Constant(value_int=0), calls, op.Constant(value_int=1)), to=13)
    a, b = op.BitwiseAnd(i, mask), op.BitShift(i, thirty_two, direction="RIGHT")
    c = op.Expand(op.BitwiseAnd(o64, mask), op.Shape(i))
    d = op.Expand(op.BitShift(o64, thirty_two, direction="RIGHT"), op.Shape(i))
    k, m = op.BitwiseAnd(g64, mask), op.BitShift(g64, thirty_two, direction="RIGHT")
    a, b, c, d, k, m = _philox_round(a, b, c, d, k, m)
    a, b, c, d, k, m = _philox_round(a, b, c, d, k, m)
    a, b, c, d, k, m = _philox_round(a, b, c, d, k, m)
    a, b, c, d, k, m = _philox_round(a, b, c, d, k, m)
    a, b, c, d, k, m = _philox_round(a, b, c, d, k, m)
    a, b, c, d, k, m = _philox_round(a, b, c, d, k, m)
    a, b, c, d, k, m = _philox_round(a, b, c, d, k, m)
    a, b, c, d, k, m = _philox_round(a, b, c, d, k, m)
    a, b, c, d, k, m = _philox_round(a, b, c, d, k, m)
    a, b, c, d, k, m = _philox_round(a, b, c, d, k, m)
    one = op.Constant(value_ints=[1])
    words4 = op.Concat(op.Unsqueeze(a, one), op.Unsqueeze(b, one), op.Unsqueeze(c, one), op.Unsqueeze(d, one),
                       axis=1)
    flat = op.Slice(op.Reshape(words4, op.Constant(value_ints=[-1])), op.Constant(value_ints=[0]),
                    op.Reshape(count, one))
    u = op.Mul(op.Cast(op.BitwiseAnd(flat, op.Cast(op.Constant(value_int=0x7FFFFF), to=13)), to=FLOAT.dtype),
               op.Constant(value_float=2.0**-23))
    lo = op.Reshape(min, op.Constant(value_ints=[-1]))
    values = op.Add(op.Mul(u, op.Sub(op.Reshape(max, op.Constant(value_ints=[-1])), lo)), lo)
    return op.Reshape(values, dims, allowzero=1)


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    return Stream(attrs["alignment"], _output_type(attrs["output_type"]).ov, seed(attrs["global_seed"]),
                  seed(attrs["op_seed"])).name


def openvino_node(attrs: dict, inputs: list):
    from openvino.utils.node_factory import NodeFactory

    return NodeFactory("opset8").create("RandomUniform", inputs, {
        # seeds as written: OpenVINO's Python API takes int64 and keeps the bits (2^64 - 5 as -5)
        "output_type": _output_type(attrs["output_type"]).ov, "global_seed": attrs["global_seed"],
        "op_seed": attrs["op_seed"], "alignment": attrs["alignment"]})


SPEC = OpSpec(
    name="RandomUniform",
    inputs=("shape", "min", "max"),
    min_inputs=3,
    attributes={"output_type": Attr("int"), "global_seed": Attr("int", 0), "op_seed": Attr("int", 0),
                "alignment": Attr("string", "tensorflow")},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: _output_type(attrs["output_type"]),
    output_shape=output_shape,
    bodies=Bodies(RandomUniform, {"general": RandomUniform}, [Stream]),
    helpers=(_philox_round,),
    public=RandomUniform,
    reference=random_uniform_reference,
    openvino=openvino_node,
)
