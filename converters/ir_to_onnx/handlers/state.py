"""Model state as graph inputs and outputs: ReadValue-3/6 and Assign-3/6.

An ONNX graph holds no state between runs, so each variable (a ReadValue/Assign pair with one
``variable_id``) becomes an input the caller feeds with the state and an output that returns
the new state, as OpenVINO's own ``StatefulToStateless`` pass (``openvino._offline_transformations.
stateful_to_stateless_transformation``) makes them:

- optimum-intel's KV cache (``variable_id`` ``past_key_values.N.keypresent.N.key``, ``.value``; the
  hybrid models' ``cache_params.past.key.Ncache_params.present.key.N`` likewise): input
  ``past_key_values.N.key|value``, output ``present.N.key|value``, ordered by layer, key before value;
  a seq2seq decoder's self-attention cache, ``past_key_values.N.decoder.keypresent.N.decoder.key``:
  ``past_key_values.N.decoder.key`` -> ``present.N.decoder.key`` as optimum's ONNX export names it,
  where OpenVINO's pass, which knows no ``.decoder``, writes ``input_restored.<variable_id>`` and leaves
  the cross-attention variables, which ``beam_idx`` does not gather, stateful;
- the state-space layers' states of the hybrid and Mamba models (``cache_params.past.T.Ncache_params.present.T.N``,
  T ``conv`` or ``ssm``): input ``cache_params.past.T.N``, output ``cache_params.present.T.N``;
- any other variable: input ``input_restored.<variable_id>``, output ``output_restored.<variable_id>``;
  these two kinds after the KV cache, in the order of their Assign layers in the file.

The inputs follow the model's Parameters, the outputs its Results. A ReadValue's initial value
(its input) that is a constant (LowLatency2's zeros) or empty (an LLM's zero-filled [batch, kv, 0,
head] past built from ``ShapeOf(input_ids)``) is dropped: the caller feeds the first state itself
(an empty past for an LLM, the initial value for others). One computed from the inputs (a stateful
seq2seq decoder's cross-attention keys and values, projected from ``encoder_hidden_states`` on the
first step and kept after) is what the caller could not make: the state input fed empty (any dim 0)
stands for "not set yet", and an If gives the initial value then, the input otherwise; the layers
only that value needs move into the If's branch (``sink_initial_values``), so later steps skip them
(a static state shape is declared with dynamic dims on the input, which could not be fed empty
otherwise). optimum-intel's ``beam_idx`` input, which Gathers every cache
along the batch (beam search reordering), goes with its Gathers: reordering the cache is the
caller's job, as in onnxruntime-genai.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import onnx_ir as ir

from ...ir import IRError, Layer
from ...ir_text import dim as parse_dim
from .. import attributes as attr
from ..context import Context, Value, declare
from ..registry import translator

#: optimum-intel's KV cache; a seq2seq decoder's self-attention cache has ``.decoder`` before key|value (its
#: cross-attention cache variables have bare numbers for ids: input_restored.<id>)
_KV_CACHE = re.compile(r"(past_key_values\.(\d+)(?:\.decoder)?\.(key|value))(present\.(\d+)(?:\.decoder)?\.(key|value))")
_CACHE_PARAMS = re.compile(r"cache_params\.past\.(key|value|conv|ssm)\.(\d+)"
                           r"cache_params\.present\.(key|value|conv|ssm)\.(\d+)")
BEAM_IDX = "beam_idx"


@dataclass
class Variable:
    """One variable of the model: its ReadValue and Assign, and the graph input and output it becomes."""

    id: str
    read: Layer
    assign: Layer
    input_name: str
    output_name: str
    index: int  # the position OpenVINO's naming convention gives (-1: none, then by Assign order)


@dataclass
class State:
    """The variables of a model, in graph I/O order, and the layers that go with ``beam_idx``."""

    variables: list[Variable]
    by_read: dict[int, Variable]
    by_assign: dict[int, Variable]
    #: The If nodes that give a computed initial value when the state input is empty (``read_value``).
    initial_ifs: list[str] = field(default_factory=list)


class _PassThrough:
    """A beam_idx Gather: its output is the cache it reorders."""

    @staticmethod
    def translate(ctx: Context, layer: Layer) -> None:
        ctx.values[(layer.id, layer.outputs[0].id)] = ctx.input(0)


def stateless_names(variable_id: str) -> tuple[str, str, int]:
    """(input name, output name, order index) of a variable, as StatefulToStateless restores them."""
    m = _KV_CACHE.fullmatch(variable_id)
    if m:
        same = m[2] == m[5] and len(m[2]) <= 9
        return m[1], m[4], int(m[2]) * 2 + (m[3] == "value") if same else -1
    m = _CACHE_PARAMS.fullmatch(variable_id)
    if m:  # OpenVINO 2026.4's names: the key/value pairs as the KV cache's, the conv/ssm states their own
        kind, index, out_kind, out_index = m.groups()
        if kind in ("conv", "ssm"):
            return f"cache_params.past.{kind}.{index}", f"cache_params.present.{out_kind}.{out_index}", -1
        same = index == out_index and kind == out_kind and len(index) <= 9
        return (f"past_key_values.{index}.{kind}", f"present.{out_index}.{out_kind}",
                int(index) * 2 + (kind == "value") if same else -1)
    return f"input_restored.{variable_id}", f"output_restored.{variable_id}", -1


def plan_state(ctx: Context, layers: list[Layer]) -> dict[int, object | None]:
    """Find the model's variables (``ctx.state``) and reserve their names; returns the layers translated
    in another way: ``beam_idx``'s Gathers (passed through) and ``beam_idx`` itself (dropped)."""
    reads = [layer for layer in layers if layer.type.lower() == "readvalue"]
    assigns = [layer for layer in layers if layer.type.lower() == "assign"]
    if not reads and not assigns:
        return {}
    if ctx.in_body:
        raise ctx.error(f"{(reads or assigns)[0].describe()}: model state inside a sub-graph body is not supported")
    read_of = _one_per_variable(ctx, reads, "read by", "ReadValue")
    assign_of = _one_per_variable(ctx, assigns, "written by", "Assign")
    for vid, layer in read_of.items():
        if vid not in assign_of:
            raise IRError(f"{ctx.ir.source}: {layer.describe()}: variable {vid!r} has no Assign (a state that is read "
                          "but never written has no output to become)")
    for vid, layer in assign_of.items():
        if vid not in read_of:
            raise IRError(f"{ctx.ir.source}: {layer.describe()}: variable {vid!r} has no ReadValue (a state that is "
                          "written but never read has no input to become)")
    for layer in assign_of.values():
        if len(layer.inputs) != 1:
            raise IRError(f"{ctx.ir.source}: {layer.describe()}: an Assign needs exactly one input")
    assign_order = {vid: i for i, vid in enumerate(assign_of)}
    variables = [Variable(vid, read_of[vid], assign_of[vid], *stateless_names(vid)) for vid in assign_of]
    variables.sort(key=lambda v: (v.index < 0, v.index if v.index >= 0 else assign_order[v.id]))
    _check_names_unique(ctx, variables)
    producers = ctx.ir.producers()
    kinds = {layer.id: layer.type.lower() for layer in layers}
    for v in variables:  # reserved before any other name is given
        ctx.port_names[(v.read.id, v.read.outputs[0].id)] = ctx.unique(v.input_name)
        output = ctx.unique(v.output_name)
        src = producers[(v.assign.id, v.assign.inputs[0].id)]
        if src not in ctx.port_names and kinds.get(src[0]) != "parameter":
            ctx.port_names[src] = output  # the new state is made under its output name: no Identity
    ctx.state = State(variables, {v.read.id: v for v in variables}, {v.assign.id: v for v in variables})
    return _beam_idx_layers(ctx, layers)


