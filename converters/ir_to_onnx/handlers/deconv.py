"""Transposed convolutions: ConvolutionBackpropData-1 and GroupConvolutionBackpropData-1
-> ONNX ConvTranspose.

The filters are laid out alike ([C_IN, C_OUT, spatial...]; grouped: [GROUPS, C_IN/G,
C_OUT/G, spatial...] folded into [C_IN, C_OUT/G, ...]). ONNX's ``pads`` and
``output_padding`` are OpenVINO's ``pads_begin``/``pads_end`` and ``output_padding``, the
latter written as less end padding (and zeros padded after, where it is larger): onnxruntime
refuses ``output_padding`` >= stride, and with dilations its output shape check fails.
With an ``output_shape`` input OpenVINO derives the pads from static spatial dims:
total = stride * (in - 1) + (k - 1) * dilation + 1 + output_padding - out, split
evenly with the odd one at the beginning (same_upper: the mirror image of a
convolution's) or the end (same_lower), or
(explicit) ``pads_begin`` as written and the rest at the end; an output shape beyond the full
output leaves zeros at the end (same_* then pad nothing first, as OpenVINO's CPU plugin). Without one,
same_upper/same_lower pad nothing (OpenVINO's shape inference and CPU plugin) and
``valid`` is no padding.

Filters of dims known at run time only: ConvTranspose reads the kernel off W, which does for every form
whose pads do not depend on the kernel size; with an ``output_shape`` they do, and ConvTranspose's pads
are attributes: refused.
"""

from __future__ import annotations

from .. import attributes as attr
from ..context import Context, Value
from ..registry import translator
from .nn import AUTO_PAD, conv_filters, conv_window, explicit_pads
from .shape import const_ints


def _pads(ctx: Context, layer, data: Value, kernel: list[int], strides: list[int], dilations: list[int],
          output_padding: list[int]) -> list[int]:
    n = len(kernel)
    mode = attr.choice(ctx, layer, "auto_pad", AUTO_PAD, "explicit")
    if mode == "valid":
        return [0] * (2 * n)
    out_shape = None
    if ctx.n_inputs() > 2:
        out_shape = const_ints(ctx, ctx.input(2), "the output_shape input")
        if len(out_shape) != n:
            raise ctx.error(f"output_shape {out_shape} has {len(out_shape)} entries, the layer has {n} spatial dims")
    elif mode == "explicit":
        return explicit_pads(ctx, layer, n)
    else:  # same_* without an output shape: OpenVINO pads nothing
        return [0] * (2 * n)
    spatial = data.shape[2:]
    if any(d is None for d in spatial):
        raise ctx.error(f"needs static spatial dims to place the padding for output_shape, got {data.shape}")
    given_begin = explicit_pads(ctx, layer, n)[:n]
    begin, end = [], []
    for i, (size, k, s, d, op, out) in enumerate(zip(spatial, kernel, strides, dilations, output_padding, out_shape)):
        total = s * (size - 1) + (k - 1) * d + 1 + op - out
        small, big = max(total, 0) // 2, max(total, 0) - max(total, 0) // 2
        if mode == "same_upper":  # the mirror image of a convolution's: the odd one first
            b = big
        elif mode == "same_lower":
            b = small
        else:  # explicit: pads_begin as written, the rest at the end
            b = given_begin[i]
        begin.append(b)
        end.append(total - b)
    # an output shape larger than the full output: the end padding negative, zeros there (same_* split no
    # negative padding: OpenVINO's CPU plugin puts all of it at the end); explicit may crop the beginning
    return begin + end


def _conv_transpose(ctx: Context, layer, filters: str, kernel: list, group: int | None) -> None:
    data, strides, dilations = conv_window(ctx, layer, kernel, unknown=True)
    n = len(kernel)
    static = all(k is not None for k in kernel)
    if not static and ctx.n_inputs() > 2:  # the pads would need the kernel size, ConvTranspose takes them static
        raise ctx.error(f"an output_shape input needs a static kernel (ConvTranspose's pads are attributes), "
                        f"got {kernel}")
    output_padding = attr.integers(ctx, layer, "output_padding", [0] * n, count=n)
    pads = _pads(ctx, layer, data, kernel, strides, dilations, output_padding)
    # onnxruntime refuses output_padding >= stride, and with dilations its shape check fails: the output
    # padding is taken from the end padding instead, and where it is larger, zeros are padded after (so too
    # where the end padding is negative: an output_shape beyond the full output)
    begin, end = pads[:n], pads[n:]
    more = [max(o - e, 0) for o, e in zip(output_padding, end)]
    y = ctx.emit("ConvTranspose", [data.name, filters], data.type, None if any(more) else ctx.out(0),
                 **({"kernel_shape": kernel} if static else {}), strides=strides, dilations=dilations,
                 pads=begin + [max(e - o, 0) for o, e in zip(output_padding, end)], group=group)
    if any(more):  # (the pads as they are, not cast with the data where it computes in a wider type)
        ctx.emit("Pad", [y], data.type, ctx.out(0), extra=[ctx.i64([0] * (n + 2) + [0, 0] + more)], mode="constant")


@translator("ConvolutionBackpropData", since=1, emits=("ConvTranspose", "Pad"))
def convolution_backprop_data(ctx: Context, layer) -> None:
    _conv_transpose(ctx, layer, *conv_filters(ctx, "C_IN, C_OUT"))


@translator("GroupConvolutionBackpropData", since=1, emits=("Concat", "ConvTranspose", "Pad", "Reshape", "Shape"))
def group_convolution_backprop_data(ctx: Context, layer) -> None:
    _conv_transpose(ctx, layer, *conv_filters(ctx, "C_IN, C_OUT", grouped_op="GroupConvolutionBackpropData"))
