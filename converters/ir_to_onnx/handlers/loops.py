"""Loop-5 and TensorIterator-1 -> ONNX Loop.

The body becomes the Loop's sub-graph (inputs: iteration number, condition, then the
loop-carried values; outputs: condition, carried values, then the per-iteration
outputs). From the port map and back edges:

- a body Parameter fed by a back edge is a loop-carried value (its initial value the
  outer input the port map names); the Result the edge comes from is its next value
  and, when an output port maps it, its final value;
- the ``current_iteration`` Parameter (Loop) is ONNX's iteration number, cast and
  shaped as the Parameter is;
- a sliced input (``axis``, ``stride``, ``part_size``, ``start``, ``end``) is a Slice of the
  outer value at iteration i: [start + i * p, start + (i + 1) * p) along the axis, or down
  from start when the stride is negative; the number of iterations is the dim over p (a Loop's: at most its trip
  count, as OpenVINO's CPU plugin counts them; its reference would repeat the last part);
- any other Parameter is the outer value itself (ONNX bodies see the outer scope);
- an output with ``axis`` concatenates the per-iteration values along that axis (ONNX
  stacks them on a new first axis: moved to the axis and merged; a negative stride
  reverses the order first); an output without one is the last iteration's value: a
  loop-carried value from an empty initial one where its rank is known (its shape may
  change across iterations, which ONNX's scan outputs refuse), else the last of the
  stacked values;
- the ``execution_condition`` Result (Loop) is ONNX's condition output; without one the
  condition is passed through. A trip count of -1 is no trip count;
- a TensorIterator that slices no input runs |end - start| / part_size times, by its first concatenated
  output (OpenVINO's shape inference), or once when nothing is sliced (its CPU plugin).

A slice runs over [start, end], both included, a negative bound counted from the dim's end (OpenVINO's
shape inference: (|end - start| + 1) / part_size iterations), in parts with |stride| = part_size.
ONNX's Slice has no 8-bit float type:
an f8e4m3/f8e5m2 value the plumbing slices (a sliced input, a last-iteration output of unknown rank, a
reversed concatenation) is refused as a limitation of ONNX.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx_ir as ir

from onnx_ext.types import from_onnx, from_ov

from ..context import Context, Value, attribute, declare
from ..convert import translate_body
from ..registry import translator

_I64 = from_ov("i64")
_BOOL = from_ov("boolean")

#: The types ONNX's Slice lacks (its opset 13 schema, unchanged through opset 28) that IR has.
_NOT_SLICEABLE = ("f8e4m3", "f8e5m2")


@dataclass
class _Entry:
    port: int  # index of the layer's input or output
    layer_id: int  # body Parameter or Result
    axis: int | None
    stride: int
    part: int
    start: int
    end: int
    purpose: str


def _entries(ctx: Context, layer) -> tuple[list[_Entry], list[_Entry], dict[int, int]]:
    """The port map's inputs and outputs (by port index) and the back edges (Parameter -> Result)."""
    in_index = {p.id: i for i, p in enumerate(layer.inputs)}
    out_index = {p.id: i for i, p in enumerate(layer.outputs)}
    inputs, outputs = [], []
    try:
        for e in layer.maps.get("port_map", []):
            a = e.attrs
            ext = int(a.get("external_port_id", "-1"))
            index = in_index if e.tag == "input" else out_index
            if ext != -1 and ext not in index:
                raise ctx.error(f"the port map names port {ext}, which the layer does not have")
            entry = _Entry(index.get(ext, -1), int(a["internal_layer_id"]),
                           int(a["axis"]) if a.get("axis", "").strip() else None, int(a.get("stride", "1")),
                           int(a.get("part_size", "1")), int(a.get("start", "0")), int(a.get("end", "-1")),
                           a.get("purpose", ""))
            (inputs if e.tag == "input" else outputs).append(entry)
        back = {int(e.attrs["to-layer"]): int(e.attrs["from-layer"]) for e in layer.maps.get("back_edges", [])}
    except (KeyError, ValueError):
        raise ctx.error("the port map and back edges need integer ports and layer ids") from None
    return inputs, outputs, back


