"""Declared output shapes are hints: where ONNX shape inference contradicts them, the
declared dims that conflict are dropped (the rest kept) and one warning names the layers.

An IR's port dims are what OpenVINO's own shape inference wrote, and it can be wrong
where its evaluate() is right (StridedSlice-1 with an ellipsis and new axes: the
reference computes [1, 2, 3, 1, 1, 1], save_model declares [1, 2, 1, 1, 3, 1]). The
converter writes the declared dims as the graph outputs' shapes, and ONNX's checker
then refuses a model that was translated correctly ("Inferred shape and existing
shape differ"). ``relax_declared_shapes`` is only run when that check fails, so a
model whose hints hold costs nothing more.
"""

from __future__ import annotations

import logging

import onnx
import onnx_ir as ir

from onnx_ext.model import operand

log = logging.getLogger("converters.ir_to_onnx")


def relax_declared_shapes(model: ir.Model, owners: dict[str, str], source: str) -> bool:
    """Drop the declared output dims of ``model`` (in place) that ONNX shape inference
    contradicts; ``owners`` maps output names to the layer that made them, for the warning.
    Returns whether anything was dropped."""
    try:
        inferred = ir.serde.deserialize_model(onnx.shape_inference.infer_shapes(_probe(model), strict_mode=False))
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError):
        return False
    changes = []
    for (path, graph), (_, inferred_graph) in zip(_graphs(model), _graphs(inferred)):
        for out, got in zip(graph.outputs, inferred_graph.outputs):
            declared, found = _dims(out), _dims(got)
            if declared is None or found is None:
                continue
            if len(declared) != len(found):  # the op's rank, its dims as far as inference knows them
                out.shape = _named(out.name, found)
            elif any(a is not None and b is not None and a != b for a, b in zip(declared, found)):
                out.shape = _named(out.name, [d if a is None or b is None or a == b else None
                                              for d, a, b in zip(out.shape, declared, found)])
            else:
                continue
            owner = owners.get(out.name, f"output {path}{out.name!r}")
            changes.append(f"{owner}: declared {_show(declared)}, the op gives {_show(found)}")
    if changes:
        log.warning("%s: declared output shapes that contradict the ops were dropped (conflicting dims made "
                    "dynamic): %s", source, "; ".join(changes))
    return bool(changes)


def _probe(model: ir.Model) -> onnx.ModelProto:
    """``model`` serialised with no declared output shapes (outputs that are graph inputs keep theirs:
    they are the inputs' shapes)."""
    cleared = [(out, out.shape) for _, graph in _graphs(model) for out in graph.outputs if not out.is_graph_input()]
    try:
        for out, _ in cleared:
            out.shape = None
        return ir.serde.serialize_model(model)
    finally:
        for out, shape in cleared:
            out.shape = shape


def _graphs(model: ir.Model) -> list[tuple[str, ir.Graph]]:
    """The graph and every sub-graph (If branches, Loop bodies), with a path for messages."""
    holders = {}
    for node in ir.traversal.RecursiveGraphIterator(model.graph):
        for attr in node.attributes.values():
            subs = [attr.value] if attr.type == ir.AttributeType.GRAPH else \
                attr.value if attr.type == ir.AttributeType.GRAPHS else []
            for sub in subs:
                holders[id(sub)] = (node, attr.name)
    paths: dict[int, str] = {}
    for graph in model.graphs():
        node, attr = holders.get(id(graph), (None, None))
        paths[id(graph)] = "" if node is None else f"{paths[id(node.graph)]}{node.name}/{attr}/"
    return [(paths[id(graph)], graph) for graph in model.graphs()]


def _dims(value: ir.Value) -> list | None:
    """The value's dims, None where not a number; None for an unknown rank."""
    shape = operand(value).shape
    return None if shape is None else [d if isinstance(d, int) else None for d in shape]


def _named(name: str, dims) -> ir.Shape:
    """``dims`` with the None ones named ``<name>_d<i>``."""
    return ir.Shape([f"{name}_d{i}" if d is None else d for i, d in enumerate(dims)])


def _show(dims: list | None) -> str:
    return "?" if dims is None else "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"
