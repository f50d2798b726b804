"""GatherND and the scatters: ScatterUpdate, ScatterNDUpdate, ScatterElementsUpdate.

- GatherND-5 flattens the batch dims of its output into one; GatherND-8 keeps them,
  as ONNX's GatherND does.
- ScatterUpdate writes whole slices along ``axis``: the axis moved to the front, it
  is ONNX ScatterND with the indices as one-entry index tuples.
- Reductions ONNX lacks: ``sub`` is ``add`` of the negated updates (modulo 2^n for
  integers, as OpenVINO's wrap-around subtraction); ``mean`` is the ``add``
  reduction divided by the count of updates per element (plus one for the initial
  value), rounded down for integers; ``use_init_val`` false starts every updated
  element from the reduction's identity instead of the data.
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..kernels import compute_type
from ..registry import op_version, translator
from .shape import const_ints

_I64 = from_ov("i64")
_F64 = from_ov("f64")
_BOOL = from_ov("boolean")

#: OpenVINO reduction -> ONNX ScatterND/ScatterElements reduction.
_REDUCTIONS = {"none": "none", "sum": "add", "sub": "add", "prod": "mul", "min": "min", "max": "max", "mean": "add"}
#: On booleans (C++ bool arithmetic): a sum is an or, a product an and; computed in u8 (onnxruntime's
#: reductions refuse bool).
_BOOL_REDUCTIONS = {"none": "none", "sum": "max", "prod": "min", "min": "min", "max": "max"}


def _indices(ctx: Context, v: Value) -> str:
    return ctx.as_i64(v)


# --- GatherND -------------------------------------------------------------------------


@translator("GatherND", since=5, emits=("Cast", "Concat", "GatherND", "Reshape", "Shape"))
def gather_nd(ctx: Context, layer) -> None:
    keep_batch_dims = op_version(layer) >= 8  # GatherND-5 folds the batch dims into one
    data, indices = ctx.input(0), ctx.input(1)
    batch_dims = attr.integer(ctx, layer, "batch_dims", 0)
    if batch_dims < 0:
        raise ctx.error(f"batch_dims {batch_dims} is negative")
    if keep_batch_dims or batch_dims <= 1:
        ctx.one("GatherND", [data.name, _indices(ctx, indices)], ctx.out(0), batch_dims=batch_dims)
        return
    out = ctx.one("GatherND", [data.name, _indices(ctx, indices)], batch_dims=batch_dims)
    shape = ctx.one("Concat", [ctx.i64([-1]), ctx.one("Shape", [out], start=batch_dims)], axis=0)
    ctx.one("Reshape", [out, shape], ctx.out(0))


# --- ScatterUpdate --------------------------------------------------------------------


@translator("ScatterUpdate", since=3, emits=("Cast", "ScatterND", "Transpose", "Unsqueeze"))
def scatter_update(ctx: Context, layer) -> None:
    """data[.., indices[i..], ..] = updates[.., i.., ..] along ``axis``."""
    data, indices, updates, axis_v = (ctx.input(i) for i in range(4))
    if data.rank is None or indices.rank is None:
        raise ctx.error(f"needs data and indices of known rank, got shapes {data.shape} and {indices.shape}")
    axis = const_ints(ctx, axis_v, "the ScatterUpdate axis")[0]
    if not -data.rank <= axis < data.rank:
        raise ctx.error(f"axis {axis} is out of range for rank {data.rank}")
    axis %= data.rank
    k = indices.rank
    # data [A.., D, B..] -> [D, A.., B..]; updates [A.., I.., B..] -> [I.., A.., B..]
    d_perm = [axis] + [i for i in range(data.rank) if i != axis]
    u_perm = list(range(axis, axis + k)) + list(range(axis)) + list(range(axis + k, data.rank - 1 + k))
    x = ctx.one("Transpose", [data.name], perm=d_perm)
    u = ctx.one("Transpose", [updates.name], perm=u_perm)
    idx = ctx.one("Unsqueeze", [_indices(ctx, indices), ctx.i64([-1])])
    y = ctx.one("ScatterND", [x, idx, u])
    ctx.one("Transpose", [y], ctx.out(0), perm=[d_perm.index(i) for i in range(data.rank)])


# --- ScatterNDUpdate ------------------------------------------------------------------


def _updates(ctx: Context, updates: Value, reduction: str) -> str:
    if reduction != "sub":
        return updates.name
    return ctx.emit("Sub", [ctx.const(np.zeros((), updates.type.numpy)), updates.name], updates.type, kind="bits")


@translator("ScatterNDUpdate", since=4, emits=("Cast", "ScatterND", "Sub"))
def scatter_nd_update(ctx: Context, layer) -> None:
    data, indices, updates = ctx.input(0), ctx.input(1), ctx.input(2)
    reduction = attr.choice(ctx, layer, "reduction", tuple(r for r in _REDUCTIONS if r != "mean"), "none") \
        if op_version(layer) >= 15 else "none"  # ScatterNDUpdate-4 has no reduction
    reduction = _on_bool(ctx, data.type, reduction)
    et, ct = data.type, _scatter_type(ctx, "ScatterND", data.type, reduction)
    y = ctx.one("ScatterND", [ctx.cast(data.name, et, ct), _indices(ctx, indices),
                              ctx.cast(_updates(ctx, updates, reduction), et, ct)],
                ctx.out(0) if ct == et else None, reduction=_REDUCTIONS[reduction])
    if ct != et:
        ctx.cast(y, ct, et, ctx.out(0))


def _on_bool(ctx: Context, et, reduction: str) -> str:
    """The reduction that does on booleans what ``reduction`` does."""
    if et != _BOOL:
        return reduction
    if reduction not in _BOOL_REDUCTIONS:
        raise ctx.error(f"reduction {reduction!r} on boolean data is not supported")
    return _BOOL_REDUCTIONS[reduction]


def _scatter_type(ctx: Context, op: str, et, reduction: str):
    """The type to scatter ``et`` data in: onnxruntime's reductions refuse f16 and bf16 (f32) and bool (u8)
    at run time."""
    if et == _BOOL and reduction != "none":
        return from_ov("u8")
    ct = compute_type(op, et, attrs={"reduction": _REDUCTIONS[reduction]})
    if ct is None:
        raise ctx.error(f"onnxruntime has no {op} kernel with reduction {reduction!r} for {et.ov} and no lossless "
                        "widening applies")
    return ct


# --- ScatterElementsUpdate -----------------------------------------------------------


def _identity(et, reduction: str) -> np.ndarray:
    """The value a reduction starts from when the data's value is not used."""
    if reduction in ("sum", "mean"):
        return np.zeros((), et.numpy)
    if reduction == "prod":
        return np.ones((), et.numpy)
    info = np.finfo(et.numpy) if et.is_float else np.iinfo(et.numpy)
    big = np.inf if et.is_float else info.max
    small = -np.inf if et.is_float else info.min
    return np.array(big if reduction == "min" else small, dtype=et.numpy)