def _param_port(body, layer_id: int):
    layer = next((x for x in body.layers if x.id == layer_id), None)
    if layer is None or layer.type.lower() != "parameter":
        raise ValueError(f"body layer {layer_id} is not a Parameter")
    return layer.outputs[0]


def _loop(ctx: Context, layer, trip: str, cond: str) -> None:
    body = layer.bodies.get("body")
    if body is None:
        raise ctx.error(f"{layer.type} has no <body>")
    inputs, outputs, back = _entries(ctx, layer)
    sub = Context(body, ctx)
    iteration, cond_in = ctx.unique(f"{layer.name}/iteration"), ctx.unique(f"{layer.name}/condition")
    sub.graph_input(iteration, _I64, ())
    sub.graph_input(cond_in, _BOOL, ())
    params: dict[int, Value] = {}
    carried: list[tuple[int, Value]] = []  # (Parameter id, outer initial value)
    parts_seen = None
    for e in inputs:
        port = _param_port(body, e.layer_id)
        dims = tuple(port.dims)
        if e.purpose == "current_iteration":
            name = ctx.unique(f"{layer.name}/current_iteration")
            et = port.element_type or _I64
            _plain(sub, "Cast", [iteration], name + "/cast", to=et.onnx)
            _plain(sub, "Reshape", [name + "/cast", ctx.i64(list(dims))], name)
            params[e.layer_id] = Value(name, et, dims)
        elif e.layer_id in back and e.axis is None:  # (a sliced one is sliced: OpenVINO drops the back edge)
            outer = ctx.input(e.port)
            name = ctx.unique(f"{layer.name}/carried")
            # a port with no <dim> is a scalar or of dynamic rank: the initial value's rank tells which
            shape = None if not dims and outer.shape is None else dims
            params[e.layer_id] = Value(name, outer.type, shape)
            sub.graph_input(name, outer.type, None if shape is None else tuple(None for _ in shape))
            carried.append((e.layer_id, outer))
        elif e.axis is not None:
            outer = ctx.input(e.port)
            name, parts = _slice_input(ctx, sub, layer, e, outer, iteration)
            if parts_seen is None:  # the first sliced input's number of parts bounds the iterations
                parts_seen = parts
                trip = parts if not trip else ctx.one("Min", [trip, parts])
            # a part is never a scalar: no <dim> is a dynamic rank, the outer value's (unknown too, or known)
            part_shape = dims or (None if outer.shape is None else (None,) * len(outer.shape))
            params[e.layer_id] = Value(name, outer.type, part_shape)
        else:
            params[e.layer_id] = ctx.input(e.port)
    cond_result = next((e.layer_id for e in outputs if e.purpose == "execution_condition"), None)
    mapped = [e for e in outputs if e.purpose != "execution_condition"]
    scans = [e for e in mapped if e.axis is not None or e.layer_id not in back.values()]
    results = ([cond_result] if cond_result is not None else []) + [back[p] for p, _ in carried] + \
        [e.layer_id for e in scans]
    sub.param_values = params
    outs = translate_body(sub, results, f"{layer.name}/body")
    cond_out = ctx.unique(f"{layer.name}/condition_out")
    if cond_result is None:  # the condition passes through
        _plain(sub, "Identity", [cond_in], cond_out)
    else:
        result = outs.pop(0)
        result.type, result.shape = None, None  # not an output of the body: nothing to declare
        _plain(sub, "Reshape", [result.name, ctx.i64([])], cond_out)
    body_outputs = [declare(sub.value(cond_out), _BOOL, ())]
    # a last iteration's value of a known rank is carried too (from an empty initial value), not stacked: ONNX's
    # Loop refuses scan outputs whose shape changes across iterations (a nested Loop's output ended by its values)
    scan_outs = outs[len(carried):]
    lasts = [k for k, e in enumerate(scans)
             if e.axis is None and scan_outs[k].shape is not None and scan_outs[k].dtype is not None]
    initial = [_empty_like(ctx, sub, layer, scan_outs[k]) for k in lasts]
    scans = [scans[k] for k in lasts] + [e for k, e in enumerate(scans) if k not in lasts]
    outs = outs[:len(carried)] + [scan_outs[k] for k in lasts] + \
        [v for k, v in enumerate(scan_outs) if k not in lasts]
    seen = set()
    for value in outs:  # a Result that is both carried and scanned is output twice: copy it
        if value.name in seen:
            copy = ctx.unique(value.name + "/copy")
            _plain(sub, "Identity", [value.name], copy)
            dtype, value = value.dtype, sub.value(copy)
            value.type = ir.TensorType(dtype)
        seen.add(value.name)
        body_outputs.append(value)
    graph = sub.graph(f"{layer.name}/body", sub.inputs, body_outputs)
    loop_outs = ctx.node("Loop", [trip, cond] + [v.name for _, v in carried] + initial, len(carried) + len(scans),
                         body=graph)
    finals = {back[p]: loop_outs[i] for i, (p, _) in enumerate(carried)}
    last_values = {id(e): loop_outs[len(carried) + i] for i, e in enumerate(scans[:len(lasts)])}
    for e in mapped:
        if e.port < 0:
            continue
        if e.axis is None:
            _rank_from_body(ctx, layer, e.port, body_outputs[1 + len(carried) + scans.index(e)]
                            if e.layer_id not in finals else None)
        if e.axis is None and (e.layer_id in finals or id(e) in last_values):
            ctx.one("Identity", [finals.get(e.layer_id) or last_values[id(e)]], ctx.out(e.port))
            continue
        stacked = loop_outs[len(carried) + scans.index(e)]
        if e.axis is None:  # the last iteration's value
            _check_sliceable(ctx, f"output port {layer.outputs[e.port].id}", layer.outputs[e.port].element_type,
                             "the last iteration's value is a Slice of the ONNX Loop's stacked outputs")
            last = ctx.one("Slice", [stacked, ctx.i64([-1]), ctx.i64([np.iinfo(np.int64).max]), ctx.i64([0])])
            ctx.one("Squeeze", [last, ctx.i64([0])], ctx.out(e.port))
        else:
            body_value = body_outputs[1 + len(carried) + scans.index(e)]
            # no <dim>: dynamic rank (a concatenated value is not a scalar), the body's value may know it
            rank = len(layer.outputs[e.port].dims) or len(body_value.shape or ()) or None
            if rank is None and e.axis != 0:
                raise ctx.error(f"output port {layer.outputs[e.port].id} concatenates iterations on axis {e.axis} "
                                "but its rank is unknown")
            if e.stride < 0:
                _check_sliceable(ctx, f"output port {layer.outputs[e.port].id}", layer.outputs[e.port].element_type,
                                 "a negative stride reverses the ONNX Loop's stacked outputs with a Slice")
            _concatenate(ctx, stacked, e, rank, ctx.out(e.port))


