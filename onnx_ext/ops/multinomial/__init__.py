"""Multinomial-13: the op's record, bodies and numpy reference (``reference.py``). Semantics:
docs/ops/multinomial.md.

OpenVINO: Multinomial-13(probs: F [batch, classes], num_samples: int scalar or [1]; convert_type, with_replacement,
log_probs, global_seed, op_seed) -> convert_type [batch, num_samples], as OpenVINO's reference
(src/core/reference/include/openvino/reference/multinomial.hpp): exp(probs) when log_probs; the running sum over the
classes divided by its last value (the cdf, in F); uniforms from RandomUniform's tensorflow-aligned Philox stream of
type F for the same seeds, shape [batch, num_samples]; each sample the first class with u <= cdf (0 when there is
none); without replacement, after each sample its probability p is taken out: cdf[k] -= p from the chosen class on,
then cdf /= 1 - p.

Bodies: ``Sampler`` (``{type}_{rep|norep}[_log]_g{global_seed}_o{op_seed}[_n{samples}]``): with replacement one
comparison of every sample with every cdf value and an ArgMax; without, the steps unrolled (num_samples known, at
most ``UNROLLED``: ``_n{samples}``) or a Loop over the samples carrying the cdf, each step's class found block by
block (``BLOCK`` classes: a ReduceMax, then the block's first hit; the cdf's NaN as -inf, never a hit).
Errors at run time: ``num_samples_non_negative``, ``num_samples_within_classes`` (without replacement).
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
from ..random_uniform import _drawn, philox_values, seed
from .reference import multinomial_reference

__all__ = ["SPEC", "Sampler", "multinomial_reference"]

TYPES = ("f16", "bf16", "f32", "f64")
F32 = onnx.TensorProto.FLOAT
I64 = onnx.TensorProto.INT64
#: Samples without replacement, num_samples known, unrolled (~20 nodes each) up to this many; more: a Loop.
UNROLLED = 16
#: Classes per block of the search for a sample's class (without replacement; the cdf padded to a multiple).
BLOCK = 256
#: Words of the Philox stream a body keeps (16 KB): batch x num_samples up to 4,096 (f64: 2,048) sliced, more
#: computed (a sampler draws a few words per row; RandomUniform's 65,536-word table would be 256 KB a node).
TABLE_WORDS = 1 << 12


def check_attributes(attrs: dict) -> dict:
    if attrs["convert_type"] not in (onnx.TensorProto.INT32, onnx.TensorProto.INT64):
        raise OpAttributeError("Multinomial", "convert_type", f"is {attrs['convert_type']}: must be INT32 (6) or "
                               "INT64 (7)")
    for name in ("with_replacement", "log_probs"):
        if attrs[name] not in (0, 1):
            raise OpAttributeError("Multinomial", name, f"is {attrs[name]}: must be 0 or 1")
    return attrs


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    probs, samples = operands
    if probs.type is not None and probs.type.ov not in TYPES:
        raise OpInputError("Multinomial", f"probs must be f16, bf16, f32 or f64, got {probs.type.ov}")
    if samples.type is not None and samples.type.ov not in ("i32", "i64"):
        raise OpInputError("Multinomial", f"num_samples must be i32 or i64, got {samples.type.ov}")
    if probs.shape is not None and len(probs.shape) != 2:
        raise OpInputError("Multinomial", f"probs must have rank 2 [batch, classes], got shape {list(probs.shape)}")
    if samples.shape is not None and not (len(samples.shape) == 0 or tuple(samples.shape) in ((1,), (None,))):
        raise OpInputError("Multinomial", f"num_samples must be a scalar or a 1-element vector, got "
                           f"{list(samples.shape)}")
    if samples.value is not None:
        n = int(np.asarray(samples.value).reshape(-1)[0])
        if n < 0:
            raise OpInputError("Multinomial", f"num_samples is {n}: must not be negative")
        classes = probs.shape[1] if probs.shape is not None and isinstance(probs.shape[1], int) else None
        if not attrs["with_replacement"] and classes is not None and n > classes:
            raise OpInputError("Multinomial", f"{n} samples without replacement from {classes} classes")


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    probs, samples = operands
    batch = probs.shape[0] if probs.shape is not None else None
    n = int(np.asarray(samples.value).reshape(-1)[0]) if samples.value is not None else None
    return batch, n


@dataclass(frozen=True)
class Sampler(Overload):
    """Multinomial-13 of one probs type, with or without replacement, log or plain probabilities and seeds."""

    SPELLING = "{type}_{index}_{replacement}[_{log_probs}]_g{global_seed}_o{op_seed}[_n{samples}]"
    type: Annotated[str, words(TYPES)]
    index: Annotated[int, words({"i32": onnx.TensorProto.INT32, "i64": onnx.TensorProto.INT64})]
    replacement: Annotated[bool, words({"rep": True, "norep": False})]
    log_probs: Annotated[bool, words({"log": True})] = False
    global_seed: Annotated[int, NAT] = 0
    op_seed: Annotated[int, NAT] = 0
    samples: Annotated[int, NAT] = 0  # without replacement: the steps unrolled (num_samples known), 0: a Loop

    def build(self, g: BodyBuilder) -> str:
        et = from_ov(self.type)
        ct = et.onnx if et.ov in ("f32", "f64") else F32  # f16, bf16: in f32, rounded after each operation
        shape = g("Shape", "probs")
        n = g("Cast", g("Reshape", "num_samples", g.const([1])), to=I64)
        n = g("Add", n, g.check("num_samples_non_negative", g("GreaterOrEqual", n, g.const([0]))))
        if not self.replacement:
            classes = g("Shape", "probs", start=1, end=2)
            n = g("Add", n, g.check("num_samples_within_classes", g("LessOrEqual", n, classes)))
        x = _up(g, et, "probs")
        if self.log_probs:
            x = _round(g, et, g("Exp", x))
        cdf = _round(g, et, g("CumSum", x, g.const(1)))  # (f16: summed in f32, as onnxruntime's CumSum does)
        total = g("Slice", cdf, g.const([-1]), g.const([2**63 - 1]), g.const([1]))
        cdf = _round(g, et, g("Div", cdf, total))
        dims = g("Concat", g("Slice", shape, g.const([0]), g.const([1])), n, axis=0)
        u = _up(g, et, self._uniforms(g, et, dims))
        if self.replacement:  # [B, n, C]: the first class with u <= cdf (ArgMax: the first of the maxima; none: 0)
            hit = g("Cast", g("LessOrEqual", g("Unsqueeze", u, g.const([2])), g("Unsqueeze", cdf, g.const([1]))),
                    to=onnx.TensorProto.INT32)
            samples = g("ArgMax", hit, axis=2, keepdims=0)
        else:
            samples = _without_replacement(g, et, ct, u, cdf, n, self.samples)
        return g("Cast", samples, to=self.index)

    def _uniforms(self, g: BodyBuilder, et: ElementType, dims: str) -> str:
        """RandomUniform's values in [0, 1) of the probs' type for the same seeds, [batch, num_samples]."""
        zero, one = (g("Cast", g.const(v, np.float32), to=et.onnx) for v in (0.0, 1.0))
        if self.global_seed == 0 and self.op_seed == 0:
            return _drawn(g, et, dims, zero, one)
        count = g("ReduceProd", dims, keepdims=0)
        return g("Reshape", philox_values(g, et, count, zero, one, self.global_seed, self.op_seed, TABLE_WORDS), dims,
                 allowzero=1)


def _up(b: BodyBuilder, et: ElementType, x: str) -> str:
    return x if et.ov in ("f32", "f64") else b("Cast", x, to=F32)


def _round(b: BodyBuilder, et: ElementType, x: str) -> str:
    """x rounded to the probs' type (f16, bf16 computed in f32: an explicit Cast there and back)."""
    return x if et.ov in ("f32", "f64") else b("Cast", b("Cast", x, to=et.onnx), to=F32)