def _one_per_variable(ctx: Context, layers: list[Layer], verb: str, kind: str) -> dict[str, Layer]:
    found: dict[str, Layer] = {}
    for layer in layers:
        ctx.layer = layer
        vid = attr.string(ctx, layer, "variable_id")
        if vid in found:
            raise ctx.error(f"variable {vid!r} is {verb} two {kind} layers ({found[vid].describe()} too): "
                            "each variable needs one ReadValue and one Assign")
        found[vid] = layer
    ctx.layer = None
    return found


def _check_names_unique(ctx: Context, variables: list[Variable]) -> None:
    seen: dict[str, str] = {}
    for v in variables:
        for name in (v.input_name, v.output_name):
            if name in seen:
                raise IRError(f"{ctx.ir.source}: variables {seen[name]!r} and {v.id!r} would both become the graph "
                              f"input/output {name!r}")
            seen[name] = v.id


def _beam_idx_layers(ctx: Context, layers: list[Layer]) -> dict[int, object | None]:
    """optimum-intel's ``beam_idx`` Parameter and the Gathers (axis 0) of ReadValues it indexes, when those
    Gathers are all it feeds."""
    by_id = {layer.id: layer for layer in layers}
    beam = next((layer for layer in layers if layer.type.lower() == "parameter" and layer.outputs and
                 BEAM_IDX in (layer.outputs[0].names or [layer.name])), None)
    if beam is None:
        return {}
    producers = ctx.ir.producers()
    gathers, other_uses = [], 0
    for to_layer, to_port in ctx.ir.readers().get((beam.id, beam.outputs[0].id), []):
        if to_layer not in by_id:
            continue
        user = by_id[to_layer]
        if _is_cache_gather(ctx, user, producers, by_id) and user.inputs[1].id == to_port:
            gathers.append(user)
        else:
            other_uses += 1
    if other_uses or not gathers:
        return {}
    overrides: dict[int, object | None] = {g.id: _PassThrough for g in gathers}
    overrides[beam.id] = None
    return overrides