def _empty_like(ctx: Context, sub: Context, layer, value) -> str:
    """An empty initial value of ``value``'s type and rank for a carried last-iteration value, and the body's
    input it feeds (unread: the body computes the value anew every iteration)."""
    et = from_onnx(int(value.dtype))
    sub.graph_input(ctx.unique(f"{layer.name}/last_in"), et, tuple(None for _ in value.shape))
    return ctx.const(np.zeros((0,) * len(value.shape), et.numpy), hint="empty")


def _check_sliceable(ctx: Context, port: str, et, why: str) -> None:
    """Refuse ``port`` of a type ONNX's Slice has not when the loop's plumbing slices it (``why``): onnx's
    checker would reject the model, which is no fault of the IR nor a translation ONNX allows."""
    if et is not None and et.ov in _NOT_SLICEABLE:
        raise ctx.error(f"{port} is {et.ov}: {why}, and ONNX's Slice has no {et.ov} type (opset 13, unchanged "
                        f"through 21, the converter's, and later): a limitation of ONNX, not a bug of the converter "
                        f"or the IR; export the source model with this port in f16 or f32")


def _rank_from_body(ctx: Context, layer, port: int, value: ir.Value | None) -> None:
    """An output port written with no <dim> (dynamic rank and scalar look alike in IR) takes the rank of the
    body's value when that is known and not 0 (Unsqueeze by axes computed at run time)."""
    out = layer.outputs[port]
    shape = value.shape if value is not None else None
    if not out.dims and shape is not None and len(shape) and (layer.id, out.id) not in ctx.rank_unknown:
        ctx.dims_override[(layer.id, out.id)] = (None,) * len(shape)


