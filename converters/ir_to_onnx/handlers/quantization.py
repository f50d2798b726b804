"""FakeQuantize-1 as its formula (ONNX's QuantizeLinear/DequantizeLinear cannot take
OpenVINO's arbitrary levels and per-element ranges):

    x <= min(il, ih): ol;  x > max(il, ih): oh;
    else round((x - il) / (ih - il) * (levels - 1)) / (levels - 1) * (oh - ol) + ol

with round half to even (OpenVINO's nearbyint, ONNX's Round), in the data's type
(bf16/f16 computed in f32). Broadcasting is numpy's (``auto_broadcast`` numpy or none).
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from ..context import Context
from ..registry import handler
from .shape import _int

_F32 = from_ov("f32")


@handler("FakeQuantize", "opset1")
def fake_quantize(ctx: Context, layer) -> None:
    x, il, ih, ol, oh = (ctx.input(i) for i in range(5))
    et = x.type
    if et is None or not et.is_float:
        raise ctx.error(f"needs floating-point data, got {et.ov if et else None}")
    mode = (layer.data.get("auto_broadcast", "numpy") or "numpy").strip().lower()
    if mode not in ("numpy", "none"):
        raise ctx.error(f"auto_broadcast {mode!r} is not translated (numpy and none are)")
    levels = _int(ctx, layer, "levels")
    if levels < 2:
        raise ctx.error(f"levels {levels} is below 2")
    ct = et if et.ov in ("f32", "f64") else _F32
    xs, ils, ihs, ols, ohs = (ctx.cast(v.name, v.type, ct) for v in (x, il, ih, ol, oh))
    steps = ctx.const(np.asarray(levels - 1, dtype=ct.numpy))
    ratio = ctx.one("Div", [ctx.one("Sub", [xs, ils]), ctx.one("Sub", [ihs, ils])])
    q = ctx.one("Div", [ctx.one("Round", [ctx.one("Mul", [ratio, steps])]), steps])
    value = ctx.one("Add", [ctx.one("Mul", [q, ctx.one("Sub", [ohs, ols])]), ols])
    below = ctx.one("LessOrEqual", [xs, ctx.one("Min", [ils, ihs])])
    above = ctx.one("Greater", [xs, ctx.one("Max", [ils, ihs])])
    out = ctx.one("Where", [below, ols, ctx.one("Where", [above, ohs, value])])
    ctx.cast(out, ct, et, ctx.out(0))
