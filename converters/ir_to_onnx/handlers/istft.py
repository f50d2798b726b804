"""ISTFT-16, as OpenVINO's reference computes it (istft.cpp): each frame of the
[batch, bins, frames, 2] spectrum back to frame_size real samples (spectral.real_inverse),
multiplied by the window (zero-padded to the frame, centred), added at frame * step
(ScatterElements ``add``, frame by frame as the reference adds), divided by the sum of
the squared windows there (0 where that sum is 0; times sqrt(frame_size) when
``normalized``). The signal then starts at frame_size // 2 when ``center``; its length
is ``signal_length`` when given and positive, else (frames - 1) * step (center) or that
plus frame_size, zero-padded past the frames. frame_size, frame_step and the window
length must be constants.
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import ElementType, from_ov

from .. import attributes as attr
from ..context import Context
from ..registry import translator
from .shape import const_ints
from .spectral import real_inverse

_F32 = from_ov("f32")


def _overlap_add(ctx: Context, frames: str, positions: str, length: str, batch: str | None, ct: ElementType) -> str:
    """Sum of ``frames`` [batch?, F * size] at ``positions`` [F * size] into a signal [batch?, length]."""
    shape = length if batch is None else ctx.one("Concat", [batch, length], axis=0)
    zeros = ctx.one("Expand", [ctx.const(np.zeros((), ct.numpy)), shape])
    index = positions if batch is None else ctx.one("Expand", [positions, ctx.one("Shape", [frames])])
    return ctx.one("ScatterElements", [zeros, index, frames], axis=-1, reduction="add")


def _positions(ctx: Context, count: str, step: int, size: int) -> str:
    """frame * step + i for every frame and i < size, flat."""
    starts = ctx.one("Mul", [ctx.one("Range", [ctx.i64(0), ctx.one("Squeeze", [count]), ctx.i64(1)]), ctx.i64(step)])
    cells = ctx.one("Add", [ctx.one("Unsqueeze", [starts, ctx.i64([1])]), ctx.i64(np.arange(size))])
    return ctx.one("Reshape", [cells, ctx.i64([-1])])


def _overlapped(ctx: Context, layer, frames: str, window: str, step: int, size: int, ct: ElementType):
    """The windowed frames [B, F, size] added up and divided by the squared windows' sum:
    the signal [B, (F - 1) * step + size] and that length ([1])."""
    count = ctx.one("Shape", [frames], start=1, end=2)
    positions = _positions(ctx, count, step, size)
    total = ctx.one("Add", [ctx.one("Mul", [ctx.one("Sub", [count, ctx.i64([1])]), ctx.i64([step])]), ctx.i64([size])])
    windowed = ctx.one("Reshape", [ctx.one("Mul", [frames, window]), ctx.i64([0, -1])])
    sums = _overlap_add(ctx, windowed, positions, total, ctx.one("Shape", [frames], end=1), ct)
    weights = _overlap_add(ctx, ctx.one("Tile", [ctx.one("Mul", [window, window]), count]), positions, total, None, ct)
    if attr.boolean(layer, "normalized", False):
        sums = ctx.one("Mul", [sums, ctx.const(np.asarray(np.sqrt(np.float32(size)), ct.numpy))])
    zero = ctx.const(np.zeros((), ct.numpy))
    return ctx.one("Where", [ctx.one("Equal", [weights, zero]), zero, ctx.one("Div", [sums, weights])]), total


def _cut(ctx: Context, layer, signal: str, total: str, size: int) -> str:
    """The signal from frame_size // 2 (``center``) on, cut or zero-padded to its length."""
    center = attr.boolean(layer, "center", False)
    margin = size // 2 if center else 0
    final = ctx.one("Sub", [total, ctx.i64([size])]) if center else total
    if ctx.n_inputs() > 4:
        given = ctx.as_i64(ctx.input(4), flat=True)
        final = ctx.one("Where", [ctx.one("Greater", [given, ctx.i64([0])]), given, final])
    kept = ctx.one("Min", [final, ctx.one("Sub", [total, ctx.i64([margin])])])
    signal = ctx.one("Slice", [signal, ctx.i64([margin]), ctx.one("Add", [kept, ctx.i64([margin])]), ctx.i64([1])])
    return ctx.one("Pad", [signal, ctx.one("Concat", [ctx.i64([0, 0, 0]), ctx.one("Sub", [final, kept])], axis=0)])


@translator("ISTFT", since=16,
            emits=("Add", "Cast", "Concat", "DFT", "Div", "Equal", "Expand", "Greater", "Identity", "Min", "Mul", "Pad",
                   "Range", "Reshape", "ScatterElements", "Shape", "Slice", "Squeeze", "Sub", "Tile", "Transpose",
                   "Unsqueeze", "Where"))
def istft(ctx: Context, layer) -> None:
    data, window = ctx.input(0), ctx.input(1)
    if data.rank not in (3, 4) or window.shape is None or window.shape[0] is None:
        raise ctx.error(f"needs a spectrum of rank 3 or 4 and a window of static length, got shapes {data.shape} "
                        f"and {window.shape}")
    size = const_ints(ctx, ctx.input(2), "the frame_size")[0]
    step = const_ints(ctx, ctx.input(3), "the frame_step")[0]
    length = window.shape[0]
    if length > size:
        raise ctx.error(f"window of {length} samples is longer than the frame ({size})")
    et = data.type
    ct = et if et.ov in ("f32", "f64") else _F32
    x = ctx.cast(data.name, et, ct)
    if data.rank == 3:
        x = ctx.one("Unsqueeze", [x, ctx.i64([0])])
    x = ctx.one("Transpose", [x], perm=[0, 2, 1, 3])  # [B, frames, bins, 2]
    frames = real_inverse(ctx, x, 2, 4, data.shape[-3], size, ct)  # [B, frames, size]
    left = (size - length) // 2
    w = ctx.one("Pad", [ctx.cast(window.name, window.type, ct), ctx.i64([left, size - length - left])])
    signal, total = _overlapped(ctx, layer, frames, w, step, size, ct)
    out = _cut(ctx, layer, signal, total, size)
    if data.rank == 3:
        out = ctx.one("Squeeze", [out, ctx.i64([0])])
    ctx.cast(out, ct, et, ctx.out(0))
