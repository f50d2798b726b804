"""Test helpers for the issue-18 ops of the domain (ops of one or several outputs): one-node models, run
three ways (the function in onnxruntime, the inlined model, the numpy references) with sessions cached per
model, bare models for the schemas, the IR -> ONNX -> IR round trip."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import onnx
from hypothesis import settings
from onnx import helper

import onnx_ext
from helpers import model_inputs
from onnx_ext.types import from_numpy

#: Hypothesis examples for a differential test of these ops: a quarter of the profile's (15 by default,
#: 150 with HYPOTHESIS_PROFILE=thorough), each example runs three ways and OpenVINO's reference.
EXAMPLES = max(1, settings().max_examples // 4)


def node_model(op: str, inputs: list, attrs: dict, outputs: list, const: list[bool] | None = None,
               known_shapes: bool = False, bodies: bool = True) -> onnx.ModelProto:
    """One node of the domain; ``outputs``: (dtype, rank) per output (rank None: unknown; dtype None: no type). Inputs marked
    ``const`` become initializers; runtime inputs have symbolic dims unless ``known_shapes``; None inputs
    are absent optional ones. ``bodies``: attach the function bodies (else the bare node, no overload)."""
    names = [f"in{i}" if v is not None else "" for i, v in enumerate(inputs)]
    graph_inputs, inits = model_inputs(names, inputs, const, known_shapes)
    while names and names[-1] == "":
        names.pop()
    out_names = [f"out{i}" for i in range(len(outputs))]
    node = onnx_ext.make_node(op, names, out_names, name=f"{op}_under_test", **attrs)
    outs = []
    for name, (dtype, rank) in zip(out_names, outputs):
        if dtype is None:  # declared by name only: what inference gives is all there is
            outs.append(onnx.ValueInfoProto(name=name))
            continue
        vi = helper.make_tensor_value_info(name, from_numpy(dtype).onnx,
                                           None if rank is None else [f"{name}_d{j}" for j in range(rank)])
        if rank is None:
            vi.type.tensor_type.ClearField("shape")
        outs.append(vi)
    graph = helper.make_graph([node], op, graph_inputs, outs, initializer=inits)
    model = helper.make_model(graph, ir_version=onnx_ext.IR_VERSION, opset_imports=[
        helper.make_opsetid("", onnx_ext.ONNX_OPSET), helper.make_opsetid(onnx_ext.DOMAIN, onnx_ext.DOMAIN_VERSION)])
    return onnx_ext.attach_functions(model) if bodies else model


def with_general_body(model: onnx.ModelProto, spec) -> onnx.ModelProto:
    """``model`` (one node of ``spec``'s op) with the general body (attributes read at run time) in place of the
    node's overload."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    out.graph.node[0].overload = ""
    del out.functions[:]
    out.functions.extend([spec.function_proto(None, onnx_ext.ONNX_OPSET)] + spec.helper_protos(onnx_ext.ONNX_OPSET))
    return out


@lru_cache(maxsize=64)
def _session(model_bytes: bytes):
    return onnx_ext.session(model_bytes)


@lru_cache(maxsize=64)
def _inlined(model_bytes: bytes) -> bytes:
    return onnx_ext.inline(onnx.load_from_string(model_bytes)).SerializeToString()


def feeds_of(model: onnx.ModelProto, inputs: list) -> dict:
    names = {i.name for i in model.graph.input}
    return {f"in{i}": np.asarray(v) for i, v in enumerate(inputs) if v is not None and f"in{i}" in names}


def run_three_ways(model: onnx.ModelProto, inputs: list) -> dict[str, list[np.ndarray]]:
    """Every output from the function in onnxruntime, the inlined model, and the numpy reference."""
    feeds = feeds_of(model, inputs)
    data = model.SerializeToString()
    return {
        "function": onnx_ext.run(_session(data), feeds),
        "inlined": onnx_ext.run(_session(_inlined(data)), feeds),
        "reference": list(onnx_ext.reference_evaluator(model).run(None, feeds)),
    }


def inferred_outputs(model: onnx.ModelProto) -> list[onnx.TypeProto]:
    """The outputs' types as onnx's strict shape inference gives them (bare node, no bodies)."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    types = {vi.name: vi.type for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    return [types[o] for o in model.graph.node[-1].output]


def dims_of(t: onnx.TypeProto) -> list | None:
    """Inferred dims: ints, symbolic names, or None for unknown; None when the rank is unknown."""
    tt = t.tensor_type
    if not tt.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tt.shape.dim]


def check_inference(op: str, inputs: list, attrs: dict, const: list[bool], expected: list[np.ndarray],
                    known_shapes: bool = False, static: bool = False) -> None:
    """A bare node (no bodies) passes check_model(full_check) and strict shape inference gives each output
    the type and rank of ``expected``, every static dim right (every dim static when ``static``)."""
    model = node_model(op, inputs, attrs, [(None, None)] * len(expected), const, known_shapes, bodies=False)
    onnx.checker.check_model(onnx.shape_inference.infer_shapes(model, strict_mode=True), full_check=True)
    for k, (t, want) in enumerate(zip(inferred_outputs(model), expected)):
        assert t.tensor_type.elem_type == from_numpy(want.dtype).onnx, f"output {k}: type"
        dims = dims_of(t)
        assert dims is not None and len(dims) == want.ndim, f"output {k}: dims {dims} for shape {want.shape}"
        for j, (d, n) in enumerate(zip(dims, want.shape)):
            assert not isinstance(d, int) or d == n, f"output {k} dim {j}: inferred {d}, computed {n}"
            assert not static or isinstance(d, int), f"output {k} dim {j} not static: {dims}"


def round_trip(original, tmp_path: Path, op: str):
    """``original`` (an openvino.Model holding ``op``) saved as IR, converted to ONNX (the domain's node) and
    back to IR: the op read from both IRs, (first, again), and the two models."""
    import openvino as ov

    from converters.ir_to_onnx import convert_ir_file
    from converters.onnx_to_ir import convert_onnx_file
    from ir_testing import domain_ops, save_ir

    xml = save_ir(original, tmp_path, "original")
    convert_ir_file(xml, tmp_path / "m.onnx")
    model = onnx.load(tmp_path / "m.onnx")
    assert [n.op_type for n in model.graph.node if n.domain == onnx_ext.DOMAIN] == [op], "one domain node"
    back, _ = convert_onnx_file(tmp_path / "m.onnx", tmp_path / "back.xml")
    first, again = ov.Core().read_model(str(xml)), ov.Core().read_model(str(back))
    (want,) = [n for n in domain_ops(first) if n.get_type_name() == op]
    (got,) = [n for n in domain_ops(again) if n.get_type_name() == op]
    assert got.get_type_info().version_id == want.get_type_info().version_id
    assert got.get_attributes() == want.get_attributes()
    return first, again