def _without_replacement(g: BodyBuilder, et: ElementType, ct: int, u: str, cdf: str, n: str, samples: int) -> str:
    """The samples [B, n]: ``samples`` steps unrolled (num_samples known), else (0) a Loop over the samples carrying
    the cdf [B, C] (onnxruntime's Loop costs several times its body's kernels on a [8, 32000] cdf). Each step finds
    its class block-wise (``_first_hit_blocked``) in the cdf whose NaN are -inf (``_nan_never_hit``)."""
    cdf = _padded_to_blocks(g, ct, _nan_never_hit(g, ct, cdf))
    return _draw_all(g, et, ct, u, cdf, n, samples)


def _nan_never_hit(b: BodyBuilder, ct: int, cdf: str) -> str:
    """The cdf with its NaN as -inf: onnxruntime's ReduceMax drops or keeps a NaN depending on where it stands, so
    a block's maximum would hide a hit behind it; -inf is never a hit either (u <= NaN and u <= -inf are false).
    Exact for the op's non-negative probabilities: the cdf holds NaN from its start when the sum is 0 or NaN
    (all NaN) or +inf (0 before a +inf, NaN from it on: the only hit, u = 0, takes out p = 0, leaving the rest as
    it is), and a step's own NaN (a probability 1 taken out: 0 / 0) fills its whole row, where nothing is a hit
    either way; the arithmetic keeps -inf as -inf wherever it keeps NaN as NaN but for a divisor 1 - p < 0 (p > 1,
    which a cdf of non-negative probabilities never has)."""
    return b("Where", b("IsNaN", cdf), b.const(-np.inf, onnx.helper.tensor_dtype_to_np_dtype(ct)), cdf)


