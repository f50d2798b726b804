"""Broadcast-1 and Broadcast-3: function bodies, numpy reference and checks.

OpenVINO: Broadcast(data, target_shape, axes_mapping?; mode), ``version`` 1 or 3.
Attributes keep OpenVINO's names: ``mode`` (``numpy``, ``explicit`` or its
Broadcast-1 IR spelling ``none``, ``bidirectional`` (Broadcast-3 only), ``pdpd``)
and ``axis`` (pdpd only, default -1). What OpenVINO's reference (``evaluate``)
does, mode by mode:

- ``numpy``: one-way numpy broadcasting of data to exactly target_shape. The
  target rank must be >= the data rank and each trailing-aligned data dim must be
  1 or equal to the target dim (so 1 -> 0 is legal, 0 -> 1 and 3 -> 1 are not).
- ``explicit``/``none``: ``axes_mapping[i]`` is the output axis of data axis i:
  one entry per data axis, strictly increasing ("Broadcast doesn't permit
  transposes"), within [0, target rank); data dim i must be 1 or equal to
  ``target_shape[axes_mapping[i]]``. 0-d data takes an empty axes_mapping, or one
  entry k with ``target_shape[k] == 1`` (OpenVINO's shape inference, its CPU
  plugin and its op tests accept this; its core ``evaluate`` rejects it).
- ``bidirectional``: exactly ONNX Expand (two-way numpy broadcasting).
- ``pdpd``: data dims aligned at ``axis`` (-1: trailing alignment, as numpy);
  the data must end on the last target dim (axis == rank(target) - rank(data)),
  and each aligned pair must be equal or have a 1 on either side; the output dim
  is the data dim where the target dim is 1 and max(data dim, target dim)
  otherwise (so target dim 0 against data dim 1 gives 1, as the reference does).

Negative target dims are errors in every mode. Input counts: explicit needs
axes_mapping; Broadcast-3 refuses it in the other modes; Broadcast-1 accepts and
ignores a third input in numpy and pdpd mode (OpenVINO writes an unused u8
scalar 0 there).

Deliberate differences from the reference: it dies (SIGFPE) on zero-size data
and its explicit-mode evaluate refuses 0-d data with a one-entry axes_mapping;
here both follow the rules above. With a pdpd axis beyond trailing alignment
(axis + rank(data) > rank(target)) the reference reads dims that do not exist
and returns shapes or errors depending on values; this package refuses it.

Bodies (overloads): per mode (``none`` uses explicit's) a fast one whose data
path is a single Expand (plus a free Reshape in explicit mode), for every type
but bf16, which onnxruntime's Expand lacks; and ``<mode>_any``, which loads for
every element type and serves bf16 and unknown types: it Gathers rows of the
largest trailing block that is not broadcast when that block has 16 elements or
more, otherwise GatherElements at element indices Expanded to the output
(onnxruntime's Gather costs ~20 ns per index, so one Gather per element would
be ~200x an Expand; a Cast to f32 around the Expand is not exact either:
onnxruntime's f32 -> bf16 Cast rewrites NaN payloads). The checks work on shape vectors
only; each failure is a Gather named after the condition, which onnxruntime
quotes when it raises: ``target_shape_numpy_compatible``,
``axes_mapping_valid``, ``data_dims_match_target_at_axes_mapping``,
``target_shape_pdpd_compatible``. The public ``Broadcast`` handles every mode and
type; an ONNX function cannot see a missing input, so in onnxscript pass
axes_mapping in every mode (it is read in explicit mode only; any integer
tensor, such as ``op.Constant(value_ints=[])``, does for the others).
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np
from onnxscript import BOOL, INT64, script

from ..domain import op, ov_ext
from ..errors import OpAttributeError, OpInputError
from .base import Attr, BodyBuilder, LazyBodies, OpSpec, Operand, built_function

VERSIONS = (1, 3)
MODES = {1: ("numpy", "explicit", "none", "pdpd"), 3: ("numpy", "explicit", "none", "bidirectional", "pdpd")}
_BODY_OF_MODE = {"numpy": "numpy", "explicit": "explicit", "none": "explicit", "bidirectional": "bidirectional",
                 "pdpd": "pdpd"}


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
    pair_ok = op.Or(op.Or(op.Equal(padded, t), op.Equal(t, one)), op.Equal(op.Abs(padded), one))
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
    # indices Expanded to the output (onnxruntime's Gather costs ~20 ns per index, its
    # GatherElements under 1 ns).
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


def _name_nodes_after_outputs(fn) -> None:
    # onnxruntime quotes a failing node's name; the checks are Gathers named after their
    # output. OpSpec names the nodes of the protos it attaches; naming them in the IR too
    # carries the names into models that call Broadcast from a user's onnxscript function.
    def walk(nodes):
        for node in nodes:
            if node.outputs and node.outputs[0].name:
                node.name = node.outputs[0].name
            for attr in node.attributes.values():
                graphs = attr.value if isinstance(attr.value, (list, tuple)) else [attr.value]
                for g in graphs:
                    if hasattr(g, "__iter__") and hasattr(g, "outputs"):
                        walk(g)

    walk(fn.function_ir)


for _fn in (_numpy_plan, _pdpd_plan, _explicit_plan, _block_plan, _gather_rows, _gather_broadcast, Broadcast):
    _name_nodes_after_outputs(_fn)


# --- bodies for a constant target shape (and axes_mapping) ---------------------------------------
#
# numpy and explicit modes with target_shape (and axes_mapping) known when the node is
# built: the data path is Expand to the constant target, after an Unsqueeze that puts
# the data dims at their axes (explicit mode). Expand broadcasts both ways; one-way
# broadcasting differs only where a target dim is 1 (the data dim must be 1 there), so
# data dims known when the node is built are checked then, and only the data dims that
# are not known and meet a target dim of 1 are checked at run time. Overloads:
#
#   numpy_to_{t0}x{t1}...[_check{i}x{j}...]
#   explicit_to_{t0}x{t1}..._axes{a0}x{a1}...[_check{i}x{j}...]
#
# ``_check``: the data axes checked at run time (target_shape_numpy_compatible /
# data_dims_match_target_at_axes_mapping). An empty target or mapping is written as nothing.

_CONST_RE = re.compile(r"^(numpy|explicit)_to_((?:\d+(?:x\d+)*)?)(?:_axes((?:\d+(?:x\d+)*)?))?(?:_check(\d+(?:x\d+)*))?$")


def _dims_token(values) -> str:
    return "x".join(str(int(v)) for v in values)


def _const_name(body: str, t, axes, checks) -> str:
    name = f"{body}_to_{_dims_token(t)}"
    if body == "explicit":
        name += f"_axes{_dims_token(axes)}"
    if checks:
        name += f"_check{_dims_token(checks)}"
    return name


def _parse_const_name(name: str):
    match = _CONST_RE.match(name) if isinstance(name, str) else None
    if match is None:
        return None
    body, t, axes, checks = match.groups()
    split = lambda text: [int(v) for v in text.split("x")] if text else []  # noqa: E731
    t, axes_l, checks_l = split(t), split(axes or ""), split(checks or "")
    if (body == "explicit") != (axes is not None):
        return None
    if body == "explicit":
        if any(x >= y for x, y in zip(axes_l, axes_l[1:])) or any(x >= len(t) for x in axes_l):
            return None
        if any(c >= max(len(axes_l), 1) for c in checks_l):
            return None
    elif any(c >= len(t) for c in checks_l):
        return None
    if any(x >= y for x, y in zip(checks_l, checks_l[1:])) or _const_name(body, t, axes_l, checks_l) != name:
        return None
    return body, t, axes_l, checks_l


def _const_body(name: str):
    parsed = _parse_const_name(name)
    if parsed is None:
        return None
    body, t, axes, checks = parsed
    g = BodyBuilder()
    x = "data"
    target = g.const(np.array(t, np.int64).reshape(len(t)))
    if checks:
        # data dims that must be 1 (they meet a target dim of 1, and were not known when built)
        shape = g("Shape", "data")
        ok = g("Equal", g("ReduceMax", g("Gather", shape, g.const(checks)), keepdims=0), g.const(1))
        check_name = "target_shape_numpy_compatible" if body == "numpy" else "data_dims_match_target_at_axes_mapping"
        target = g("Add", target, g.check(check_name, ok))
    if body == "explicit":
        # the data dims at their axes, 1 elsewhere (0-d data: written with no axes, 1 everywhere)
        others = [i for i in range(len(t)) if i not in axes]
        if others:
            x = g("Unsqueeze", x, g.const(others))
    y = g("Expand", x, target)
    return built_function(ov_ext.domain, "Broadcast", name, ["data", "target_shape", "axes_mapping"], g, y, op.version,
                          Broadcast.to_function_proto())


def _const_overload(body: str, operands: Sequence[Operand]) -> str | None:
    """The constant-target overload for this node, or None (values or data rank not known)."""
    data, target = operands[0], operands[1]
    if target.value is None or data.shape is None:
        return None
    t = [int(v) for v in np.asarray(target.value).reshape(-1)]
    d = data.shape
    if body == "numpy":
        offset = len(t) - len(d)
        if offset < 0:
            return None
        checks = [i for i, dim in enumerate(d) if t[offset + i] == 1 and dim != 1]
        return _const_name("numpy", t, [], checks)
    if len(operands) < 3 or operands[2].value is None:
        return None
    axes = [int(v) for v in np.asarray(operands[2].value).reshape(-1)]
    if len(d) == 0:
        return _const_name("explicit", t, [], [])  # 0-d data: checked when built (a target dim of 1)
    if len(axes) != len(d):
        return None
    checks = [i for i, (a, dim) in enumerate(zip(axes, d)) if t[a] == 1 and dim != 1]
    return _const_name("explicit", t, axes, checks)


# --- numpy reference ---------------------------------------------------------------------------


def broadcast_reference(data: np.ndarray, target_shape, axes_mapping=None, mode: str = "numpy", axis: int = -1,
                        version: int = 3) -> np.ndarray:
    """Broadcast-1/3 in numpy; raises OpInputError where OpenVINO refuses the inputs."""
    data = np.asarray(data)
    mode = _mode(mode)
    t = _int_vector(target_shape, "target_shape")
    d = data.shape
    if any(v < 0 for v in t):
        raise OpInputError("Broadcast", f"target_shape {t} has a negative dim")
    if mode == "bidirectional":
        try:
            out = np.broadcast_shapes(d, tuple(t))
        except ValueError:
            raise OpInputError("Broadcast", f"data shape {list(d)} and target_shape {t} do not broadcast") from None
        return np.broadcast_to(data, out).copy()
    if mode == "numpy":
        _check_numpy(d, t)
        return np.broadcast_to(data, tuple(t)).copy()
    if mode == "pdpd":
        out = _pdpd_shape(d, t, axis)
        return np.broadcast_to(data, out).copy()
    if axes_mapping is None:
        raise OpInputError("Broadcast", f"mode {mode!r} needs the axes_mapping input")
    a = _int_vector(axes_mapping, "axes_mapping")
    shape = _explicit_shape(d, t, a)
    return np.broadcast_to(data.reshape(shape), tuple(t)).copy()


def _mode(mode) -> str:
    return mode.decode() if isinstance(mode, bytes) else mode


def _int_vector(value, name: str) -> list[int]:
    value = np.asarray(value)
    if value.dtype.kind not in "iu":
        raise OpInputError("Broadcast", f"{name} must be integers, got {value.dtype}")
    if value.ndim != 1:
        raise OpInputError("Broadcast", f"{name} must be 1-D, got shape {list(value.shape)}")
    return [int(v) for v in value.reshape(-1)]


def _check_numpy(d: Sequence[int], t: Sequence[int]) -> None:
    if len(t) < len(d):
        raise OpInputError("Broadcast", f"numpy mode: target_shape {list(t)} has a smaller rank than data {list(d)}")
    for dd, tt in zip(d, t[len(t) - len(d):]):
        if dd != 1 and dd != tt:
            raise OpInputError("Broadcast", f"numpy mode: data shape {list(d)} does not broadcast one-way to {list(t)}")


def _pdpd_shape(d: Sequence[int], t: Sequence[int], axis: int) -> tuple[int, ...]:
    start = len(t) - len(d)
    if start < 0:
        raise OpInputError("Broadcast", f"pdpd mode: target_shape {list(t)} has a smaller rank than data {list(d)}")
    if axis not in (-1, start):
        raise OpInputError("Broadcast", f"pdpd mode: axis {axis} does not align data of rank {len(d)} with the end of "
                           f"target_shape of rank {len(t)} (axis must be -1 or {start})")
    out = list(t)
    for i, dd in enumerate(d):
        tt = t[start + i]
        if not (dd == tt or dd == 1 or tt == 1):
            raise OpInputError("Broadcast", f"pdpd mode: data shape {list(d)} does not broadcast to {list(t)}")
        out[start + i] = dd if tt == 1 else max(dd, tt)  # 1 against 0 gives 1, as the reference does
    return tuple(out)


def _explicit_shape(d: Sequence[int], t: Sequence[int], a: Sequence[int]) -> list[int]:
    """The shape the data is reshaped to before broadcasting, after OpenVINO's checks."""
    if not (len(a) == len(d) or (len(d) == 0 and len(a) == 1)):
        raise OpInputError("Broadcast", f"axes_mapping {list(a)} must have one entry per data axis ({len(d)})")
    if any(x >= y for x, y in zip(a, a[1:])):
        raise OpInputError("Broadcast", f"axes_mapping {list(a)} must be strictly increasing: Broadcast doesn't "
                           "permit transposes")
    if any(not 0 <= x < len(t) for x in a):
        raise OpInputError("Broadcast", f"axes_mapping {list(a)} must be within [0, {len(t)}) for target_shape "
                           f"{list(t)}")
    dims = list(d) if d or not a else [1]
    shape = [1] * len(t)
    for i, (x, dd) in enumerate(zip(a, dims)):
        if not (dd == t[x] or (dd == 1 and len(d) > 0)):
            raise OpInputError("Broadcast", f"data dim {i} ({dd}) must be 1 or target_shape[{x}] = {t[x]}"
                               if d else f"0-d data needs target_shape[{x}] = 1, got {t[x]}")
        shape[x] = dd
    return shape


