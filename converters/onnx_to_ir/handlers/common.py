"""Small building blocks the handlers share."""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from ..graph import NodeContext, Value

I64 = from_ov("i64")
BOOL = from_ov("boolean")


def i64(ctx: NodeContext, values) -> Value:
    return ctx.const(np.asarray(values, dtype=np.int64))


def shape_of(ctx: NodeContext, value: Value) -> Value:
    """ShapeOf-3 (i64)."""
    if value.static_shape is not None:
        return i64(ctx, list(value.static_shape))
    dims = None if value.rank is None else [value.rank]
    return ctx.op("ShapeOf", "opset3", [value], {"output_type": "i64"}, out=I64, dims=dims)


def rank_scalar(ctx: NodeContext, value: Value) -> Value:
    """The rank of ``value`` as an i64 scalar."""
    if value.rank is not None:
        return i64(ctx, value.rank)
    rank = ctx.op("ShapeOf", "opset3", [shape_of(ctx, value)], {"output_type": "i64"}, out=I64, dims=[1])
    return ctx.op("Squeeze", "opset1", [rank, i64(ctx, [0])], dims=[])


def all_axes(ctx: NodeContext, value: Value) -> Value:
    """[0, 1, ..., rank-1] (i64)."""
    if value.rank is not None:
        return i64(ctx, list(range(value.rank)))
    return ctx.op("Range", "opset4", [i64(ctx, 0), rank_scalar(ctx, value), i64(ctx, 1)], {"output_type": "i64"},
                  out=I64, dims=[None])


def ones_like_vector(ctx: NodeContext, vector: Value) -> Value:
    """A 1-D tensor of ones as long as ``vector`` and of its element type."""
    if vector.const is not None:
        return ctx.const(np.ones(vector.const.shape, vector.type.numpy))
    one = ctx.const(np.ones((), vector.type.numpy))
    return ctx.op("Broadcast", "opset3", [one, shape_of(ctx, vector)], {"mode": "numpy"}, dims=vector.dims)


def convert(ctx: NodeContext, value: Value, et) -> Value:
    """``value`` as element type ``et`` (Convert-1; a constant is converted here)."""
    if value.type == et:
        return value
    if value.const is not None:
        return ctx.const(value.const.astype(et.numpy))
    return ctx.op("Convert", "opset1", [value], {"destination_type": et.ov}, out=et, dims=value.dims)


def to_scalar(ctx: NodeContext, value: Value) -> Value:
    """A one-element tensor as a 0-d tensor."""
    if value.rank == 0:
        return value
    if value.const is not None:
        return ctx.const(value.const.reshape(()))
    return ctx.op("Reshape", "opset1", [value, i64(ctx, np.zeros((0,), np.int64))], {"special_zero": False}, dims=[])
