"""Build nodes of the domain, attach their function bodies to a model, inline them."""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from . import ops
from .domain import DOMAIN, DOMAIN_VERSION, IR_VERSION, MAX_ONNX_OPSET, MIN_ONNX_OPSET, ONNX_OPSET
from .errors import OnnxExtError
from .ops.base import Operand
from .types import from_onnx

MAX_IR_VERSION = 13  # onnxruntime 1.31


def make_node(
    op_type: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    *,
    name: str | None = None,
    operands: Sequence[Operand] | None = None,
    **attributes,
) -> onnx.NodeProto:
    """A node of the domain with every attribute written out (defaults included).

    Attributes are checked now: a bad value raises ``OpAttributeError`` naming the
    op and attribute. With ``operands`` (what is known of each input) the inputs
    are checked too and the node gets the overload of its body; otherwise
    ``attach_functions`` picks it from the model's types.
    """
    spec = ops.spec(op_type)
    attrs = spec.normalize(attributes, name)
    node = helper.make_node(op_type, list(inputs), list(outputs), name=name, domain=DOMAIN)
    node.attribute.extend(_attribute_protos(spec, attrs))
    if operands is not None:
        spec.check_inputs(attrs, operands, name)
        node.overload = spec.select_body(attrs, operands)
    return node


def node_attributes(node: onnx.NodeProto) -> dict:
    """The node's attributes, checked, with defaults filled in."""
    spec = ops.spec(node.op_type)
    raw = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    return spec.normalize(raw, node.name or None)


def attach_functions(model: onnx.ModelProto) -> onnx.ModelProto:
    """Return a copy of ``model`` whose domain nodes are checked and have their bodies.

    Each node gets its attributes written out and the overload that fits its input
    types and attributes; the FunctionProtos and opset imports are added, and the
    IR version raised to one that carries overloads.
    """
    out = _set_versions(model)
    pending = [n for n in _domain_nodes(out.graph) if not n.overload]
    for node in _domain_nodes(out.graph):
        spec = ops.spec(node.op_type)
        attrs = node_attributes(node)
        del node.attribute[:]
        node.attribute.extend(_attribute_protos(spec, attrs))
    while pending:
        known = _known_operands(out)
        ready = [n for n in pending if all(i == "" or known.get(i, Operand()).type for i in n.input)]
        for node in ready or pending:  # nothing ready: choose with what is known
            spec = ops.spec(node.op_type)
            attrs = node_attributes(node)
            operands = [known.get(i, Operand()) for i in _trim_optional(node.input)]
            spec.check_inputs(attrs, operands, node.name or node.output[0])
            node.overload = spec.select_body(attrs, operands)
        _add_functions(out)
        pending = [n for n in pending if not n.overload]
    _add_functions(out)
    return out


def inline(model: onnx.ModelProto) -> onnx.ModelProto:
    """Plain standard ONNX: the domain's nodes replaced by their bodies.

    Uses onnx_ir's InlinePass, which honours attribute defaults and overloads
    (``onnx.inliner`` drops defaults). The result loads in onnxruntime and in
    OpenVINO's ONNX reader.
    """
    import onnx_ir as ir
    from onnx_ir.passes.common import InlinePass, RemoveUnusedFunctionsPass, RemoveUnusedOpsetsPass

    attached = attach_functions(model)
    irm = ir.serde.deserialize_model(attached)
    for p in (InlinePass(), RemoveUnusedFunctionsPass(), RemoveUnusedOpsetsPass()):
        irm = p(irm).model
    inlined = ir.serde.serialize_model(irm)
    leftover = [n.op_type for n in _all_nodes(inlined.graph) if n.domain == DOMAIN]
    if leftover:
        raise OnnxExtError(f"inlining left nodes of the domain: {sorted(set(leftover))}")
    if DOMAIN in {o.domain for o in inlined.opset_import}:
        kept = [o for o in inlined.opset_import if o.domain != DOMAIN]
        del inlined.opset_import[:]
        inlined.opset_import.extend(kept)
    return inlined