def _is_cache_gather(ctx: Context, layer: Layer, producers, by_id) -> bool:
    if layer.type.lower() != "gather" or len(layer.inputs) != 3:
        return False
    data = by_id.get(producers.get((layer.id, layer.inputs[0].id), (None,))[0])
    axis = by_id.get(producers.get((layer.id, layer.inputs[2].id), (None,))[0])
    return data is not None and data.type.lower() == "readvalue" and axis is not None and \
        axis.type.lower() == "const" and axis.value is not None and axis.value.size == 1 and \
        int(axis.value.reshape(-1)[0]) == 0 and attr.integer(ctx, layer, "batch_dims", 0) == 0


def order_state_io(ctx: Context) -> None:
    """The state inputs after the Parameters and the state outputs after the Results, in variable order."""
    if ctx.state is None:
        return
    rank = {v.input_name: i for i, v in enumerate(ctx.state.variables)}
    ctx.inputs.sort(key=lambda value: rank.get(value.name, -1))
    rank = {v.output_name: i for i, v in enumerate(ctx.state.variables)}
    ctx.outputs.sort(key=lambda value: rank.get(value.name, -1))


# ReadValue-3 (variable_id; an initial value input) and ReadValue-6 (variable_id, variable_type,
# variable_shape; the initial value optional): the graph input of the variable.
@translator("ReadValue", since=3)
def read_value(ctx: Context, layer: Layer) -> None:
    v = _variable(ctx, layer, "by_read")
    port = layer.outputs[0]
    et = port.element_type or attr.element(ctx, layer, "variable_type", "dynamic")
    if et is None:
        raise ctx.error(f"variable {v.id!r} has a dynamic element type, which an ONNX graph input cannot declare")
    shape = ctx.out_value(0).shape
    if shape is None or not port.dims:
        shape = _variable_shape(ctx, layer)
    value = Value(ctx.out(0), et, shape)
    # (a Const or empty initial value was not translated: convert.live_layers)
    initial = ctx.values.get(ctx.source(layer, 0)) if layer.inputs else None
    if initial is not None and _computed(initial):
        fed = shape if shape is None or not value.static_shape else (None,) * len(shape)  # an empty one fits
        ctx.graph_input(value.name, et, fed)
        value = _initial_when_empty(ctx, Value(value.name, et, fed), initial, shape)
    else:
        ctx.graph_input(value.name, value.type, value.shape)
    ctx.values[(layer.id, port.id)] = value


