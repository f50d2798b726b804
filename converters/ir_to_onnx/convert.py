"""IR -> ONNX, the driver: read, keep the live layers, check they are supported, translate,
assemble the model (assemble.py), write it (onnx_file.py)."""

from __future__ import annotations

import contextlib
import gc
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import onnx
import onnx_ir as ir

from onnx_ext.errors import OnnxExtError

from ..ir import IRError, IRModel, Layer
from ..ir_reader import read_ir
from ..onnx_file import write_onnx
from ..weight_options import WeightOptions
from . import attributes as attr
from .assemble import assemble, check_hints_so_far
from .context import Context
from .fold import fold_known, fold_layer, fold_subgraph
from .handlers.decompression import decompression_subgraphs
from .handlers.state import order_state_io, plan_state
from .naming import assign_names
from .ranks import infer_rank, rank_is_unknown
from .registry import lookup
from .shape_hints import HintsContradicted, warn
from .unsupported import no_onnx_equivalent


def ir_to_onnx(ir_model: IRModel, *, inline: bool = False, contrib: bool = True) -> onnx.ModelProto:
    """The ONNX model of ``ir_model``: nodes of the onnx-ext domain with their function
    bodies attached, or (``inline=True``) plain standard ONNX.

    Raises IRError (one line naming the file and layer) for anything that cannot
    be converted, or that onnxruntime would not load (assemble makes a session of the
    model first); every unsupported layer type/version is listed in one error.
    The weights are copied once, from the IR's arrays into the ModelProto (a model
    past protobuf's 2 GB cannot be serialised in one piece: ``convert_ir_file``
    writes such models with ONNX external data).
    """
    model, weights, _ = _convert(ir_model, inline, WeightOptions(contrib=contrib))
    for tensor in weights:
        ir.serde.serialize_tensor_into(model.graph.initializer.add(), tensor)  # the one copy of each
    return model


def convert_ir_file(xml_path, onnx_path, inline: bool = False, bin_path=None, *,
                    external_data: bool | None = None, weight_options: WeightOptions = WeightOptions()) -> Path:
    """Read ``xml_path`` (+ .bin), convert, and write ``onnx_path`` atomically.

    The model is written to a temporary file beside ``onnx_path`` and renamed
    into place; on any error nothing is written and an existing file is left as
    it was. Each weight's bytes go from the (memory-mapped) .bin to the file once:
    the model is streamed, never serialised with its weights in memory. Models
    past 2 GB (or with ``external_data=True``) keep their large initializers in
    ``<onnx file name>.data`` beside the model (ONNX external data, offsets aligned
    to 4096 bytes). ``weight_options``: how compressed weights run. Returns the path written.
    """
    onnx_path = Path(onnx_path)
    with _no_cyclic_gc():
        model, weights, _ = _convert(read_ir(xml_path, bin_path), inline, weight_options)
    write_onnx(model, weights, onnx_path, external_data)
    return onnx_path


class Converted(NamedTuple):
    model: onnx.ModelProto  # checked, without its weights
    weights: list[ir.TensorProtocol]  # its last initializers (``onnx_file.write_onnx`` writes both)
    owners: dict[str, str]  # node name -> the IR layer that made it (``Layer.describe()``), for what names a node


def convert_model(ir_model: IRModel, *, inline: bool = False,
                  weight_options: WeightOptions = WeightOptions(), session_check: bool = True) -> Converted:
    """The checked model (onnxruntime made a session of it), its weights and its nodes' owners (for a check of
    what rewrites it further, as model_folder.py's fusions); ``weight_options``: how compressed weights run
    (exact by default); ``session_check=False``: no onnxruntime session of it (for a caller that checks what it
    writes in a session anyway: the other checks still run)."""
    with _no_cyclic_gc():
        return _convert(ir_model, inline, weight_options, session_check)


#: Translations at most: each drops the declared dims the previous one found contradicted.
MAX_TRANSLATIONS = 8


