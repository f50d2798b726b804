"""If-8 -> ONNX If: each body becomes a sub-graph that reads the outer values its
port map connects (body Parameters) and yields its mapped Results in the order of
``external_port_id``."""

from __future__ import annotations

from ..context import Context
from ..convert import translate_body
from ..registry import translator


@translator("If", since=8, emits=("If",))
def if_(ctx: Context, layer) -> None:
    branches = {}
    for body_key, map_key in (("then_body", "then_port_map"), ("else_body", "else_port_map")):
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
        name = f"{layer.name}/{body_key}"
        branches[body_key] = sub.graph(name, [], translate_body(sub, [lid for _, lid in outputs], name))
    cond = ctx.input(0)
    ctx.node("If", [cond.name], [ctx.out(i) for i in range(len(layer.outputs))],
             then_branch=branches["then_body"], else_branch=branches["else_body"])