def _plain(sub: Context, op_type: str, inputs: list[str], output: str, **attrs) -> None:
    """A node of the loop's own plumbing in the body ``sub``: unnamed, its output named ``output``."""
    sub.add(ir.Node("", op_type, [sub.value(i) for i in inputs], [attribute(k, v) for k, v in attrs.items()],
                    outputs=[ir.Value(name=output)], name=""))


def _slice_input(ctx: Context, sub: Context, layer, e: _Entry, outer: Value, iteration: str):
    """The body's part of ``outer`` at the iteration (see the module doc), made in ``sub``, and its number
    of parts (a scalar)."""
    forward = e.stride > 0
    if abs(e.stride) != e.part:
        raise ctx.error(f"{layer.type} slicing with stride {e.stride} and part_size {e.part} is not translated "
                        "(|stride| = part_size only)")
    if outer.rank is None and e.axis < 0:
        raise ctx.error(f"a {layer.type} input sliced on axis {e.axis} needs a known rank")
    _check_sliceable(ctx, f"input port {layer.inputs[e.port].id}", outer.type, "each iteration's part is a Slice")
    axis = e.axis + outer.rank if e.axis < 0 else e.axis
    dim = ctx.one("Shape", [outer.name], start=axis, end=axis + 1)
    whole = (e.start, e.end) == ((0, -1) if forward else (-1, 0))
    # [start, end], both included, a negative one counted from the dim (OpenVINO's shape inference: iterations
    # (|end - start| + 1) / part_size); forwards from start, backwards from start down
    first, last = (None, None) if whole else (_index(ctx, dim, e.start), _index(ctx, dim, e.end))
    span = dim if whole else ctx.one("Add", [ctx.one("Sub", [last, first] if forward else [first, last]),
                                            ctx.i64([1])])
    parts = ctx.one("Squeeze", [ctx.one("Div", [span, ctx.i64([e.part])])])
    name = ctx.unique(f"{layer.name}/part")
    part = ctx.i64([e.part])
    i = name + "/i"
    _plain(sub, "Unsqueeze", [iteration, ctx.i64([0])], i)
    if forward:  # start + i * p
        _plain(sub, "Mul", [i, part], name + ("/begin" if whole else "/step"))
        if not whole:
            _plain(sub, "Add", [first, name + "/step"], name + "/begin")
    else:  # start + 1 - (i + 1) * p (start: the dim's last index when whole)
        _plain(sub, "Add", [i, ctx.i64([1])], name + "/i1")
        _plain(sub, "Mul", [name + "/i1", part], name + "/back")
        top = dim if whole else ctx.one("Add", [first, ctx.i64([1])])
        _plain(sub, "Sub", [top, name + "/back"], name + "/begin")
    _plain(sub, "Add", [name + "/begin", part], name + "/end")
    _plain(sub, "Slice", [outer.name, name + "/begin", name + "/end", ctx.i64([axis])], name)
    return name, parts


def _index(ctx: Context, dim: str, index: int) -> str:
    """A slicing bound as a 1-D index: counted from ``dim`` when negative."""
    return ctx.i64([index]) if index >= 0 else ctx.one("Add", [dim, ctx.i64([index])])