# --- attribute and input checks ----------------------------------------------------------------


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple | None:
    """numpy, explicit: target_shape; bidirectional, pdpd: computed with the data dims (symbolic
    ones where the rules allow, else None). Rank only when target_shape is not a constant."""
    data, target = operands[0], operands[1]
    body, d = _BODY_OF_MODE[attrs["mode"]], data.shape
    if target.value is None:
        t_rank = target.shape[0] if target.rank == 1 and isinstance(target.shape[0], int) else None
        if t_rank is None or (body == "bidirectional" and d is None):
            return None
        return (None,) * (max(t_rank, len(d)) if body == "bidirectional" else t_rank)
    t = _int_vector(target.value, "target_shape")
    if body in ("numpy", "explicit"):
        return tuple(t)
    if d is None:
        return None if body == "bidirectional" else (None,) * len(t)
    if all(isinstance(x, int) for x in d):
        return tuple(np.broadcast_shapes(tuple(d), tuple(t))) if body == "bidirectional" else _pdpd_shape(d, t, attrs["axis"])
    if body == "bidirectional":  # (ints checked by check_operands): a dim of 1 takes the other one
        rank = max(len(d), len(t))
        pairs = zip((1,) * (rank - len(d)) + tuple(d), (1,) * (rank - len(t)) + tuple(t))
        return tuple(tt if dd == 1 else dd if tt == 1 or isinstance(dd, int) else tt for dd, tt in pairs)
    start = len(t) - len(d)  # pdpd: data dim dd is tt or 1 unless tt is 1; max(dd, 0) is dd
    return tuple(t[:start]) + tuple(dd if tt in (0, 1) else max(dd, tt) if isinstance(dd, int) else tt
                                    for dd, tt in zip(d, t[start:]))


