"""DeformableConvolution-1 and -8 -> ONNX DeformConv (opset 19), as OpenVINO's reference
computes them (deformable_convolution.hpp). The layouts agree: offsets [N, DG * kh * kw * 2,
Ho, Wo] (y then x per kernel cell), mask [N, DG * kh * kw, Ho, Wo], filters
[O, C / group, kh, kw].

ONNX's sampling is OpenVINO's ``bilinear_interpolation_pad`` true: a point within one pixel
outside the data is interpolated with zeros. With it false (DeformableConvolution-1, and
-8's default) a point outside [0, H) x [0, W) adds nothing and one in (H - 1, H) takes
row H - 1 (x alike): the mask is zeroed for the first and the offset moved onto the last
row or column for the second, from the sampling grid y = ho * stride - pad + i * dilation.
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import ElementType, from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..kernels import compute_type
from ..registry import op_version, translator
from .nn import conv_window, padding

_I64 = from_ov("i64")
_BOOL = from_ov("boolean")


def _grid(ctx: Context, out_dims: str, axis: int, k: int, stride: int, dilation: int, pad: int, ct: ElementType,
          shape: list[int]) -> str:
    """The sampling grid along one axis, [k, out] as ``shape`` for the [N, DG, kh, kw, 2, Ho, Wo] offsets."""
    n = ctx.one("Squeeze", [ctx.one("Slice", [out_dims, ctx.i64([axis]), ctx.i64([axis + 1])])])
    starts = ctx.one("Sub", [ctx.one("Mul", [ctx.one("Range", [ctx.i64(0), n, ctx.i64(1)]), ctx.i64(stride)]),
                             ctx.i64(pad)])
    cells = ctx.i64((np.arange(k) * dilation).reshape(k, 1))
    return ctx.one("Reshape", [ctx.cast(ctx.one("Add", [cells, starts]), _I64, ct), ctx.i64(shape)])


def _inside_sampling(ctx: Context, x: str, offsets: str, mask: str | None, kernel: list[int], strides: list[int],
                     dilations: list[int], pads_begin: list[int], groups: int, ct: ElementType) -> tuple[str, str]:
    """Offsets and mask for DeformConv that sample as the reference without padding does."""
    off_shape = ctx.one("Shape", [offsets])
    out_dims = ctx.one("Slice", [off_shape, ctx.i64([2]), ctx.i64([4])])
    split = ctx.one("Concat", [ctx.i64([0, groups, kernel[0], kernel[1], 2]), out_dims], axis=0)
    off = ctx.one("Reshape", [offsets, split])  # [N, DG, kh, kw, 2, Ho, Wo]
    size = ctx.cast(ctx.one("Shape", [x], start=2), _I64, ct)  # H, W
    moved, inside = [], None
    for a, shape in ((0, [1, 1, kernel[0], 1, -1, 1]), (1, [1, 1, 1, kernel[1], 1, -1])):
        base = _grid(ctx, out_dims, a, kernel[a], strides[a], dilations[a], pads_begin[a], ct, shape)
        o = ctx.one("Gather", [off, ctx.i64(a)], axis=4)
        pos = ctx.one("Add", [base, o])
        dim = ctx.one("Gather", [size, ctx.i64(a)])
        last = ctx.one("Sub", [dim, ctx.const(np.ones((), ct.numpy))])
        ok = ctx.one("And", [ctx.one("GreaterOrEqual", [pos, ctx.const(np.zeros((), ct.numpy))]),
                             ctx.one("Less", [pos, dim])])
        inside = ok if inside is None else ctx.one("And", [inside, ok])
        moved.append(ctx.one("Unsqueeze", [ctx.one("Where", [ctx.one("Greater", [pos, last]),
                                                             ctx.one("Sub", [last, base]), o]), ctx.i64([4])]))
    offsets = ctx.one("Reshape", [ctx.one("Concat", moved, axis=4), off_shape])
    if mask is None:
        weights = ctx.cast(inside, _BOOL, ct)
    else:  # inside: [N, DG, kh, kw, Ho, Wo]
        cells = ctx.one("Reshape", [mask, ctx.one("Concat", [ctx.i64([0, groups, *kernel]), out_dims], axis=0)])
        weights = ctx.one("Where", [inside, cells, ctx.const(np.zeros((), ct.numpy))])
    # (-1 on the batch: onnxruntime cannot resolve a -1 beside a copied batch of 0 and refuses the model)
    cells = ctx.i64([-1, groups * kernel[0] * kernel[1]])
    return offsets, ctx.one("Reshape", [weights, ctx.one("Concat", [cells, out_dims], axis=0)])


def _deformable(ctx: Context, layer, mask: Value | None, pad_sampling: bool) -> None:
    data, offsets, filters = ctx.input(0), ctx.input(1), ctx.input(2)
    if data.rank != 4 or filters.rank != 4 or any(k is None for k in filters.shape[2:]):
        raise ctx.error(f"needs 4-D data and filters of static spatial size, got shapes {data.shape} and "
                        f"{filters.shape}")
    kernel = list(filters.shape[2:])
    _, strides, dilations = conv_window(ctx, layer, kernel)
    pads = padding(ctx, layer, data, kernel, strides, dilations)
    if "pads" not in pads:
        raise ctx.error(f"auto_pad {pads['auto_pad'].lower()} needs static spatial dims, got shape {data.shape}")
    groups = attr.integer(ctx, layer, "deformable_group")  # absent: 0, which OpenVINO refuses
    et = data.type
    ct = compute_type("DeformConv", et)
    if ct is None:
        raise ctx.error(f"onnxruntime has no DeformConv kernel for {et.ov} and no lossless widening applies")
    x, off, w = (ctx.cast(v.name, v.type, ct) for v in (data, offsets, filters))
    m = None if mask is None else ctx.cast(mask.name, mask.type, ct)
    if not pad_sampling:
        off, m = _inside_sampling(ctx, x, off, m, kernel, strides, dilations, pads["pads"][:2], groups, ct)
    out = ctx.one("DeformConv", [x, w, off, "", m or ""], kernel_shape=kernel, strides=strides, dilations=dilations,
                  pads=pads["pads"], group=attr.integer(ctx, layer, "group"), offset_group=groups)
    ctx.cast(out, ct, et, ctx.out(0))


@translator("DeformableConvolution", since=1,
            emits=("Add", "And", "Cast", "Concat", "DeformConv", "Gather", "Greater", "GreaterOrEqual", "Identity",
                   "Less", "Mul", "Range", "Reshape", "Shape", "Slice", "Squeeze", "Sub", "Unsqueeze", "Where"))
def deformable_convolution(ctx: Context, layer) -> None:
    """DeformableConvolution-1, and -8 with an optional mask and bilinear_interpolation_pad."""
    v8 = op_version(layer) >= 8
    mask = ctx.input(3) if v8 and ctx.n_inputs() > 3 else None
    _deformable(ctx, layer, mask, pad_sampling=v8 and attr.boolean(layer, "bilinear_interpolation_pad", False))
