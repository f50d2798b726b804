"""MaxPool-1/8/14 and AvgPool-1/14/16 as ONNX MaxPool and AveragePool.

Semantics notes, checked against OpenVINO's CPU plugin (tests/test_ir_nn_handlers.py); padding
and ``auto_pad`` as for convolutions (``nn.padding``):

- Pooling ``rounding_type``: ``floor`` is ONNX's default; ``ceil`` and
  ``ceil_torch`` become floor mode over a little more end padding (``_window_pads``):
  with ``exclude-pad`` false OpenVINO divides by the whole kernel size even where
  the window reaches past the end padding, which ONNX's ``ceil_mode`` does not. Without
  any padding OpenVINO averages over the cells in the data whatever ``exclude-pad`` says
  (its reference's pads_in_avg).
- OpenVINO's ``ceil`` keeps a window that starts in the end padding (wholly in the padding:
  NaN for an exclude-pad average, the type's lowest value for MaxPool), ``ceil_torch`` drops it.
- onnxruntime refuses pads as large as the kernel, and SAME_* auto_pad with dilations:
  MaxPool's input is padded first with the type's lowest value and the pooling pads nothing;
  AvgPool's SAME_* pads 0 at run time and divides an exclude-pad average by the average of a
  padded mask of ones; AvgPool's pads as large as the kernel make it a Conv (``_avg_pool_as_conv``).
- MaxPool-8/14's indices count from ``axis`` (0: the whole tensor, as ONNX's
  Indices output; 2: within one channel, as PyTorch), so ONNX's are taken
  modulo the size of the dims from ``axis`` on; over an input padded first, they are
  recounted over the unpadded dims.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..kernels import compute_type
from ..registry import op_version, translator
from .nn import AUTO_PAD, RUN_TIME_PADS, consumed, pad_at_run_time, padding, spatial_rank

_I64 = from_ov("i64")


def _pool_common(ctx: Context, layer, data: Value, dilated: bool):
    n = spatial_rank(ctx, data)
    kernel = attr.integers(ctx, layer, "kernel", count=n)
    strides = attr.integers(ctx, layer, "strides", count=n)  # absent or empty: OpenVINO refuses a pooling's
    dilations = attr.integers(ctx, layer, "dilations", [1] * n, count=n) if dilated else [1] * n
    attrs = padding(ctx, layer, data, kernel, strides, dilations)
    rounding = attr.choice(ctx, layer, "rounding_type", ("floor", "ceil", "ceil_torch"), "floor")
    if attr.choice(ctx, layer, "auto_pad", AUTO_PAD, "explicit") in ("same_upper", "same_lower"):
        rounding = "floor"  # same_*: ceil(in / stride) windows, whatever rounding_type says
    return n, kernel, strides, dilations, attrs, rounding


def _window_pads(ctx: Context, data: Value, attrs: dict, kernel: list[int], strides: list[int],
                 dilations: list[int], rounding: str) -> None:
    """Ceil rounding as floor rounding over more end padding (see the module doc): with static
    spatial dims exactly the end padding that gives OpenVINO's window count, else ``_ceil_pads``."""
    if rounding == "floor" or "pads" not in attrs:
        return
    spatial = data.shape[2:]
    if any(d is None for d in spatial):
        _ceil_pads(ctx, attrs, kernel, strides, dilations, rounding)
        return
    n = len(kernel)
    begin, end = attrs["pads"][:n], list(attrs["pads"][n:])
    for i, (size, k, s, d) in enumerate(zip(spatial, kernel, strides, dilations)):
        reach, total = (k - 1) * d + 1, size + begin[i] + end[i]
        count = -(-(total - reach) // s) + 1
        if rounding == "ceil_torch" and (count - 1) * s >= size + begin[i]:
            count -= 1  # the last window starts in the end padding: PyTorch drops it, OpenVINO's ceil keeps it
        # floor((total + x - reach) / s) + 1 = count for x in [short, short + s - 1]: the end padding
        # grows for ceil's extra window, or shrinks where PyTorch drops one that floor would keep
        short = (count - 1) * s + reach - total
        end[i] = max(end[i] + short, 0) if end[i] + short + s - 1 >= 0 else -1
        if end[i] < 0:
            raise ctx.error(f"the window count of spatial dim {i} needs the data cropped, which ONNX pooling "
                            "cannot express")
    attrs["pads"] = begin + end


def _ceil_pads(ctx: Context, attrs: dict, kernel: list[int], strides: list[int], dilations: list[int],
               rounding: str) -> None:
    """Dynamic spatial dims: ``s - 1`` more end padding gives ceil's count (floor((L + s - 1) / s) =
    ceil(L / s)); ``ceil_torch`` keeps only the windows that start before the end padding, so no more
    than ``reach - 1`` end padding in all. ONNX's own ``ceil_mode`` cannot be used instead: its average
    clips the window to the padding, where OpenVINO divides by the whole kernel size."""
    n = len(kernel)
    begin, end = attrs["pads"][:n], attrs["pads"][n:]
    reach = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    more = [e + s - 1 for e, s in zip(end, strides)]
    attrs["pads"] = begin + (more if rounding == "ceil" else [min(m, r - 1) for m, r in zip(more, reach)])


def _pad_first(ctx: Context, x: str, attrs: dict, kernel: list[int],
               value: str | None) -> tuple[str, dict, str | None]:
    """onnxruntime's pooling refuses a pad as large as the (undilated) kernel: then ``x`` is padded
    first (with ``value``, else 0) and the pooling gets none. Returns ``x``, the attributes and the
    begin pads applied here (None: none)."""
    pads = attrs.get("pads", [])
    if all(p < k for p, k in zip(pads, kernel + kernel)):
        return x, attrs, None
    n = len(kernel)
    padded = ctx.one("Pad", [x, ctx.i64([0, 0] + pads[:n] + [0, 0] + pads[n:])] + ([value] if value else []),
                     mode="constant")
    return padded, {**attrs, "pads": [0] * (2 * n)}, ctx.i64(pads[:n])


def _pad_before_pooling(ctx: Context, x: str, attrs: dict, kernel: list[int], strides: list[int],
                        dilations: list[int], value: str | None) -> tuple[str, dict, str | None]:
    """The pooling's input and attributes: padded here where onnxruntime's pooling cannot pad
    (dilated auto_pad at run time, pads as large as the kernel). onnxruntime's MaxPool with SAME_*
    on dynamic dims picks other cells than OpenVINO (kernel [2, 3], stride 1: up to 2.9 off on
    normal data) where its AveragePool and Conv agree: MaxPool is always padded here."""
    x, attrs, begin = pad_at_run_time(ctx, x, attrs, kernel, strides, dilations, value, always=value is not None)
    if begin is not None:
        return x, attrs, begin
    return _pad_first(ctx, x, attrs, kernel, value)


@translator("MaxPool", since=1, emits=("Add", "Cast", "Concat", "Div", "Gather", "Greater", "Identity", "Less", "MaxPool", "Mod",
                                       "Mul", "Not", "Or", "ReduceProd", "Shape", "Sub", "Where", *RUN_TIME_PADS))
def max_pool(ctx: Context, layer) -> None:
    version = op_version(layer)
    data = ctx.input(0)
    n, kernel, strides, dilations, attrs, rounding = _pool_common(ctx, layer, data, dilated=version >= 8)
    _window_pads(ctx, data, attrs, kernel, strides, dilations, rounding)
    if version >= 8:
        attrs["dilations"] = dilations
    want_indices = version >= 8 and len(layer.outputs) > 1 and consumed(ctx, 1)
    et = data.type
    ct = compute_type("MaxPool", et, "select")  # i16 -> f32, i32 -> f64: the values as they are
    if ct is None:
        raise ctx.error(f"onnxruntime has no MaxPool kernel for {et.ov} and no lossless widening applies")
    x, attrs, begin = _pad_before_pooling(ctx, ctx.cast(data.name, et, ct), attrs, kernel, strides, dilations,
                                          _lowest(ctx, ct))
    outs = [ctx.out(0) if ct == et else ctx.tmp("MaxPool")]
    if want_indices:
        outs.append(ctx.tmp("indices"))
    ctx.node("MaxPool", [x], outs, kernel_shape=kernel, strides=strides, **attrs)
    if ct != et:
        ctx.cast(outs[0], ct, et, ctx.out(0))
    if not want_indices:
        return
    axis = attr.integer(ctx, layer, "axis", 0)
    idx_type = attr.element(ctx, layer, "index_element_type", "i64") or _I64
    if axis < 0:
        axis += data.rank
    idx = outs[1] if begin is None else _unpadded_indices(ctx, outs[1], x, data, begin)
    idx = _no_max_first_cell(ctx, idx, outs[0], ct, et, data)
    if axis > 0:  # ONNX counts over the whole tensor: keep the position within dims axis..
        per = ctx.one("ReduceProd", [ctx.one("Shape", [data.name], start=axis)], keepdims=1)
        idx = ctx.one("Mod", [idx, per])
    ctx.cast(idx, _I64, idx_type, ctx.out(1))


def _no_max_first_cell(ctx: Context, idx: str, values: str, ct, et, data: Value) -> str:
    """OpenVINO takes a cell only when it exceeds the type's lowest value (its running max starts there,
    its index at the plane's first cell): a window of nothing above it (zeros of unsigned data, -inf)
    gives the plane's first cell, in its reference and its CPU plugin alike."""
    info = ml_dtypes.finfo(et.numpy) if et.is_float else np.iinfo(et.numpy)
    above = ctx.emit("Greater", [values, ctx.const(np.array(info.min, ct.numpy), hint="lowest")], ct,
                     result_type=from_ov("boolean"))
    plane = ctx.one("ReduceProd", [ctx.one("Shape", [data.name], start=2)], keepdims=1)
    return ctx.one("Where", [above, idx, ctx.one("Sub", [idx, ctx.one("Mod", [idx, plane])])])


def _unpadded_indices(ctx: Context, idx: str, padded: str, data: Value, begin: str) -> str:
    """Flat indices into ``padded`` as flat indices into ``data`` (OpenVINO's count the unpadded
    input): each coordinate less its begin pad, recounted over the data's dims."""
    rank = data.rank
    padded_dims = ctx.one("Shape", [padded])
    dims = ctx.one("Shape", [data.name])
    shift = ctx.one("Concat", [ctx.i64([0, 0]), begin], axis=0)
    coords, rest = [], idx
    for axis in reversed(range(rank)):  # the coordinates, last axis first
        size = ctx.one("Gather", [padded_dims, ctx.i64(axis)], axis=0)
        begin_pad = ctx.one("Gather", [shift, ctx.i64(axis)], axis=0)
        coords.append(ctx.one("Sub", [ctx.one("Mod", [rest, size]), begin_pad]))
        rest = ctx.one("Div", [rest, size])
    coords.reverse()
    sizes = [ctx.one("Gather", [dims, ctx.i64(axis)], axis=0) for axis in range(rank)]
    outside = None
    for coord, dim in zip(coords[2:], sizes[2:]):
        out = ctx.one("Or", [ctx.one("Less", [coord, ctx.i64(0)]), ctx.one("Not", [ctx.one("Less", [coord, dim])])])
        outside = out if outside is None else ctx.one("Or", [outside, out])
    # a window wholly in the padding: the plane's first cell, as OpenVINO's CPU plugin gives it
    coords[2:] = [ctx.one("Where", [outside, ctx.i64(0), coord]) for coord in coords[2:]]
    flat = coords[0]
    for coord, dim in zip(coords[1:], sizes[1:]):
        flat = ctx.one("Add", [ctx.one("Mul", [flat, dim]), coord])
    return flat


@translator("AvgPool", since=1, emits=("AveragePool", "Concat", "Conv", "Div", "Expand", "Reshape", "Shape", *RUN_TIME_PADS))
def avg_pool(ctx: Context, layer) -> None:
    """AvgPool-1/14, and 16 with ``dilations`` (ONNX AveragePool has them since opset 19)."""
    dilated = op_version(layer) >= 16
    data = ctx.input(0)
    n, kernel, strides, dilations, attrs, rounding = _pool_common(ctx, layer, data, dilated=dilated)
    # OpenVINO counts the padding only when there is some (pads_in_avg in its reference)
    exclude = attr.boolean(layer, "exclude-pad", True) or not any(attrs.get("pads", [1]))
    _window_pads(ctx, data, attrs, kernel, strides, dilations, rounding)
    pool = {"kernel_shape": kernel, "strides": strides, **({"dilations": dilations} if dilated else {})}
    if any(p >= k for p, k in zip(attrs.get("pads", []), kernel + kernel)):
        _avg_pool_as_conv(ctx, data, attrs["pads"], kernel, strides, dilations, exclude)
        return
    x, pads, begin = pad_at_run_time(ctx, data.name, attrs, kernel, strides, dilations)
    if begin is None:
        ctx.emit("AveragePool", [x], data.type, ctx.out(0), count_include_pad=int(not exclude), **pool, **pads)
        return
    # padded here: the padding counted, and for exclude-pad divided by the share of real cells
    total = ctx.emit("AveragePool", [x], data.type, None if exclude else ctx.out(0), count_include_pad=1, **pool,
                     **pads)
    if exclude:
        mask, _, _ = pad_at_run_time(ctx, _ones_like(ctx, data), attrs, kernel, strides, dilations)
        share = ctx.emit("AveragePool", [mask], data.type, count_include_pad=1, **pool, **pads)
        ctx.emit("Div", [total, share], data.type, ctx.out(0))


def _ones_like(ctx: Context, data: Value, channels: bool = True) -> str:
    """Ones of the data's shape (``channels`` false: [1, 1, spatial...])."""
    shape = ctx.one("Shape", [data.name])
    if not channels:
        shape = ctx.one("Concat", [ctx.i64([1, 1]), ctx.one("Shape", [data.name], start=2)], axis=0)
    return ctx.one("Expand", [ctx.const(np.ones((), data.type.numpy)), shape])


def _avg_pool_as_conv(ctx: Context, data: Value, pads: list[int], kernel: list[int], strides: list[int],
                      dilations: list[int], exclude: bool) -> None:
    """Pads as large as the kernel, which onnxruntime's AveragePool refuses (and its PadFusion rewrites a
    Pad + AveragePool into): a Conv by 1/kernel size over each channel as its own image ([N * C, 1,
    spatial...], any channel count), which takes any pads; exclude-pad divides by the same Conv of ones
    (the share of real cells)."""
    et = data.type
    conv = {"kernel_shape": kernel, "strides": strides, "dilations": dilations, "pads": pads}
    average = ctx.const(np.full([1, 1] + kernel, 1.0 / float(np.prod(kernel)), et.numpy), hint="average")
    planes = ctx.one("Reshape", [data.name, ctx.one("Concat", [ctx.i64([-1, 1]), ctx.one("Shape", [data.name],
                                                                                          start=2)], axis=0)])
    total = ctx.emit("Conv", [planes, average], et, **conv)
    if exclude:
        share = ctx.emit("Conv", [_ones_like(ctx, data, channels=False), average], et, **conv)
        total = ctx.emit("Div", [total, share], et)
    shape = ctx.one("Concat", [ctx.one("Shape", [data.name], end=2), ctx.one("Shape", [total], start=2)], axis=0)
    ctx.one("Reshape", [total, shape], ctx.out(0))


def _lowest(ctx: Context, et) -> str:
    """The pad value: the type's lowest finite value, which OpenVINO's CPU plugin gives a window wholly
    in the padding (its reference crashes there)."""
    info = np.finfo(et.numpy) if et.is_float else np.iinfo(et.numpy)
    return ctx.const(np.array(info.min, et.numpy), hint="lowest")