def _padded_to_blocks(b: BodyBuilder, ct: int, cdf: str) -> str:
    """The cdf [B, C] padded at the end of its classes to a multiple of ``BLOCK`` with -inf (never a hit, stays
    -inf when a probability is taken out)."""
    classes = b("Shape", cdf, start=1, end=2)
    whole = b("Mul", b("Div", b("Add", classes, b.const([BLOCK - 1])), b.const([BLOCK])), b.const([BLOCK]))
    pads = b("Concat", b.const([0, 0, 0]), b("Sub", whole, classes), axis=0)
    return b("Pad", cdf, pads, b.const(-np.inf, onnx.helper.tensor_dtype_to_np_dtype(ct)))


def _draw_all(g: BodyBuilder, et: ElementType, ct: int, u: str, cdf: str, n: str, samples: int) -> str:
    # the class indices [B, C] (INT32: onnxruntime compares [B, C] with [B, 1] ~3x faster than [1, C] with [B, 1])
    classes = g("Expand", g("Cast", g("Range", g.const(0), g("ReduceSum", g("Shape", cdf, start=1, end=2), keepdims=0),
                                       g.const(1)), to=onnx.TensorProto.INT32), g("Shape", cdf))
    # [B, C / BLOCK, BLOCK], the cdf's blocks, once for every step: every dim written (onnxruntime cannot resolve
    # a -1 beside a batch of 0)
    blocked = g("Concat", g("Shape", cdf, start=0, end=1), g("Div", g("Shape", cdf, start=1, end=2),
                                                             g.const([BLOCK])), g.const([BLOCK]), axis=0)
    if samples:
        taken = []
        for j in range(samples):
            k, cdf = _sample_step(g, et, ct, g("Gather", u, g.const([j]), axis=1), cdf, classes, blocked)
            taken.append(k)
        return g("Concat", *taken, axis=1)
    name, b = "mn", g.branch()
    steps = g("Unsqueeze", g("Transpose", u, perm=[1, 0]), g.const([2]))  # [n, B, 1]: a step's one Gather
    k, cdf_out = _sample_step(b, et, ct, b("Gather", steps, f"{name}_step", axis=0), f"{name}_cdf_in", classes,
                              blocked)
    b("Identity", cdf_out, out=f"{name}_cdf_out")
    b("Squeeze", k, b.const([1]), out=f"{name}_sample")
    _, stacked = g.loop(name, g("Squeeze", n, g.const([0])), b, f"{name}_step", carried={"cdf": (cdf, ct, None)},
                        scanned={f"{name}_sample": (f"{name}_samples", I64)})
    # (no sample: onnxruntime gives the Loop's stacked output the shape [0])
    stacked = g("Reshape", stacked, g("Concat", n, g("Shape", cdf, start=0, end=1), axis=0), allowzero=1)
    return g("Transpose", stacked, perm=[1, 0])


