"""The ONNX -> IR driver: checks every op has a handler, then walks the graph."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterator

import onnx

from onnx_ext.domain import DOMAIN

from ..ir import IRModel
from ..ir_writer import write_ir
from .graph import ConversionError, GraphBuilder, NodeContext, Scope, TensorInfo, UnsupportedOpsError, op_name, tensor_info
from .registry import lookup, normalize_domain


def onnx_to_ir(model: onnx.ModelProto) -> IRModel:
    """The OpenVINO IR of ``model``.

    Nodes of the onnx-ext domain become the native OpenVINO ops they stand for
    (not their function bodies); standard ONNX ops become their OpenVINO
    equivalents. Raises ``UnsupportedOpsError`` listing every op without a
    handler (with counts) before converting anything, ``ConversionError`` for a
    node that cannot be converted.
    """
    model = _inline_foreign_functions(model)
    converter = _Converter(model)
    converter.check_supported()
    return converter.convert()


def convert_onnx_file(onnx_path, xml_path, bin_path=None) -> tuple[Path, Path]:
    """Read an .onnx file and write its IR (.xml and .bin beside it unless ``bin_path``).

    The model is converted completely in memory first: an unsupported or bad
    model leaves no file behind.
    """
    model = onnx.load(str(onnx_path))
    ir = onnx_to_ir(model)
    ir.name = ir.name if ir.name != "model" else Path(onnx_path).stem
    return write_ir(ir, xml_path, bin_path)


class _Converter:
    def __init__(self, model: onnx.ModelProto):
        self.model = model
        self.opsets = {normalize_domain(o.domain): o.version for o in model.opset_import}
        self.info = _infer(model)

    def check_supported(self) -> None:
        missing: Counter[str] = Counter()
        for node in _all_nodes(self.model.graph):
            if lookup(node.domain, node.op_type, self._version(node)) is None:
                missing[op_name(node)] += 1
        if missing:
            raise UnsupportedOpsError(dict(missing), self.opsets.get(""))

    def _version(self, node: onnx.NodeProto) -> int | None:
        domain = normalize_domain(node.domain)
        if domain == DOMAIN:
            return None  # the domain has one version: newest handler
        return self.opsets.get(domain, 1 if domain else None)

    def convert(self) -> IRModel:
        graph = self.model.graph
        builder = GraphBuilder(graph.name or "model")
        scope = Scope(builder, graph)
        initializers = {t.name for t in graph.initializer}
        for vi in graph.input:
            if vi.name in initializers:
                continue  # an initializer listed as input (IR < 4): a constant
            info = tensor_info(vi.type)
            if info is None or info.type is None:
                raise ConversionError(f"graph input {vi.name!r} is not a tensor of a supported element type")
            scope.bind(vi.name, builder.parameter(vi.name, info.type, info.dims, [vi.name]))
        self.convert_nodes(graph, scope)
        for vi in graph.output:
            builder.result(scope.lookup(vi.name), vi.name)
        return builder.model()

    def convert_nodes(self, graph: onnx.GraphProto, scope: Scope) -> None:
        for node in graph.node:
            handler = lookup(node.domain, node.op_type, self._version(node))
            if handler is None:  # check_supported() ran first; a body may still surprise
                raise UnsupportedOpsError({op_name(node): 1})
            ctx = NodeContext(node, scope, self._version(node), self)
            handler.fn(ctx)
            unbound = [n for n in node.output if n and n not in scope.values]
            if unbound:
                raise ctx.error(f"internal error: outputs {unbound} were not produced")

    def convert_body(self, graph: onnx.GraphProto, parent: Scope, name: str) -> tuple[GraphBuilder, Scope, list]:
        """Convert a sub-graph (If branch, Loop body) into its own IR graph.

        Returns the builder, the scope (whose ``captures`` list the outer values
        the body reads) and the body's Result layers, one per graph output.
        """
        builder = GraphBuilder(name)
        scope = Scope(builder, graph, parent)
        self.convert_nodes(graph, scope)
        results = [builder.result(scope.lookup(vi.name), None, f"{vi.name}/result") for vi in graph.output]
        return builder, scope, results


# --- helpers ----------------------------------------------------------------------------


def _all_nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _all_nodes(sub)


def _all_graphs(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _all_graphs(sub)


def _infer(model: onnx.ModelProto) -> dict[str, TensorInfo]:
    """Element type and dims of every tensor ONNX declares or infers (sub-graphs too)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    except Exception:  # inference is a help, never a requirement
        inferred = model
    info: dict[str, TensorInfo] = {}
    for graph in _all_graphs(inferred.graph):
        for vi in list(graph.value_info) + list(graph.output):
            t = tensor_info(vi.type)
            if t is not None:
                info[vi.name] = t
    return info


def _inline_foreign_functions(model: onnx.ModelProto) -> onnx.ModelProto:
    """Inline the model-local functions outside the onnx-ext domain that nodes call
    (a user's own onnxscript functions); the domain's nodes stay as they are."""
    foreign = {(f.domain, f.name) for f in model.functions if f.domain != DOMAIN}
    if not foreign or not any((n.domain, n.op_type) in foreign for n in _all_nodes(model.graph)):
        return model
    import onnx_ir as ir
    from onnx_ir.passes.common import InlinePass

    stripped = onnx.ModelProto()
    stripped.CopyFrom(model)
    ours = [f for f in stripped.functions if f.domain == DOMAIN]
    kept = [f for f in stripped.functions if f.domain != DOMAIN]
    del stripped.functions[:]
    stripped.functions.extend(kept)
    irm = InlinePass()(ir.serde.deserialize_model(stripped)).model
    out = ir.serde.serialize_model(irm)
    del out.functions[:]
    out.functions.extend(ours)
    return out
