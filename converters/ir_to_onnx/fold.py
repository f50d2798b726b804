"""Constant folding, one module for every translator; three parts.

1. ``fold_layer``: a layer whose inputs are all small constants known at conversion time (shape arithmetic: a
   static rank compared with a number, a shape reshaped, squeezed, concatenated) is translated like any other;
   then the nodes it emitted are evaluated once (``evaluate``: what onnxruntime computes of those nodes) and its
   outputs become constants in their place. What reads them folds in turn: an If whose condition folds keeps
   only its live body (handlers/control.py). Translators carry no folding of their own, and folding cannot
   disagree with the translation.
2. The evaluation: the common ops of shape arithmetic by numpy (``OPS``, ``run_numpy``: onnx's reference
   evaluator's own numpy restated without building a model per layer, ~1-3 ms each, most of the conversion time
   of an IR with hundreds of such layers; the domain's ops by their numpy references), the rest by onnx's
   reference evaluator. tests/test_fold_numpy.py checks each op of ``OPS`` against the evaluator.
3. ``fold_known``: before translation, shape arithmetic on a value known in part (a ShapeOf of data with a
   dynamic batch) whose output is known in full, followed on the IR's layers (their inputs are no constants:
   there is nothing to evaluate nodes on).

Bounded: inputs and outputs of at most ``FOLD_ELEMENTS`` elements, so weights are never evaluated
or copied. Translators whose constants need OpenVINO's own arithmetic make them themselves (Convert:
``io.fold_convert``; RandomUniform, Multinomial; PriorBox over static shapes): their outputs are
constants already, and this leaves them.
"""

from __future__ import annotations

import math
import warnings
from typing import Callable

import numpy as np
import onnx
import onnx_ir as ir

import onnx_ext
from onnx_ext import ops
from onnx_ext.types import from_numpy

from ..ir import Layer
from .context import Context, Value

#: Constants of at most this many elements fold (inputs and outputs).
FOLD_ELEMENTS = 64

#: Layers that are no function of their inputs alone (graph inputs and outputs, state).
_NOT_FOLDED = frozenset({"parameter", "const", "result", "readvalue", "assign"})
#: Ops that draw random numbers (standard or of the domain): a new draw each run, not a constant.
_RANDOM_OPS = frozenset({"RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike", "Multinomial",
                         "Bernoulli"})


def fold_layer(ctx: Context, layer: Layer, first_node: int, domain_used: bool) -> None:
    """Replace what the translation of ``layer`` emitted (``ctx.nodes[first_node:]``) by the constants
    it computes, when its inputs are small constants; ``domain_used``: the flag before the layer."""
    if layer.type.lower() in _NOT_FOLDED or layer.bodies or not layer.inputs or len(ctx.nodes) == first_node:
        return
    if not all(_small_constant(ctx.input(i)) for i in range(len(layer.inputs))):
        return
    outputs = [ctx.values[(layer.id, port.id)] for port in layer.outputs]
    pending = [i for i, v in enumerate(outputs) if v.const is None]
    if not pending or not all(_small_shape(ctx.out_value(i).shape) for i in pending):
        return
    nodes = ctx.nodes[first_node:]
    arrays = evaluate(ctx, nodes, [outputs[i].name for i in pending])
    if arrays is None or any(a.size > FOLD_ELEMENTS or (outputs[i].type is not None and from_numpy(a.dtype) !=
                                                         outputs[i].type) for i, a in zip(pending, arrays)):
        return
    _drop(ctx, nodes)
    ctx.domain_used = domain_used
    for i, array in zip(pending, arrays):
        ctx.root.hints.pop(outputs[i].name, None)
        ctx.set_const(i, array)