def _first_hit(b: BodyBuilder, uj: str, cdf: str) -> tuple[str, str]:
    """The first class with u <= cdf ([B, 1] INT64; none: 0) and the hits ([B, C] F32, 1 or 0)."""
    hit = b("Cast", b("LessOrEqual", uj, cdf), to=F32)  # (ArgMax of float: ~1.5x faster than of int32)
    return b("ArgMax", hit, axis=1, keepdims=1), hit


def _first_hit_blocked(b: BodyBuilder, uj: str, cdf: str, blocked: str) -> tuple[str, str]:
    """The first class with u <= cdf ([B, 1] INT64; none: 0) and whether there is one ([B, 1] BOOL), on a cdf of
    ``BLOCK``-class blocks (padded with -inf, without NaN): the first block whose maximum is >= u holds the first
    hit (one ReduceMax pass over the cdf, ~7x cheaper than LessOrEqual, Cast and ArgMax over it), then the first
    hit within that block (``blocked``: the shape [B, C / BLOCK, BLOCK])."""
    blocks = b("Reshape", cdf, blocked, allowzero=1)
    top = b("ReduceMax", blocks, b.const([2]), keepdims=0)
    kb, hits = _first_hit(b, uj, top)
    k, _ = _first_hit(b, uj, b("GatherND", blocks, kb, batch_dims=1))  # (no hit: block 0, class 0)
    found = b("Cast", b("GatherElements", hits, kb, axis=1), to=onnx.TensorProto.BOOL)
    return b("Add", b("Mul", kb, b.const(BLOCK)), k), found


def _sample_step(b: BodyBuilder, et: ElementType, ct: int, uj: str, cdf: str, classes: str,
                 blocked: str) -> tuple[str, str]:
    """One sample ([B, 1] INT64) for the uniforms ``uj`` [B, 1] (``classes``: the class indices [B, C]): the first
    class with u <= cdf (none: 0, cdf unchanged; ``_first_hit_blocked``) and the cdf with its probability p taken
    out (cdf[k] -= p for k >= the class, cdf /= 1 - p, in the probs' type)."""
    k, found = _first_hit_blocked(b, uj, cdf, blocked)
    at_k = b("GatherElements", cdf, k, axis=1)
    dtype = onnx.helper.tensor_dtype_to_np_dtype(ct)
    zero, one = b.const(0.0, dtype), b.const(1.0, dtype)
    before = b("Where", b("Greater", k, b.const(0)),  # cdf[k - 1], 0 at k = 0
               b("GatherElements", cdf, b("Max", b("Sub", k, b.const(1)), b.const(0)), axis=1), zero)
    p = _round(b, et, b("Sub", at_k, before))
    divisor = _round(b, et, b("Sub", one, p))
    # no class found: nothing taken out (p 0, divisor 1: the cdf unchanged, exactly)
    p, divisor = b("Where", found, p, zero), b("Where", found, divisor, one)
    later = b("Cast", b("GreaterOrEqual", classes, b("Cast", k, to=onnx.TensorProto.INT32)), to=ct)
    # p where the class is k or later, else 0 (x - 0 is x: the cdf before k unchanged; a Where costs ~3x this)
    shifted = _round(b, et, b("Sub", cdf, b("Mul", later, p)))
    return k, _round(b, et, b("Div", shifted, divisor))


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    et = operands[0].type
    if et is None or et.ov not in TYPES:
        return "general"
    n = operands[1].value
    n = int(np.asarray(n).reshape(-1)[0]) if n is not None else 0
    unrolled = n if not attrs["with_replacement"] and 0 < n <= UNROLLED else 0
    return Sampler(et.ov, attrs["convert_type"], bool(attrs["with_replacement"]), bool(attrs["log_probs"]),
                   seed(attrs["global_seed"]), seed(attrs["op_seed"]), unrolled).name


