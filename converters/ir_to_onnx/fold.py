"""Constant folding, one mechanism for every translator.

A layer whose inputs are all small constants known at conversion time (shape arithmetic: a static
rank compared with a number, a shape reshaped, squeezed, concatenated) is translated like any other;
then the nodes it emitted are evaluated once, by onnx's reference evaluator with the domain's numpy
references (what onnxruntime computes of those nodes), and its outputs become constants in their
place (the common ops of shape arithmetic by fold_numpy.py, the evaluator's own numpy restated
without building a model per layer; the rest by the evaluator). What reads them folds in turn: an If whose condition folds keeps only its live body
(handlers/control.py). Translators carry no folding of their own, and folding cannot disagree with
the translation.

Bounded: inputs and outputs of at most ``FOLD_ELEMENTS`` elements, so weights are never evaluated
or copied. Translators whose constants need OpenVINO's own arithmetic make them themselves (Convert:
``io.fold_convert``; RandomUniform, Multinomial; PriorBox over static shapes): their outputs are
constants already, and this leaves them.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import onnx
import onnx_ir as ir

import onnx_ext
from onnx_ext.types import from_numpy

from ..ir import Layer
from . import fold_numpy
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
    compute, by fold_numpy.py where it takes every node, else by onnx's reference evaluator; None where
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
        arrays = fold_numpy.run(nodes, ctx.constants, outputs)
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


def _shape_of(ctx: Context, layer: Layer, depth: int) -> np.ndarray | None:
    shape = ctx.values[ctx.source(layer, 0)].shape
    return None if shape is None else _objects([int(d) if isinstance(d, (int, np.integer)) else None for d in shape])


def _objects(items: list) -> np.ndarray:
    """``items`` as a 1-D object array (np.array would make a list of equal-length sequences 2-D)."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _same(ctx: Context, layer: Layer, depth: int) -> np.ndarray | None:
    """Convert (of integers: a dim's value is the same), Squeeze, Unsqueeze: the elements, re-shaped."""
    known = _known(ctx, layer, 0, depth)
    value = ctx.out_value(0) if layer is ctx.layer else ctx.values[(layer.id, layer.outputs[0].id)]
    if known is None or not _small_shape(value.shape) or math.prod(value.shape) != known.size:
        return None
    return known.reshape(value.shape)


def _gather(ctx: Context, layer: Layer, depth: int) -> np.ndarray | None:
    data, indices, axis = (_known(ctx, layer, i, depth) for i in range(3))
    picked, axis = _ints(indices), _ints(axis)
    batch_dims = int(layer.data.get("batch_dims", 0))
    if data is None or data.ndim != 1 or picked is None or axis not in ([0], [-1]) or batch_dims not in (0, -1):
        return None
    low = 0 if layer.opset < 7 else -data.size  # (Gather-1 gives no row for a negative index)
    if any(k < low or k >= data.size for k in picked):
        return None
    return _objects([data[k] for k in picked]).reshape(indices.shape)


def _strided_slice(ctx: Context, layer: Layer, depth: int) -> np.ndarray | None:
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


def _slice(ctx: Context, layer: Layer, depth: int) -> np.ndarray | None:
    """Slice-8 of 1-D data."""
    data, start, stop, step = (_known(ctx, layer, i, depth) for i in range(4))
    start, stop, step = _ints(start), _ints(stop), _ints(step)
    axes = _ints(_known(ctx, layer, 4, depth)) if len(layer.inputs) > 4 else [0]
    if data is None or data.ndim != 1 or None in (start, stop, step) or axes not in ([0], [-1]) or \
            not len(start) == len(stop) == len(step) == 1:
        return None
    return data[slice(start[0], stop[0], step[0])]


def _concat(ctx: Context, layer: Layer, depth: int) -> np.ndarray | None:
    parts = [_known(ctx, layer, i, depth) for i in range(len(layer.inputs))]
    if any(p is None or p.ndim != 1 for p in parts) or int(layer.data.get("axis", 0)) not in (0, -1):
        return None
    return np.concatenate(parts)


def _arithmetic(ctx: Context, layer: Layer, depth: int) -> np.ndarray | None:
    """Add, Subtract, Multiply (numpy broadcast): each element known where both operands are."""
    a, b = _known(ctx, layer, 0, depth), _known(ctx, layer, 1, depth)
    if a is None or b is None or layer.data.get("auto_broadcast", "numpy").lower() != "numpy":
        return None
    fn = _ARITHMETIC[layer.type.lower()]
    return np.array(np.frompyfunc(lambda x, y: None if x is None or y is None else int(fn(x, y)), 2, 1)(a, b),
                    dtype=object)


_KNOWN_OPS = {"shapeof": _shape_of, "convert": _same, "squeeze": _same, "unsqueeze": _same, "gather": _gather,
              "stridedslice": _strided_slice, "slice": _slice, "concat": _concat,
              **dict.fromkeys(_ARITHMETIC, _arithmetic)}
