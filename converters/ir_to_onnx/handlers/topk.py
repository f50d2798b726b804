"""TopK-1/3/11 as ONNX TopK.

ONNX's TopK always sorts by value and breaks ties by the lower index (OpenVINO's
``stable``); ``sort`` ``index`` reorders the k results by index with a second TopK
over the indices; ``none`` leaves them sorted by value (OpenVINO's order is then
unspecified: its reference and its CPU plugin give different orders). The indices
are cast to ``index_element_type`` (i32 by default). u64 data (onnxruntime's TopK
has no u64 kernel and nothing wider exists) is ranked by an order-preserving i64 key,
its bits with the top one flipped, and the values gathered from the data by index.
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context
from ..kernels import compute_type
from ..registry import translator
from .layout import i64_vector

_I64 = from_ov("i64")


@translator("TopK", since=1, emits=("BitwiseXor", "Cast", "GatherElements", "Identity", "Reshape", "TopK"))
def topk(ctx: Context, layer) -> None:
    data, k_v = ctx.input(0), ctx.input(1)
    if data.rank is None:
        raise ctx.error("needs data of known rank")
    axis = attr.integer(ctx, layer, "axis")
    if not -data.rank <= axis < data.rank:
        raise ctx.error(f"axis {axis} is out of range for rank {data.rank}")
    axis %= data.rank
    largest = attr.choice(ctx, layer, "mode", ("max", "min")) == "max"
    sort = attr.choice(ctx, layer, "sort", ("value", "index", "none"), "none")
    idx_type = attr.element(ctx, layer, "index_element_type", "i32") or from_ov("i32")
    et = data.type
    keyed = et.ov == "u64"  # ranked by an i64 key, the values gathered from the data
    ct = _I64 if keyed else compute_type("TopK", et)
    if ct is None:
        raise ctx.error(f"onnxruntime has no TopK kernel for {et.ov} and no lossless widening applies")
    k = i64_vector(ctx, k_v)
    x = _u64_order_key(ctx, data.name) if keyed else ctx.cast(data.name, et, ct)
    values, indices = ctx.node("TopK", [x, k], 2, axis=axis, largest=int(largest), sorted=1)
    if sort == "index":
        _, order = ctx.node("TopK", [indices, k], 2, axis=axis, largest=0, sorted=1)
        indices = ctx.one("GatherElements", [indices, order], axis=axis)
        if not keyed:
            values = ctx.one("GatherElements", [values, order], axis=axis)
    if keyed:
        ctx.one("GatherElements", [data.name, indices], ctx.out(0), axis=axis)
    else:
        ctx.cast(values, ct, et, ctx.out(0))
    if len(layer.outputs) > 1:
        ctx.cast(indices, _I64, idx_type, ctx.out(1))


def _u64_order_key(ctx: Context, name: str) -> str:
    """An i64 that orders as the u64 does: Cast keeps the 64 bits (x >= 2**63 wraps
    negative), and flipping the top bit moves [0, 2**63) below [2**63, 2**64)."""
    bits = ctx.cast(name, from_ov("u64"), _I64)
    return ctx.one("BitwiseXor", [bits, ctx.const(np.array(np.iinfo(np.int64).min, np.int64))])
