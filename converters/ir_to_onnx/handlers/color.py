"""NV12toRGB-8, NV12toBGR-8, I420toRGB-8, I420toBGR-8, as OpenVINO's reference computes them
(convert_color_nv12.hpp).

The image is Y [N, H, W, 1] with the chroma at half resolution: NV12's U and V
interleaved ([N, H / 2, W / 2, 2]), I420's as two planes ([N, H / 2, W / 2, 1] each); one
input holds them all as [N, 3 H / 2, W, 1] (Y rows, then the chroma bytes). Each pixel
takes the chroma of (h / 2, w / 2); in f32, with c = y - 16, d = u - 128, e = v - 128:
r = 1.164 c + 1.596 e, g = 1.164 c - 0.391 d - 0.813 e, b = 1.164 c + 2.018 d, clipped to
[0, 255]; u8 output rounds half away from zero first (std::round: floor, plus one when
the fraction is at least 0.5, where ONNX's Round would round half to even).
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from ..context import Context
from ..registry import translator

_F32 = from_ov("f32")
_BIG = np.iinfo(np.int64).max


def _f32(ctx: Context, value: float) -> str:
    return ctx.const(np.asarray(value, np.float32))


def _single_plane(ctx: Context, nv12: bool) -> tuple[str, str, str]:
    """Y [N, H, W, 1] and the chroma planes [N, H / 2, W / 2] of a [N, 3 H / 2, W, 1] image."""
    x = ctx.input(0).name
    h = ctx.one("Div", [ctx.one("Mul", [ctx.one("Shape", [x], start=1, end=2), ctx.i64([2])]), ctx.i64([3])])
    y = ctx.one("Slice", [x, ctx.i64([0]), h, ctx.i64([1])])
    rest = ctx.one("Slice", [x, h, ctx.i64([_BIG]), ctx.i64([1])])  # [N, H / 2, W, 1]
    # The Reshapes write every dim but the batch's (-1): onnxruntime cannot resolve a -1 beside a copied
    # batch of 0 ([0, 0, -1, 2]) and refuses the model
    half_h = ctx.one("Div", [ctx.one("Shape", [x], start=1, end=2), ctx.i64([3])])
    half_w = ctx.one("Div", [ctx.one("Shape", [x], start=2, end=3), ctx.i64([2])])
    if nv12:  # rows of u, v pairs
        uv = ctx.one("Reshape", [rest, ctx.one("Concat", [ctx.i64([-1]), half_h, half_w, ctx.i64([2])], axis=0)])
        return y, ctx.one("Gather", [uv, ctx.i64(0)], axis=3), ctx.one("Gather", [uv, ctx.i64(1)], axis=3)
    # the U plane, then the V plane
    planes = ctx.one("Reshape", [rest, ctx.one("Concat", [ctx.i64([-1, 2]), half_h, half_w], axis=0)])
    return y, ctx.one("Gather", [planes, ctx.i64(0)], axis=1), ctx.one("Gather", [planes, ctx.i64(1)], axis=1)


def _planes(ctx: Context, nv12: bool) -> tuple[str, str, str]:
    if ctx.n_inputs() == 1:
        return _single_plane(ctx, nv12)
    y = ctx.input(0).name
    if nv12:
        uv = ctx.input(1).name
        return y, ctx.one("Gather", [uv, ctx.i64(0)], axis=3), ctx.one("Gather", [uv, ctx.i64(1)], axis=3)
    return y, ctx.one("Squeeze", [ctx.input(1).name, ctx.i64([3])]), ctx.one("Squeeze", [ctx.input(2).name,
                                                                                         ctx.i64([3])])


def _full_size(ctx: Context, chroma: str, y: str, et) -> str:
    """[N, H / 2, W / 2] -> [N, H, W] in f32, each value repeated over its 2 x 2 block."""
    blocks = ctx.emit("Expand", [ctx.one("Unsqueeze", [chroma, ctx.i64([2, 4])])], et,
                      extra=[ctx.i64([1, 1, 2, 1, 2])])
    return ctx.cast(ctx.one("Reshape", [blocks, ctx.one("Shape", [y], end=3)]), et, _F32)


def _convert(ctx: Context, nv12: bool, bgr: bool) -> None:
    et = ctx.input(0).type
    if et is None or not (et.is_float or et.ov == "u8"):
        raise ctx.error(f"needs u8 or floating-point planes, got {et.ov if et else None}")
    y, u, v = _planes(ctx, nv12)
    c = ctx.one("Sub", [ctx.cast(ctx.one("Squeeze", [y, ctx.i64([3])]), et, _F32), _f32(ctx, 16.0)])
    d = ctx.one("Sub", [_full_size(ctx, u, y, et), _f32(ctx, 128.0)])
    e = ctx.one("Sub", [_full_size(ctx, v, y, et), _f32(ctx, 128.0)])
    luma = ctx.one("Mul", [c, _f32(ctx, 1.164)])
    r = ctx.one("Add", [luma, ctx.one("Mul", [e, _f32(ctx, 1.596)])])
    g = ctx.one("Sub", [ctx.one("Sub", [luma, ctx.one("Mul", [d, _f32(ctx, 0.391)])]),
                        ctx.one("Mul", [e, _f32(ctx, 0.813)])])
    b = ctx.one("Add", [luma, ctx.one("Mul", [d, _f32(ctx, 2.018)])])
    channels = [b, g, r] if bgr else [r, g, b]
    rgb = ctx.one("Concat", [ctx.one("Unsqueeze", [ch, ctx.i64([3])]) for ch in channels], axis=3)
    if not et.is_float:
        whole = ctx.one("Floor", [rgb])
        up = ctx.one("GreaterOrEqual", [ctx.one("Sub", [rgb, whole]), _f32(ctx, 0.5)])
        rgb = ctx.one("Add", [whole, ctx.cast(up, from_ov("boolean"), _F32)])
    ctx.cast(ctx.one("Clip", [rgb, _f32(ctx, 0.0), _f32(ctx, 255.0)]), _F32, et, ctx.out(0))


@translator("NV12toRGB", since=8,
            emits=("Add", "Cast", "Clip", "Concat", "Div", "Expand", "Floor", "Gather", "GreaterOrEqual", "Identity",
                   "Mul", "Reshape", "Shape", "Slice", "Squeeze", "Sub", "Unsqueeze"))
def nv12_to_rgb(ctx: Context, layer) -> None:
    _convert(ctx, nv12=True, bgr=False)


@translator("NV12toBGR", since=8,
            emits=("Add", "Cast", "Clip", "Concat", "Div", "Expand", "Floor", "Gather", "GreaterOrEqual", "Identity",
                   "Mul", "Reshape", "Shape", "Slice", "Squeeze", "Sub", "Unsqueeze"))
def nv12_to_bgr(ctx: Context, layer) -> None:
    _convert(ctx, nv12=True, bgr=True)


@translator("I420toRGB", since=8,
            emits=("Add", "Cast", "Clip", "Concat", "Div", "Expand", "Floor", "Gather", "GreaterOrEqual", "Identity",
                   "Mul", "Reshape", "Shape", "Slice", "Squeeze", "Sub", "Unsqueeze"))
def i420_to_rgb(ctx: Context, layer) -> None:
    _convert(ctx, nv12=False, bgr=False)


@translator("I420toBGR", since=8,
            emits=("Add", "Cast", "Clip", "Concat", "Div", "Expand", "Floor", "Gather", "GreaterOrEqual", "Identity",
                   "Mul", "Reshape", "Shape", "Slice", "Squeeze", "Sub", "Unsqueeze"))
def i420_to_bgr(ctx: Context, layer) -> None:
    _convert(ctx, nv12=False, bgr=True)
