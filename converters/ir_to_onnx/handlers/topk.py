"""TopK-1/3/11 as ONNX TopK.

ONNX's TopK always sorts by value and breaks ties by the lower index (OpenVINO's
``stable``); ``sort`` ``index`` reorders the k results by index with a second TopK
over the indices; ``none`` leaves them sorted by value (OpenVINO's order is then
unspecified: its reference and its CPU plugin give different orders). The indices
are cast to ``index_element_type`` (i32 by default).
"""

from __future__ import annotations

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context
from ..kernels import compute_type
from ..registry import translator
from .layout import i64_vector

_I64 = from_ov("i64")


@translator("TopK", since=1, emits=("Cast", "GatherElements", "Identity", "Reshape", "TopK"))
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
    ct = compute_type("TopK", et)
    if ct is None:
        raise ctx.error(f"onnxruntime has no TopK kernel for {et.ov} and no lossless widening applies")
    k = i64_vector(ctx, k_v)
    x = ctx.cast(data.name, et, ct)
    values, indices = ctx.node("TopK", [x, k], 2, axis=axis, largest=int(largest), sorted=1)
    if sort == "index":
        _, order = ctx.node("TopK", [indices, k], 2, axis=axis, largest=0, sorted=1)
        values = ctx.one("GatherElements", [values, order], axis=axis)
        indices = ctx.one("GatherElements", [indices, order], axis=axis)
    ctx.cast(values, ct, et, ctx.out(0))
    if len(layer.outputs) > 1:
        ctx.cast(indices, _I64, idx_type, ctx.out(1))
