"""Data layout: Pad, DepthToSpace, SpaceToDepth, ShuffleChannels.

- Pad ``symmetric`` (the edge value repeated, ONNX has no such mode) is built from
  reversed Slices and a Concat per axis; it needs constant pads. Negative pads
  (Pad-12) crop: a Slice when the pads are constant, ONNX Pad's own negative pads
  when they are not.
- DepthToSpace/SpaceToDepth are OpenVINO's Reshape/Transpose/Reshape for any rank
  >= 3 (ONNX's ops only take 4-D data and SpaceToDepth has one mode).
"""

from __future__ import annotations

import numpy as np

from .. import attributes as attr
from ..context import Context, Value
from ..kernels import compute_type
from ..registry import translator

_BIG = np.iinfo(np.int64).max


def _rank(ctx: Context, data: Value, at_least: int) -> int:
    if data.rank is None or data.rank < at_least:
        raise ctx.error(f"needs data of known rank >= {at_least}, got shape {data.shape}")
    return data.rank


# --- Pad ------------------------------------------------------------------------------


@translator("Pad", since=1, emits=("Cast", "Concat", "Identity", "Pad", "Reshape", "Slice"))
def pad(ctx: Context, layer) -> None:
    data, begin_v, end_v = ctx.input(0), ctx.input(1), ctx.input(2)
    mode = attr.choice(ctx, layer, "pad_mode", ("constant", "edge", "reflect", "symmetric"), "constant")
    value = ctx.input(3).name if mode == "constant" and ctx.n_inputs() > 3 else None
    if begin_v.const is None or end_v.const is None:
        if mode == "symmetric":
            raise ctx.error("symmetric padding needs constant pads_begin and pads_end")
        pads = ctx.one("Concat", [i64_vector(ctx, begin_v), i64_vector(ctx, end_v)], axis=0)
        onnx_pad(ctx, data.name, pads, mode, value, data, ctx.out(0))
        return
    rank = _rank(ctx, data, 1)
    begin = [int(x) for x in np.asarray(begin_v.const).reshape(-1)]
    end = [int(x) for x in np.asarray(end_v.const).reshape(-1)]
    if len(begin) != rank or len(end) != rank:
        raise ctx.error(f"pads_begin {begin} and pads_end {end} do not have one entry per dim of rank {rank}")
    x = data.name
    if any(p < 0 for p in begin + end):  # crop first: OpenVINO pads the cropped tensor
        axes = [i for i in range(rank) if begin[i] < 0 or end[i] < 0]
        starts = [max(-begin[i], 0) for i in axes]
        ends = [end[i] if end[i] < 0 else _BIG for i in axes]
        crop = ctx.i64(starts), ctx.i64(ends), ctx.i64(axes)
        begin, end = [max(p, 0) for p in begin], [max(p, 0) for p in end]
        if mode == "constant" and _crops_into_padding(data, axes, starts, ends, begin, end):
            # the output dim is the data's plus both pads: a crop deeper than the data (all of it when it is
            # empty) takes padding away, which cropping first cannot
            ctx.one("Slice", [onnx_pad(ctx, x, ctx.i64(begin + end), mode, value, data, None), *crop], ctx.out(0))
            return
        x = ctx.one("Slice", [x, *crop])
    if not any(begin + end):
        ctx.one("Identity", [x], ctx.out(0))
    elif mode == "symmetric":
        _symmetric(ctx, x, begin, end)
    else:
        onnx_pad(ctx, x, ctx.i64(begin + end), mode, value, data, ctx.out(0))


def _crops_into_padding(data: Value, axes: list[int], starts: list[int], ends: list[int], begin: list[int],
                        end: list[int]) -> bool:
    """A cropped axis, padded on its other side, whose crop may be deeper than its dim."""
    for i, start, stop in zip(axes, starts, ends):
        depth = start + (-stop if stop < 0 else 0)
        if begin[i] + end[i] and (data.shape[i] is None or data.shape[i] < depth):
            return True
    return False


