"""Output ranks of common layers, for ports written with no <dim>.

An IR port with no <dim> is a scalar to OpenVINO's serializer, or a tensor of
dynamic rank; IR written by other tools (our own ONNX -> IR writer included, where
ONNX shape inference gave up) also leaves out dims it does not know. Before a
layer is translated, an empty output port is checked against the rank its inputs
imply: a non-zero rank replaces the IR's "scalar" with that many dynamic dims.
Layers without a rule keep what the IR says.
"""

from __future__ import annotations

import numpy as np

from onnx_ext.ops import broadcast as broadcast_op

from . import attributes as attr
from .context import Context
from .registry import op_version

_SAME_AS_WIDEST = {
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "floormod", "mod", "squareddifference",
    "equal", "notequal", "less", "greater", "lessequal", "greaterequal", "logicaland", "logicalor", "logicalxor",
    "logicalnot", "bitwiseand", "bitwiseor", "bitwisexor", "bitwisenot", "select", "convert", "convertlike", "abs",
    "negative", "sign", "floor", "ceiling", "round", "relu", "sigmoid", "tanh", "exp", "log", "sqrt", "erf", "sin",
    "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "clamp", "elu", "gelu", "hswish",
    "hsigmoid", "softplus", "mish", "softsign", "softmax", "logsoftmax", "identity", "cumsum", "concat", "transpose",
    "slice", "split", "variadicsplit",
}
#: Ops whose output rank is their first input's (the others are axes, shapes, ...).
_FIRST_INPUT = {"convertlike", "concat", "transpose", "slice", "split", "variadicsplit", "cumsum"}
_REDUCE = {"reducesum", "reduceprod", "reducemax", "reducemin", "reducemean", "reducel1", "reducel2",
           "reducelogicaland", "reducelogicalor"}


#: Types infer_rank has a rule for (beyond _SAME_AS_WIDEST and _REDUCE).
_RULES = {"shapeof", "range", "nonzero", "gather", "gathernd", "reshape", "randomuniform", "unsqueeze", "squeeze", "broadcast",
          "tile", "stridedslice", "matmul"}


def rank_is_unknown(layer, inputs, rank: int | None) -> bool:
    """Whether an empty output port of ``layer`` (``rank``: what ``infer_rank`` said) is of dynamic rank,
    not a scalar: infer_rank has a rule for the layer that cannot decide (a Reshape to a shape of unknown
    length), or it has none and an input's rank is unknown (as _rank_knowledge in convert.py taints)."""
    if rank is not None:
        return False
    t = layer.type.lower()
    return t in _SAME_AS_WIDEST or t in _REDUCE or t in _RULES or any(v.rank is None for v in inputs)


