"""IR -> ONNX: the driver around the translators."""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from pathlib import Path

import onnx
from onnx import helper

import onnx_ext
from onnx_ext.errors import OnnxExtError

from ..ir import IRError, IRModel, Layer
from ..ir_reader import read_ir, split_names
from .context import Context, Value
from .ranks import infer_rank
from .registry import lookup

PRODUCER = "onnx-ext"


def ir_to_onnx(ir: IRModel, *, inline: bool = False) -> onnx.ModelProto:
    """The ONNX model of ``ir``: nodes of the onnx-ext domain with their function
    bodies attached, or (``inline=True``) plain standard ONNX.

    Raises IRError (one line naming the file and layer) for anything that cannot
    be converted; every unsupported layer type/version is listed in one error.
    """
    layers = live_layers(ir)
    check_supported(ir, layers)
    ctx = Context(ir)
    translate_graph(ctx, layers)
    model = _model(ctx, ir)
    try:
        if ctx.domain_used:
            model = onnx_ext.inline(model) if inline else onnx_ext.attach_functions(model)
        onnx.checker.check_model(model, full_check=True)
    except IRError:
        raise
    except (OnnxExtError, onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        raise IRError(" ".join(f"{ir.source}: the converted model is invalid: {e}".split())) from None
    return model


def convert_ir_file(xml_path, onnx_path, inline: bool = False, bin_path=None) -> Path:
    """Read ``xml_path`` (+ .bin), convert, and write ``onnx_path`` atomically.

    The model is written to a temporary file beside ``onnx_path`` and renamed
    into place; on any error nothing is written and an existing file is left as
    it was. Returns the path written.
    """
    onnx_path = Path(onnx_path)
    model = ir_to_onnx(read_ir(xml_path, bin_path), inline=inline)
    data = model.SerializeToString()
    onnx_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{onnx_path.name}.", suffix=".tmp", dir=onnx_path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, onnx_path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return onnx_path


def translate_graph(ctx: Context, layers: list[Layer]) -> None:
    """Run the translators of ``layers`` (producers first) in ``ctx``."""
    _rank_knowledge(ctx, layers)
    _assign_names(ctx, ctx.ir, layers)
    for layer in layers:
        ctx.layer = layer
        _check_empty_ports(ctx, layer)
        translate = lookup(layer.type, layer.version)
        try:
            translate(ctx, layer)
        except IRError:
            raise
        except OnnxExtError as e:
            raise ctx.error(str(e)) from None
        except (ValueError, KeyError, IndexError, TypeError) as e:  # a malformed layer (bad attribute text, ...)
            raise ctx.error(f"cannot translate the layer ({type(e).__name__}: {e})") from e
        for i, port in enumerate(layer.outputs):
            if (layer.id, port.id) not in ctx.values:
                ctx.values[(layer.id, port.id)] = ctx.out_value(i)
    ctx.layer = None


def _check_empty_ports(ctx: Context, layer: Layer) -> None:
    """An output port written with no <dim> reads as a scalar; when the inputs say the
    rank is higher (IR from tools that leave out dims they do not know), use that rank."""
    if layer.type.lower() in ("parameter", "const", "result") or not layer.outputs:
        return
    empty = [p for p in layer.outputs if not p.dims and (layer.id, p.id) not in ctx.rank_unknown]
    if not empty:
        return
    rank = infer_rank(layer, [ctx.input(i) for i in range(len(layer.inputs))])
    if rank:
        for port in empty:
            ctx.dims_override[(layer.id, port.id)] = (None,) * rank


def translate_body(parent: Context, body: IRModel, inputs: dict[int, Value], results: list[int],
                   name: str) -> onnx.GraphProto:
    """A sub-graph body as an ONNX graph: its Parameters stand for the outer values
    ``inputs`` (by Parameter layer id); its outputs are the Results ``results``, in order."""
    ctx = Context(body, parent)
    ctx.param_values = inputs
    translate_graph(ctx, live_layers(body))
    missing = [r for r in results if r not in ctx.result_infos]
    if missing:
        raise parent.error(f"{name} has no Result layer {missing[0]}")
    return helper.make_graph(ctx.nodes, name, [], [ctx.result_infos[r] for r in results])


# --- graph analysis -----------------------------------------------------------------


def live_layers(ir: IRModel) -> list[Layer]:
    """Layers that reach a Result, and every Parameter, producers first (as OpenVINO's
    reader builds the model: layers feeding no Result are dropped)."""
    order = ir.topological_layers()
    preds: dict[int, set[int]] = {layer.id: set() for layer in ir.layers}
    for e in ir.edges:
        preds[e.to_layer].add(e.from_layer)
    live = set()
    stack = [layer.id for layer in ir.layers if layer.type.lower() in ("result", "assign")]
    while stack:
        lid = stack.pop()
        if lid in live:
            continue
        live.add(lid)
        stack.extend(preds[lid])
    return [layer for layer in order if layer.id in live or layer.type.lower() == "parameter"]


def check_supported(ir: IRModel, layers: list[Layer]) -> None:
    """One IRError listing every layer type/version that has no translator, with counts."""
    missing: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    for layer in _with_bodies(layers):
        fn = lookup(layer.type, layer.version)
        needs = getattr(fn, "domain_op", None)
        if fn is None or (needs is not None and needs not in onnx_ext.SPECS):
            key = f"{layer.type}-{layer.version or '(no version)'}"
            if fn is not None:
                key += f" (onnx_ext has no {needs} op yet)"
            missing[key] += 1
            examples.setdefault(key, []).append(f"{layer.id} {layer.name!r}")
    if not missing:
        return
    total = sum(missing.values())
    parts = []
    for key, count in sorted(missing.items()):
        shown = ", ".join(examples[key][:3]) + (", ..." if count > 3 else "")
        parts.append(f"{key} x{count} (layer {shown})")
    raise IRError(f"{ir.source}: {total} layer{'s' if total > 1 else ''} of {len(missing)} unsupported "
                  f"type{'s' if len(missing) > 1 else ''}/version{'s' if len(missing) > 1 else ''}: {'; '.join(parts)}")


def _with_bodies(layers: list[Layer]):
    for layer in layers:
        yield layer
        for body in layer.bodies.values():
            yield from _with_bodies(live_layers(body))


def _rank_knowledge(ctx: Context, layers: list[Layer]) -> None:
    """IR files write a dynamic rank as no <dim> at all, like a scalar. A port is taken
    as "rank unknown" when it has no dims and comes from a Parameter of dynamic rank
    (``shape="..."``) or from a layer with such an input."""
    producers = ctx.ir.producers()
    for layer in layers:
        if layer.type.lower() == "parameter":
            if "..." in layer.data.get("shape", "") and layer.outputs and not layer.outputs[0].dims:
                ctx.rank_unknown.add((layer.id, layer.outputs[0].id))
            continue
        if layer.type.lower() == "const":
            continue
        tainted = any(producers[(layer.id, p.id)] in ctx.rank_unknown for p in layer.inputs)
        if tainted:
            for port in layer.outputs:
                if not port.dims:
                    ctx.rank_unknown.add((layer.id, port.id))


def _preferred_name(names: list[str]) -> str | None:
    # Exporters list an internal number first ("316,last_hidden_state"): prefer a real name.
    return next((n for n in names if not n.isdigit()), names[0] if names else None)


def _assign_names(ctx: Context, ir: IRModel, layers: list[Layer]) -> None:
    """ONNX names: graph inputs and outputs keep the IR tensor names (port ``names``,
    Result ``output_names``, else the layer name); a Result takes over its producer's
    value when it can, else gets an Identity."""
    producers = ir.producers()
    by_id = {layer.id: layer for layer in layers}
    for layer in layers:
        if layer.type.lower() == "parameter":
            port = layer.outputs[0] if layer.outputs else None
            if port is None:
                raise IRError(f"{ir.source}: {layer.describe()}: a Parameter needs an output port")
            if ctx.in_body:
                outer = ctx.param_values.get(layer.id)
                if outer is None:
                    raise IRError(f"{ir.source}: {layer.describe()}: no outer input feeds this body Parameter")
                ctx.port_names[(layer.id, port.id)] = outer.name
                continue
            wanted = _preferred_name(port.names) or layer.name
            ctx.port_names[(layer.id, port.id)] = ctx.unique(wanted)
    for layer in layers:
        if layer.type.lower() != "result":
            continue
        if len(layer.inputs) != 1:
            raise IRError(f"{ir.source}: {layer.describe()}: a Result needs exactly one input")
        src = producers[(layer.id, layer.inputs[0].id)]
        src_layer = by_id[src[0]]
        src_port = next(p for p in src_layer.outputs if p.id == src[1])
        names = split_names(layer.extra.get("output_names", "")) or src_port.names or layer.inputs[0].names
        wanted = _preferred_name(names) or layer.name
        if ctx.in_body:
            # A body output must be made by a node of the body, and its producer may turn out an
            # outer value or a (folded) constant: always a fresh name and an Identity.
            ctx.result_names[layer.id] = ctx.unique(wanted)
        elif src in ctx.port_names:  # a Parameter, or a value another Result named
            if ctx.port_names[src] == wanted and wanted not in ctx.result_names.values():
                ctx.result_names[layer.id] = wanted
            else:
                ctx.result_names[layer.id] = ctx.unique(wanted)
        elif wanted not in ctx.used_names:
            ctx.port_names[src] = ctx.unique(wanted)
            ctx.result_names[layer.id] = wanted
        else:
            ctx.result_names[layer.id] = ctx.unique(wanted)
    for layer in layers:
        for i, port in enumerate(layer.outputs):
            if (layer.id, port.id) in ctx.port_names:
                continue
            if port.names:
                wanted = port.names[0]
            else:
                wanted = layer.name if len(layer.outputs) == 1 else f"{layer.name}:{i}"
            ctx.port_names[(layer.id, port.id)] = ctx.unique(wanted)


# --- the model ----------------------------------------------------------------------


def _model(ctx: Context, ir: IRModel) -> onnx.ModelProto:
    _share_identical_initializers(ctx)
    used = {i for n in _all_nodes(ctx.nodes) for i in n.input} | {o.name for o in ctx.outputs}
    inits = [t for name, t in ctx.initializers.items() if name in used]
    graph = helper.make_graph(ctx.nodes, ir.name or "model", ctx.inputs, ctx.outputs, initializer=inits)
    graph.doc_string = f"converted from OpenVINO IR v{ir.ir_version} {Path(ir.source).name}"
    opsets = [helper.make_opsetid("", onnx_ext.ONNX_OPSET)]
    if ctx.domain_used:
        opsets.append(helper.make_opsetid(onnx_ext.DOMAIN, onnx_ext.DOMAIN_VERSION))
    model = helper.make_model(graph, opset_imports=opsets, ir_version=onnx_ext.IR_VERSION,
                              producer_name=PRODUCER, producer_version=onnx_ext.__version__)
    return model


def _all_nodes(nodes):
    for node in nodes:
        yield node
        for attr in node.attribute:
            for g in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _all_nodes(g.node)


def _share_identical_initializers(ctx: Context) -> None:
    """openvino.save_model stores equal constants once in the .bin, but each Const layer
    becomes its own initializer: let nodes share one copy (graph outputs keep theirs)."""
    outputs = {o.name for o in ctx.outputs}
    first: dict[tuple, str] = {}
    rename: dict[str, str] = {}
    for name, t in ctx.initializers.items():
        if name in outputs or len(t.raw_data) < 64:
            continue
        key = (t.data_type, tuple(t.dims), t.raw_data)
        if key in first:
            rename[name] = first[key]
        else:
            first[key] = name
    if not rename:
        return
    for node in _all_nodes(ctx.nodes):
        for i, name in enumerate(node.input):
            if name in rename:
                node.input[i] = rename[name]
