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
(explicit) ``pads_begin`` as written and the rest at the end (valid: none first, the output still
``output_shape``, as OpenVINO's CPU plugin); an output shape beyond the full
output leaves zeros at the end (same_* then pad nothing first, as OpenVINO's CPU plugin). Without one,
same_upper/same_lower pad nothing (OpenVINO's shape inference and CPU plugin) and
``valid`` is no padding.

Filters of dims known at run time only, an ``output_shape`` computed at run time or data of dynamic spatial
dims with an ``output_shape``: ConvTranspose's pads are attributes, so it runs unpadded (reading the kernel
off W) and the window [begin, begin + output_shape) of its full output is cut out by one Pad whose begin
pads are the negated begin (onnxruntime's Pad crops where pads are negative) and whose end pads give the
zeros past the full output; begin is the formula above on the dims at run time.
"""

from __future__ import annotations

from .. import attributes as attr
from ..context import Context, Value
from ..registry import translator
from .nn import AUTO_PAD, FOLDED_FILTERS, conv_filters, conv_window, explicit_pads
from .shape import const_ints


def _pads(ctx: Context, layer, data: Value, kernel: list[int], strides: list[int], dilations: list[int],
          output_padding: list[int]) -> list[int]:
    n = len(kernel)
    mode = attr.choice(ctx, layer, "auto_pad", AUTO_PAD, "explicit")
    out_shape = None
    if ctx.n_inputs() > 2:
        out_shape = const_ints(ctx, ctx.input(2), "the output_shape input")
        if len(out_shape) != n:
            raise ctx.error(f"output_shape {out_shape} has {len(out_shape)} entries, the layer has {n} spatial dims")
    elif mode == "explicit":
        return explicit_pads(ctx, layer, n)
    else:  # valid, or same_* without an output shape: OpenVINO pads nothing
        return [0] * (2 * n)
    spatial = data.shape[2:]  # static: _conv_transpose sends the other cases to _window_at_run_time
    given_begin = explicit_pads(ctx, layer, n)[:n] if mode == "explicit" else [0] * n
    begin, end = [], []
    for i, (size, k, s, d, op, out) in enumerate(zip(spatial, kernel, strides, dilations, output_padding, out_shape)):
        total = s * (size - 1) + (k - 1) * d + 1 + op - out
        small, big = max(total, 0) // 2, max(total, 0) - max(total, 0) // 2
        if mode == "same_upper":  # the mirror image of a convolution's: the odd one first
            b = big
        elif mode == "same_lower":
            b = small
        else:  # explicit: pads_begin as written (valid: none), the rest at the end
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
    output_padding = attr.integers(ctx, layer, "output_padding", [0] * n, count=n)
    mode = attr.choice(ctx, layer, "auto_pad", AUTO_PAD, "explicit")
    if ctx.n_inputs() > 2 and not (static and ctx.input(2).const is not None
                                   and all(d is not None for d in data.shape[2:])):  # pads known at run time
        _window_at_run_time(ctx, layer, data, filters, strides, dilations, output_padding, mode, group)
        return
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


def _window_at_run_time(ctx: Context, layer, data: Value, filters: str, strides: list[int], dilations: list[int],
                        output_padding: list[int], mode: str, group: int | None) -> None:
    """An ``output_shape`` whose pads are known at run time only: the unpadded ConvTranspose, then one Pad
    of pads [-begin, output_shape + begin - full] (negative: a crop) over the spatial dims."""
    n = len(strides)
    shape = ctx.input(2)
    if shape.rank not in (None, 1) or (shape.shape and shape.shape[0] not in (None, n)):
        raise ctx.error(f"output_shape of shape {shape.shape} must be [{n}], one entry per spatial dim")
    out = ctx.as_i64(shape, flat=True)
    full = ctx.emit("ConvTranspose", [data.name, filters], data.type, strides=strides, dilations=dilations,
                    pads=[0] * (2 * n), group=group)
    size = ctx.one("Shape", [full], start=2)  # stride * (in - 1) + (k - 1) * dilation + 1
    total = ctx.one("Sub", [ctx.one("Add", [size, ctx.i64(output_padding)]), out])
    if mode in ("explicit", "valid"):
        begin = ctx.i64(explicit_pads(ctx, layer, n)[:n] if mode == "explicit" else [0] * n)
    else:  # same_*: split max(total, 0), the odd one first for same_upper (mirroring a convolution's)
        split = ctx.one("Max", [total, ctx.i64(0)])
        half = ctx.one("Div", [split, ctx.i64(2)])
        begin = ctx.one("Sub", [split, half]) if mode == "same_upper" else half
    end = ctx.one("Sub", [ctx.one("Add", [out, begin]), size])
    pads = ctx.one("Concat", [ctx.i64([0, 0]), ctx.one("Neg", [begin]), ctx.i64([0, 0]), end], axis=0)
    ctx.emit("Pad", [full], data.type, ctx.out(0), extra=[pads], mode="constant")


#: What _window_at_run_time may emit (the output_shape cast and flattened by as_i64).
_WINDOW_AT_RUN_TIME = ("Add", "Cast", "Concat", "ConvTranspose", "Div", "Max", "Neg", "Pad", "Reshape", "Shape",
                       "Sub")


@translator("ConvolutionBackpropData", since=1, emits=("ConvTranspose", "Pad", *_WINDOW_AT_RUN_TIME))
def convolution_backprop_data(ctx: Context, layer) -> None:
    _conv_transpose(ctx, layer, *conv_filters(ctx, "C_IN, C_OUT"))


@translator("GroupConvolutionBackpropData", since=1,
            emits=("ConvTranspose", "Pad", *FOLDED_FILTERS, *_WINDOW_AT_RUN_TIME))
def group_convolution_backprop_data(ctx: Context, layer) -> None:
    _conv_transpose(ctx, layer, *conv_filters(ctx, "C_IN, C_OUT", grouped_op="GroupConvolutionBackpropData"))
