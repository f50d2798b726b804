"""Col2Im-15 -> ONNX Col2Im (opset 18): output_size and kernel_size are ONNX's
image_shape and block_shape, pads_begin + pads_end its pads; unbatched data
([C * kernel, L]) gets a batch axis of 1 and loses it again; data of no columns (C = 0) an empty constant."""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context
from ..registry import translator

_F32 = from_ov("f32")


@translator("Col2Im", since=15, emits=("Cast", "Col2Im", "Squeeze", "Unsqueeze"))
def col2im(ctx: Context, layer) -> None:
    data, size, kernel = ctx.input(0), ctx.input(1), ctx.input(2)
    if data.rank not in (2, 3):
        raise ctx.error(f"needs data of rank 2 or 3, got shape {data.shape}")
    strides, dilations, begin, end = (attr.integers(ctx, layer, name, [fill] * 2, count=2) for name, fill in
                                      (("strides", 1), ("dilations", 1), ("pads_begin", 0), ("pads_end", 0)))
    attrs = dict(strides=strides, dilations=dilations, pads=begin + end)
    out = ctx.out_value(0)
    if data.shape[-2] == 0 and out.static_shape:  # no columns (onnxruntime's Col2Im refuses them): no channels
        ctx.set_const(0, np.zeros(out.shape, data.type.numpy))
        return
    x = data.name if data.rank == 3 else ctx.one("Unsqueeze", [data.name, ctx.i64([0])])
    args = [ctx.as_i64(size, flat=True), ctx.as_i64(kernel, flat=True)]
    if data.rank == 3:
        ctx.emit("Col2Im", [x], data.type, ctx.out(0), extra=args, **attrs)
        return
    image = ctx.emit("Col2Im", [x], data.type, extra=args, **attrs)
    ctx.one("Squeeze", [image, ctx.i64([0])], ctx.out(0))
