"""Control flow: ONNX If -> OpenVINO If-8, ONNX Loop -> Loop-5 (bodies nested in the layer)."""

from __future__ import annotations

import numpy as np

from ...ir import MapEntry
from ..graph import GraphBuilder, NodeContext, Scope, Value, tensor_info
from ..registry import register
from .common import BOOL, I64, to_scalar


def _external_inputs(scopes) -> list[Value]:
    """The outer values the bodies read, each once, in order of first use."""
    seen, values = set(), []
    for scope in scopes:
        for outer, _ in scope.captures:
            if id(outer) not in seen:
                seen.add(id(outer))
                values.append(outer)
    return values


@register("If", since=1)
def if_(ctx: NodeContext):
    cond = ctx.input(0)
    if cond.rank != 0:
        cond = to_scalar(ctx, cond)
    then_b, then_s, then_res = ctx.converter.convert_body(ctx.attr("then_branch"), ctx.scope, f"{ctx.name}/then")
    else_b, else_s, else_res = ctx.converter.convert_body(ctx.attr("else_branch"), ctx.scope, f"{ctx.name}/else")
    if len(then_res) != len(else_res) or len(then_res) != len(ctx.node.output):
        raise ctx.error(f"branches have {len(then_res)} and {len(else_res)} outputs, the node {len(ctx.node.output)}")
    outer = _external_inputs([then_s, else_s])
    port_of = {id(v): 1 + i for i, v in enumerate(outer)}
    outputs = []
    for j, (t, e) in enumerate(zip(then_res, else_res)):
        et = t.inputs[0].element_type
        if e.inputs[0].element_type != et:
            raise ctx.error(f"output {j} is {et.ov} in then_branch but {e.inputs[0].element_type.ov} in else_branch")
        info = ctx.output_info(j)
        outputs.append((et, info.dims if info is not None else None))
    values = ctx.op_multi("If", "opset8", [cond] + outer, None, outputs)
    layer = values[0].layer
    first_out = 1 + len(outer)
    for tag, scope, results in (("then", then_s, then_res), ("else", else_s, else_res)):
        entries = [MapEntry("input", {"external_port_id": str(port_of[id(o)]), "internal_layer_id": str(p.layer.id)})
                   for o, p in scope.captures]
        entries += [MapEntry("output", {"external_port_id": str(first_out + j), "internal_layer_id": str(r.id)})
                    for j, r in enumerate(results)]
        layer.maps[f"{tag}_port_map"] = entries
    layer.bodies["then_body"] = then_b.model()
    layer.bodies["else_body"] = else_b.model()
    ctx.set_outputs(*values)