@translator("ScatterElementsUpdate", since=3,
            emits=("Add", "Cast", "Div", "Expand", "Floor", "Greater", "Identity", "Max", "ScatterElements", "Shape",
                   "Where"))
def scatter_elements_update(ctx: Context, layer) -> None:
    data, indices, updates, axis_v = (ctx.input(i) for i in range(4))
    axis = const_ints(ctx, axis_v, "the ScatterElementsUpdate axis")[0]
    reduction = attr.choice(ctx, layer, "reduction", tuple(r for r in _REDUCTIONS if r != "sub"), "none") \
        if op_version(layer) >= 12 else "none"  # ScatterElementsUpdate-3 has no reduction
    use_init = attr.boolean(layer, "use_init_val", True)
    et = data.type
    reduction = _on_bool(ctx, et, reduction)
    ct = _scatter_type(ctx, "ScatterElements", et, reduction)
    idx = _indices(ctx, indices)
    x, u = ctx.cast(data.name, et, ct), ctx.cast(updates.name, et, ct)
    touched = None
    if reduction != "none" and (not use_init or reduction == "mean"):
        zeros = ctx.one("Expand", [ctx.const(np.zeros((), np.float32)), ctx.one("Shape", [x])])
        ones = ctx.one("Expand", [ctx.const(np.ones((), np.float32)), ctx.one("Shape", [idx])])
        touched = ctx.one("ScatterElements", [zeros, idx, ones], axis=axis, reduction="add")  # count per element
    if not use_init and reduction != "none":
        updated = ctx.one("Greater", [touched, ctx.const(np.zeros((), np.float32))])
        wt = compute_type("Where", ct, "bits") or ct
        start = ctx.one("Where", [updated, ctx.cast(ctx.const(_identity(ct, reduction)), ct, wt),
                                  ctx.cast(x, ct, wt)])
        x = ctx.cast(start, wt, ct)
    if reduction != "mean":
        y = ctx.one("ScatterElements", [x, idx, u], ctx.out(0) if ct == et else None, axis=axis,
                    reduction=_REDUCTIONS[reduction])
        if ct != et:
            ctx.cast(y, ct, et, ctx.out(0))
        return
    total = ctx.one("ScatterElements", [x, idx, u], axis=axis, reduction="add")
    count = ctx.one("Add", [touched, ctx.const(np.ones((), np.float32))]) if use_init else \
        ctx.one("Max", [touched, ctx.const(np.ones((), np.float32))])
    if et.is_float:
        ctx.cast(ctx.one("Div", [total, ctx.cast(count, from_ov("f32"), ct)]), ct, et, ctx.out(0))
        return
    mean = ctx.one("Div", [ctx.cast(total, ct, _F64), ctx.cast(count, from_ov("f32"), _F64)])
    ctx.cast(ctx.one("Floor", [mean]), _F64, et, ctx.out(0))
