"""The common nodes of shape arithmetic, computed with numpy as onnx's reference evaluator computes them.

Folding (fold.py) evaluates the nodes of every layer whose inputs are small constants; building an onnx
model and a ``ReferenceEvaluator`` for each costs ~1-3 ms, most of the conversion time of an IR with
hundreds of such layers. The ops here are the evaluator's own implementations (``onnx/reference/ops/
op_*.py``) restated without its model: same numpy calls, same result types; the domain's ops run their
numpy reference as the evaluator does. A node of any other op (or an input this does not take) makes
``run`` give None, and fold.py evaluates the layer with the evaluator. tests/test_fold_numpy.py checks
each op here against the evaluator over element types, broadcasting and integer division's signs.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import onnx
import onnx_ir as ir

import onnx_ext
from onnx_ext import ops

#: The element types Cast converts to here (``x.astype``, as the evaluator's ``cast_to`` for them).
_PLAIN = {t: ir.DataType(t).numpy() for t in (
    onnx.TensorProto.BOOL, onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32,
    onnx.TensorProto.INT64, onnx.TensorProto.UINT8, onnx.TensorProto.UINT16, onnx.TensorProto.UINT32,
    onnx.TensorProto.UINT64, onnx.TensorProto.FLOAT16, onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE)}


class NotCovered(Exception):
    """The node is not one this module computes: the evaluator does."""


def _attr(node: ir.Node, name: str, default=None):
    attr = node.attributes.get(name)
    return default if attr is None else attr.value


def _same_type(*xs: np.ndarray) -> None:
    if len({x.dtype for x in xs}) != 1 or xs[0].dtype not in _PLAIN.values():
        raise NotCovered


def _numeric(*xs: np.ndarray) -> None:
    _same_type(*xs)
    if xs[0].dtype == np.bool_:
        raise NotCovered


def _binary(fn: Callable, check: Callable = _numeric) -> Callable:
    def run(node, a, b):
        check(a, b)
        return fn(a, b)
    return run


def _div(node, a, b):
    _numeric(a, b)
    if issubclass(a.dtype.type, np.integer):  # truncated toward zero (C), in integers
        q = np.floor_divide(a, b)
        needs_adjust = (np.remainder(a, b) != 0) & ((a < 0) ^ (b < 0))
        return q + needs_adjust.astype(q.dtype)
    return np.divide(a, b).astype(a.dtype)


def _mod(node, a, b):
    _numeric(a, b)
    return np.fmod(a, b) if _attr(node, "fmod", 0) == 1 else np.mod(a, b)


def _logical(fn: Callable) -> Callable:
    def run(node, *xs):
        if any(x.dtype != np.bool_ for x in xs):
            raise NotCovered
        return fn(*xs)
    return run


def _unary(fn: Callable) -> Callable:
    def run(node, x):
        _numeric(x)
        return fn(x)
    return run


def _variadic(fn: Callable) -> Callable:
    def run(node, *xs):
        _numeric(*xs)
        out = xs[0].copy()
        for x in xs[1:]:
            out = fn(out, x)
        return out
    return run


def _where(node, cond, x, y):
    _same_type(x, y)
    if cond.dtype != np.bool_:
        raise NotCovered
    return np.where(cond, x, y).astype(x.dtype)


def _cast(node, x):
    to = _PLAIN.get(_attr(node, "to"))
    if to is None or x.dtype not in _PLAIN.values() or "round_mode" in node.attributes:
        raise NotCovered
    return x.astype(to)


def _concat(node, *xs):
    axis = _attr(node, "axis")
    if any(x.ndim == 0 or not -x.ndim <= axis < x.ndim for x in xs):
        raise NotCovered
    return np.concatenate(xs, axis)


def _gather(node, x, indices):
    return np.take(x, indices, axis=_attr(node, "axis", 0))


def _unsqueeze(node, x, axes):
    return np.expand_dims(x, axis=tuple(axes.reshape(-1).tolist()))


def _squeeze(node, x, axes=None):
    return np.squeeze(x) if axes is None else np.squeeze(x, axis=tuple(axes.reshape(-1).tolist()))


def _reshape(node, x, shape):
    new_shape = np.copy(shape)
    if _attr(node, "allowzero", 0) != 1:
        zeros = np.where(shape == 0)
        new_shape[zeros] = np.array(x.shape)[zeros]
    return np.reshape(x, new_shape)


def _range(node, start, limit, delta):
    if "stash_type" in node.attributes:
        raise NotCovered
    return np.arange(start.item(), limit.item(), delta.item()).astype(start.dtype)


def _identity(node, x):
    return x.copy()


#: Standard ONNX ops (domain "") by op type: ``fn(node, *inputs) -> array``.
OPS: dict[str, Callable] = {
    "Add": _binary(np.add), "Sub": _binary(np.subtract), "Mul": _binary(np.multiply), "Div": _div, "Mod": _mod,
    "Neg": _unary(np.negative), "Abs": _unary(np.absolute),
    "Min": _variadic(np.minimum), "Max": _variadic(np.maximum),
    "Equal": _binary(np.equal, _same_type), "Less": _binary(np.less), "LessOrEqual": _binary(np.less_equal),
    "Greater": _binary(np.greater), "GreaterOrEqual": _binary(np.greater_equal),
    "Not": _logical(np.logical_not), "And": _logical(np.logical_and), "Or": _logical(np.logical_or),
    "Xor": _logical(np.logical_xor), "Where": _where, "Cast": _cast, "Identity": _identity,
    "Concat": _concat, "Gather": _gather, "Unsqueeze": _unsqueeze, "Squeeze": _squeeze, "Reshape": _reshape,
    "Range": _range,
}


def run_node(node: ir.Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """The outputs of ``node``; raises ``NotCovered`` for what the evaluator computes instead."""
    if node.domain == onnx_ext.DOMAIN:
        spec = ops.spec(node.op_type)
        attrs = spec.normalize({a.name: onnx.helper.get_attribute_value(ir.serde.serialize_attribute(a))
                                for a in node.attributes.values()}, node.name or None)
        return [np.asarray(a) for a in spec.run_reference(*inputs, **attrs)]
    while inputs and inputs[-1] is None:
        inputs = inputs[:-1]
    fn = OPS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
    if fn is None or len(node.outputs) != 1 or any(x is None for x in inputs):
        raise NotCovered
    return [np.asarray(fn(node, *inputs))]


def run(nodes: list[ir.Node], constants: dict[str, np.ndarray], outputs: list[str]) -> list[np.ndarray] | None:
    """The values ``outputs`` that ``nodes`` compute from ``constants``, or None when a node is not one
    this module computes (or numpy refuses its inputs)."""
    env: dict[str, np.ndarray] = {}
    try:
        for node in nodes:
            inputs = [None if v is None else env[v.name] if v.name in env else np.asarray(constants[v.name])
                      for v in node.inputs]
            for value, array in zip(node.outputs, run_node(node, inputs)):
                env[value.name] = array
        return [env[name] for name in outputs]
    except Exception:  # noqa: BLE001 - NotCovered, or inputs numpy refuses: the evaluator decides
        return None