def _computed(initial: Value) -> bool:
    """An initial value the caller cannot feed itself: neither a constant nor empty (a dim 0)."""
    return initial.const is None and not (initial.shape is not None and 0 in initial.shape)


def _initial_when_empty(ctx: Context, state: Value, initial: Value, shape: tuple | None) -> Value:
    """If(Size(state) == 0) -> the initial value, else the state fed: OpenVINO's first step after a reset."""
    empty = ctx.one("Equal", [ctx.one("Size", [state.name]), ctx.const(np.int64(0))])
    branches = {}
    for key, src in (("then_branch", initial), ("else_branch", state)):
        body = ctx.body()
        out = body.one("Identity", [src.name])
        branches[key] = body.graph(f"{ctx.layer.name}/{key}", [], [declare(body.value(out), state.type, state.shape)])
    name = ctx.one("If", [empty], **branches)
    ctx.root.state.initial_ifs.append(ctx.nodes[-1].name)
    return Value(name, state.type, shape)


def sink_initial_values(model: ir.Model, if_names: list[str]) -> None:
    """Move into each initial-value If's then-branch the nodes only its initial value needs (what feeds
    nothing else), so they run on the first step only: onnxruntime runs every node of the main graph."""
    graph = model.graph
    by_name = {node.name: node for node in graph}
    for if_name in if_names:
        node = by_name.get(if_name)
        if node is None:
            continue
        branch = node.attributes["then_branch"].as_graph()
        moving: set = set()
        for candidate in reversed(list(graph)):  # consumers before producers
            if candidate is node or candidate.op_type in ("If", "Loop", "Scan"):
                continue
            if _only_feeds(candidate, moving, branch, graph):
                moving.add(candidate)
        ordered = [n for n in graph if n in moving]  # in the graph's (topological) order
        if ordered:
            graph.remove(ordered)
            branch.insert_before(branch[0], ordered)


def _only_feeds(node: ir.Node, moving: set, branch: ir.Graph, graph: ir.Graph) -> bool:
    outputs = node.outputs
    if not any(o.uses() for o in outputs) or any(o.is_graph_output() for o in outputs):
        return False
    return all(use.node in moving or use.node.graph is branch for o in outputs for use in o.uses())


def _variable_shape(ctx: Context, layer: Layer) -> tuple:
    text = attr.string(ctx, layer, "variable_shape", "")
    if text.strip() in ("", "..."):
        raise ctx.error("the variable's shape has a dynamic rank, which an ONNX graph input cannot declare")
    return tuple(parse_dim(d.strip(), ctx.where) for d in text.split(","))


# Assign-3 and Assign-6: the graph output of the variable (its value is the new state).
@translator("Assign", since=3, emits=("Identity",))
def assign(ctx: Context, layer: Layer) -> None:
    v = _variable(ctx, layer, "by_assign")
    src = ctx.input(0)
    if src.name != v.output_name:
        ctx.one("Identity", [src.name], v.output_name)
    ctx.graph_output(layer.id, Value(v.output_name, src.type, src.shape))


def _variable(ctx: Context, layer: Layer, table: str) -> Variable:
    state = ctx.root.state
    if ctx.in_body or state is None or layer.id not in getattr(state, table):
        raise ctx.error("model state inside a sub-graph body is not supported")
    return getattr(state, table)[layer.id]
