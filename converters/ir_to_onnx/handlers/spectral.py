"""Discrete Fourier transforms: DFT-7, IDFT-7, RDFT-9, IRDFT-9 -> ONNX DFT (opset 20),
one axis at a time; STFT-15 -> ONNX STFT.

OpenVINO keeps complex numbers as a trailing dim of 2 (real, imaginary), as ONNX's DFT
does; a real ONNX signal has a trailing dim of 1. OpenVINO's axes count over the
dims before that trailing one (-1 is the last signal dim). ``signal_size`` (-1: keep)
is ONNX's ``dft_length``: the signal is cut or zero-padded to it. IDFT divides by the
signal size, as ONNX's ``inverse`` does.

- RDFT: the last axis of ``axes`` is transformed one-sided from the real signal
  (n // 2 + 1 bins), the others as complex DFTs.
- IRDFT: complex inverse DFTs over all axes but the last; on the last, the n // 2 + 1
  bins are extended to n by Hermitian symmetry (X[n - k] = conj(X[k])), transformed
  back, and the real part kept; n is the signal size, else 2 * (bins - 1).
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import ElementType, from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..registry import translator
from .domain import domain_node
from .shape import normalize_axes, const_ints

_F32 = from_ov("f32")
_MAX = np.iinfo(np.int64).max


def _axes_and_sizes(ctx: Context, data: Value, signal_rank: int) -> tuple[list[int], list[int | None]]:
    axes = normalize_axes(ctx, const_ints(ctx, ctx.input(1), "the DFT axes"), signal_rank)
    if len(set(axes)) != len(axes):
        raise ctx.error(f"repeated DFT axes {axes}")
    sizes: list[int | None] = [None] * len(axes)
    if ctx.n_inputs() > 2:
        given = const_ints(ctx, ctx.input(2), "the signal_size")
        if len(given) != len(axes):
            raise ctx.error(f"signal_size {given} has {len(given)} entries for {len(axes)} axes")
        sizes = [None if s == -1 else s for s in given]
    return axes, sizes


def _runtime(ctx: Context, kind: str) -> bool:
    """Axes or signal sizes computed at run time (or a rank or IRDFT bins unknown): the domain's op, whose
    bodies take them at run time (onnx_ext/ops/dft)."""
    values = [ctx.input(i) for i in range(ctx.n_inputs())]
    data = values[0]
    static = all(v.const is not None for v in values[1:]) and data.rank is not None
    if static and kind == "IRDFT" and (ctx.n_inputs() < 3 or int(np.asarray(values[2].const).reshape(-1)[-1]) == -1):
        last = int(np.asarray(values[1].const).reshape(-1)[-1])
        last += data.rank - 1 if last < 0 else 0
        static = not 0 <= last < data.rank - 1 or data.shape[last] is not None  # the bins, for the output size
    if static:
        return False
    domain_node(ctx, kind, values, [ctx.out(0)])
    return True


def _compute(ctx: Context, v: Value):
    et = v.type
    if et is None or not et.is_float:
        raise ctx.error(f"needs floating-point data, got {et.ov if et else None}")
    ct = et if et.ov in ("f32", "f64") else _F32
    return ctx.cast(v.name, et, ct), et, ct


def _dft(ctx: Context, x: str, axis: int, size: int | None, *, inverse: bool = False, onesided: bool = False) -> str:
    inputs = [x, "" if size is None else ctx.i64(size), ctx.i64(axis)]
    return ctx.one("DFT", inputs, inverse=int(inverse), onesided=int(onesided))


def _complex(ctx: Context, layer, inverse: bool) -> None:
    data = ctx.input(0)
    if data.rank is None or data.rank < 2 or data.shape[-1] not in (2, None):
        raise ctx.error(f"needs complex data [..., 2] of known rank, got shape {data.shape}")
    axes, sizes = _axes_and_sizes(ctx, data, data.rank - 1)
    x, et, ct = _compute(ctx, data)
    for axis, size in zip(axes, sizes):
        x = _dft(ctx, x, axis, size, inverse=inverse)
    ctx.cast(x, ct, et, ctx.out(0))


@translator("DFT", since=7, emits=("onnx_ext.DFT", "Cast", "DFT", "Identity"))
def dft(ctx: Context, layer) -> None:
    if _runtime(ctx, "DFT"):
        return
    _complex(ctx, layer, inverse=False)


@translator("IDFT", since=7, emits=("onnx_ext.IDFT", "Cast", "DFT", "Identity"))
def idft(ctx: Context, layer) -> None:
    if _runtime(ctx, "IDFT"):
        return
    _complex(ctx, layer, inverse=True)


@translator("RDFT", since=9, emits=("onnx_ext.RDFT", "Cast", "DFT", "Identity", "Unsqueeze"))
def rdft(ctx: Context, layer) -> None:
    if _runtime(ctx, "RDFT"):
        return
    data = ctx.input(0)
    if data.rank is None or data.rank < 1:
        raise ctx.error(f"needs real data of known rank, got shape {data.shape}")
    axes, sizes = _axes_and_sizes(ctx, data, data.rank)
    x, et, ct = _compute(ctx, data)
    x = ctx.one("Unsqueeze", [x, ctx.i64([-1])])
    x = _dft(ctx, x, axes[-1], sizes[-1], onesided=True)
    for axis, size in zip(axes[:-1], sizes[:-1]):
        x = _dft(ctx, x, axis, size)
    ctx.cast(x, ct, et, ctx.out(0))


@translator("IRDFT", since=9, emits=("onnx_ext.IRDFT", "Cast", "Concat", "DFT", "Identity", "Mul", "Pad", "Slice", "Squeeze"))
def irdft(ctx: Context, layer) -> None:
    if _runtime(ctx, "IRDFT"):
        return
    data = ctx.input(0)
    if data.rank is None or data.rank < 2 or data.shape[-1] not in (2, None):
        raise ctx.error(f"needs complex data [..., 2] of known rank, got shape {data.shape}")
    axes, sizes = _axes_and_sizes(ctx, data, data.rank - 1)
    x, et, ct = _compute(ctx, data)
    for axis, size in zip(axes[:-1], sizes[:-1]):
        x = _dft(ctx, x, axis, size, inverse=True)
    last = axes[-1]
    bins = data.shape[last]
    n = sizes[-1]
    if n is None:
        if bins is None:
            raise ctx.error("IRDFT without a signal size needs a static number of bins on the last axis")
        n = 2 * (bins - 1)
    ctx.cast(real_inverse(ctx, x, last, data.rank, bins, n, ct), ct, et, ctx.out(0))


def real_inverse(ctx: Context, x: str, axis: int, rank: int, bins: int | None, n: int, ct: ElementType) -> str:
    """The real signal of ``n`` points whose one-sided spectrum is ``x`` (complex [..., 2] of
    rank ``rank``, ``bins`` bins along ``axis``): the spectrum extended by Hermitian symmetry,
    transformed back, the real part kept."""
    half = n // 2 + 1
    ax = ctx.i64([axis])
    if bins is None or bins >= half:
        x = ctx.one("Slice", [x, ctx.i64([0]), ctx.i64([half]), ax])
    else:  # fewer bins than n needs: the missing ones are zeros
        pads = [0] * (2 * rank)
        pads[rank + axis] = half - bins
        x = ctx.one("Pad", [x, ctx.i64(pads)])
    # bins n // 2 + 1 .. n - 1 are conj(X[n - k]): X[(n - 1) // 2 .. 1] reversed, imaginary parts negated
    mirror = ctx.one("Slice", [x, ctx.i64([(n - 1) // 2]), ctx.i64([0]), ax, ctx.i64([-1])])
    mirror = ctx.one("Mul", [mirror, ctx.const(np.asarray([1, -1], dtype=ct.numpy))])
    full = ctx.one("Concat", [x, mirror], axis=axis)
    back = _dft(ctx, full, axis, None, inverse=True)
    real = ctx.one("Slice", [back, ctx.i64([0]), ctx.i64([1]), ctx.i64([-1])])
    return ctx.one("Squeeze", [real, ctx.i64([-1])])


@translator("STFT", since=15, emits=("Cast", "Identity", "Pad", "Reshape", "Squeeze", "STFT", "Transpose", "Unsqueeze"))
def stft(ctx: Context, layer) -> None:
    """STFT-15 -> ONNX STFT (one-sided): the signal gets a batch axis when it has none and a
    trailing real axis; a window shorter than the frame is zero-padded to it, centred;
    ``transpose_frames`` puts the frames after the frequencies."""
    data, window = ctx.input(0), ctx.input(1)
    if data.rank not in (1, 2):
        raise ctx.error(f"needs a signal of rank 1 or 2, got shape {data.shape}")
    frame = const_ints(ctx, ctx.input(2), "the frame_size")[0]
    # ONNX's STFT takes a scalar frame_step; a constant one is written as the scalar itself (OpenVINO's
    # ONNX frontend needs a constant there and does not fold a Reshape of one)
    step_in = ctx.input(3)
    step = ctx.i64(int(np.asarray(step_in.const).reshape(-1)[0])) if step_in.const is not None and \
        np.size(step_in.const) == 1 else ctx.one("Reshape", [ctx.as_i64(step_in), ctx.i64([])])
    x, et, ct = _compute(ctx, data)
    x = ctx.one("Unsqueeze", [x, ctx.i64([0, 2] if data.rank == 1 else [2])])
    w = ctx.cast(window.name, window.type, ct)
    size = window.shape[0] if window.shape else None
    if size is None:
        raise ctx.error("STFT needs a window of static length")
    if size != frame:
        left = (frame - size) // 2
        w = ctx.one("Pad", [w, ctx.i64([left, frame - size - left])])
    out = ctx.one("STFT", [x, step, w, ctx.i64(frame)], onesided=1)
    if attr.boolean(layer, "transpose_frames", False):
        out = ctx.one("Transpose", [out], perm=[0, 2, 1, 3])
    if data.rank == 1:
        out = ctx.one("Squeeze", [out, ctx.i64([0])])
    ctx.cast(out, ct, et, ctx.out(0))
