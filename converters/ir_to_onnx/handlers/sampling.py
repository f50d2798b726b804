"""GridSample-9 -> ONNX GridSample (opset 20): the same attributes, OpenVINO's modes
``bilinear``/``bicubic``/``nearest`` are ONNX's ``linear``/``cubic``/``nearest``, the
padding modes ``zeros``/``border``/``reflection`` the same."""

from __future__ import annotations

from onnx_ext.types import from_ov

from ..context import Context
from ..registry import translator

_F32 = from_ov("f32")
_MODES = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}


@translator("GridSample", since=9, emits=("Cast", "GridSample", "Identity"))
def grid_sample(ctx: Context, layer) -> None:
    data, grid = ctx.input(0), ctx.input(1)
    mode = (layer.data.get("mode", "bilinear") or "bilinear").strip().lower()
    padding = (layer.data.get("padding_mode", "zeros") or "zeros").strip().lower()
    if mode not in _MODES:
        raise ctx.error(f"mode {mode!r} is not bilinear, bicubic or nearest")
    if padding not in ("zeros", "border", "reflection"):
        raise ctx.error(f"padding_mode {padding!r} is not zeros, border or reflection")
    align = int(str(layer.data.get("align_corners", "false")).strip().lower() in ("true", "1"))
    et = data.type
    if et is None or not et.is_float:
        raise ctx.error(f"needs floating-point data, got {et.ov if et else None}")
    ct = _F32 if et.ov != "f64" else et
    out = ctx.one("GridSample", [ctx.cast(data.name, et, ct), ctx.cast(grid.name, grid.type, ct)], mode=_MODES[mode],
                  padding_mode=padding, align_corners=align)
    ctx.cast(out, ct, et, ctx.out(0))