def openvino_node(attrs: dict, inputs: list):
    from openvino import opset13

    return opset13.multinomial(*inputs, from_onnx(attrs["convert_type"]).ov, bool(attrs["with_replacement"]),
                               bool(attrs["log_probs"]), attrs["global_seed"], attrs["op_seed"])


@script(ov_ext, default_opset=op)
def Multinomial(probs, num_samples, convert_type: int = 7, with_replacement: int = 0, log_probs: int = 0,
                global_seed: int = 0, op_seed: int = 0):
    # Multinomial-13(probs: F [batch, classes], num_samples: int; convert_type, with_replacement, log_probs,
    #   global_seed, op_seed) -> convert_type [batch, num_samples]
    # The public body (for onnxscript users) draws with replacement from onnxruntime's RandomUniformLike, as for
    # seeds 0 and 0; attach_functions gives every node the sampler of its attributes and types (OpenVINO's
    # Philox stream for its seeds). Other attributes fail, naming the check.
    ok = op.And(op.Equal(op.Constant(value_int=with_replacement), op.Constant(value_int=1)),
                op.Equal(op.Add(op.Constant(value_int=global_seed), op.Constant(value_int=op_seed)),
                         op.Constant(value_int=0)))
    public_body_draws_with_replacement_unseeded = op.Gather(op.Constant(value_ints=[0]), op.Reshape(
        op.Cast(op.Not(ok), to=INT64.dtype), op.Constant(value_ints=[1])))
    x = op.Cast(probs, to=FLOAT.dtype)
    if op.Equal(op.Constant(value_int=log_probs), op.Constant(value_int=1)):
        w = op.Exp(x)
    else:
        w = op.Identity(x)
    cdf = op.CumSum(w, op.Constant(value_int=1))
    cdf = op.Div(cdf, op.Slice(cdf, op.Constant(value_ints=[-1]), op.Constant(value_ints=[9223372036854775807]),
                               op.Constant(value_ints=[1])))
    n = op.Add(op.Cast(op.Reshape(num_samples, op.Constant(value_ints=[1])), to=INT64.dtype),
               public_body_draws_with_replacement_unseeded)
    dims = op.Concat(op.Shape(probs, start=0, end=1), n, axis=0)
    u = op.RandomUniformLike(op.ConstantOfShape(dims), dtype=1, high=1.0, low=0.0)
    hit = op.Cast(op.LessOrEqual(op.Unsqueeze(u, op.Constant(value_ints=[2])),
                                 op.Unsqueeze(cdf, op.Constant(value_ints=[1]))), to=6)
    return op.Cast(op.ArgMax(hit, axis=2, keepdims=0), to=convert_type)


SPEC = OpSpec(
    name="Multinomial",
    inputs=("probs", "num_samples"),
    min_inputs=2,
    attributes={"convert_type": Attr("int"), "with_replacement": Attr("int", 0), "log_probs": Attr("int", 0),
                "global_seed": Attr("int", 0), "op_seed": Attr("int", 0)},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: from_onnx(attrs["convert_type"]),
    output_shape=output_shape,
    bodies=Bodies(Multinomial, {"general": Multinomial}, [Sampler]),
    public=Multinomial,
    reference=multinomial_reference,
    openvino=openvino_node,
)
