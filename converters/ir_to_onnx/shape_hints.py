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

log = logging.getLogger("converters.ir_to_onnx")


def _dims(t: onnx.TypeProto) -> list | None:
    tt = t.tensor_type
    if not tt.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]


def _graphs(graph: onnx.GraphProto, path: str = ""):
    """The graph and every sub-graph (If branches, Loop bodies), with a path for messages."""
    yield path, graph
    for node in graph.node:
        for attr in node.attribute:
            subs = ([attr.g] if attr.HasField("g") else []) + list(attr.graphs)
            for sub in subs:
                yield from _graphs(sub, f"{path}{node.name}/{attr.name}/")


def _show(dims: list | None) -> str:
    return "?" if dims is None else "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


def relax_declared_shapes(model: onnx.ModelProto, owners: dict[str, str], source: str) -> bool:
    """Drop the declared output dims of ``model`` (in place) that ONNX shape inference
    contradicts; ``owners`` maps output names to the layer that made them, for the warning.
    Returns whether anything was dropped."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    for _, graph in _graphs(probe.graph):
        for out in graph.output:
            out.type.tensor_type.ClearField("shape")
    try:
        inferred = onnx.shape_inference.infer_shapes(probe, strict_mode=False)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError):
        return False
    changes = []
    for (path, graph), (_, inferred_graph) in zip(_graphs(model.graph), _graphs(inferred.graph)):
        for out, got in zip(graph.output, inferred_graph.output):
            declared, found = _dims(out.type), _dims(got.type)
            if declared is None or found is None:
                continue
            shape = out.type.tensor_type.shape
            if len(declared) != len(found):  # the op's rank, its dims as far as inference knows them
                shape.CopyFrom(got.type.tensor_type.shape)
                for i, d in enumerate(shape.dim):
                    if not d.HasField("dim_value"):
                        d.Clear()
                        d.dim_param = f"{out.name}_d{i}"
            elif any(a is not None and b is not None and a != b for a, b in zip(declared, found)):
                for i, (a, b) in enumerate(zip(declared, found)):
                    if a is not None and b is not None and a != b:
                        shape.dim[i].Clear()
                        shape.dim[i].dim_param = f"{out.name}_d{i}"
            else:
                continue
            owner = owners.get(out.name, f"output {path}{out.name!r}")
            changes.append(f"{owner}: declared {_show(declared)}, the op gives {_show(found)}")
    if changes:
        log.warning("%s: declared output shapes that contradict the ops were dropped (conflicting dims made "
                    "dynamic): %s", source, "; ".join(changes))
    return bool(changes)