def _concatenate(ctx: Context, stacked: str, e: _Entry, rank: int | None, output: str) -> None:
    """ONNX's stacked [iterations, ...] per-iteration values (of ``rank``; None: unknown, on axis 0)
    concatenated along ``e.axis``."""
    axis = e.axis + rank if e.axis < 0 else e.axis
    if e.stride < 0:
        stacked = ctx.one("Slice", [stacked, ctx.i64([-1]), ctx.i64([np.iinfo(np.int64).min]), ctx.i64([0]),
                                    ctx.i64([-1])])
    moved = stacked if axis == 0 else \
        ctx.one("Transpose", [stacked], perm=list(range(1, axis + 1)) + [0] + list(range(axis + 1, rank + 1)))
    # the merged dim written out (a -1 beside a 0 dim is ambiguous: onnxruntime refused an empty batch), allowzero
    merged = ctx.one("Mul", [ctx.one("Shape", [moved], start=axis, end=axis + 1),
                             ctx.one("Shape", [moved], start=axis + 1, end=axis + 2)])
    parts = ([ctx.one("Shape", [moved], end=axis)] if axis else []) + [merged]
    if rank is None or axis + 2 <= rank:
        parts.append(ctx.one("Shape", [moved], start=axis + 2))
    ctx.one("Reshape", [moved, ctx.one("Concat", parts, axis=0)], output, allowzero=1)


@translator("Loop", since=5,
            emits=("Cast", "Concat", "Div", "Identity", "Loop", "Min", "Mul", "Reshape", "Shape", "Slice", "Squeeze",
                   "Transpose"))
def loop(ctx: Context, layer) -> None:
    trip_v, cond_v = ctx.input(0), ctx.input(1)
    if trip_v.const is not None and int(np.asarray(trip_v.const).reshape(-1)[0]) < 0:
        trip = ""  # -1: no limit
    else:
        trip = ctx.one("Reshape", [ctx.as_i64(trip_v), ctx.i64([])])
    cond = ctx.one("Reshape", [ctx.cast(cond_v.name, cond_v.type, _BOOL), ctx.i64([])])
    _loop(ctx, layer, trip, cond)


@translator("TensorIterator", since=1,
            emits=("Concat", "Div", "Identity", "Loop", "Mul", "Reshape", "Shape", "Slice", "Squeeze", "Transpose"))
def tensor_iterator(ctx: Context, layer) -> None:
    entries = layer.maps.get("port_map", [])
    if any(e.attrs.get("axis", "").strip() for e in entries if e.tag == "input"):
        _loop(ctx, layer, "", "")  # the sliced inputs count the iterations
    elif any(e.attrs.get("axis", "").strip() for e in entries if e.tag == "output"):
        _loop(ctx, layer, ctx.i64(_iterations_of_output(ctx, layer)), "")
    else:  # nothing sliced: OpenVINO's CPU plugin runs the body once (no trip count would loop forever)
        _loop(ctx, layer, ctx.i64(1), "")


def _iterations_of_output(ctx: Context, layer) -> int:
    """The iterations of a TensorIterator that slices no input: OpenVINO's shape inference
    (``try_to_set_num_iterations_if_no_slice_inputs``) takes |end - start| / part_size of its first concatenated
    output (by port id), no +1 and no bound counted from a dim (there is none), which its reference runs and its
    CPU plugin agrees with where it runs (start 0, end -1: one iteration). It refuses fewer than one."""
    _, outputs, _ = _entries(ctx, layer)
    first = min((e for e in outputs if e.axis is not None and e.port >= 0), key=lambda e: layer.outputs[e.port].id)
    if first.part < 1:
        raise ctx.error(f"output port {layer.outputs[first.port].id} has part_size {first.part} (must be >= 1)")
    count = abs(first.end - first.start) // first.part
    if count < 1:
        raise ctx.error(f"no input is sliced and output port {layer.outputs[first.port].id} (start {first.start}, "
                        f"end {first.end}, part_size {first.part}) gives 0 iterations, which OpenVINO's CPU plugin "
                        "refuses to run")
    return count
