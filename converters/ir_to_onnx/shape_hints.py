"""Declared shapes are hints: where ONNX's shape inference contradicts the dims an IR port
declared, they are replaced by the ops' own and the graph is translated again.

An IR's port dims are what OpenVINO's own shape inference wrote, and it can be wrong where its
evaluate() is right (StridedSlice-1 with an ellipsis and new axes: the reference computes
[1, 2, 3, 1, 1, 1], save_model declares [1, 2, 1, 1, 3, 1]). The translators take the declared
dims as they are (a ShapeOf of static dims becomes a constant, a Gather on a static axis gets a
body for that size, graph outputs declare them), so a wrong one would give a wrong result.
Every dim the translation took from the IR is a ``Hint`` (context.py); ONNX's strict shape
inference (the domain's ops by their schemas, before any inlining) runs on the model with no
declared output shapes, and each hint it contradicts is replaced by inference's dims (the declared
ones where inference knows none, dynamic ones where it knows no rank). One warning names the layers.
"""

from __future__ import annotations

import logging

import onnx

log = logging.getLogger("converters.ir_to_onnx")


class HintsContradicted(Exception):
    """Some hints are wrong: translate again with ``overrides`` (hint key -> dims)."""

    def __init__(self, overrides: dict[tuple, tuple], changes: list[str]):
        super().__init__(f"{len(overrides)} declared shapes contradicted")
        self.overrides, self.changes = overrides, changes


def check_hints(model: onnx.ModelProto, hints: dict) -> None:
    """ONNX's strict shape inference of ``model`` (its domain nodes not inlined: their schemas give
    their shapes) with no declared output shapes: it raises ``InferenceError`` for an invalid model,
    and ``HintsContradicted`` for the ``hints`` (value name -> Hint) it contradicts."""
    inferred = _inferred_dims(model)
    overrides, changes = {}, []
    for name, hint in hints.items():
        found = inferred.get(name)
        declared = list(hint.dims)
        if found is None:
            continue
        if len(found) != len(declared):
            dims = tuple(found)
        elif any(a is not None and b is not None and a != b for a, b in zip(declared, found)):
            dims = tuple(a if b is None else b for a, b in zip(declared, found))
        else:
            continue
        overrides[hint.key] = dims
        changes.append(f"{hint.owner}: declared {_show(declared)}, the op gives {_show(found)}")
    if overrides:
        raise HintsContradicted(overrides, changes)


def warn(source: str, changes: list[str]) -> None:
    log.warning("%s: declared shapes that contradict the ops were replaced by the ops' own: %s",
                source, "; ".join(changes))


def _inferred_dims(model: onnx.ModelProto) -> dict[str, list]:
    """Value name -> the dims inference gives it (None: unknown). The value_info are read from the
    protos: a 10,000-layer model takes 0.27 s to deserialise into onnx_ir, this a few ms."""
    outputs = [(out, _copy(out.type)) for g in _graphs(model.graph) for out in g.output]
    try:
        for out, _ in outputs:
            out.type.tensor_type.ClearField("shape")
        inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    finally:
        for out, declared in outputs:
            out.type.CopyFrom(declared)
    dims = {}
    for graph in _graphs(inferred.graph):
        for info in list(graph.value_info) + list(graph.output):
            tensor = info.type.tensor_type
            if tensor.HasField("shape"):
                dims[info.name] = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
    return dims


def _graphs(graph: onnx.GraphProto):
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _graphs(sub)


def _copy(type_proto: onnx.TypeProto) -> onnx.TypeProto:
    copy = onnx.TypeProto()
    copy.CopyFrom(type_proto)
    return copy


def _show(dims: list | None) -> str:
    return "?" if dims is None else "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"
