"""Build nodes of the domain, attach their function bodies to a model, inline them.

The work is done on onnx_ir models (``attach_ir``, ``inline_ir``, ``ir_node``: the IR -> ONNX
converter uses them directly); ``make_node``, ``attach_functions`` and ``inline`` take and
give protobuf messages.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import onnx
import onnx_ir as ir
from onnx import helper
from onnx_ir.passes.common import InlinePass, RemoveUnusedFunctionsPass, RemoveUnusedNodesPass, RemoveUnusedOpsetsPass

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
    values = [ir.Value(name=i) if i else None for i in inputs]
    return ir.serde.serialize_node(ir_node(op_type, values, outputs, name=name, operands=operands, **attributes))


def ir_node(op_type: str, inputs: Sequence[ir.Value | None], outputs: Sequence[str], *, name: str | None = None,
            operands: Sequence[Operand] | None = None, **attributes) -> ir.Node:
    """``make_node`` on onnx_ir values: the node reads ``inputs`` and makes new values named ``outputs``."""
    spec = ops.spec(op_type)
    attrs = spec.normalize(attributes, name)
    overload = ""
    if operands is not None:
        spec.check_inputs(attrs, operands, name)
        overload = spec.select_body(attrs, operands)
    return ir.Node(DOMAIN, op_type, inputs, _attributes(spec, attrs), overload=overload,
                   outputs=[ir.Value(name=o) for o in outputs], name=name)


def node_attributes(node: onnx.NodeProto) -> dict:
    """The node's attributes, checked, with defaults filled in."""
    raw = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    return ops.spec(node.op_type).normalize(raw, node.name or None)


def attach_functions(model: onnx.ModelProto) -> onnx.ModelProto:
    """Return a copy of ``model`` whose domain nodes are checked and have their bodies.

    Each node gets its attributes written out and the overload that fits its input
    types and attributes; the FunctionProtos and opset imports are added, and the
    IR version raised to one that carries overloads.
    """
    out = _from_proto(model)
    attach_ir(out)
    return ir.serde.serialize_model(out)


def inline(model: onnx.ModelProto) -> onnx.ModelProto:
    """Plain standard ONNX: the domain's nodes replaced by their bodies.

    Uses onnx_ir's InlinePass, which honours attribute defaults and overloads
    (``onnx.inliner`` drops defaults). The result loads in onnxruntime and in
    OpenVINO's ONNX reader.
    """
    out = ir.serde.deserialize_model(model)
    inline_ir(out)
    return ir.serde.serialize_model(out)


def attach_ir(model: ir.Model) -> None:
    """``attach_functions`` in place on an onnx_ir model."""
    _set_versions(model)
    nodes = _domain_nodes(model.graph)
    _check_opset(model, nodes)
    pending = [n for n in nodes if not n.overload]
    for node in nodes:
        attrs = _node_attributes(node)
        node.attributes.clear()
        node.attributes.update((a.name, a) for a in _attributes(ops.spec(node.op_type), attrs))
    while pending:
        known = known_operands(model)
        ready = [n for n in pending if all(v is None or known.get(v.name, Operand()).type for v in n.inputs)]
        for node in ready or pending:  # nothing ready: choose with what is known
            spec = ops.spec(node.op_type)
            attrs = _node_attributes(node)
            operands = [Operand() if v is None else known.get(v.name, Operand()) for v in _trim_optional(node.inputs)]
            spec.check_inputs(attrs, operands, node.name or node.outputs[0].name)
            node.overload = spec.select_body(attrs, operands)
        _add_functions(model, nodes)
        pending = [n for n in pending if not n.overload]
    _add_functions(model, nodes)


def inline_ir(model: ir.Model) -> None:
    """``inline`` in place on an onnx_ir model. Its initializers carry their type and shape, as
    onnx_ir's reader gives them (``inline`` has always written them as value_info)."""
    attach_ir(model)
    for graph in model.graphs():
        for value in graph.initializers.values():
            if value.type is None:
                value.type = ir.TensorType(value.const_value.dtype)
            if value.shape is None:
                value.shape = value.const_value.shape
    # the unused nodes too: initializers the bodies do not read (a constant Gather axis) would make
    # onnxruntime warn when it loads the model
    for p in (InlinePass(), RemoveUnusedNodesPass(), RemoveUnusedFunctionsPass(), RemoveUnusedOpsetsPass()):
        p(model)
    _cast_to_known_types(model)
    leftover = sorted({n.op_type for n in _domain_nodes(model.graph)})
    if leftover:
        raise OnnxExtError(f"inlining left nodes of the domain: {leftover}")
    model.opset_imports.pop(DOMAIN, None)


