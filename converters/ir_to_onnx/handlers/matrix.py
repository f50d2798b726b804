"""Inverse-14: the matrices [..., n, n] inverted by Gauss-Jordan elimination with partial
pivoting (the row with the largest |value| in the column, the first of equal ones, as
OpenVINO's reference pivots its LU decomposition), in an ONNX Loop over the n columns of
[A | I]: swap the pivot row up, divide it by the pivot, subtract its multiples from the
other rows. The Loop also carries the determinant (the pivots' product, negated per row
swap): ``adjoint`` true is det(A) * A^-1 (the classical adjugate, as the reference's
to_adjoint computes it; the specification and the CPU plugin return (A^-1)^T instead).
f16 and bf16 are computed in f32, as the specification says.
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

from onnx_ext.types import ElementType, from_ov

from .. import attributes as attr
from ..context import Context, declare
from ..registry import translator

_F32 = from_ov("f32")
_I64 = from_ov("i64")
_BOOL = from_ov("boolean")
_BIG = np.iinfo(np.int64).max


def _eliminate(ctx: Context, k: str, m: str, det: str, rows: str, ct: ElementType) -> tuple[str, str]:
    """One column ``k`` of the elimination on [B, n, 2n] ``m``; the next m and determinant [B]."""
    col = ctx.one("Gather", [m, k], axis=2)  # [B, n]
    below = ctx.one("GreaterOrEqual", [rows, k])
    candidates = ctx.one("Where", [below, ctx.one("Abs", [col]), ctx.const(np.asarray(-1, ct.numpy))])
    pivot_at = ctx.one("ArgMax", [candidates], axis=1, keepdims=1)  # [B, 1]
    is_k = ctx.one("Equal", [rows, k])
    order = ctx.one("Where", [is_k, pivot_at, ctx.one("Where", [ctx.one("Equal", [rows, pivot_at]), k, rows])])
    swapped = ctx.one("GatherElements", [m, ctx.one("Expand", [ctx.one("Unsqueeze", [order, ctx.i64([2])]),
                                                               ctx.one("Shape", [m])])], axis=1)
    pivot_row = ctx.one("Gather", [swapped, k], axis=1)  # [B, 2n]
    pivot = ctx.one("Gather", [pivot_row, k], axis=1)  # [B]
    scaled = ctx.one("Unsqueeze", [ctx.one("Div", [pivot_row, ctx.one("Unsqueeze", [pivot, ctx.i64([1])])]),
                                   ctx.i64([1])])  # [B, 1, 2n]
    factors = ctx.one("Unsqueeze", [ctx.one("Gather", [swapped, k], axis=2), ctx.i64([2])])  # [B, n, 1]
    rest = ctx.one("Sub", [swapped, ctx.one("Mul", [factors, scaled])])
    nxt = ctx.one("Where", [ctx.one("Unsqueeze", [is_k, ctx.i64([1])]), scaled, rest])
    kept = ctx.one("Equal", [ctx.one("Squeeze", [pivot_at, ctx.i64([1])]), k])
    sign = ctx.one("Where", [kept, ctx.const(np.ones((), ct.numpy)), ctx.const(-np.ones((), ct.numpy))])
    return nxt, ctx.one("Mul", [det, ctx.one("Mul", [pivot, sign])])


def _body(ctx: Context, rows: str, ct: ElementType) -> ir.Graph:
    """The Loop body: (k, cond, m, det) -> (cond, m, det), nodes named after the layer."""
    body = ctx.body()
    k, cond, m, det = (body.tmp(name) for name in ("k", "cond", "m", "det"))
    for name, et, shape in ((k, _I64, ()), (cond, _BOOL, ()), (m, ct, None), (det, ct, None)):
        body.graph_input(name, et, shape)
    nxt, new_det = _eliminate(body, k, m, det, rows, ct)
    cond_out = body.one("Identity", [cond])
    outputs = [declare(body.value(name), et, shape) for name, et, shape in
               ((cond_out, _BOOL, ()), (nxt, ct, None), (new_det, ct, None))]
    return body.graph(body.tmp("body"), body.inputs, outputs)


@translator("Inverse", since=14,
            emits=("Abs", "ArgMax", "Cast", "Concat", "Div", "Equal", "Expand", "Gather", "GatherElements",
                   "GreaterOrEqual", "Identity", "Loop", "Mul", "Range", "Reshape", "Shape", "Slice", "Squeeze", "Sub",
                   "Unsqueeze", "Where"))
def inverse(ctx: Context, layer) -> None:
    data = ctx.input(0)
    et = data.type
    if data.rank is None or data.rank < 2 or et is None or not et.is_float:
        raise ctx.error(f"needs floating-point matrices [..., n, n], got {et.ov if et else None} of shape {data.shape}")
    ct = et if et.ov in ("f32", "f64") else _F32
    a = ctx.cast(data.name, et, ct)
    n = ctx.one("Shape", [a], start=-1)
    flat = ctx.one("Reshape", [a, ctx.one("Concat", [ctx.i64([-1]), ctx.one("Shape", [a], start=-2)], axis=0)])
    rows = ctx.one("Range", [ctx.i64(0), ctx.one("Squeeze", [n]), ctx.i64(1)])
    eye = ctx.cast(ctx.one("Equal", [ctx.one("Unsqueeze", [rows, ctx.i64([1])]), rows]), _BOOL, ct)
    augmented = ctx.one("Concat", [flat, ctx.one("Expand", [eye, ctx.one("Shape", [flat])])], axis=2)
    det = ctx.one("Expand", [ctx.const(np.ones((), ct.numpy)), ctx.one("Shape", [flat], end=1)])
    done, det = ctx.node("Loop", [ctx.one("Squeeze", [n]), "", augmented, det], 2, body=_body(ctx, rows, ct))
    inv = ctx.one("Slice", [done, n, ctx.i64([_BIG]), ctx.i64([2])])
    if attr.boolean(layer, "adjoint", False):
        inv = ctx.one("Mul", [inv, ctx.one("Unsqueeze", [det, ctx.i64([1, 2])])])
    ctx.cast(ctx.one("Reshape", [inv, ctx.one("Shape", [a])]), ct, et, ctx.out(0))