def infer_rank(ctx: Context, layer, inputs) -> int | None:
    """The rank of every output of ``layer`` given its input values, or None when unknown."""
    t = layer.type.lower()
    ranks = [v.rank for v in inputs]
    if t in _SAME_AS_WIDEST:
        data = ranks[:1] if t in _FIRST_INPUT else ranks
        return None if not data or any(r is None for r in data) else max(data)
    if t in ("shapeof", "range"):
        return 1
    if t == "nonzero":
        return 2
    if t == "gather" and len(inputs) >= 2:
        if ranks[0] is None or ranks[1] is None:
            return None
        b = attr.integer(ctx, layer, "batch_dims", 0) if op_version(layer) > 1 else 0
        b = b + ranks[1] if b < 0 else b
        return ranks[0] - 1 + ranks[1] - b
    if t == "gathernd" and len(inputs) >= 2:
        return _gather_nd_rank(ctx, layer, inputs)
    if t == "reshape" and len(inputs) >= 2:
        return _length(inputs[1])
    if t == "randomuniform" and inputs:
        return _length(inputs[0])
    if t == "unsqueeze" and len(inputs) >= 2:
        axes = _const(inputs[1])
        if axes is None:  # computed at run time: as many new dims as entries (ONNX refuses repeated ones)
            n = 1 if ranks[1] == 0 else _length(inputs[1])
            return None if ranks[0] is None or n is None else ranks[0] + n
        return None if ranks[0] is None else ranks[0] + len(set(axes))
    if t == "squeeze" and inputs:
        return _squeeze_rank(layer, inputs)
    if t in _REDUCE and len(inputs) >= 2:
        if ranks[0] is None:
            return None
        if attr.boolean(layer, "keep_dims", False):
            return ranks[0]
        axes = _const(inputs[1])
        if axes is None:
            return None
        return ranks[0] - len({a % ranks[0] for a in axes}) if ranks[0] else 0
    if t == "broadcast" and len(inputs) >= 2:
        n = _length(inputs[1])
        if n is None:
            return None
        if attr.choice(ctx, layer, "mode", broadcast_op.MODES[op_version(layer)], "numpy") == "bidirectional":
            return None if ranks[0] is None else max(ranks[0], n)
        return n
    if t == "tile" and len(inputs) >= 2:
        n = _length(inputs[1])
        return None if ranks[0] is None or n is None else max(ranks[0], n)
    if t == "stridedslice" and len(inputs) >= 3:
        return _strided_slice_rank(ctx, layer, ranks[0], _length(inputs[1]))
    if t == "matmul" and len(inputs) >= 2:
        a, b = ranks[0], ranks[1]
        if a is None or b is None:
            return None
        return max(a, b) - (a == 1) - (b == 1) if (a, b) != (1, 1) else 0
    return None


def _squeeze_rank(layer, inputs) -> int | None:
    """Given axes remove that many dims (with allow_axis_skip only those of 1); without axes (or empty
    ones) every dim of 1 goes. What dynamic dims decide is unknown."""
    data = inputs[0]
    if data.rank is None:
        return None
    axes = _const(inputs[1]) if len(inputs) >= 2 else []
    if axes is None:
        return None
    dims = data.shape or (None,) * data.rank
    if not axes:
        return None if any(d is None for d in dims) else sum(d != 1 for d in dims)
    picked = {a % max(data.rank, 1) for a in axes}
    if layer.data.get("allow_axis_skip", "false").lower() == "true":
        if any(dims[a] is None for a in picked):
            return None
        return data.rank - sum(dims[a] == 1 for a in picked)
    return data.rank - len(picked)


def _gather_nd_rank(ctx: Context, layer, inputs) -> int | None:
    """indices.shape[:-1] + data.shape[batch_dims + depth:] (GatherND-5 flattens the batch dims into one), the
    depth the indices' last dim: unknown where that dim is dynamic (indices computed at run time)."""
    data, indices = inputs[0], inputs[1]
    if data.rank is None or indices.rank is None or not indices.shape or indices.shape[-1] is None:
        return None
    b = attr.integer(ctx, layer, "batch_dims", 0)
    rank = indices.rank - 1 + data.rank - b - indices.shape[-1]
    return rank - b + 1 if op_version(layer) == 5 and b else rank


def _const(v) -> list[int] | None:
    return None if v.const is None else [int(x) for x in np.asarray(v.const).reshape(-1)]


def _length(v) -> int | None:
    """The number of entries of a 1-D value (a shape, axes, ...)."""
    if v.const is not None:
        return int(np.asarray(v.const).size)
    if v.shape is not None and len(v.shape) == 1:
        return v.shape[0]
    return None


def _strided_slice_rank(ctx: Context, layer, rank: int | None, n: int | None) -> int | None:
    if rank is None or n is None:
        return None
    masks = {k: attr.integers(ctx, layer, k, []) for k in ("new_axis_mask", "shrink_axis_mask", "ellipsis_mask")}

    def bit(name, i):
        m = masks[name]
        return i < len(m) and m[i] == 1

    new = sum(1 for i in range(n) if bit("new_axis_mask", i) and not bit("ellipsis_mask", i))
    shrink = sum(1 for i in range(n) if bit("shrink_axis_mask", i) and not bit("new_axis_mask", i)
                 and not bit("ellipsis_mask", i))
    return rank + new - shrink