def _cast_to_known_types(model: ir.Model) -> None:
    """Each inlined CastLike whose target's type is known becomes a Cast: onnxruntime has no CastLike kernel, so it
    cannot fold one whose inputs are constants (a body's typed zeros beside a constant table) and warns at load."""
    for graph in model.graphs():
        for node in list(graph):
            target = node.inputs[1] if node.op_type == "CastLike" and node.domain == "" else None
            if target is None or not isinstance(target.type, ir.TensorType):
                continue
            cast = ir.Node("", "Cast", [node.inputs[0]], [ir.AttrInt64("to", target.dtype.value)], name=node.name)
            ir.convenience.replace_nodes_and_values(graph, node, [node], [cast], node.outputs, cast.outputs)


def function_protos() -> list[onnx.FunctionProto]:
    """Every FunctionProto of the domain: each op's general body and its overloads."""
    protos = []
    for spec in ops.SPECS.values():
        protos.append(spec.function_proto(None))
        protos += [spec.function_proto(o) for o in spec.bodies]
        protos += spec.helper_protos()
    return _unique(protos)


def operand(value: ir.Value) -> Operand:
    """What ``value`` declares of itself: element type (None when not a tensor type this package
    knows) and shape (dims: int, a symbolic name, or None)."""
    et = None
    if isinstance(value.type, ir.TensorType):
        et = _type_or_none(value.dtype.value)
    shape = None if value.shape is None else tuple(d if isinstance(d, int) else d.value for d in value.shape)
    return Operand(et, shape)


def known_operands(model: ir.Model) -> dict[str, Operand]:
    """Element type, shape and constant value of every tensor of the main graph that onnx's
    shape inference reaches."""
    proto = ir.serde.serialize_model(model)
    try:
        inferred = onnx.shape_inference.infer_shapes(proto, strict_mode=False)
    except Exception:  # inference is a help here, never a requirement
        inferred = proto
    graph = ir.serde.deserialize_graph(inferred.graph)
    constants = _constants(graph)
    known: dict[str, Operand] = {}
    for value in [*graph.inputs, *(o for n in graph for o in n.outputs), *graph.outputs]:
        if isinstance(value.type, ir.TensorType) and value.dtype != ir.DataType.UNDEFINED:
            facts, (_, array) = operand(value), constants.get(value.name, (None, None))
            known[value.name] = Operand(facts.type, facts.shape, array)
    for name, (code, array) in constants.items():
        if name not in known or known[name].value is None:
            known[name] = Operand(_type_or_none(code), array.shape, array)
    return known


# --- helpers ------------------------------------------------------------------------


def _from_proto(model: onnx.ModelProto) -> ir.Model:
    """``model`` as onnx_ir: its initializers keep only the types its value_info gives them (onnx_ir's
    reader gives each one, and writing the model back would add them as value_info)."""
    out = ir.serde.deserialize_model(model)
    described = {vi.name for vi in model.graph.value_info}
    for value in out.graph.initializers.values():
        if value.name not in described and not value.is_graph_input() and not value.is_graph_output():
            value.type, value.shape = None, None
    return out


def _attributes(spec, attrs: dict) -> list[ir.Attr]:
    return [ir.Attr(k, ir.AttributeType(spec.attributes[k].onnx_type), v) for k, v in attrs.items()]


def _node_attributes(node: ir.Node) -> dict:
    """The node's attributes, checked, with defaults filled in (values as ``node_attributes`` reads them)."""
    raw = {}
    for name, attr in node.attributes.items():
        value = attr.value
        if attr.type == ir.AttributeType.STRING:
            value = value.encode()
        elif attr.type == ir.AttributeType.STRINGS:
            value = [v.encode() for v in value]
        elif isinstance(value, (tuple, list)):
            value = list(value)
        raw[name] = value
    return ops.spec(node.op_type).normalize(raw, node.name or None)