def check_attributes(attrs: dict) -> dict:
    version, mode, axis = attrs["version"], attrs["mode"].lower(), attrs["axis"]
    if version not in VERSIONS:
        raise OpAttributeError("Broadcast", "version", f"is {version}: OpenVINO Broadcast versions are {VERSIONS}")
    if mode not in MODES[version]:
        raise OpAttributeError("Broadcast", "mode", f"is {attrs['mode']!r}: Broadcast-{version} modes are "
                               f"{', '.join(MODES[version])}")
    if mode == "pdpd" and axis < -1:
        raise OpAttributeError("Broadcast", "axis", f"is {axis}: pdpd's axis must be -1 (trailing alignment) or >= 0")
    if mode != "pdpd" and axis != -1:
        raise OpAttributeError("Broadcast", "axis", f"is {axis}: only mode pdpd takes an axis")
    return {**attrs, "mode": mode}


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    mode, version = attrs["mode"], attrs["version"]
    n = len(operands)
    if _BODY_OF_MODE[mode] == "explicit" and n != 3:
        raise OpInputError("Broadcast", f"mode {mode!r} needs the axes_mapping input")
    if version == 3 and _BODY_OF_MODE[mode] != "explicit" and n != 2:
        raise OpInputError("Broadcast", f"Broadcast-3 takes no axes_mapping input in mode {mode!r}")
    data, target = operands[0], operands[1]
    for name, o in zip(("target_shape", "axes_mapping"), operands[1:]):
        if name == "axes_mapping" and _BODY_OF_MODE[mode] != "explicit":
            continue  # Broadcast-1's unused third input
        if o.type is not None and not o.type.is_integer:
            raise OpInputError("Broadcast", f"{name} must be integers, got {o.type.ov}")
        if o.rank is not None and o.rank != 1:
            raise OpInputError("Broadcast", f"{name} must be 1-D, got rank {o.rank}")
    # What the known values decide now.
    d = data.shape
    t = None if target.value is None else _int_vector(target.value, "target_shape")
    t_rank = len(t) if t is not None else None
    if t_rank is None and target.rank == 1 and isinstance(target.shape[0], int):
        t_rank = target.shape[0]
    if t is not None and any(v < 0 for v in t):
        raise OpInputError("Broadcast", f"target_shape {t} has a negative dim")
    known = d is not None and all(isinstance(x, int) for x in d)
    body = _BODY_OF_MODE[mode]
    if body == "numpy" and d is not None and t_rank is not None and t_rank < len(d):
        raise OpInputError("Broadcast", f"numpy mode: target_shape of rank {t_rank} is smaller than the data rank "
                           f"{len(d)}")
    if body == "pdpd" and d is not None and t_rank is not None:
        start = t_rank - len(d)
        if start < 0 or attrs["axis"] not in (-1, start):
            raise OpInputError("Broadcast", f"pdpd mode: axis {attrs['axis']} does not align data of rank {len(d)} "
                               f"with the end of a target_shape of rank {t_rank}")
    if t is not None and d is not None and not known and body == "numpy" and len(t) >= len(d):
        # the data dims that are known must broadcast one-way
        for dd, tt in zip(d, t[len(t) - len(d):]):
            if isinstance(dd, int) and dd != 1 and dd != tt:
                raise OpInputError("Broadcast", f"numpy mode: data shape {list(d)} does not broadcast one-way to "
                                   f"{list(t)}")
    if t is not None and known:
        if body == "numpy":
            _check_numpy(d, t)
        elif body == "pdpd":
            _pdpd_shape(d, t, attrs["axis"])
        elif body == "bidirectional":
            try:
                np.broadcast_shapes(tuple(d), tuple(t))
            except ValueError:
                raise OpInputError("Broadcast", f"data shape {list(d)} and target_shape {t} do not broadcast") from None
    if body == "explicit" and operands[2].value is not None:
        a = _int_vector(operands[2].value, "axes_mapping")
        if any(x >= y for x, y in zip(a, a[1:])):
            raise OpInputError("Broadcast", f"axes_mapping {a} must be strictly increasing: Broadcast doesn't "
                               "permit transposes")
        if any(x < 0 or (t_rank is not None and x >= t_rank) for x in a):
            raise OpInputError("Broadcast", f"axes_mapping {a} must be within [0, {t_rank})")
        if d is not None and not (len(a) == len(d) or (len(d) == 0 and len(a) == 1)):
            raise OpInputError("Broadcast", f"axes_mapping {a} must have one entry per data axis ({len(d)})")
        if t is not None and known:
            _explicit_shape(d, t, a)
        elif t is not None and d is not None and len(a) == len(d) and all(0 <= x < len(t) for x in a):
            for i, (x, dd) in enumerate(zip(a, d)):
                if isinstance(dd, int) and dd != 1 and dd != t[x]:
                    raise OpInputError("Broadcast", f"data dim {i} ({dd}) must be 1 or target_shape[{x}] = {t[x]}")


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    body = _BODY_OF_MODE[attrs["mode"]]
    et = operands[0].type if operands else None
    # Expand has no bf16 kernel; the Gather route also serves unknown types.
    if et is None or et.ov == "bf16":
        return f"{body}_any"
    if body in ("numpy", "explicit"):
        const = _const_overload(body, operands)
        if const is not None:
            return const
    return body


SPEC = OpSpec(
    name="Broadcast",
    inputs=("data", "target_shape", "axes_mapping"),
    min_inputs=2,
    attributes={"mode": Attr("string", "numpy"), "axis": Attr("int", -1), "version": Attr("int", 3)},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=output_shape,
    read_operands=lambda attrs, operands: operands if _BODY_OF_MODE[attrs["mode"]] == "explicit" else operands[:2],
    bodies=LazyBodies({
        "numpy": broadcast_numpy, "numpy_any": broadcast_numpy_any,
        "explicit": broadcast_explicit, "explicit_any": broadcast_explicit_any,
        "bidirectional": broadcast_bidirectional, "bidirectional_any": broadcast_bidirectional_any,
        "pdpd": broadcast_pdpd, "pdpd_any": broadcast_pdpd_any,
    }, _const_body),
    helpers=(_numpy_plan, _pdpd_plan, _explicit_plan, _block_plan, _gather_rows, _gather_broadcast),
    public=Broadcast,
    reference=broadcast_reference,
)