def _convert(ir_model: IRModel, inline: bool, weight_options: WeightOptions = WeightOptions(),
             session_check: bool = True) -> Converted:
    """The checked model without its weights, the weights (see ``assemble``) and the nodes' owners. Declared dims
    that ONNX's shape inference contradicts are dropped and the graph translated again."""
    layers = live_layers(ir_model)
    check_supported(ir_model, layers)
    overrides, changes = {}, []
    with _no_cyclic_gc():
        for _ in range(MAX_TRANSLATIONS):
            ctx = Context(ir_model, hint_overrides=dict(overrides))
            ctx.weight_options = weight_options
            try:
                try:
                    translate_graph(ctx, layers)
                except IRError:
                    check_hints_so_far(ctx)
                    raise
                model = assemble(ctx, inline, session_check)
            except HintsContradicted as e:
                overrides.update(e.overrides)
                changes += e.changes
                continue
            if changes:
                warn(ir_model.source, changes)
            return Converted(*model, ctx.node_owners)
    raise IRError(f"{ir_model.source}: its declared shapes contradict the ops in {len(changes)} places, "
                  f"still after {MAX_TRANSLATIONS} translations")


@contextlib.contextmanager
def _no_cyclic_gc():
    """The IR and the onnx_ir model are webs of Python objects that all live until the model is
    serialised: the cyclic collector's passes over them are wasted work. Once the collector
    runs again they are garbage (nothing outside refers to them) and one pass frees them.
    (10,000 layers, read, converted and written: 0.9 s of CPU; 1.3 s with the collector running.)"""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def translate_graph(ctx: Context, layers: list[Layer]) -> None:
    """Run the translators of ``layers`` (producers first) in ``ctx``."""
    _rank_knowledge(ctx, layers)
    stateful = plan_state(ctx, layers)  # ReadValue/Assign: graph inputs/outputs named first; beam_idx dropped
    assign_names(ctx, ctx.ir, layers)
    subgraphs = decompression_subgraphs(ctx, layers)  # compressed weights: one node in their place
    subgraphs.update(stateful)
    for layer in layers:
        ctx.layer = layer
        if layer.id in subgraphs and subgraphs[layer.id] is None:
            continue
        if layer.id not in subgraphs:  # a subgraph's head reads layers it swallowed, not translated
            _check_empty_ports(ctx, layer)
        translate = subgraphs[layer.id].translate if layer.id in subgraphs else lookup(layer.type, layer.version)
        if layer.id not in subgraphs and fold_known(ctx, layer):  # shape arithmetic reading static dims only
            continue
        first_node, domain_used = len(ctx.nodes), ctx.domain_used
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
                ctx.values[(layer.id, port.id)] = ctx.hinted(i)
        (fold_layer if layer.id not in subgraphs else fold_subgraph)(ctx, layer, first_node, domain_used)
    ctx.layer = None
    order_state_io(ctx)


def _check_empty_ports(ctx: Context, layer: Layer) -> None:
    """An output port written with no <dim> reads as a scalar; when the inputs say the
    rank is higher (IR from tools that leave out dims they do not know), use that rank, and
    when they leave it open (a Reshape to a runtime shape of unknown length), the rank is
    unknown."""
    if layer.type.lower() in ("parameter", "const", "result") or not layer.outputs:
        return
    empty = [p for p in layer.outputs if not p.dims and (layer.id, p.id) not in ctx.rank_unknown]
    if not empty:
        return
    inputs = [ctx.input(i) for i in range(len(layer.inputs))]
    rank = infer_rank(ctx, layer, inputs)
    if rank_is_unknown(layer, inputs, rank):  # written like a scalar, of a rank only known at run time
        ctx.rank_unknown.update((layer.id, port.id) for port in empty)
    elif rank:
        for port in empty:
            ctx.dims_override[(layer.id, port.id)] = (None,) * rank


def translate_body(ctx: Context, results: list[int], name: str) -> list[ir.Value]:
    """Translate a sub-graph body in its context (``Context(body, parent)`` whose ``param_values``
    give the outer values its Parameters stand for); returns the values of the Results ``results``,
    in order: the outputs of the graph of ``ctx.nodes``. An If body's layers are checked here, when
    it is translated (``check_supported`` leaves them out: a dead body is never translated)."""
    layers = live_layers(ctx.ir)
    check_supported(ctx.ir, layers)
    translate_graph(ctx, layers)
    missing = [r for r in results if r not in ctx.result_infos]
    if missing:
        raise ctx.parent.error(f"{name} has no Result layer {missing[0]}")
    return [ctx.result_infos[r] for r in results]


# --- graph analysis -----------------------------------------------------------------