def function_protos() -> list[onnx.FunctionProto]:
    """Every FunctionProto of the domain: each op's general body and its overloads."""
    protos = []
    for spec in ops.SPECS.values():
        protos.append(spec.function_proto(None))
        protos += [spec.function_proto(o) for o in spec.bodies]
        protos += spec.helper_protos()
    return _unique(protos)


# --- helpers ------------------------------------------------------------------------


def _attribute_protos(spec, attrs: dict) -> list[onnx.AttributeProto]:
    return [helper.make_attribute(k, v, attr_type=spec.attributes[k].onnx_type) for k, v in attrs.items()]


def _trim_optional(inputs) -> list[str]:
    names = list(inputs)
    while names and names[-1] == "":
        names.pop()
    return names


def _all_nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _all_nodes(sub)


def _domain_nodes(graph) -> list[onnx.NodeProto]:
    return [n for n in _all_nodes(graph) if n.domain == DOMAIN]


def _set_versions(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy with IR version >= 10 (overloads) and our domain imported; the bodies
    then import the model's own standard opset."""
    std = _standard_opset(model)
    if std is not None and std < MIN_ONNX_OPSET:
        raise OnnxExtError(
            f"model imports ONNX opset {std}; the function bodies need opset {MIN_ONNX_OPSET} to {MAX_ONNX_OPSET} "
            f"(upgrade the model's standard ops first, e.g. with onnx.version_converter, before adding domain nodes)"
        )
    out = onnx.ModelProto()
    out.CopyFrom(model)
    out.ir_version = min(max(out.ir_version, IR_VERSION), MAX_IR_VERSION)
    imports = {o.domain for o in out.opset_import}
    if DOMAIN not in imports:
        out.opset_import.append(helper.make_opsetid(DOMAIN, DOMAIN_VERSION))
    std = _standard_opset(out)
    if std is None:
        out.opset_import.append(helper.make_opsetid("", ONNX_OPSET))
    elif std > MAX_ONNX_OPSET:
        raise OnnxExtError(f"model imports ONNX opset {std}; onnxruntime 1.31 loads up to {MAX_ONNX_OPSET}")
    return out


def _standard_opset(model: onnx.ModelProto) -> int | None:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)


def _add_functions(model: onnx.ModelProto) -> None:
    # The domain is ours: bodies already in the model (e.g. written by onnxscript
    # for a user's @script function) are replaced by the ones the nodes need.
    opset = _standard_opset(model)
    wanted, seen = [], set()
    for node in _domain_nodes(model.graph):
        key = (node.op_type, node.overload or None)
        if key in seen:
            continue
        spec = ops.spec(node.op_type)
        wanted.append(spec.function_proto(node.overload or None, opset))
        if not any(op_type == node.op_type for op_type, _ in seen):
            wanted += spec.helper_protos(opset)
        seen.add(key)
    kept = [f for f in model.functions if f.domain != DOMAIN]
    del model.functions[:]
    model.functions.extend(kept + _unique(wanted))


def _unique(protos):
    seen, out = set(), []
    for p in protos:
        key = (p.domain, p.name, p.overload)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _known_operands(model: onnx.ModelProto) -> dict[str, Operand]:
    """Element type, shape and constant value of every tensor onnx's inference reaches."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # inference is a help here, never a requirement
        inferred = model
    graph = inferred.graph
    values = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and len(node.attribute) == 1:
            attr = node.attribute[0]
            if attr.name == "value":
                values[node.output[0]] = numpy_helper.to_array(attr.t)
            elif attr.name in ("value_int", "value_ints", "value_float", "value_floats"):
                values[node.output[0]] = np.array(helper.get_attribute_value(attr))
    known: dict[str, Operand] = {}
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        t = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or not t.elem_type:
            continue
        shape = None
        if t.HasField("shape"):
            shape = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim)
        known[vi.name] = Operand(_type_or_none(t.elem_type), shape, values.get(vi.name))
    for name, value in values.items():
        if name not in known or known[name].value is None:
            known[name] = Operand(_type_or_none(numpy_helper.from_array(value).data_type), value.shape, value)
    return known


def _type_or_none(code):
    try:
        return from_onnx(code)
    except ValueError:
        return None
