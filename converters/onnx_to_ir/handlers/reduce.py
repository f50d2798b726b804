"""Standard ONNX reductions -> OpenVINO Reduce* (axes as an input, ``keep_dims``).

ONNX moved ``axes`` from an attribute to an input (ReduceSum at opset 13, the
others at 18) and added ``noop_with_empty_axes``. Without axes ONNX reduces
over every axis (or, with noop_with_empty_axes=1, returns the input), while an
OpenVINO Reduce with an empty axes tensor reduces nothing; runtime axes that
may be empty are therefore completed to "all axes" inside the graph.
"""

from __future__ import annotations

from ..graph import NodeContext, Value
from ..registry import register
from .common import BOOL, I64, all_axes, convert, i64

_REDUCTIONS = {
    # ONNX op: (OpenVINO op, version, opset where axes became an input)
    "ReduceSum": ("ReduceSum", "opset1", 13),
    "ReduceProd": ("ReduceProd", "opset1", 18),
    "ReduceMax": ("ReduceMax", "opset1", 18),
    "ReduceMin": ("ReduceMin", "opset1", 18),
    "ReduceMean": ("ReduceMean", "opset1", 18),
    "ReduceL1": ("ReduceL1", "opset4", 18),
    "ReduceL2": ("ReduceL2", "opset4", 18),
}

_LOGICAL = {"ReduceMax": "ReduceLogicalOr", "ReduceMin": "ReduceLogicalAnd"}


def _reduce(ctx: NodeContext, ov_type: str, version: str, axes: Value | None, noop: bool) -> None:
    x = ctx.input(0)
    keep = bool(ctx.attr("keepdims", 1))
    if axes is not None and axes.const is not None and axes.const.size == 0:
        axes = None
    if axes is None:
        if noop:
            ctx.set_outputs(x)
            return
        axes = all_axes(ctx, x)
    elif axes.const is None and not noop:
        axes = _all_if_empty(ctx, x, convert(ctx, axes, I64))
    if x.type.kind == "bool" and ov_type in _LOGICAL:  # ReduceMax/Min on booleans (opset 20)
        ov_type, version = _LOGICAL[ov_type], "opset1"
    ctx.set_outputs(ctx.op(ov_type, version, [x, axes], {"keep_dims": keep}))


def _all_if_empty(ctx: NodeContext, x: Value, axes: Value) -> Value:
    # n = len(axes); take the first n + (n == 0) * rank entries of concat(axes, 0..rank-1).
    n = ctx.op("ShapeOf", "opset3", [axes], {"output_type": "i64"}, out=I64, dims=[1])
    every = all_axes(ctx, x)
    rank = ctx.op("ShapeOf", "opset3", [every], {"output_type": "i64"}, out=I64, dims=[1])
    empty = ctx.op("Equal", "opset1", [n, i64(ctx, [0])], {"auto_broadcast": "numpy"}, out=BOOL, dims=[1])
    extra = ctx.op("Multiply", "opset1", [convert(ctx, empty, I64), rank], {"auto_broadcast": "numpy"}, dims=[1])
    end = ctx.op("Add", "opset1", [n, extra], {"auto_broadcast": "numpy"}, dims=[1])
    joined = ctx.op("Concat", "opset1", [axes, every], {"axis": 0}, dims=[None])
    return ctx.op("Slice", "opset8", [joined, i64(ctx, [0]), end, i64(ctx, [1])], dims=[None])


def _attr_handler(ov_type: str, version: str):
    def handler(ctx: NodeContext):
        axes = ctx.attr("axes", None)
        _reduce(ctx, ov_type, version, None if axes is None else i64(ctx, axes), noop=False)

    return handler


def _input_handler(ov_type: str, version: str):
    def handler(ctx: NodeContext):
        noop = bool(ctx.attr("noop_with_empty_axes", 0))
        _reduce(ctx, ov_type, version, ctx.optional_input(1), noop)

    return handler


for _onnx_op, (_ov_op, _version, _since) in _REDUCTIONS.items():
    register(_onnx_op, since=1)(_attr_handler(_ov_op, _version))
    register(_onnx_op, since=_since)(_input_handler(_ov_op, _version))

