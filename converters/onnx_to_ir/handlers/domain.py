"""Nodes of the onnx-ext domain -> the native OpenVINO ops they stand for.

The node's function body (and its ``overload``) is ignored: the IR gets the op
itself, at the version and with the attributes the node carries.
"""

from __future__ import annotations

import numpy as np

import onnx_ext
from onnx_ext.domain import DOMAIN
from onnx_ext.errors import OnnxExtError
from onnx_ext.types import UnknownElementType, from_onnx

from ..graph import NodeContext
from ..registry import register

MASKS = ("begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask")

BROADCAST_MODES = {1: ("numpy", "explicit", "none", "pdpd"), 3: ("numpy", "explicit", "none", "bidirectional", "pdpd")}


def attributes(ctx: NodeContext) -> dict:
    """The node's attributes with defaults, checked by the op's spec (``onnx_ext.node_attributes``)."""
    try:
        return onnx_ext.node_attributes(ctx.node)
    except OnnxExtError as e:
        raise ctx.error(str(e)) from None


def _inputs(ctx: NodeContext, low: int, high: int):
    if not low <= ctx.n_inputs <= high:
        want = f"{low}" if low == high else f"{low} to {high}"
        raise ctx.error(f"takes {want} inputs, got {ctx.n_inputs}")
    return ctx.inputs()


@register("Gather", domain=DOMAIN)
def gather(ctx: NodeContext):
    attrs = attributes(ctx)
    data, indices, axis = _inputs(ctx, 3, 3)
    version = attrs["version"]
    if version not in (1, 7, 8):
        raise ctx.error(f"version {version} is not a Gather version (1, 7, 8)")
    params = {} if version == 1 else {"batch_dims": attrs["batch_dims"]}
    ctx.set_outputs(ctx.op("Gather", f"opset{version}", [data, indices, axis], params, out=data.type))


@register("Range", domain=DOMAIN)
def range_(ctx: NodeContext):
    attrs = attributes(ctx)
    start, stop, step = _inputs(ctx, 3, 3)
    try:
        et = from_onnx(attrs["output_type"])
    except UnknownElementType as e:
        raise ctx.error(f"output_type: {e}") from None
    ctx.set_outputs(ctx.op("Range", "opset4", [start, stop, step], {"output_type": et.ov}, out=et))


@register("Broadcast", domain=DOMAIN)
def broadcast(ctx: NodeContext):
    attrs = attributes(ctx)
    values = _inputs(ctx, 2, 3)
    version, mode = attrs["version"], attrs["mode"]
    if version not in BROADCAST_MODES:
        raise ctx.error(f"version {version} is not a Broadcast version (1, 3)")
    if mode not in BROADCAST_MODES[version]:
        raise ctx.error(f"mode {mode!r} does not exist in Broadcast-{version} (it has {', '.join(BROADCAST_MODES[version])})")
    params = {"mode": mode}  # spelled as given: Broadcast-1 files say "none", Broadcast-3 files "explicit"
    if mode == "pdpd":
        # save_model writes the axis of Broadcast-1's AutoBroadcastSpec as mode.auto_broadcast_axis,
        # the axis of Broadcast-3's BroadcastModeSpec as mode.mode.axis.
        params["mode.auto_broadcast_axis" if version == 1 else "mode.mode.axis"] = attrs["axis"]
    if mode in ("explicit", "none") and len(values) != 3:
        raise ctx.error(f"mode {mode!r} needs the axes_mapping input")
    if version == 1 and len(values) == 2:
        # Broadcast-1 always has three inputs in OpenVINO (pdpd fails to load
        # without one): save_model writes an unused u8 scalar 0 as axes_mapping.
        values.append(ctx.const(np.zeros((), np.uint8)))
    ctx.set_outputs(ctx.op("Broadcast", f"opset{version}", values, params, out=values[0].type))


@register("StridedSlice", domain=DOMAIN)
def strided_slice(ctx: NodeContext):
    attrs = attributes(ctx)
    values = _inputs(ctx, 3, 4)
    if len(values) == 3:  # OpenVINO gives StridedSlice-1 a stride input of ones when none is passed
        begin = values[1]
        if begin.const is not None:
            values.append(ctx.const(np.ones(begin.const.shape, np.int64)))
        else:
            from .common import ones_like_vector

            values.append(ones_like_vector(ctx, begin))
    masks = {m: list(attrs.get(m) or []) for m in MASKS}
    lengths = {len(v) for v in masks.values()}
    if len(lengths) > 1:
        # OpenVINO refuses masks of different lengths (an empty begin_mask beside a
        # one-bit shrink_axis_mask included); a missing bit is 0 for both, so
        # zero-extending the shorter ones keeps the meaning.
        n = max(lengths)
        masks = {k: v + [0] * (n - len(v)) for k, v in masks.items()}
    ctx.set_outputs(ctx.op("StridedSlice", "opset1", values, masks, out=values[0].type))
