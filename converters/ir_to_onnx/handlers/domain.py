"""The four ops of the onnx-ext domain: Gather-1/7/8, Range-1/4, Broadcast-1/3, StridedSlice-1.

Each becomes one node of the domain built with ``onnx_ext.make_node``, given
what is known of its inputs (element type, shape, constant value) so that the
node gets the overload of its body that fits.
"""

from __future__ import annotations

from onnx_ext.model import ir_node

from ...ir_reader import element_type, parse_list
from ..context import Context, Value
from ..registry import HANDLERS, handler, resolve_version


def domain_node(ctx: Context, op_type: str, values: list[Value], outputs: list[str], **attrs) -> None:
    ctx.add(ir_node(op_type, [ctx.value(v.name) for v in values], outputs, name=ctx.layer.name,
                    operands=[v.operand for v in values], **attrs))
    ctx.domain_used = True


def op_version(layer) -> int:
    """2 for a layer written ``opset2`` whose op is Gather-1, etc."""
    version = layer.version if (layer.type.lower(), layer.version) in HANDLERS else resolve_version(layer.type, layer.version)
    return int((version or layer.version).removeprefix("opset"))


def _needs(op_type: str):
    """Mark a translator as needing the domain op (listed as unsupported until it is registered)."""
    def mark(fn):
        fn.domain_op = op_type
        return fn
    return mark


@handler("Gather", "opset8", "opset7", "opset1")
@_needs("Gather")
def gather(ctx: Context, layer) -> None:
    version = op_version(layer)
    batch_dims = 0 if version == 1 else int(layer.data.get("batch_dims", "0") or 0)
    values = [ctx.input(i) for i in range(3)]
    domain_node(ctx, "Gather", values, [ctx.out(0)], batch_dims=batch_dims, version=version)


@handler("Range", "opset4", "opset1")
@_needs("Range")
def range_(ctx: Context, layer) -> None:
    if op_version(layer) == 4:
        et = element_type(layer.data.get("output_type", ""), ctx.where)
        if et is None:
            raise ctx.error(f"output_type {layer.data.get('output_type')!r} is not a concrete element type")
    else:  # Range-1: the output has the inputs' type
        et = ctx.out_type(0)
    values = [ctx.input(i) for i in range(3)]
    domain_node(ctx, "Range", values, [ctx.out(0)], output_type=et.onnx)


_BROADCAST_MODES = {1: ("numpy", "explicit", "none", "pdpd"), 3: ("numpy", "explicit", "none", "bidirectional", "pdpd")}


@handler("Broadcast", "opset3", "opset1")
@_needs("Broadcast")
def broadcast(ctx: Context, layer) -> None:
    version = op_version(layer)
    mode = (layer.data.get("mode", "numpy") or "numpy").strip().lower()
    if mode not in _BROADCAST_MODES[version]:
        raise ctx.error(f"mode {mode!r} is not a Broadcast-{version} mode ({', '.join(_BROADCAST_MODES[version])})")
    n = 3 if mode in ("explicit", "none") else 2
    if ctx.n_inputs() < n:
        raise ctx.error(f"mode {mode} needs {n} inputs, the layer has {ctx.n_inputs()}")
    values = [ctx.input(i) for i in range(n)]  # a numpy-mode Broadcast-1 may carry an unused axes_mapping
    attrs = dict(mode=mode, version=version)
    if mode == "pdpd":
        # Broadcast-3 writes its BroadcastModeSpec axis as mode.mode.axis, Broadcast-1 its
        # AutoBroadcastSpec axis as mode.auto_broadcast_axis; absent, OpenVINO's default is 0.
        text = next((layer.data[k] for k in ("mode.mode.axis", "mode.auto_broadcast_axis", "axis") if k in layer.data), "0")
        try:
            attrs["axis"] = int(text)
        except ValueError:
            raise ctx.error(f"pdpd axis {text!r} is not an integer") from None
    domain_node(ctx, "Broadcast", values, [ctx.out(0)], **attrs)


_MASKS = ("begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask")


@handler("StridedSlice", "opset1")
@_needs("StridedSlice")
def strided_slice(ctx: Context, layer) -> None:
    masks = {}
    for name in _MASKS:
        try:
            masks[name] = parse_list(layer.data.get(name, ""))
        except ValueError:
            raise ctx.error(f"{name}={layer.data.get(name)!r} is not a list of integers") from None
    values = [ctx.input(i) for i in range(min(ctx.n_inputs(), 4))]
    domain_node(ctx, "StridedSlice", values, [ctx.out(0)], **masks)
