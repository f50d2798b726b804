"""Broadcast's bodies: one per mode in onnxscript (Expand; ``_any``: Gathers, any element type), the
public general one, and the ``ToTarget`` family for a constant target shape, built node by node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np
from onnx_ir.traversal import RecursiveGraphIterator
from onnxscript import BOOL, INT64, script

from ...domain import op, ov_ext
from ..base import DIMS, Overload, words
from ..builder import BodyBuilder

# --- shape plans: target shapes and their conditions (int64 / bool vectors; they never raise) ---


@script(ov_ext, default_opset=op)
def _numpy_plan(dshape, target_shape):
    # (target shape, ok) for one-way numpy broadcasting of a tensor of shape dshape:
    # rank(target) >= rank(data) and every trailing-aligned data dim is 1 or the target dim.
    t = op.Cast(target_shape, to=INT64.dtype)
    tlen = op.Shape(t)
    dlen = op.Shape(dshape)
    one = op.Constant(value_ints=[1])
    # data dims aligned to the target's last ones, 1 in front: last T of (1,...,1, d...)
    big = op.Constant(value_ints=[9223372036854775807])
    padded = op.Slice(op.Concat(op.Expand(one, tlen), dshape, axis=0), dlen, big)
    ok = op.Concat(op.GreaterOrEqual(tlen, dlen), op.Or(op.Equal(padded, one), op.Equal(padded, t)), axis=0)
    return t, ok


@script(ov_ext, default_opset=op)
def _pdpd_plan(dshape, target_shape, axis: int):
    # (output shape, ok) for pdpd broadcasting: data dims aligned to the target's last ones
    # (axis must be -1 or rank(target) - rank(data)); each pair equal or one of them 1;
    # output dim max(data dim, target dim) on aligned axes, the target dim in front.
    t = op.Cast(target_shape, to=INT64.dtype)
    tlen = op.Shape(t)
    dlen = op.Shape(dshape)
    start = op.Sub(tlen, dlen)
    ax = op.Constant(value_int=axis)
    zero = op.Constant(value_ints=[0])
    one = op.Constant(value_ints=[1])
    aligned = op.Or(op.Equal(ax, op.Constant(value_int=-1)), op.Equal(ax, start))
    axis_ok = op.And(op.GreaterOrEqual(start, zero), aligned)
    # -1 in front (never a dim), data dims aligned at the end
    padded = op.Slice(
        op.Concat(op.Expand(op.Constant(value_ints=[-1]), tlen), dshape, axis=0), dlen,
        op.Constant(value_ints=[9223372036854775807]),
    )
    # padded is 1 or -1 where its square is 1. Not Abs(padded) == 1: OpenVINO's AbsSinking drops
    # that Abs, its bound evaluation wrongly finding padded >= 0 (docs/spec-corrections.md).
    pair_ok = op.Or(op.Or(op.Equal(padded, t), op.Equal(t, one)), op.Equal(op.Mul(padded, padded), one))
    ok = op.Concat(axis_ok, op.And(pair_ok, op.GreaterOrEqual(t, zero)), axis=0)
    return op.Max(t, padded), ok


@script(ov_ext, default_opset=op)
def _explicit_plan(dshape, target_shape, axes_mapping):
    # (shape to reshape the data to, target shape, axes_ok, dims_ok) for explicit mode.
    # Indices are kept in range whatever the inputs, so that only the checks can fail.
    t = op.Cast(target_shape, to=INT64.dtype)
    a = op.Cast(op.Reshape(axes_mapping, op.Constant(value_ints=[-1])), to=INT64.dtype)
    tlen = op.Shape(t)
    dlen = op.Shape(dshape)
    alen = op.Shape(a)
    zero = op.Constant(value_ints=[0])
    one = op.Constant(value_ints=[1])
    big = op.Constant(value_ints=[9223372036854775807])
    # 1-D, one entry per data axis (0-d data: none or one), strictly increasing, within [0, T)
    count_ok = op.And(op.Equal(op.Shape(op.Shape(axes_mapping)), one), op.Equal(alen, op.Max(dlen, op.Min(alen, one))))
    increasing = op.Less(op.Slice(a, zero, op.Constant(value_ints=[-1])), op.Slice(a, one, big))
    in_range = op.And(op.GreaterOrEqual(a, zero), op.Less(a, tlen))
    axes_ok = op.Concat(count_ok, increasing, in_range, axis=0)
    a = op.Where(in_range, a, tlen)  # out of range: index T, an extra entry of 1 below
    # The data dims, A of them (0-d data with one axis: a dim of 1 that must equal the
    # target dim, which dims_or_zero = [0] enforces).
    start = op.Add(dlen, one)
    dims = op.Slice(op.Concat(op.Expand(one, alen), one, dshape, axis=0), start, big)
    dims_or_zero = op.Slice(op.Concat(op.Expand(zero, alen), zero, dshape, axis=0), start, big)
    t1 = op.Concat(t, one, axis=0)
    dims_ok = op.Or(op.Equal(dims, op.Gather(t1, a, axis=0)), op.Equal(dims_or_zero, one))
    reshaped = op.Slice(op.ScatterElements(op.Expand(one, op.Add(tlen, one)), a, dims, axis=0), zero, tlen)
    return reshaped, t, axes_ok, dims_ok


# --- data paths ---------------------------------------------------------------------------


@script(ov_ext, default_opset=op)
def _block_plan(shape, out_shape):
    # For a two-way broadcast of a tensor of shape `shape` to out_shape: both padded to
    # the common rank (r, out), and the split of r into outer dims r[:j] and a trailing
    # block r[j:] of `inner` elements that is not broadcast (j: one past the last
    # broadcast axis). n_outer = prod(r[:j]).
    one = op.Constant(value_ints=[1])
    zero = op.Constant(value_ints=[0])
    big = op.Constant(value_ints=[9223372036854775807])
    rank = op.Max(op.Shape(shape), op.Shape(out_shape))
    ones = op.Expand(one, rank)
    r = op.Slice(op.Concat(ones, shape, axis=0), op.Shape(shape), big)
    s = op.Slice(op.Concat(ones, out_shape, axis=0), op.Shape(out_shape), big)
    out = op.Where(op.Equal(s, one), r, s)
    positions = op.Range(op.Constant(value_int=1), op.Add(op.ReduceMax(rank, keepdims=0), op.Constant(value_int=1)),
                         op.Constant(value_int=1))
    j = op.ReduceMax(op.Concat(zero, op.Mul(positions, op.Cast(op.Not(op.Equal(r, out)), to=INT64.dtype)), axis=0),
                     keepdims=1)
    n_outer = op.ReduceProd(op.Slice(r, zero, j), keepdims=0)
    inner = op.ReduceProd(op.Slice(r, j, big), keepdims=0)
    return r, out, j, n_outer, inner


@script(ov_ext, default_opset=op)
def _gather_rows(data, r, out, j, n_outer, inner):
    # Broadcast by Gathering rows of data seen as [n_outer, inner], one per outer index.
    one = op.Constant(value_ints=[1])
    zero = op.Constant(value_ints=[0])
    rows = op.Reshape(data, op.Concat(op.Reshape(n_outer, one), op.Reshape(inner, one), axis=0), allowzero=1)
    row_idx = op.Range(op.Constant(value_int=0), n_outer, op.Constant(value_int=1))
    row_idx = op.Expand(op.Reshape(row_idx, op.Slice(r, zero, j), allowzero=1), op.Slice(out, zero, j))
    return op.Reshape(op.Gather(rows, row_idx, axis=0), out, allowzero=1)


@script(ov_ext, default_opset=op)
def _gather_broadcast(data, shape, out_shape):
    # Two-way broadcast of data (seen with shape `shape`) to out_shape for any element
    # type, bit-exact (only Gathers move the data): with a trailing block of 16 elements
    # or more, Gather rows (one copy per block); otherwise GatherElements at element
    # indices Expanded to the output (onnxruntime's Gather costs ~40x its GatherElements
    # per index: docs/onnxruntime.md#gather-cost-per-index).
    r, out, j, n_outer, inner = _block_plan(shape, out_shape)
    if op.GreaterOrEqual(inner, op.Constant(value_int=16)):
        y = _gather_rows(data, r, out, j, n_outer, inner)
    else:
        minus1 = op.Constant(value_ints=[-1])
        idx = op.Range(op.Constant(value_int=0), op.Mul(n_outer, inner), op.Constant(value_int=1))
        idx = op.Reshape(op.Expand(op.Reshape(idx, r, allowzero=1), out), minus1)
        y = op.Reshape(op.GatherElements(op.Reshape(data, minus1), idx, axis=0), out, allowzero=1)
    return y


# --- bodies: numpy ----------------------------------------------------------------------------


@script(ov_ext, default_opset=op)
def broadcast_numpy(data, target_shape, axes_mapping, mode: str = "numpy", axis: int = -1, version: int = 3):
    t, ok = _numpy_plan(op.Shape(data), target_shape)
    target_shape_numpy_compatible = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Not(ok), to=INT64.dtype))
    return op.Expand(data, op.Add(t, op.ReduceSum(target_shape_numpy_compatible, keepdims=0)))


@script(ov_ext, default_opset=op)
def broadcast_numpy_any(data, target_shape, axes_mapping, mode: str = "numpy", axis: int = -1, version: int = 3):
    dshape = op.Shape(data)
    t, ok = _numpy_plan(dshape, target_shape)
    target_shape_numpy_compatible = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Not(ok), to=INT64.dtype))
    return _gather_broadcast(data, dshape, op.Add(t, op.ReduceSum(target_shape_numpy_compatible, keepdims=0)))


# --- bodies: explicit (and Broadcast-1's "none") ----------------------------------------------


@script(ov_ext, default_opset=op)
def broadcast_explicit(data, target_shape, axes_mapping, mode: str = "explicit", axis: int = -1, version: int = 3):
    shape, t, axes_ok, dims_ok = _explicit_plan(op.Shape(data), target_shape, axes_mapping)
    zero = op.Constant(value_ints=[0])
    axes_mapping_valid = op.Gather(zero, op.Cast(op.Not(axes_ok), to=INT64.dtype))
    checked = op.ReduceSum(axes_mapping_valid, keepdims=0)  # dims are checked once the axes are
    data_dims_match_target_at_axes_mapping = op.Gather(zero, op.Add(op.Cast(op.Not(dims_ok), to=INT64.dtype), checked))
    checked = op.ReduceSum(data_dims_match_target_at_axes_mapping, keepdims=0)
    return op.Expand(op.Reshape(data, op.Add(shape, checked), allowzero=1), op.Add(t, checked))


@script(ov_ext, default_opset=op)
def broadcast_explicit_any(data, target_shape, axes_mapping, mode: str = "explicit", axis: int = -1,
                           version: int = 3):
    shape, t, axes_ok, dims_ok = _explicit_plan(op.Shape(data), target_shape, axes_mapping)
    zero = op.Constant(value_ints=[0])
    axes_mapping_valid = op.Gather(zero, op.Cast(op.Not(axes_ok), to=INT64.dtype))
    checked = op.ReduceSum(axes_mapping_valid, keepdims=0)
    data_dims_match_target_at_axes_mapping = op.Gather(zero, op.Add(op.Cast(op.Not(dims_ok), to=INT64.dtype), checked))
    checked = op.ReduceSum(data_dims_match_target_at_axes_mapping, keepdims=0)
    return _gather_broadcast(data, op.Add(shape, checked), op.Add(t, checked))


# --- bodies: bidirectional (ONNX Expand) ------------------------------------------------------


@script(ov_ext, default_opset=op)
def broadcast_bidirectional(data, target_shape, axes_mapping, mode: str = "bidirectional", axis: int = -1,
                            version: int = 3):
    return op.Expand(data, op.Cast(target_shape, to=INT64.dtype))


@script(ov_ext, default_opset=op)
def broadcast_bidirectional_any(data, target_shape, axes_mapping, mode: str = "bidirectional", axis: int = -1,
                                version: int = 3):
    return _gather_broadcast(data, op.Shape(data), op.Cast(target_shape, to=INT64.dtype))


# --- bodies: pdpd -----------------------------------------------------------------------------


@script(ov_ext, default_opset=op)
def broadcast_pdpd(data, target_shape, axes_mapping, mode: str = "pdpd", axis: int = -1, version: int = 3):
    out_shape, ok = _pdpd_plan(op.Shape(data), target_shape, axis=axis)
    target_shape_pdpd_compatible = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Not(ok), to=INT64.dtype))
    return op.Expand(data, op.Add(out_shape, op.ReduceSum(target_shape_pdpd_compatible, keepdims=0)))


@script(ov_ext, default_opset=op)
def broadcast_pdpd_any(data, target_shape, axes_mapping, mode: str = "pdpd", axis: int = -1, version: int = 3):
    dshape = op.Shape(data)
    out_shape, ok = _pdpd_plan(dshape, target_shape, axis=axis)
    target_shape_pdpd_compatible = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Not(ok), to=INT64.dtype))
    return _gather_broadcast(data, dshape, op.Add(out_shape, op.ReduceSum(target_shape_pdpd_compatible, keepdims=0)))


# --- the public, general body -----------------------------------------------------------------


@script(ov_ext, default_opset=op)
def Broadcast(data, target_shape, axes_mapping, mode: str = "numpy", axis: int = -1, version: int = 3):
    # Broadcast-1/3(data: T, target_shape: int 1-D, axes_mapping: int 1-D; mode, axis, version) -> T
    # Every mode and element type. axes_mapping is read in explicit mode only, but an
    # ONNX function cannot see a missing input: pass one in every mode. The checks sit
    # outside the If (onnxruntime drops the names of nodes it inlines into branches).
    m = op.Constant(value_string=mode)
    dshape = op.Shape(data)
    zero = op.Constant(value_ints=[0])
    true1 = op.Constant(value_ints=[1])
    is_explicit = op.Or(op.Equal(m, op.Constant(value_string="explicit")),
                        op.Equal(m, op.Constant(value_string="none")))
    is_pdpd = op.Equal(m, op.Constant(value_string="pdpd"))
    is_numpy = op.Equal(m, op.Constant(value_string="numpy"))
    if is_explicit:
        shape, t, ok, dims_ok = _explicit_plan(dshape, target_shape, axes_mapping)
    else:
        shape = op.Identity(dshape)
        dims_ok = op.Cast(true1, to=BOOL.dtype)
        if op.Equal(m, op.Constant(value_string="bidirectional")):
            t = op.Cast(target_shape, to=INT64.dtype)
            ok = op.Cast(true1, to=BOOL.dtype)
        else:
            if is_pdpd:
                t, ok = _pdpd_plan(dshape, target_shape, axis=axis)
            else:
                t, ok = _numpy_plan(dshape, target_shape)
    bad = op.Cast(op.Not(ok), to=INT64.dtype)
    target_shape_numpy_compatible = op.Gather(zero, op.Mul(bad, op.Cast(is_numpy, to=INT64.dtype)))
    target_shape_pdpd_compatible = op.Gather(zero, op.Mul(bad, op.Cast(is_pdpd, to=INT64.dtype)))
    axes_mapping_valid = op.Gather(zero, op.Mul(bad, op.Cast(is_explicit, to=INT64.dtype)))
    checked = op.ReduceSum(op.Concat(target_shape_numpy_compatible, target_shape_pdpd_compatible, axes_mapping_valid,
                                     axis=0), keepdims=0)
    data_dims_match_target_at_axes_mapping = op.Gather(zero, op.Add(op.Cast(op.Not(dims_ok), to=INT64.dtype), checked))
    checked = op.ReduceSum(data_dims_match_target_at_axes_mapping, keepdims=0)
    return _gather_broadcast(data, op.Add(shape, checked), op.Add(t, checked))


MODE_BODIES = {
    "numpy": broadcast_numpy, "numpy_any": broadcast_numpy_any,
    "explicit": broadcast_explicit, "explicit_any": broadcast_explicit_any,
    "bidirectional": broadcast_bidirectional, "bidirectional_any": broadcast_bidirectional_any,
    "pdpd": broadcast_pdpd, "pdpd_any": broadcast_pdpd_any,
}
#: Functions of the domain the bodies call.
HELPERS = (_numpy_plan, _pdpd_plan, _explicit_plan, _block_plan, _gather_rows, _gather_broadcast)

# onnxruntime quotes a failing node's name; the checks are Gathers named after their output. OpSpec
# names the nodes of the protos it attaches; naming them in the IR too carries the names into models
# that call Broadcast from a user's onnxscript function.
for _fn in (*HELPERS, Broadcast):
    for _node in RecursiveGraphIterator(_fn.function_ir):
        if _node.outputs and _node.outputs[0].name:
            _node.name = _node.outputs[0].name


# --- a constant target shape (and axes_mapping) ---------------------------------------------------


@dataclass(frozen=True)
class ToTarget(Overload):
    """Broadcast-1/3(data, target_shape: the constant t, axes_mapping: the constant a; mode numpy or explicit).

    The data path is Expand to t, after an Unsqueeze that puts the data dims at their axes (explicit
    mode). Expand broadcasts both ways; one-way broadcasting differs only where a target dim is 1 (the
    data dim must be 1 there), so data dims known when the node is built are checked then, and
    ``checks`` lists the data axes (not known then) that meet a target dim of 1, checked at run time
    (``target_shape_numpy_compatible`` / ``data_dims_match_target_at_axes_mapping``).
    """

    SPELLING = "{mode}_to_{target}[_axes{axes}][_check{checks}]"
    mode: Annotated[str, words(("numpy", "explicit"))]
    target: Annotated[tuple[int, ...], DIMS]
    axes: Annotated[tuple[int, ...] | None, DIMS] = None  # explicit mode only
    checks: Annotated[tuple[int, ...], DIMS] = ()

    def valid(self) -> bool:
        t, axes, checks = self.target, self.axes, self.checks
        if (self.mode == "explicit") != (axes is not None):
            return False
        if axes is not None and (_not_increasing(axes) or any(a >= len(t) for a in axes)):
            return False
        data_rank = len(t) if axes is None else max(len(axes), 1)
        return not _not_increasing(checks) and all(c < data_rank for c in checks)

    def build(self, g: BodyBuilder) -> str:
        t, axes, checks = self.target, self.axes, self.checks
        x = "data"
        target = g.const(np.array(t, np.int64).reshape(len(t)))
        if checks:
            # data dims that must be 1 (they meet a target dim of 1, and were not known when built): each
            # one (their max is 1 for dims 0 and 1 too)
            ok = g("Equal", g("Gather", g("Shape", "data"), g.const(checks)), g.const(1))
            name = "target_shape_numpy_compatible" if self.mode == "numpy" else "data_dims_match_target_at_axes_mapping"
            target = g("Add", target, g.check(name, ok))
        if axes is not None:
            # the data dims at their axes, 1 elsewhere (0-d data: written with no axes, 1 everywhere)
            others = [i for i in range(len(t)) if i not in axes]
            if others:
                x = g("Unsqueeze", x, g.const(others))
        return g("Expand", x, target)


def _not_increasing(values) -> bool:
    return any(x >= y for x, y in zip(values, values[1:]))
