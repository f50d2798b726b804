"""ROIPooling-2, as OpenVINO's reference computes it (roi_pooling.hpp). The ROIs are
[R, 5] rows (batch index, x1, y1, x2, y2).

- ``max``: ONNX MaxRoiPool, the same Caffe pooling (corners scaled and rounded, bins
  floor(i * size / pooled) .. ceil((i + 1) * size / pooled), empty bins 0).
- ``bilinear``: one sample per output cell at normalized coordinates: along y,
  y1 * (H - 1) + i * (y2 - y1) * (H - 1) / (pooled_h - 1), the last cell at y2 * (H - 1),
  a single cell at (y1 + y2) / 2 * (H - 1) (x alike); a sample outside [0, H - 1] x
  [0, W - 1] is 0, any other the reference's lerp of its four neighbours (floor and
  ceil), in its order of operations. The neighbours are gathered from the ROI's image
  flattened to [C, H * W].
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import ElementType, from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..registry import translator

_I64 = from_ov("i64")


def _samples(ctx: Context, rois: str, column: int, n: int, size: str, ct: ElementType) -> str:
    """The sample coordinates [R, n] along the image axis whose ROI start is ``column``
    (2: y1, 1: x1), of size - 1 ``size``."""
    lo = ctx.one("Slice", [rois, ctx.i64([column]), ctx.i64([column + 1]), ctx.i64([1])])  # [R, 1]
    hi = ctx.one("Slice", [rois, ctx.i64([column + 2]), ctx.i64([column + 3]), ctx.i64([1])])
    if n == 1:
        half = ctx.one("Mul", [ctx.one("Add", [lo, hi]), ctx.const(np.asarray(0.5, ct.numpy))])
        return ctx.one("Mul", [half, size])
    step = ctx.one("Div", [ctx.one("Mul", [ctx.one("Sub", [hi, lo]), size]), ctx.const(np.asarray(n - 1, ct.numpy))])
    inner = ctx.one("Add", [ctx.one("Mul", [ctx.const(np.arange(n, dtype=ct.numpy)[None]), step]),
                            ctx.one("Mul", [lo, size])])
    last = ctx.const((np.arange(n) == n - 1)[None])
    return ctx.one("Where", [last, ctx.one("Mul", [size, hi]), inner])


def _neighbours(ctx: Context, coords: str, size: str, limit: str, ct: ElementType) -> tuple[str, str, str, str]:
    """(inside [0, size], floor and ceil as i64 indices kept in range, the fraction)."""
    down = ctx.one("Floor", [coords])
    inside = ctx.one("And", [ctx.one("GreaterOrEqual", [coords, ctx.const(np.zeros((), ct.numpy))]),
                             ctx.one("LessOrEqual", [coords, size])])

    def index(v: str) -> str:
        return ctx.one("Clip", [ctx.cast(v, ct, _I64), ctx.i64(0), limit])

    return inside, index(down), index(ctx.one("Ceil", [coords])), ctx.one("Sub", [coords, down])


def _lerp(ctx: Context, a: str, b: str, t: str) -> str:
    return ctx.one("Add", [a, ctx.one("Mul", [ctx.one("Sub", [b, a]), t])])


def _corner(ctx: Context, flat: str, width: str, row: str, col: str, pooled: list[int]) -> str:
    """The values [R, C, PH, PW] at (row [R, PH], col [R, PW]) of the ROIs' images [R, C, H * W]."""
    pos = ctx.one("Add", [ctx.one("Mul", [ctx.one("Unsqueeze", [row, ctx.i64([2])]), width]),
                          ctx.one("Unsqueeze", [col, ctx.i64([1])])])  # [R, PH, PW]
    cells = ctx.one("Concat", [ctx.one("Shape", [flat], end=2), ctx.i64([pooled[0] * pooled[1]])], axis=0)
    pos = ctx.one("Expand", [ctx.one("Reshape", [pos, ctx.i64([0, 1, -1])]), cells])
    return ctx.one("Reshape", [ctx.one("GatherElements", [flat, pos], axis=2), ctx.i64([0, 0, *pooled])])


def _bilinear(ctx: Context, data: Value, rois: Value, pooled: list[int]) -> None:
    et = data.type
    ct = et if et.ov in ("f16", "f32", "f64") else from_ov("f32")
    x, boxes = ctx.cast(data.name, et, ct), ctx.cast(rois.name, rois.type, ct)
    last = [ctx.one("Sub", [ctx.one("Shape", [x], start=a, end=a + 1), ctx.i64([1])]) for a in (2, 3)]  # H-1, W-1
    size = [ctx.cast(v, _I64, ct) for v in last]
    (in_y, top, bottom, dy), (in_x, left, right, dx) = (
        _neighbours(ctx, _samples(ctx, boxes, 2 - a, pooled[a], size[a], ct), size[a], ctx.one("Squeeze", [last[a]]),
                    ct) for a in (0, 1))
    width = ctx.one("Add", [last[1], ctx.i64([1])])
    image = ctx.one("Gather", [x, ctx.cast(ctx.one("Gather", [boxes, ctx.i64(0)], axis=1), ct, _I64)], axis=0)
    flat = ctx.one("Reshape", [image, ctx.i64([0, 0, -1])])  # [R, C, H * W]
    fx = ctx.one("Unsqueeze", [dx, ctx.i64([1, 2])])  # [R, 1, 1, PW]
    upper, lower = (_lerp(ctx, _corner(ctx, flat, width, row, left, pooled),
                          _corner(ctx, flat, width, row, right, pooled), fx) for row in (top, bottom))
    value = _lerp(ctx, upper, lower, ctx.one("Unsqueeze", [dy, ctx.i64([1, 3])]))  # dy: [R, 1, PH, 1]
    inside = ctx.one("And", [ctx.one("Unsqueeze", [in_y, ctx.i64([1, 3])]),
                             ctx.one("Unsqueeze", [in_x, ctx.i64([1, 2])])])
    ctx.cast(ctx.one("Where", [inside, value, ctx.const(np.zeros((), ct.numpy))]), ct, et, ctx.out(0))


@translator("ROIPooling", since=2,
            emits=("Add", "And", "Cast", "Ceil", "Clip", "Concat", "Div", "Expand", "Floor", "Gather", "GatherElements",
                   "GreaterOrEqual", "Identity", "LessOrEqual", "MaxRoiPool", "Mul", "Reshape", "Shape", "Slice",
                   "Squeeze", "Sub", "Unsqueeze", "Where"))
def roi_pooling(ctx: Context, layer) -> None:
    data, rois = ctx.input(0), ctx.input(1)
    if data.rank != 4 or data.type is None or not data.type.is_float:
        raise ctx.error(f"needs floating-point data [N, C, H, W], got {data.type.ov if data.type else None} "
                        f"of shape {data.shape}")
    pooled = [attr.integer(ctx, layer, "pooled_h"), attr.integer(ctx, layer, "pooled_w")]  # output_size is not read
    method = attr.string(ctx, layer, "method", "max", ("max", "bilinear"))
    if method == "bilinear":
        _bilinear(ctx, data, rois, pooled)
        return
    ctx.emit("MaxRoiPool", [data.name, rois.name], data.type, ctx.out(0), pooled_shape=pooled,
             spatial_scale=attr.number(ctx, layer, "spatial_scale"))
