"""GridSample-9 -> ONNX GridSample (opset 20): the same attributes, OpenVINO's modes
``bilinear``/``bicubic``/``nearest`` are ONNX's ``linear``/``cubic``/``nearest``, the
padding modes ``zeros``/``border``/``reflection`` the same."""

from __future__ import annotations

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context
from ..registry import translator

_F32 = from_ov("f32")
_MODES = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}


@translator("GridSample", since=9, emits=("Cast", "GridSample", "Identity"))
def grid_sample(ctx: Context, layer) -> None:
    data, grid = ctx.input(0), ctx.input(1)
    mode = attr.choice(ctx, layer, "mode", tuple(_MODES), "bilinear")
    padding = attr.choice(ctx, layer, "padding_mode", ("zeros", "border", "reflection"), "zeros")
    align = int(attr.boolean(layer, "align_corners", False))
    et = data.type
    if et is None or not et.is_float:
        raise ctx.error(f"needs floating-point data, got {et.ov if et else None}")
    ct = _F32 if et.ov != "f64" else et
    out = ctx.one("GridSample", [ctx.cast(data.name, et, ct), ctx.cast(grid.name, grid.type, ct)], mode=_MODES[mode],
                  padding_mode=padding, align_corners=align)
    ctx.cast(out, ct, et, ctx.out(0))
