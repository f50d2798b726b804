"""Declared shapes and types are hints: where ONNX's shape inference contradicts the dims or the
element type an IR port declared, they are replaced by the ops' own and the graph is translated again.

An IR's port dims are what OpenVINO's own shape inference wrote, and it can be wrong where its
evaluate() is right (StridedSlice-1 with an ellipsis and new axes: the reference computes
[1, 2, 3, 1, 1, 1], save_model declares [1, 2, 1, 1, 3, 1]). A port's precision is not read by
OpenVINO at all (it infers every type), so a hand-edited one can say anything. The translators take
the declared dims and types as they are (a ShapeOf of static dims becomes a constant, a Gather on a
static axis gets a body for that size, a Range an overload for its input types, graph outputs declare
them), so a wrong one would give a wrong result or a model that does not load. Every dim and type the
translation took from the IR is a ``Hint`` (context.py); ONNX's strict shape inference (the domain's
ops by their schemas, before any inlining) runs on the model with no declared output shapes or
types, and each hint it contradicts is replaced by inference's dims and type (the declared dims where
inference knows none, dynamic ones where it knows no rank). One warning names the layers.
"""

from __future__ import annotations

import logging

import onnx

from onnx_ext.ops.base import graphs as _graphs
from onnx_ext.types import from_onnx

log = logging.getLogger("converters.ir_to_onnx")


class HintsContradicted(Exception):
    """Some hints are wrong: translate again with ``overrides`` (hint key -> (dims, type))."""

    def __init__(self, overrides: dict[tuple, tuple], changes: list[str]):
        super().__init__(f"{len(overrides)} declared shapes or types contradicted")
        self.overrides, self.changes = overrides, changes


def check_hints(model: onnx.ModelProto, hints: dict) -> dict:
    """ONNX's strict shape inference of ``model`` (its domain nodes not inlined: their schemas give
    their shapes) with no declared output shapes or types: it raises ``InferenceError`` for an invalid
    model, and ``HintsContradicted`` for the ``hints`` (value name -> Hint) it contradicts. A model it
    finds invalid may be so because of a wrong hint (a translator cast to a declared type): the hints
    are then checked against what inference gives where it can (non-strict) before it raises.
    Returns what inference gives (value name -> (ONNX element type or None, dims)), graph outputs
    included (inferred, not declared)."""
    try:
        inferred = _inferred(model, strict=True)
    except onnx.shape_inference.InferenceError:
        _raise_contradicted(_inferred(model, strict=False), hints)
        raise
    _raise_contradicted(inferred, hints)
    return inferred


def _raise_contradicted(inferred: dict, hints: dict) -> None:
    overrides, changes = {}, []
    for name, hint in hints.items():
        if name not in inferred:
            continue
        found_type, found = inferred[name]
        dims = _dims(hint.dims, found)
        et = hint.type if found_type is None else from_onnx(found_type)
        if dims == hint.dims and et == hint.type:
            continue
        overrides[hint.key] = (dims, et)
        types = (hint.type, et) if et != hint.type else (None, None)  # named only when they differ
        changes.append(f"{hint.owner}: declared {_show(types[0], hint.dims)}, the op gives {_show(types[1], found)}")
    if overrides:
        raise HintsContradicted(overrides, changes)


def _dims(declared: tuple | None, found: list | None) -> tuple | None:
    """The dims that replace the ``declared`` ones given inference's (``declared`` if they agree)."""
    if found is None or declared is None:
        return declared
    if len(found) != len(declared):
        return tuple(found)
    if any(a is not None and b is not None and a != b for a, b in zip(declared, found)):
        return tuple(a if b is None else b for a, b in zip(declared, found))
    return declared


def warn(source: str, changes: list[str]) -> None:
    log.warning("%s: declared shapes or types that contradict the ops were replaced by the ops' own: %s",
                source, "; ".join(changes))


def _inferred(model: onnx.ModelProto, strict: bool) -> dict[str, tuple[int | None, list | None]]:
    """Value name -> the element type (None: unknown) and dims (None: unknown rank; None entries:
    unknown dims) inference gives it. The value_info are read from the protos: a 10,000-layer model
    takes 0.27 s to deserialise into onnx_ir, this a few ms."""
    outputs = []  # (graph output, its declared type, made by a node of its graph)
    for graph in _graphs(model.graph):
        # (a contrib op's outputs keep their declared type: onnx has no schema to infer it, and a typed op reading
        # such an output would fail inference on the untyped value: "Invalid tensor data type 0")
        made = {name for node in graph.node if onnx.defs.has(node.op_type, node.domain) for name in node.output}
        outputs += [(out, _copy(out.type), out.name in made) for out in graph.output]
    try:
        for out, _, made in outputs:
            out.type.tensor_type.ClearField("shape")
            if made:  # (an output that is an input or an outer value: its type is the value's)
                out.type.tensor_type.elem_type = onnx.TensorProto.UNDEFINED
        inferred = onnx.shape_inference.infer_shapes(model, check_type=strict, strict_mode=strict)
    finally:
        for out, declared, _ in outputs:
            out.type.CopyFrom(declared)
    found = {}
    for graph in _graphs(inferred.graph):
        for info in list(graph.value_info) + list(graph.output):
            tensor = info.type.tensor_type
            dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim] \
                if tensor.HasField("shape") else None
            found[info.name] = (tensor.elem_type or None, dims)
    return found



def _copy(type_proto: onnx.TypeProto) -> onnx.TypeProto:
    copy = onnx.TypeProto()
    copy.CopyFrom(type_proto)
    return copy


def _show(et, dims: list | tuple | None) -> str:
    shape = "?" if dims is None else "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"
    return shape if et is None else f"{et.ov} {shape}"