def fold_subgraph(ctx: Context, layer: Layer, first_node: int, domain_used: bool) -> None:
    """The output of a compressed-weights subgraph (handlers/decompression.py: one DequantizeLinear in place of
    Convert -> Subtract -> Multiply) a constant when it is small, as the layers it replaced would fold: a Selu's
    alpha, a PRelu's slope, FakeQuantize's ranges decompressed from u8 are constants to what reads them."""
    nodes = ctx.nodes[first_node:]
    if not nodes or len(layer.outputs) != 1:
        return
    out = ctx.values.get((layer.id, layer.outputs[0].id))
    if out is None or out.const is not None or not _small_shape(out.shape):
        return
    arrays = evaluate(ctx, nodes, [out.name])
    if arrays is None or arrays[0].size > FOLD_ELEMENTS or (out.type is not None and from_numpy(arrays[0].dtype) !=
                                                            out.type):
        return
    _drop(ctx, nodes)
    ctx.domain_used = domain_used
    ctx.root.hints.pop(out.name, None)
    ctx.set_const(0, arrays[0])


def _small_constant(v: Value) -> bool:
    return v.const is not None and np.size(v.const) <= FOLD_ELEMENTS and v.type is not None and not v.type.packed_bits


def _small_shape(shape: tuple | None) -> bool:
    return shape is not None and all(isinstance(d, (int, np.integer)) for d in shape) and \
        math.prod(shape) <= FOLD_ELEMENTS


def _drop(ctx: Context, nodes: list[ir.Node]) -> None:
    """Take ``nodes`` (the last ones of ``ctx``) out of the graph: their names free, the constants they read
    no longer read by them."""
    del ctx.nodes[len(ctx.nodes) - len(nodes):]
    for node in nodes:
        node.resize_inputs(0)
        ctx.node_owners.pop(node.name, None)
        for value in node.outputs:
            ctx._scope.pop(value.name, None)


def evaluate(ctx: Context, nodes: list[ir.Node], outputs: list[str]) -> list[np.ndarray] | None:
    """The values ``outputs`` that ``nodes`` (standard or of the domain, reading constants of ``ctx``)
    compute, by ``run_numpy`` where it takes every node, else by onnx's reference evaluator; None where
    it cannot (a node reads a value no constant gives, holds a graph, draws random numbers, or the
    evaluator fails): folding is a help, never a requirement."""
    if any(n.op_type in _RANDOM_OPS or any(a.type == ir.AttributeType.GRAPH for a in n.attributes.values())
           for n in nodes):
        return None
    made = {v.name for n in nodes for v in n.outputs}
    read = {v.name for n in nodes for v in n.inputs if v is not None and v.name not in made}
    if not read <= ctx.constants.keys():
        return None
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        arrays = run_numpy(nodes, ctx.constants, outputs)
    return arrays if arrays is not None else _evaluate_model(ctx, nodes, outputs, read)


def _evaluate_model(ctx: Context, nodes: list[ir.Node], outputs: list[str], read: set[str]) -> list[np.ndarray] | None:
    """``evaluate`` by onnx's reference evaluator, on a model of ``nodes`` whose initializers are ``read``."""
    from onnx_ext.reference import reference_evaluator

    try:
        initializers = [onnx.numpy_helper.from_array(np.asarray(ctx.constants[n]), n) for n in sorted(read)]
        graph = onnx.helper.make_graph([ir.serde.serialize_node(n) for n in nodes], "fold", [],
                                       [onnx.ValueInfoProto(name=o) for o in outputs], initializer=initializers)
        opsets = {"": onnx_ext.ONNX_OPSET, onnx_ext.DOMAIN: onnx_ext.DOMAIN_VERSION, **ctx.root.extra_opsets}
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid(d, v) for d, v in opsets.items()])
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return [np.asarray(a) for a in reference_evaluator(model).run(None, {})]
    except Exception:  # noqa: BLE001 - the nodes stay, as translated
        return None


# --- ONNX nodes by numpy, as onnx's reference evaluator computes them (onnx/reference/ops/op_*.py) -----------

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


