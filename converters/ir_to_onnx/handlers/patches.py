"""Spatial blocks moved into channels: ExtractImagePatches-3 and ReorgYolo-2, as
OpenVINO's reference computes them (extract_image_patches.hpp, reorg_yolo.cpp).

- ExtractImagePatches: output channel (kh * KW + kw) * C + c at (oh, ow) is the data at
  (oh * SH - PT + kh * RH, ow * SW - PL + kw * RW), zero outside: the data zero-padded,
  then one strided Slice per kernel cell, concatenated. ``valid`` has no padding and
  (size - eff) // stride + 1 cells; ``same_*`` have ceil(size / stride) cells and the
  begin padding the reference computes (an odd total puts the extra cell at the end for
  same_upper, at the beginning for same_lower; none when the total is not below the
  dilated kernel). Needs static spatial dims.
- ReorgYolo: the reference reads the data as [N, C / s^2, H * s, W * s] and writes the
  output as [N, C, H, W]: out[n, (i * s + j) * C / s^2 + c, h, w] = in[n, c, h * s + i,
  w * s + j], one Reshape, Transpose and Reshape.
"""

from __future__ import annotations

from .. import attributes as attr
from ..context import Context, Value
from ..registry import translator
from .layout import channels


def _patch_geometry(size: int, k: int, s: int, r: int, mode: str) -> tuple[int, int, int]:
    """(begin padding, output cells, dilated kernel) along one spatial dim."""
    eff = k + (r - 1) * (k - 1)
    if mode == "valid":
        return 0, max((size - eff) // s + 1, 0), eff
    out = -(-size // s)
    total = (out - 1) * s + eff - size
    begin = 0
    if 0 < total < eff:
        begin = total // 2 if total % 2 == 0 else (total + 1) // 2 if mode == "same_lower" else (total - 1) // 2
    return begin, out, eff


@translator("ExtractImagePatches", since=3, emits=("Concat", "Pad", "Slice"))
def extract_image_patches(ctx: Context, layer) -> None:
    data = ctx.input(0)
    if data.rank != 4 or data.shape[2] is None or data.shape[3] is None:
        raise ctx.error(f"needs 4-D data with static spatial dims, got shape {data.shape}")
    sizes, strides, rates = (attr.integers(ctx, layer, name, count=2) for name in ("sizes", "strides", "rates"))
    mode = attr.choice(ctx, layer, "auto_pad", ("valid", "same_upper", "same_lower"))
    geometry = [_patch_geometry(data.shape[2 + i], sizes[i], strides[i], rates[i], mode) for i in range(2)]
    begin = [g[0] for g in geometry]
    end = [max((out - 1) * s + eff - b - data.shape[2 + i], 0)
           for i, ((b, out, eff), s) in enumerate(zip(geometry, strides))]
    x = data.name
    if any(begin + end):
        x = ctx.emit("Pad", [x], data.type, kind="bits", extra=[ctx.i64([0, 0, *begin, 0, 0, *end])])
    cells = []
    for kh in range(sizes[0]):
        for kw in range(sizes[1]):
            first = [kh * rates[0], kw * rates[1]]
            last = [f + (g[1] - 1) * s + 1 for f, g, s in zip(first, geometry, strides)]
            cells.append(ctx.one("Slice", [x, ctx.i64(first), ctx.i64(last), ctx.i64([2, 3]), ctx.i64(strides)]))
    ctx.one("Concat", cells, ctx.out(0), axis=1)


def _spatial(ctx: Context, data: Value, axis: int, divide: int = 1) -> str:
    """Dim ``axis`` of the data over ``divide``, as a 1-element i64 (static or from the shape)."""
    if data.shape[axis] is not None:
        return ctx.i64([data.shape[axis] // divide])
    dim = ctx.one("Shape", [data.name], start=axis, end=axis + 1)
    return dim if divide == 1 else ctx.one("Div", [dim, ctx.i64([divide])])


@translator("ReorgYolo", since=2, emits=("Concat", "Div", "Mul", "Reshape", "Shape", "Transpose"))
def reorg_yolo(ctx: Context, layer) -> None:
    data = ctx.input(0)
    if data.rank != 4:
        raise ctx.error(f"needs 4-D data, got shape {data.shape}")
    s = attr.integers(ctx, layer, "stride")[0]
    h, w = _spatial(ctx, data, 2), _spatial(ctx, data, 3)
    # (-1 on the batch, the channels written: layout.channels)
    blocks = ctx.one("Concat", [ctx.i64([-1]), channels(ctx, data, s * s, "Div"), h, ctx.i64([s]), w,
                                ctx.i64([s])], axis=0)
    x = ctx.one("Transpose", [ctx.one("Reshape", [data.name, blocks])], perm=[0, 3, 5, 1, 2, 4])
    out_shape = ctx.one("Concat", [ctx.i64([-1]), channels(ctx, data, s * s, "Mul"), _spatial(ctx, data, 2, s),
                                   _spatial(ctx, data, 3, s)], axis=0)
    ctx.one("Reshape", [x, out_shape], ctx.out(0))
