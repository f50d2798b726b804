"""Standard ONNX ops that move, reshape, index or create tensors."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from onnx_ext.types import UnknownElementType, from_onnx

from ..graph import NodeContext
from ..registry import register
from .common import I64, i64, ones_like_vector, shape_of


@register("Constant", since=1)
def constant(ctx: NodeContext):
    attrs = [a.name for a in ctx.node.attribute]
    if len(attrs) != 1:
        raise ctx.error(f"expects exactly one value attribute, got {attrs}")
    name = attrs[0]
    if name in ("sparse_value", "value_string", "value_strings"):
        raise ctx.error(f"{name} is not supported (OpenVINO IR constants here are numeric or boolean)")
    value = ctx.attr(name)
    if name == "value_float":
        value = np.array(value, np.float32)
    elif name == "value_floats":
        value = np.array(value, np.float32).reshape(-1)
    elif name == "value_int":
        value = np.array(value, np.int64)
    elif name == "value_ints":
        value = np.array(value, np.int64).reshape(-1)
    ctx.set_outputs(_const(ctx, value))


def _const(ctx, array):
    try:
        return ctx.const(array)
    except UnknownElementType as e:
        raise ctx.error(str(e)) from None


@register("Identity", since=1)
def identity(ctx: NodeContext):
    ctx.set_outputs(ctx.input(0))


@register("Shape", since=1)
def shape(ctx: NodeContext):
    x = ctx.input(0)
    out = ctx.op("ShapeOf", "opset3", [x], {"output_type": "i64"}, out=I64)
    start, end = ctx.attr("start", 0), ctx.attr("end", None)
    if start != 0 or end is not None:
        # Shape-15: a slice of the shape; Slice-8 clamps like ONNX does.
        end = np.iinfo(np.int64).max if end is None else end
        out = ctx.op("Slice", "opset8", [out, i64(ctx, [start]), i64(ctx, [end]), i64(ctx, [1]), i64(ctx, [0])], out=I64)
    ctx.set_outputs(out)


@register("Size", since=1)
def size(ctx: NodeContext):
    shp = ctx.op("ShapeOf", "opset3", [ctx.input(0)], {"output_type": "i64"}, out=I64)
    ctx.set_outputs(ctx.op("ReduceProd", "opset1", [shp, i64(ctx, [0])], {"keep_dims": False}, out=I64, dims=[]))


@register("Cast", since=1)
def cast(ctx: NodeContext):
    to = ctx.attr("to")
    if isinstance(to, str):  # Cast-1 names the type
        to = TensorProto.DataType.Value(to.upper())
    try:
        et = from_onnx(to)
    except UnknownElementType as e:
        raise ctx.error(str(e)) from None
    x = ctx.input(0)
    ctx.set_outputs(ctx.op("Convert", "opset1", [x], {"destination_type": et.ov}, out=et))


@register("CastLike", since=15)
def cast_like(ctx: NodeContext):
    x, like = ctx.input(0), ctx.input(1)
    ctx.set_outputs(ctx.op("Convert", "opset1", [x], {"destination_type": like.type.ov}, out=like.type))


@register("Concat", since=1)
def concat(ctx: NodeContext):
    values = ctx.inputs()
    axis = ctx.attr("axis", 1) if (ctx.opset or 1) < 4 else ctx.attr("axis")  # Concat-1's default axis is 1
    ctx.set_outputs(ctx.op("Concat", "opset1", values, {"axis": axis}))


@register("Reshape", since=1)
def reshape_1(ctx: NodeContext):
    target = i64(ctx, ctx.attr("shape"))
    ctx.set_outputs(ctx.op("Reshape", "opset1", [ctx.input(0), target], {"special_zero": True}))


@register("Reshape", since=5)
def reshape_5(ctx: NodeContext):
    # ONNX: a 0 copies the input dim unless allowzero=1 (Reshape-14); OpenVINO: special_zero.
    allowzero = ctx.attr("allowzero", 0)
    ctx.set_outputs(ctx.op("Reshape", "opset1", [ctx.input(0), ctx.input(1)], {"special_zero": not allowzero}))


def _squeeze(ctx: NodeContext, axes):
    x = ctx.input(0)
    inputs = [x] if axes is None else [x, axes]
    ctx.set_outputs(ctx.op("Squeeze", "opset1", inputs))


@register("Squeeze", since=1)
def squeeze_1(ctx: NodeContext):
    axes = ctx.attr("axes", None)
    _squeeze(ctx, None if axes is None else i64(ctx, axes))


@register("Squeeze", since=13)
def squeeze_13(ctx: NodeContext):
    _squeeze(ctx, ctx.optional_input(1))


@register("Unsqueeze", since=1)
def unsqueeze_1(ctx: NodeContext):
    ctx.set_outputs(ctx.op("Unsqueeze", "opset1", [ctx.input(0), i64(ctx, ctx.attr("axes"))]))


@register("Unsqueeze", since=13)
def unsqueeze_13(ctx: NodeContext):
    ctx.set_outputs(ctx.op("Unsqueeze", "opset1", [ctx.input(0), ctx.input(1)]))


@register("Expand", since=8)
def expand(ctx: NodeContext):
    # ONNX Expand broadcasts both ways: exactly Broadcast-3's bidirectional mode.
    ctx.set_outputs(ctx.op("Broadcast", "opset3", [ctx.input(0), ctx.input(1)], {"mode": "bidirectional"}))


@register("Range", since=11)
def range_11(ctx: NodeContext):
    # Range-4 computes start + i*step; onnxruntime's Range kernel accumulates
    # (start, start+step, ...), so long float ranges differ in the last bits.
    # OpenVINO's own ONNX reader makes the same choice.
    start, stop, step = ctx.inputs()
    et = start.type
    ctx.set_outputs(ctx.op("Range", "opset4", [start, stop, step], {"output_type": et.ov}, out=et))


@register("Gather", since=1)
def gather(ctx: NodeContext):
    # Gather-8 takes negative indices as ONNX does (counting from the end).
    data, indices = ctx.input(0), ctx.input(1)
    axis = i64(ctx, ctx.attr("axis", 0))
    ctx.set_outputs(ctx.op("Gather", "opset8", [data, indices, axis], {"batch_dims": 0}))


@register("GatherElements", since=11)
def gather_elements(ctx: NodeContext):
    ctx.set_outputs(ctx.op("GatherElements", "opset6", [ctx.input(0), ctx.input(1)], {"axis": ctx.attr("axis", 0)}))


@register("GatherND", since=11)
def gather_nd(ctx: NodeContext):
    data = {"batch_dims": ctx.attr("batch_dims", 0)}
    ctx.set_outputs(ctx.op("GatherND", "opset8", [ctx.input(0), ctx.input(1)], data))


@register("NonZero", since=9)
def non_zero(ctx: NodeContext):
    # NonZero-3: [rank, count] indices in row-major order, as ONNX's (i64 output).
    ctx.set_outputs(ctx.op("NonZero", "opset3", [ctx.input(0)], {"output_type": "i64"}, out=I64))


@register("ScatterND", since=11)
def scatter_nd(ctx: NodeContext):
    reduction = ctx.attr("reduction", "none")
    if reduction != "none":
        raise ctx.error(f"reduction={reduction!r} is not supported (only 'none')")
    ctx.set_outputs(ctx.op("ScatterNDUpdate", "opset4", ctx.inputs()))


@register("Slice", since=1)
def slice_1(ctx: NodeContext):
    starts, ends = ctx.attr("starts"), ctx.attr("ends")
    axes = ctx.attr("axes", list(range(len(starts))))
    inputs = [ctx.input(0), i64(ctx, starts), i64(ctx, ends), i64(ctx, [1] * len(starts)), i64(ctx, axes)]
    ctx.set_outputs(ctx.op("Slice", "opset8", inputs))


@register("Slice", since=10)
def slice_10(ctx: NodeContext):
    # Slice-8 has ONNX Slice's semantics (clamping, negative steps, optional axes).
    data, starts, ends = ctx.input(0), ctx.input(1), ctx.input(2)
    axes, steps = ctx.optional_input(3), ctx.optional_input(4)
    if steps is None:
        steps = ones_like_vector(ctx, starts)
    inputs = [data, starts, ends, steps] + ([axes] if axes is not None else [])
    ctx.set_outputs(ctx.op("Slice", "opset8", inputs))


@register("Transpose", since=1)
def transpose(ctx: NodeContext):
    perm = ctx.attr("perm", None)
    order = i64(ctx, [] if perm is None else perm)  # empty: reverse the axes (both ONNX and OpenVINO)
    ctx.set_outputs(ctx.op("Transpose", "opset1", [ctx.input(0), order]))


@register("Tile", since=6)
def tile(ctx: NodeContext):
    ctx.set_outputs(ctx.op("Tile", "opset1", [ctx.input(0), ctx.input(1)]))


@register("ConstantOfShape", since=9)
def constant_of_shape(ctx: NodeContext):
    value = ctx.attr("value", None)
    value = np.zeros((), np.float32) if value is None else np.asarray(value).reshape(())
    fill = _const(ctx, value)
    ctx.set_outputs(ctx.op("Broadcast", "opset3", [fill, ctx.input(0)], {"mode": "numpy"}))


@register("Where", since=9)
def where(ctx: NodeContext):
    cond, a, b = ctx.inputs()
    ctx.set_outputs(ctx.op("Select", "opset1", [cond, a, b], {"auto_broadcast": "numpy"}, out=a.type))


@register("Flatten", since=1)
def flatten(ctx: NodeContext):
    # [prod(shape[:axis]), prod(shape[axis:])], both computed (no -1: empty tensors stay right).
    x = ctx.input(0)
    axis = ctx.attr("axis", 1)
    if axis < 0:
        if x.rank is None:
            raise ctx.error("a negative axis needs the input's rank")
        axis += x.rank
    shp = shape_of(ctx, x)
    big = np.iinfo(np.int64).max
    parts = []
    for start, stop in ((0, axis), (axis, big)):
        part = ctx.op("Slice", "opset8", [shp, i64(ctx, [start]), i64(ctx, [stop]), i64(ctx, [1])], out=I64, dims=[None])
        parts.append(ctx.op("ReduceProd", "opset1", [part, i64(ctx, [0])], {"keep_dims": True}, out=I64, dims=[1]))
    target = ctx.op("Concat", "opset1", parts, {"axis": 0}, out=I64, dims=[2])
    ctx.set_outputs(ctx.op("Reshape", "opset1", [x, target], {"special_zero": False}))


@register("Compress", since=9)
def compress(ctx: NodeContext):
    # The positions where condition is true (NonZero), gathered along the axis
    # (OpenVINO's ONNX frontend does the same). A condition shorter than the axis
    # only selects among its own length, as in ONNX.
    x, cond = ctx.input(0), ctx.input(1)
    axis = ctx.attr("axis", None)
    if axis is None:  # no axis: the flattened input
        x = ctx.op("Reshape", "opset1", [x, i64(ctx, [-1])], {"special_zero": False}, dims=[None])
        axis = 0
    positions = ctx.op("NonZero", "opset3", [cond], {"output_type": "i64"}, out=I64, dims=[1, None])
    positions = ctx.op("Reshape", "opset1", [positions, i64(ctx, [-1])], {"special_zero": False}, dims=[None])
    ctx.set_outputs(ctx.op("Gather", "opset8", [x, positions, i64(ctx, axis)], {"batch_dims": 0}))