def onnx_pad(ctx: Context, x: str, pads: str, mode: str, value: str | None, data: Value, output: str | None) -> str:
    """ONNX Pad of ``x`` (of ``data``'s type), widened where onnxruntime has no kernel."""
    et = data.type
    ct = compute_type("Pad", et, "bits")
    if ct is None:
        raise ctx.error(f"onnxruntime has no Pad kernel for {et.ov} and no lossless widening applies")
    inputs = [ctx.cast(x, et, ct), pads] + ([ctx.cast(value, et, ct)] if value is not None else [])
    if ct == et:
        return ctx.one("Pad", inputs, output, mode=mode)
    return ctx.cast(ctx.one("Pad", inputs, mode=mode), ct, et, output)


def i64_vector(ctx: Context, v: Value) -> str:
    """``v`` as a 1-D int64 tensor."""
    if v.const is not None or v.rank == 1:
        return ctx.as_i64(v, flat=True)
    return ctx.one("Reshape", [ctx.as_i64(v), ctx.i64([-1])])


def _symmetric(ctx: Context, x: str, begin: list[int], end: list[int]) -> None:
    """Per axis: the first ``b`` entries reversed, the tensor, the last ``e`` reversed."""
    last = max(i for i in range(len(begin)) if begin[i] or end[i])
    for axis, (b, e) in enumerate(zip(begin, end)):
        if not (b or e):
            continue
        parts = []
        if b:  # entries b-1 .. 0
            parts.append(ctx.one("Slice", [x, ctx.i64([b - 1]), ctx.i64([-_BIG]), ctx.i64([axis]), ctx.i64([-1])]))
        parts.append(x)
        if e:  # entries -1 .. -e
            parts.append(ctx.one("Slice", [x, ctx.i64([-1]), ctx.i64([-e - 1]), ctx.i64([axis]), ctx.i64([-1])]))
        x = ctx.one("Concat", parts, ctx.out(0) if axis == last else None, axis=axis)


# --- DepthToSpace / SpaceToDepth / ShuffleChannels -----------------------------------------


def _block(ctx: Context, layer) -> tuple[int, bool]:
    bs = attr.integer(ctx, layer, "block_size")  # absent: 0, which OpenVINO refuses
    if bs < 1:
        raise ctx.error(f"block_size {bs} is not positive")
    return bs, attr.choice(ctx, layer, "mode", ("blocks_first", "depth_first")) == "blocks_first"


def _spatial_dims(ctx: Context, data: Value) -> str:
    return ctx.i64(data.shape[2:]) if data.static_shape else ctx.one("Shape", [data.name], start=2)


