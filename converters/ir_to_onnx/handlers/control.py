"""If-8 -> ONNX If: each body becomes a sub-graph that reads the outer values its
port map connects (body Parameters) and yields its mapped Results in the order of
``external_port_id``. A condition known at conversion time (a Const, or folded: a
rank compared with a number) keeps only the live body, inlined: the dead one is not
translated, so what it holds cannot refuse the model (OpenVINO runs it never either)."""

from __future__ import annotations

import math

import numpy as np

from ..context import Context
from ..convert import translate_body
from ..registry import translator

_BODIES = (("then_body", "then_port_map"), ("else_body", "else_port_map"))


@translator("If", since=8, emits=("If",))
def if_(ctx: Context, layer) -> None:
    cond = ctx.input(0)
    if cond.const is not None:
        _inline_live_body(ctx, layer, _constant_condition(ctx, cond.const))
        return
    if cond.shape is not None and all(isinstance(d, int) for d in cond.shape) and math.prod(cond.shape) != 1:
        # OpenVINO refuses it when compiling, onnxruntime only when run
        raise ctx.error(f"the condition holds {math.prod(cond.shape)} values (shape {list(cond.shape)}), If needs one")
    branches = {}
    for body_key, map_key in _BODIES:
        sub, results = _body_context(ctx, layer, body_key, map_key)
        name = f"{layer.name}/{body_key}"
        branches[body_key] = sub.graph(name, [], translate_body(sub, results, name))
    ctx.node("If", [cond.name], [ctx.out(i) for i in range(len(layer.outputs))],
             then_branch=branches["then_body"], else_branch=branches["else_body"])


def _constant_condition(ctx: Context, value) -> bool:
    value = np.asarray(value)
    if value.size != 1:
        raise ctx.error(f"the condition holds {value.size} values, If needs one")
    return bool(value.reshape(-1)[0])


def _body_context(ctx: Context, layer, body_key: str, map_key: str) -> tuple[Context, list[int]]:
    """The context of one body (its Parameters standing for the outer values its port map
    connects) and its Result layer ids in the order of the If's outputs."""
    body = layer.bodies.get(body_key)
    if body is None:
        raise ctx.error(f"If has no <{body_key}>")
    entries = layer.maps.get(map_key, [])
    try:
        inputs = {int(e.attrs["internal_layer_id"]): ctx.input(int(e.attrs["external_port_id"]))
                  for e in entries if e.tag == "input"}
        outputs = sorted((int(e.attrs["external_port_id"]), int(e.attrs["internal_layer_id"]))
                         for e in entries if e.tag == "output")
    except (KeyError, ValueError):
        raise ctx.error(f"<{map_key}> entries need integer external_port_id and internal_layer_id") from None
    if len(outputs) != len(layer.outputs):
        raise ctx.error(f"<{map_key}> maps {len(outputs)} outputs, the layer has {len(layer.outputs)}")
    sub = Context(body, ctx)
    sub.param_values = inputs
    return sub, [lid for _, lid in outputs]


def _inline_live_body(ctx: Context, layer, take_then: bool) -> None:
    """The live body's nodes in this graph, its Results' values the If's outputs (no Identity;
    constants stay constants, for what folds after)."""
    body_key, map_key = _BODIES[0] if take_then else _BODIES[1]
    sub, results = _body_context(ctx, layer, body_key, map_key)
    outputs = translate_body(sub, results, f"{layer.name}/{body_key}")
    body_outputs = {v.name for v in outputs}  # made by the Results' Identities, which the If's outputs replace
    for node in sub.nodes:
        if not any(v.name in body_outputs for v in node.outputs):
            ctx.add(node)
    producers = sub.ir.producers()
    for i, result_id in enumerate(results):
        result = next(r for r in sub.ir.layers if r.id == result_id)
        v = sub.values[producers[(result.id, result.inputs[0].id)]]
        ctx.values[(layer.id, layer.outputs[i].id)] = v  # what it is known to be, constant or not