@register("Loop", since=1)
def loop(ctx: NodeContext):
    """ONNX Loop -> OpenVINO Loop-5.

    Body inputs (iteration_num, cond_in, v_in...) become body Parameters: the
    iteration number through ``purpose="current_iteration"``, cond_in and the
    loop-carried values fed by the Loop's inputs 1, 2... and by back edges from
    the body Results. Scan outputs are unsqueezed in the body and concatenated
    along axis 0 (OpenVINO concatenates along an existing axis; ONNX stacks).
    """
    body_g = ctx.attr("body")
    n_carried = max(ctx.n_inputs - 2, 0)
    n_scan = len(body_g.output) - 1 - n_carried
    if len(body_g.input) != 2 + n_carried or n_scan < 0:
        raise ctx.error(f"the body has {len(body_g.input)} inputs and {len(body_g.output)} outputs "
                        f"for {n_carried} loop-carried values")
    trip = ctx.optional_input(0)
    trip = ctx.const(np.array(-1, np.int64)) if trip is None else (trip if trip.rank == 0 else to_scalar(ctx, trip))
    cond = ctx.optional_input(1)
    cond = ctx.const(np.array(True)) if cond is None else (cond if cond.rank == 0 else to_scalar(ctx, cond))
    inits = [ctx.input(2 + k) for k in range(n_carried)]

    builder = GraphBuilder(f"{ctx.name}/body")
    scope = Scope(builder, body_g, ctx.scope)
    iter_vi, cond_vi, *carried_vi = body_g.input
    iter_param = builder.parameter(iter_vi.name, I64, [], [iter_vi.name])
    cond_param = builder.parameter(cond_vi.name, BOOL, [], [cond_vi.name])
    scope.bind(iter_vi.name, iter_param)
    scope.bind(cond_vi.name, cond_param)
    carried_params = []
    for vi, init in zip(carried_vi, inits):
        declared = tensor_info(vi.type)
        dims = declared.dims if declared is not None and declared.dims is not None else (
            None if init.rank is None else [None] * init.rank)
        param = builder.parameter(vi.name, init.type, dims, [vi.name])
        scope.bind(vi.name, param)
        carried_params.append(param)
    ctx.converter.convert_nodes(body_g, scope)

    cond_out = scope.lookup(body_g.output[0].name)
    if cond_out.rank != 0:
        shape = builder.const(np.zeros((0,), np.int64), f"{ctx.name}/body/scalar")
        _, (cond_out,) = builder.add_layer("Reshape", "opset1", [cond_out, shape], {"special_zero": False},
                                           [(BOOL, [])], f"{ctx.name}/body/cond")
    cond_res = builder.result(cond_out, None, f"{body_g.output[0].name}/result")
    carried_res = [builder.result(scope.lookup(vi.name), None, f"{vi.name}/result")
                   for vi in body_g.output[1:1 + n_carried]]
    scan_res = []
    for vi in body_g.output[1 + n_carried:]:
        v = scope.lookup(vi.name)
        axis0 = builder.const(np.array([0], np.int64), f"{vi.name}/axis")
        _, (u,) = builder.add_layer("Unsqueeze", "opset1", [v, axis0], None,
                                    [(v.type, None if v.dims is None else [1] + v.dims)], f"{vi.name}/stack")
        scan_res.append(builder.result(u, None, f"{vi.name}/result"))

    outer = _external_inputs([scope])
    first_capture = 2 + n_carried
    port_of = {id(v): first_capture + i for i, v in enumerate(outer)}
    outputs = []
    for j, r in enumerate(carried_res + scan_res):
        info = ctx.output_info(j)
        outputs.append((r.inputs[0].element_type, info.dims if info is not None else None))
    values = ctx.op_multi("Loop", "opset5", [trip, cond] + inits + outer, None, outputs)
    layer = values[0].layer
    first_out = first_capture + len(outer)
    ids = lambda **kw: {k: str(v) for k, v in kw.items()}  # noqa: E731
    entries = [MapEntry("input", ids(external_port_id=2 + k, internal_layer_id=p.layer.id)) for k, p in enumerate(carried_params)]
    entries += [MapEntry("input", ids(external_port_id=1, internal_layer_id=cond_param.layer.id))]
    entries += [MapEntry("input", ids(external_port_id=port_of[id(o)], internal_layer_id=p.layer.id)) for o, p in scope.captures]
    entries += [MapEntry("output", ids(external_port_id=first_out + k, internal_layer_id=r.id)) for k, r in enumerate(carried_res)]
    entries += [MapEntry("output", {"axis": "0", **ids(external_port_id=first_out + n_carried + j, internal_layer_id=r.id),
                                    "start": "0", "end": "-1", "stride": "1", "part_size": "1"})
                for j, r in enumerate(scan_res)]
    entries += [MapEntry("input", {**ids(external_port_id=-1, internal_layer_id=iter_param.layer.id), "purpose": "current_iteration"}),
                MapEntry("output", {**ids(external_port_id=-1, internal_layer_id=cond_res.id), "purpose": "execution_condition"})]
    layer.maps["port_map"] = entries
    layer.maps["back_edges"] = [MapEntry("edge", {"from-layer": str(r.id), "to-layer": str(p.layer.id)})
                                for r, p in zip([cond_res] + carried_res, [cond_param] + carried_params)]
    layer.bodies["body"] = builder.model()
    ctx.set_outputs(*values)