def _constants(graph: ir.Graph) -> dict[str, tuple[int, np.ndarray]]:
    """Name -> (ONNX element type, array) of the graph's initializers and Constant nodes (value,
    value_int(s), value_float(s))."""
    found = {v.name: (v.const_value.dtype.value, v.const_value.numpy()) for v in graph.initializers.values()}
    for node in graph:
        if node.op_type != "Constant" or node.domain != "" or len(node.attributes) != 1:
            continue
        attr = next(iter(node.attributes.values()))
        if attr.name == "value":
            found[node.outputs[0].name] = (attr.value.dtype.value, attr.value.numpy())
        elif attr.name in ("value_int", "value_ints", "value_float", "value_floats"):
            array = np.array(list(attr.value) if isinstance(attr.value, (tuple, list)) else attr.value)
            found[node.outputs[0].name] = (helper.np_dtype_to_tensor_dtype(array.dtype), array)
    return found


def _trim_optional(inputs) -> list:
    values = list(inputs)
    while values and values[-1] is None:
        values.pop()
    return values


def _domain_nodes(graph: ir.Graph) -> list[ir.Node]:
    return [n for n in ir.traversal.RecursiveGraphIterator(graph) if n.domain == DOMAIN]


def _set_versions(model: ir.Model) -> None:
    """IR version >= 10 (overloads) and our domain imported; the bodies then import the
    model's own standard opset."""
    std = _standard_opset(model)
    if std is not None and std < MIN_ONNX_OPSET:
        raise OnnxExtError(
            f"model imports ONNX opset {std}; the function bodies need opset {MIN_ONNX_OPSET} to {MAX_ONNX_OPSET} "
            f"(upgrade the model's standard ops first, e.g. with onnx.version_converter, before adding domain nodes)"
        )
    model.ir_version = min(max(model.ir_version, IR_VERSION), MAX_IR_VERSION)
    model.opset_imports.setdefault(DOMAIN, DOMAIN_VERSION)
    std = _standard_opset(model)
    if std is None:
        model.opset_imports[""] = ONNX_OPSET
    elif std > MAX_ONNX_OPSET:
        raise OnnxExtError(f"model imports ONNX opset {std}; onnxruntime 1.31 loads up to {MAX_ONNX_OPSET}")


def _check_opset(model: ir.Model, nodes: list[ir.Node]) -> None:
    """Ops whose bodies need a newer standard opset than the model's (``OpSpec.min_opset``)."""
    std = _standard_opset(model)
    for node in nodes:
        need = ops.spec(node.op_type).min_opset
        if need is not None and std < need:
            raise OnnxExtError(f"{node.op_type} (node {node.name or node.outputs[0].name!r}): its bodies need ONNX "
                               f"opset {need}, the model imports {std} (upgrade it with onnx.version_converter)")


def _standard_opset(model: ir.Model) -> int | None:
    return next((v for d, v in model.opset_imports.items() if d in ("", "ai.onnx")), None)


def _add_functions(model: ir.Model, nodes: list[ir.Node]) -> None:
    # The domain is ours: bodies already in the model (e.g. written by onnxscript
    # for a user's @script function) are replaced by the ones ``nodes`` need.
    opset = _standard_opset(model)
    wanted, seen = [], set()
    for node in nodes:
        key = (node.op_type, node.overload or None)
        if key in seen:
            continue
        spec = ops.spec(node.op_type)
        wanted.append(spec.function_proto(node.overload or None, opset))
        if not any(op_type == node.op_type for op_type, _ in seen):
            wanted += spec.helper_protos(opset)
        seen.add(key)
    kept = [f for f in model.functions.values() if f.domain != DOMAIN]
    model.functions.clear()
    for function in kept + [ir.serde.deserialize_function(p) for p in _unique(wanted)]:
        model.functions[function.identifier()] = function


def _unique(protos):
    seen, out = set(), []
    for p in protos:
        key = (p.domain, p.name, p.overload)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _type_or_none(code):
    try:
        return from_onnx(code)
    except ValueError:
        return None