def live_layers(ir_model: IRModel) -> list[Layer]:
    """Layers that reach a Result or an Assign, and every Parameter, producers first (as OpenVINO's
    reader builds the model: layers feeding no Result are dropped). On the IR's layers,
    not the ONNX graph: ``check_supported`` lists only what is live. A ReadValue's initial value
    is not when it is a Const or declared empty: the ReadValue becomes a graph input the caller feeds
    that value (handlers/state.py); one computed from the inputs is (an If gives it on the first step)."""
    order = ir_model.topological_layers()
    by_id = {layer.id: layer for layer in ir_model.layers}
    preds: dict[int, set[int]] = {layer.id: set() for layer in ir_model.layers}
    for e in ir_model.edges:
        if by_id[e.to_layer].type.lower() != "readvalue" or _computed_initial_value(by_id[e.from_layer], e.from_port):
            preds[e.to_layer].add(e.from_layer)
    live = set()
    stack = [layer.id for layer in ir_model.layers if layer.type.lower() in ("result", "assign")]
    while stack:
        lid = stack.pop()
        if lid in live:
            continue
        live.add(lid)
        stack.extend(preds[lid])
    return [layer for layer in order if layer.id in live or layer.type.lower() == "parameter"]


def _computed_initial_value(layer: Layer, port_id: int) -> bool:
    """A ReadValue's initial value made by ``layer``'s output ``port_id``: neither a Const nor declared empty."""
    port = next((p for p in layer.outputs if p.id == port_id), None)
    return layer.type.lower() != "const" and not (port is not None and 0 in port.dims)


def check_supported(ir: IRModel, layers: list[Layer]) -> None:
    """One IRError listing every layer type/version that has no translator, with counts, each
    said to have no ONNX equivalent (``unsupported.NO_ONNX_EQUIVALENT``) or to be not
    translated yet. If bodies are left out (``_with_bodies``)."""
    missing: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    kinds: dict[str, str] = {}
    for layer in _with_bodies(layers):
        if lookup(layer.type, layer.version) is None:
            key = f"{layer.type}-{layer.version or '(no version)'}"
            kinds[key] = "no ONNX equivalent" if no_onnx_equivalent(layer.type) else "not translated yet"
            missing[key] += 1
            examples.setdefault(key, []).append(f"{layer.id} {layer.name!r}")
    if not missing:
        return
    total = sum(missing.values())
    parts = []
    for key, count in sorted(missing.items()):
        shown = ", ".join(examples[key][:3]) + (", ..." if count > 3 else "")
        parts.append(f"{key} x{count} ({kinds[key]}; layer {shown})")
    raise IRError(f"{ir.source}: {total} layer{'s' if total > 1 else ''} of {len(missing)} unsupported "
                  f"type{'s' if len(missing) > 1 else ''}/version{'s' if len(missing) > 1 else ''}: {'; '.join(parts)}"
                  f"{UNSUPPORTED_HINT}")


#: What a user can do about an unsupported layer: where the coverage and the way to add a translator are.
UNSUPPORTED_HINT = " (docs/coverage.md lists what converts; docs/extending.md adds a translator)"


def _with_bodies(layers: list[Layer]):
    """The layers and those of their bodies (Loop, TensorIterator), but an If's: its bodies are checked
    when translated (``translate_body``), and with a condition known at conversion time (a Const, or
    folded from static ranks) only the live body is, so a dead body's layers do not count."""
    for layer in layers:
        yield layer
        if layer.type.lower() == "if":
            continue
        for body in layer.bodies.values():
            yield from _with_bodies(live_layers(body))


def _rank_knowledge(ctx: Context, layers: list[Layer]) -> None:
    """IR files write a dynamic rank as no <dim> at all, like a scalar. A port is taken
    as "rank unknown" when it has no dims and comes from a Parameter of dynamic rank
    (``shape="..."``) or from a layer with such an input."""
    producers = ctx.ir.producers()
    for layer in layers:
        if layer.type.lower() == "parameter":
            if "..." in attr.string(ctx, layer, "shape", "") and layer.outputs and not layer.outputs[0].dims:
                ctx.rank_unknown.add((layer.id, layer.outputs[0].id))
            continue
        if layer.type.lower() == "const":
            continue
        tainted = any(producers[(layer.id, p.id)] in ctx.rank_unknown for p in layer.inputs)
        if tainted:
            for port in layer.outputs:
                if not port.dims:
                    ctx.rank_unknown.add((layer.id, port.id))
