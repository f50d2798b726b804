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