def run_numpy(nodes: list[ir.Node], constants: dict[str, np.ndarray], outputs: list[str]) -> list[np.ndarray] | None:
    """The values ``outputs`` that ``nodes`` compute from ``constants``, or None when a node is not one
    ``OPS`` computes (or numpy refuses its inputs)."""
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


# --- values known in part -------------------------------------------------------------------------------------
# A ShapeOf of data with a dynamic batch gives some dims known now (static) and some at run time only; shape
# arithmetic on it (Gather, StridedSlice, Slice, Concat, Convert, Squeeze, Add...) may read known ones only:
# ``tf.shape(x)[1:3]``, ``x.shape[2:]``, a Transpose order or Split axis computed so. Such a layer's output,
# every element known, is a constant here (what reads it gets one); elements are ints, or None where unknown.

#: The layers whose outputs' known elements follow from their inputs' (walked back, at most this deep).
_KNOWN_DEPTH = 12
_ARITHMETIC = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply}


def fold_known(ctx: Context, layer: Layer) -> bool:
    """Make output 0 of ``layer`` (of shape arithmetic on a shape not static) a constant when every element of
    it is known; True if it did, and the layer needs no translation."""
    kind = layer.type.lower()
    if kind not in _KNOWN_OPS or len(layer.outputs) != 1 or not _small_shape(ctx.out_value(0).shape) or \
            all(_small_constant(ctx.input(i)) for i in range(len(layer.inputs))):
        return False  # (all inputs constant: fold_layer folds it as translated)
    et = layer.outputs[0].element_type
    if not _integers(et):
        return False
    try:
        known = _KNOWN_OPS[kind](ctx, layer, _KNOWN_DEPTH)
    except (ValueError, IndexError, TypeError, KeyError):  # a layer this does not follow: translated as written
        return False
    if known is None or known.size > FOLD_ELEMENTS or any(k is None for k in known.reshape(-1)):
        return False
    ctx.set_const(0, np.array(known.tolist(), dtype=et.numpy).reshape(known.shape))
    return True


def _known(ctx: Context, layer: Layer, i: int, depth: int) -> np.ndarray | None:
    """The elements of input ``i`` of ``layer`` (an object array: ints, None where unknown), or None."""
    src = ctx.source(layer, i)
    value = ctx.values[src]
    if not _integers(value.type) or not _small_shape(value.shape):
        return None  # (activations are not followed; nor floats: what reads them is no dim)
    if value.const is not None:
        return np.asarray(value.const).astype(object) if np.size(value.const) <= FOLD_ELEMENTS else None
    producer = ctx.ir.layer(src[0])
    follow = _KNOWN_OPS.get(producer.type.lower())
    return follow(ctx, producer, depth - 1) if follow is not None and depth > 0 and src[1] == \
        producer.outputs[0].id else None


def _integers(et) -> bool:
    return et is not None and et.numpy is not None and np.issubdtype(np.dtype(et.numpy), np.integer)


def _ints(known: np.ndarray | None) -> list[int] | None:
    return None if known is None or any(k is None for k in known.reshape(-1)) else [int(k) for k in known.reshape(-1)]


def _known_shape_of(ctx: Context, layer: Layer, depth: int) -> np.ndarray | None:
    shape = ctx.values[ctx.source(layer, 0)].shape
    return None if shape is None else _objects([int(d) if isinstance(d, (int, np.integer)) else None for d in shape])


