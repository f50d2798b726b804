"""The four ops of the onnx-ext domain: Gather-1/7/8, Range-1/4, Broadcast-1/3, StridedSlice-1.

Each becomes one node of the domain built with ``onnx_ext.make_node``, given
what is known of its inputs (element type, shape, constant value) so that the
node gets the overload of its body that fits.
"""

from __future__ import annotations

from onnx_ext.model import ir_node
from onnx_ext.ops import broadcast as broadcast_op, gather as gather_op, strided_slice as strided_slice_op

from .. import attributes as attr
from ..context import LARGE_INITIALIZER_BYTES, Context, Value
from ..registry import op_version, translator


def domain_node(ctx: Context, op_type: str, values: list[Value], outputs: list[str], **attrs) -> None:
    ctx.add(ir_node(op_type, [ctx.value(v.name) for v in values], outputs, name=ctx.layer.name,
                    operands=[v.operand for v in values], **attrs))
    ctx.domain_used = True


# The rest: rows of compressed 8-bit weights (an embedding) dequantized after the Gather (decompression.py).
@translator("Gather", since=gather_op.VERSIONS[0], until=gather_op.VERSIONS[-1],
            emits=("onnx_ext.Gather", "Concat", "Mul", "Reshape", "Shape", "Sub", "com.microsoft.GatherBlockQuantized"))
def gather(ctx: Context, layer) -> None:
    version = op_version(layer)
    batch_dims = 0 if version == 1 else attr.integer(ctx, layer, "batch_dims", 0)
    values = [ctx.input(i) for i in range(3)]
    data = values[0]
    if data.const is not None and data.const.nbytes >= LARGE_INITIALIZER_BYTES and _read_elsewhere(ctx, 0):
        # Gather-8's body for a constant table holds a copy of it with a zero row (made at load): not of a
        # table another layer reads too (an embedding tied to the lm_head), which memory would then hold twice
        values[0] = Value(data.name, data.type, data.shape)
    domain_node(ctx, "Gather", values, [ctx.out(0)], batch_dims=batch_dims, version=version)


def _read_elsewhere(ctx: Context, i: int) -> bool:
    """Whether the output that input i of the layer reads feeds another layer's input too."""
    src = ctx.ir.producers()[(ctx.layer.id, ctx.layer.inputs[i].id)]
    return len(ctx.ir.readers()[src]) > 1


@translator("Range", since=1, emits=("onnx_ext.Range",))
def range_(ctx: Context, layer) -> None:
    if op_version(layer) == 4:
        et = attr.element(ctx, layer, "output_type")
        if et is None:
            raise ctx.error("output_type dynamic is not a concrete element type")
    else:  # Range-1: the output has the inputs' type
        et = ctx.out_type(0)
    values = [ctx.input(i) for i in range(3)]
    domain_node(ctx, "Range", values, [ctx.out(0)], output_type=et.onnx)


@translator("Broadcast", since=broadcast_op.VERSIONS[0], until=broadcast_op.VERSIONS[-1], emits=("onnx_ext.Broadcast",))
def broadcast(ctx: Context, layer) -> None:
    version = op_version(layer)
    mode = attr.choice(ctx, layer, "mode", broadcast_op.MODES[version], "numpy")
    n = 3 if mode in ("explicit", "none") else 2
    if ctx.n_inputs() < n:
        raise ctx.error(f"mode {mode} needs {n} inputs, the layer has {ctx.n_inputs()}")
    values = [ctx.input(i) for i in range(n)]  # a numpy-mode Broadcast-1 may carry an unused axes_mapping
    attrs = dict(mode=mode, version=version)
    if mode == "pdpd":
        # Broadcast-3 writes its BroadcastModeSpec axis as mode.mode.axis, Broadcast-1 its
        # AutoBroadcastSpec axis as mode.auto_broadcast_axis; absent, OpenVINO's default is 0.
        attrs["axis"] = attr.integer(ctx, layer, "mode.mode.axis" if version == 3 else "mode.auto_broadcast_axis", 0)
    domain_node(ctx, "Broadcast", values, [ctx.out(0)], **attrs)


@translator("StridedSlice", since=1, emits=("onnx_ext.StridedSlice",))
def strided_slice(ctx: Context, layer) -> None:
    masks = {name: attr.integers(ctx, layer, name, []) for name in strided_slice_op.MASKS}
    values = [ctx.input(i) for i in range(min(ctx.n_inputs(), 4))]
    domain_node(ctx, "StridedSlice", values, [ctx.out(0)], **masks)