def channels(ctx: Context, data: Value, scale: int, op: str) -> str:
    """[C * scale] (``op`` "Mul") or [C / scale] ("Div"), a constant where C is static. The Reshapes below
    write these channels and put -1 on the batch: a -1 beside a copied batch of 0 (``[0, -1, ...]``) is
    what onnxruntime cannot resolve (it refuses the model), the batch's -1 resolves to 0 there."""
    c = data.shape[1]
    if c is not None:
        return ctx.i64([c * scale if op == "Mul" else c // scale])
    return ctx.one(op, [ctx.one("Shape", [data.name], start=1, end=2), ctx.i64([scale])])


@translator("DepthToSpace", since=1, emits=("Concat", "Div", "Mul", "Reshape", "Shape", "Transpose"))
def depth_to_space(ctx: Context, layer) -> None:
    """[N, C, D1..DK] -> [N, C/bs^K, D1*bs..DK*bs] (OpenVINO's spec: reshape, transpose, reshape)."""
    data = ctx.input(0)
    k = _rank(ctx, data, 3) - 2
    bs, blocks_first = _block(ctx, layer)
    if data.shape[1] is not None and data.shape[1] % bs**k:
        raise ctx.error(f"{data.shape[1]} channels are not a multiple of block_size^{k} = {bs**k}")
    spatial, c_out = _spatial_dims(ctx, data), channels(ctx, data, bs**k, "Div")
    if blocks_first:  # [N, bs.., C', D..]
        split = ctx.one("Concat", [ctx.i64([-1] + [bs] * k), c_out, spatial], axis=0)
        perm = [0, k + 1] + [i for j in range(k) for i in (k + 2 + j, 1 + j)]
    else:  # [N, C', bs.., D..]
        split = ctx.one("Concat", [ctx.i64([-1]), c_out, ctx.i64([bs] * k), spatial], axis=0)
        perm = [0, 1] + [i for j in range(k) for i in (k + 2 + j, 2 + j)]
    merged = ctx.one("Concat", [ctx.i64([-1]), c_out, ctx.one("Mul", [spatial, ctx.i64(bs)])], axis=0)
    x = ctx.one("Reshape", [data.name, split])
    ctx.one("Reshape", [ctx.one("Transpose", [x], perm=perm), merged], ctx.out(0))


@translator("SpaceToDepth", since=1, emits=("Concat", "Div", "Mul", "Reshape", "Shape", "Transpose", "Unsqueeze"))
def space_to_depth(ctx: Context, layer) -> None:
    """[N, C, D1..DK] -> [N, C*bs^K, D1/bs..DK/bs]."""
    data = ctx.input(0)
    k = _rank(ctx, data, 3) - 2
    bs, blocks_first = _block(ctx, layer)
    if data.static_shape and any(d % bs for d in data.shape[2:]):
        raise ctx.error(f"spatial dims {list(data.shape[2:])} are not multiples of block_size {bs}")
    reduced = ctx.one("Div", [_spatial_dims(ctx, data), ctx.i64(bs)])
    pairs = ctx.one("Concat", [ctx.one("Unsqueeze", [reduced, ctx.i64([1])]), ctx.i64([[bs]] * k)], axis=1)
    split = ctx.one("Concat", [ctx.i64([0, 0]), ctx.one("Reshape", [pairs, ctx.i64([-1])])], axis=0)
    blocks = [3 + 2 * j for j in range(k)]
    perm = [0] + (blocks + [1] if blocks_first else [1] + blocks) + [2 + 2 * j for j in range(k)]
    merged = ctx.one("Concat", [ctx.i64([-1]), channels(ctx, data, bs**k, "Mul"), reduced], axis=0)
    x = ctx.one("Reshape", [data.name, split])
    ctx.one("Reshape", [ctx.one("Transpose", [x], perm=perm), merged], ctx.out(0))


@translator("ShuffleChannels", since=1, emits=("Concat", "Div", "ReduceProd", "Reshape", "Shape", "Transpose"))
def shuffle_channels(ctx: Context, layer) -> None:
    """[pre, group, C/group, post] transposed to [pre, C/group, group, post]."""
    data = ctx.input(0)
    rank = _rank(ctx, data, 1)
    axis = attr.integer(ctx, layer, "axis", 1)
    group = attr.integer(ctx, layer, "group", 1)
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    if group < 1 or (data.shape[axis] is not None and data.shape[axis] % group):
        raise ctx.error(f"group {group} does not divide dim {data.shape[axis]} of axis {axis}")
    # every target dim written, allowzero: a -1 beside an empty dim is refused, and a 0 is a 0
    if data.static_shape:
        pre, post = int(np.prod(data.shape[:axis])), int(np.prod(data.shape[axis + 1:]))
        split, back = ctx.i64([pre, group, data.shape[axis] // group, post]), ctx.i64(list(data.shape))
    else:
        dims = ctx.one("Shape", [data.name])
        pre = ctx.one("ReduceProd", [ctx.one("Shape", [data.name], end=axis)], keepdims=1) if axis else ctx.i64([1])
        post = ctx.one("ReduceProd", [ctx.one("Shape", [data.name], start=axis + 1)], keepdims=1) \
            if axis < rank - 1 else ctx.i64([1])
        per = ctx.one("Div", [ctx.one("Shape", [data.name], start=axis, end=axis + 1), ctx.i64([group])])
        split, back = ctx.one("Concat", [pre, ctx.i64([group]), per, post], axis=0), dims
    x = ctx.one("Transpose", [ctx.one("Reshape", [data.name, split], allowzero=1)], perm=[0, 2, 1, 3])
    ctx.one("Reshape", [x, back], ctx.out(0), allowzero=1)
