"""MaxPool-1/8/14 and AvgPool-1/14/16 as ONNX MaxPool and AveragePool.

Semantics notes, checked against OpenVINO's CPU plugin (tests/test_ir_nn_handlers.py); padding
and ``auto_pad`` as for convolutions (``nn.padding``):

- Pooling ``rounding_type``: ``floor`` is ONNX's default; ``ceil`` and
  ``ceil_torch`` become floor mode over a little more end padding (``_ceil_pads``):
  with ``exclude-pad`` false OpenVINO divides by the whole kernel size even where
  the window reaches past the end padding, which ONNX's ``ceil_mode`` does not. Without
  any padding OpenVINO averages over the cells in the data whatever ``exclude-pad`` says
  (its reference's pads_in_avg). onnxruntime refuses pads as large as the kernel.
- MaxPool-8/14's indices count from ``axis`` (0: the whole tensor, as ONNX's
  Indices output; 2: within one channel, as PyTorch), so ONNX's are taken
  modulo the size of the dims from ``axis`` on.
"""

from __future__ import annotations

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..kernels import compute_type
from ..registry import op_version, translator
from .nn import AUTO_PAD, consumed, padding, spatial_rank

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


def _ceil_pads(ctx: Context, data: Value, attrs: dict, kernel: list[int], strides: list[int], dilations: list[int],
               rounding: str) -> None:
    """Ceil rounding as floor rounding over more end padding (see the module doc).

    ``min(s - 1, k - 1 - pad_end)`` more is enough for every window that starts before
    the end padding, and leaves out any that starts in it: PyTorch's count
    (``ceil_torch``). onnxruntime refuses pads as large as the kernel, and ONNX's own
    ``ceil_mode`` cannot be used instead: its average clips the window to the padding,
    where OpenVINO divides by the whole kernel size. OpenVINO's ``ceil`` keeps a window
    that starts in the end padding: refused when the dims are static, one window fewer
    when they are not."""
    n = len(kernel)
    begin, end = attrs["pads"][:n], attrs["pads"][n:]
    eff = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    if any(e >= k for e, k in zip(end, eff)):
        raise ctx.error(f"pads_end {end} as large as the kernel {kernel}: onnxruntime has no such pooling")
    if rounding == "ceil":
        for i, size in enumerate(data.shape[2:]):
            if size is None:
                continue
            count = -(-(size + begin[i] + end[i] - eff[i]) // strides[i]) + 1
            if (count - 1) * strides[i] >= size + begin[i]:
                raise ctx.error(f"ceil rounding makes a window that lies wholly in the end padding of spatial dim {i}, "
                                "which ONNX pooling cannot express")
    attrs["pads"] = begin + [e + min(s - 1, k - 1 - e) for e, s, k in zip(end, strides, eff)]


def _check_pads(ctx: Context, attrs: dict, kernel: list[int]) -> None:
    """onnxruntime's pooling refuses a pad as large as the (undilated) kernel."""
    pads = attrs.get("pads", [])
    if any(p >= k for p, k in zip(pads, kernel + kernel)):
        raise ctx.error(f"pads {pads} as large as the kernel {kernel}: onnxruntime has no such pooling")


@translator("MaxPool", since=1, emits=("Cast", "Identity", "MaxPool", "Mod", "ReduceProd", "Shape"))
def max_pool(ctx: Context, layer) -> None:
    version = op_version(layer)
    data = ctx.input(0)
    n, kernel, strides, dilations, attrs, rounding = _pool_common(ctx, layer, data, dilated=version >= 8)
    if rounding != "floor":
        _ceil_pads(ctx, data, attrs, kernel, strides, dilations, rounding)
    _check_pads(ctx, attrs, kernel)
    if version >= 8:
        attrs["dilations"] = dilations
    want_indices = version >= 8 and len(layer.outputs) > 1 and consumed(ctx, 1)
    et = data.type
    ct = compute_type("MaxPool", et, "select")  # i16 -> f32, i32 -> f64: the values as they are
    if ct is None:
        raise ctx.error(f"onnxruntime has no MaxPool kernel for {et.ov} and no lossless widening applies")
    x = ctx.cast(data.name, et, ct)
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
    idx = outs[1]
    if axis > 0:  # ONNX counts over the whole tensor: keep the position within dims axis..
        per = ctx.one("ReduceProd", [ctx.one("Shape", [data.name], start=axis)], keepdims=1)
        idx = ctx.one("Mod", [idx, per])
    ctx.cast(idx, _I64, idx_type, ctx.out(1))


@translator("AvgPool", since=1, emits=("AveragePool",))
def avg_pool(ctx: Context, layer) -> None:
    """AvgPool-1/14, and 16 with ``dilations`` (ONNX AveragePool has them since opset 19)."""
    dilated = op_version(layer) >= 16
    data = ctx.input(0)
    n, kernel, strides, dilations, attrs, rounding = _pool_common(ctx, layer, data, dilated=dilated)
    # OpenVINO counts the padding only when there is some (pads_in_avg in its reference)
    exclude = attr.boolean(layer, "exclude-pad", True) or not any(attrs.get("pads", [1]))
    if rounding != "floor":
        _ceil_pads(ctx, data, attrs, kernel, strides, dilations, rounding)
    _check_pads(ctx, attrs, kernel)
    if dilated:
        attrs["dilations"] = dilations
    ctx.emit("AveragePool", [data.name], data.type, ctx.out(0), kernel_shape=kernel, strides=strides,
             count_include_pad=int(not exclude), **attrs)