def _objects(items: list) -> np.ndarray:
    """``items`` as a 1-D object array (np.array would make a list of equal-length sequences 2-D)."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _known_same(ctx: Context, layer: Layer, depth: int) -> np.ndarray | None:
    """Convert (of integers: a dim's value is the same), Squeeze, Unsqueeze: the elements, re-shaped."""
    known = _known(ctx, layer, 0, depth)
    value = ctx.out_value(0) if layer is ctx.layer else ctx.values[(layer.id, layer.outputs[0].id)]
    if known is None or not _small_shape(value.shape) or math.prod(value.shape) != known.size:
        return None
    return known.reshape(value.shape)


def _known_gather(ctx: Context, layer: Layer, depth: int) -> np.ndarray | None:
    data, indices, axis = (_known(ctx, layer, i, depth) for i in range(3))
    picked, axis = _ints(indices), _ints(axis)
    batch_dims = int(layer.data.get("batch_dims", 0))
    if data is None or data.ndim != 1 or picked is None or axis not in ([0], [-1]) or batch_dims not in (0, -1):
        return None
    low = 0 if layer.opset < 7 else -data.size  # (Gather-1 gives no row for a negative index)
    if any(k < low or k >= data.size for k in picked):
        return None
    return _objects([data[k] for k in picked]).reshape(indices.shape)


def _known_strided_slice(ctx: Context, layer: Layer, depth: int) -> np.ndarray | None:
    """Of 1-D data only, with no new axis nor ellipsis: the slice, or the element a shrink axis picks."""
    data = _known(ctx, layer, 0, depth)
    begin, end = _ints(_known(ctx, layer, 1, depth)), _ints(_known(ctx, layer, 2, depth))
    stride = _ints(_known(ctx, layer, 3, depth)) if len(layer.inputs) > 3 else [1]
    masks = {m: [int(b) for b in layer.data.get(m, "").replace(" ", "").split(",") if b]
             for m in ("begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask")}
    if data is None or data.ndim != 1 or None in (begin, end, stride) or \
            not len(begin) == len(end) == len(stride) == 1 or any(masks["new_axis_mask"] + masks["ellipsis_mask"]):
        return None
    first = None if masks["begin_mask"][:1] == [1] else begin[0]
    last = None if masks["end_mask"][:1] == [1] else end[0]
    if any(masks["shrink_axis_mask"]):
        if masks["shrink_axis_mask"][:1] != [1] or first is None:
            return None
        return np.array(data[begin[0]], dtype=object) if -data.size <= begin[0] < data.size else None
    return data[slice(first, last, stride[0])]


def _known_slice(ctx: Context, layer: Layer, depth: int) -> np.ndarray | None:
    """Slice-8 of 1-D data."""
    data, start, stop, step = (_known(ctx, layer, i, depth) for i in range(4))
    start, stop, step = _ints(start), _ints(stop), _ints(step)
    axes = _ints(_known(ctx, layer, 4, depth)) if len(layer.inputs) > 4 else [0]
    if data is None or data.ndim != 1 or None in (start, stop, step) or axes not in ([0], [-1]) or \
            not len(start) == len(stop) == len(step) == 1:
        return None
    return data[slice(start[0], stop[0], step[0])]


def _known_concat(ctx: Context, layer: Layer, depth: int) -> np.ndarray | None:
    parts = [_known(ctx, layer, i, depth) for i in range(len(layer.inputs))]
    if any(p is None or p.ndim != 1 for p in parts) or int(layer.data.get("axis", 0)) not in (0, -1):
        return None
    return np.concatenate(parts)


def _known_arithmetic(ctx: Context, layer: Layer, depth: int) -> np.ndarray | None:
    """Add, Subtract, Multiply (numpy broadcast): each element known where both operands are."""
    a, b = _known(ctx, layer, 0, depth), _known(ctx, layer, 1, depth)
    if a is None or b is None or layer.data.get("auto_broadcast", "numpy").lower() != "numpy":
        return None
    fn = _ARITHMETIC[layer.type.lower()]
    return np.array(np.frompyfunc(lambda x, y: None if x is None or y is None else int(fn(x, y)), 2, 1)(a, b),
                    dtype=object)


_KNOWN_OPS = {"shapeof": _known_shape_of, "convert": _known_same, "squeeze": _known_same, "unsqueeze": _known_same,
              "gather": _known_gather, "stridedslice": _known_strided_slice, "slice": _known_slice,
              "concat": _known_concat, **dict.fromkeys(_ARITHMETIC, _known_arithmetic)}
