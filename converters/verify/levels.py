"""Where the outputs of a quantized model differ, why (docs/verify.md, "Quantized models").

A FakeQuantize whose input lies within a few ulps of a half level picks its level by the input's last ulp, which
the order of the f32 sum before it decides (onnxruntime's and OpenVINO's differ, and neither is right by
construction); the one-quantum step is then carried to the outputs, in deep int8 networks by several percent.
So: the IR runs with every activation FakeQuantize's input and output as outputs, and the ONNX model runs with
each of those FakeQuantize outputs pinned to the IR's (a graph input in its place). Every stretch between
FakeQuantizes is then compared on the same levels: a level that differs must be a flip at a rounding boundary
(both inputs within ``BOUNDARY`` of the same half level), and each output must match within its tolerance.
Anything else is where the conversion departs, named; a boundary flip can hide nothing downstream of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping

import numpy as np
import onnx

from .compare import compare
from .runners import run_numpy_values, run_onnx, run_openvino_model

#: How far from a half level (in levels) an input's last ulps can decide the level: measured 2-6 ulps, up to 5e-5
#: of a level, on TFLite int8 keras.applications models (docs/testing.md, tests/test_tflite_int8.py).
BOUNDARY = 2e-4


@dataclass(frozen=True)
class Probe:
    """An activation FakeQuantize of the IR whose input and output values the ONNX model has by name."""

    layer: str  # its friendly name
    data: str  # the ONNX value of its data input
    output: str  # the ONNX value of its output
    ranges: tuple[np.ndarray, ...]  # input low, input high, output low, output high (f32)
    levels: int


@dataclass(frozen=True)
class Localised:
    """What following the levels found: the flips at rounding boundaries (layer -> how many), and where the
    conversion departs (a layer, or the layers after the last FakeQuantizes before an output) with the outputs it
    reaches."""

    flips: dict[str, int] = field(default_factory=dict)
    departure: str = ""  # "layer 'x' (FakeQuantize): ..." or ""
    where: str = ""  # the departure in a few words, for the rows
    departing: frozenset[str] = frozenset()  # the outputs after it


def probes(ov_model, onnx_model: onnx.ModelProto) -> tuple[list, list[Probe], dict[str, frozenset[int]]]:
    """The IR's activation FakeQuantizes with constant ranges whose data and output the ONNX main graph has by name
    (the converter names values after the IR's tensors, else its layers): their OpenVINO nodes, the probes, and
    for each IR output name the probes before it."""
    values = {o for n in onnx_model.graph.node for o in n.output} | {v.name for v in onnx_model.graph.input}
    nodes, found, index = [], [], {}
    before: dict = {}
    for node in ov_model.get_ordered_ops():
        seen = frozenset().union(*(before[v.get_node().get_name()] | index.get(v.get_node().get_name(), frozenset())
                                   for v in node.input_values()))
        before[node.get_name()] = seen  # (get_name: unique, friendly names need not be)
        probe = _probe(node, values)
        if probe is not None:
            index[node.get_name()] = frozenset({len(found)})
            nodes.append(node)
            found.append(probe)
    upstream = {}
    for result in ov_model.get_results():
        reach = before[result.get_name()]
        for name in (*result.output(0).get_names(), *result.input_value(0).get_names(), result.get_friendly_name()):
            upstream[name] = reach
    return nodes, found, upstream


def _probe(node, values: set[str]) -> Probe | None:
    if node.get_type_name() != "FakeQuantize":
        return None
    data = node.input_value(0)
    if data.get_node().get_type_name() in ("Constant", "Convert"):  # weights
        return None
    ranges = []
    for k in range(1, 5):
        source = node.input_value(k).get_node()
        if source.get_type_name() != "Constant":
            return None
        ranges.append(np.asarray(source.get_data(), np.float32))
    data_name, output_name = _onnx_name(data, values), _onnx_name(node.output(0), values)
    if data_name is None or output_name is None:
        return None
    return Probe(node.get_friendly_name(), data_name, output_name, tuple(ranges), node.get_levels())


def _onnx_name(port, values: set[str]) -> str | None:
    owner = port.get_node()
    single = len(owner.outputs()) == 1
    names = [*sorted(port.get_names()), owner.get_friendly_name() if single else
             f"{owner.get_friendly_name()}:{port.get_index()}"]
    return next((n for n in names if n in values), None)


def localise(ir_model, ran, onnx_model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], ir_outputs,
             backend: str, label: str, onnx_label: str, quantized: float) -> Localised | None:
    """Every probe's input and output from the IR (``ir_model`` as read_ir read it, ``ran`` the model run_ir ran:
    an ``OVModelFile``, read here, or on the numpy backend the IR converted to ONNX); the ONNX model run with each
    probe's output pinned to the IR's (a graph input in its place), so that each stretch between FakeQuantizes is
    compared on the same levels. None when the IR has no activation FakeQuantize the ONNX model names."""
    if backend == "numpy":
        found, ir_side, upstream = _numpy_side(ir_model, ran, onnx_model, feeds, label)
    else:
        found, ir_side, upstream = _openvino_side(ran.read(), onnx_model, feeds, backend, label)
    if not found:
        return None
    # every probe pinned, a graph output too (what comes after it reads the IR's levels); its own value NAME/own
    pinned = {p.output: ir_side[i][1] for i, p in enumerate(found)}
    own = [f"{p.output}/own" for p in found]
    wanted = [n for p, o in zip(found, own) for n in (p.data, o)]
    values = {**feeds, **pinned}
    ours = {**values, **run_onnx(_pinned(onnx_model, pinned, wanted), values, onnx_label)}
    flips, departure, where, departing = {}, "", "", set()
    for i, probe in enumerate(found):
        x_onnx = ours[probe.data]  # (a graph input, or a pinned FakeQuantize: what was fed)
        moved, at_boundary = _levels(probe, x_onnx, ours[own[i]], *ir_side[i])
        if not moved:
            continue
        if at_boundary:
            flips[probe.layer] = moved
        elif not departure:
            where = f"layer {probe.layer!r}"
            departure = (f"{where} (FakeQuantize): {moved} of {ir_side[i][1].size} levels differ, not at a rounding "
                         "boundary")
            departing = {name for name, before in upstream.items() if i in before}
    # an output a FakeQuantize gives was judged by its levels above
    final = {o.name: ours[o.name] for o in onnx_model.graph.output if o.name not in {p.output for p in found}}
    for row in compare(final, ir_outputs, quantized=quantized):
        if not row.ok and row.note in ("", "quantized") and not departure:
            where = "the layers after the last FakeQuantizes"
            departure = (f"{where} before output {row.name!r} (on the IR's levels: {row.max_rel:.2g} of max|IR|, "
                         f"tolerance {row.tolerance})")
            departing = {row.name}
    return Localised(flips, departure, where, frozenset(departing))


def _openvino_side(ov_model, onnx_model: onnx.ModelProto, feeds, backend: str, label: str):
    """The probes, their (input, output) values on OpenVINO's ``backend``, the probes before each IR output."""
    import openvino as ov

    nodes, found, upstream = probes(ov_model, onnx_model)
    if not found:
        return found, [], upstream
    ports = [p for node in nodes for p in (node.input_value(0), node.output(0))]
    ir_values = [v for _, v in run_openvino_model(ov.Model(ports, ov_model.get_parameters(), "levels"), feeds,
                                                  backend, label)]
    return found, [(ir_values[2 * i], ir_values[2 * i + 1]) for i in range(len(found))], upstream


def _numpy_side(ir, ir_onnx: onnx.ModelProto, onnx_model: onnx.ModelProto, feeds, label: str):
    """As ``_openvino_side`` without openvino: the IR's activation FakeQuantizes read from the .xml, their values
    from this package's numpy references on ``ir_onnx``, the IR converted to ONNX (the numpy backend's IR side),
    and what is upstream of each output from the ONNX graph."""
    names = {o for n in onnx_model.graph.node for o in n.output} | {v.name for v in onnx_model.graph.input}
    names &= {o for n in ir_onnx.graph.node for o in n.output} | {v.name for v in ir_onnx.graph.input}
    found = _ir_probes(ir, names)
    if not found:
        return found, [], {}
    wanted = [n for p in found for n in (p.data, p.output)]
    values = dict(zip(wanted, run_numpy_values(ir_onnx, feeds, wanted, label)))
    return found, [(values[p.data], values[p.output]) for p in found], _onnx_upstream(onnx_model, found)


def _ir_probes(ir, values: set[str]) -> list[Probe]:
    """``_probe`` on the IR as read (converters.ir): FakeQuantizes whose ranges are Consts and whose data is not
    (weights), named as the converter names values (a tensor name, else the layer's, ``:i`` for one of several
    outputs)."""
    by_id = {layer.id: layer for layer in ir.layers}
    producers = ir.producers()
    found = []
    for layer in ir.layers:
        if layer.type != "FakeQuantize" or len(layer.inputs) != 5:
            continue
        sources = [producers.get((layer.id, port.id)) for port in layer.inputs]
        if any(src is None for src in sources):
            continue
        data_layer = by_id[sources[0][0]]
        ranges = [by_id[src[0]] for src in sources[1:]]
        if data_layer.type in ("Const", "Convert") or any(r.type != "Const" or r.value is None for r in ranges):
            continue
        data = _ir_name(data_layer, sources[0][1], values)
        output = _ir_name(layer, layer.outputs[0].id, values)
        if data is None or output is None:
            continue
        found.append(Probe(layer.name, data, output, tuple(np.asarray(r.value, np.float32) for r in ranges),
                           int(layer.data["levels"])))
    return found


def _ir_name(layer, port_id: int, values: set[str]) -> str | None:
    index, port = next((i, p) for i, p in enumerate(layer.outputs) if p.id == port_id)
    own = layer.name if len(layer.outputs) == 1 else f"{layer.name}:{index}"
    return next((n for n in [*sorted(port.names), own] if n in values), None)


def _onnx_upstream(model: onnx.ModelProto, found: list[Probe]) -> dict[str, frozenset[int]]:
    """For each graph output of ``model``, the probes whose output lies upstream of it (main graph)."""
    index = {p.output: i for i, p in enumerate(found)}
    before: dict[str, frozenset[int]] = {}
    for node in model.graph.node:  # (topologically sorted, as ONNX requires)
        seen = frozenset().union(*(before.get(x, frozenset()) | ({index[x]} if x in index else frozenset())
                                   for x in node.input if x))
        for out in node.output:
            before[out] = seen
    return {o.name: before.get(o.name, frozenset()) | ({index[o.name]} if o.name in index else frozenset())
            for o in model.graph.output}


def _pinned(model: onnx.ModelProto, pinned: Mapping[str, np.ndarray], wanted: list[str]) -> onnx.ModelProto:
    """``model`` whose values ``pinned`` are graph inputs (their producers' outputs, and graph outputs of that
    name, renamed NAME/own), with the values ``wanted`` (those computed) after its outputs."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for node in copy.graph.node:
        for k, name in enumerate(node.output):
            if name in pinned:
                node.output[k] = f"{name}/own"
    for output in copy.graph.output:
        if output.name in pinned:
            output.name = f"{output.name}/own"
    copy.graph.input.extend(onnx.helper.make_tensor_value_info(
        name, onnx.helper.np_dtype_to_tensor_dtype(value.dtype), None) for name, value in pinned.items())
    known = {o.name for o in copy.graph.output} | {i.name for i in copy.graph.input}
    copy.graph.output.extend(onnx.ValueInfoProto(name=n) for n in dict.fromkeys(wanted) if n not in known)
    return copy


def _levels(probe: Probe, x_onnx, y_onnx, x_ir, y_ir) -> tuple[int, bool]:
    """How many levels of the probe differ, and whether all of them are flips at a rounding boundary."""
    if y_onnx.shape != y_ir.shape:
        return max(y_ir.size, 1), False
    low, high, out_low, out_high = (np.broadcast_to(r, y_ir.shape).astype(np.float64) for r in probe.ranges)
    step = np.abs(out_high - out_low) / (probe.levels - 1)
    moved = np.abs(y_onnx.astype(np.float64) - y_ir) > step / 2
    if not moved.any():
        return 0, True
    return int(moved.sum()), _at_boundary(x_onnx, x_ir, y_onnx, y_ir, low, high, step, probe.levels, moved)


def _at_boundary(x_onnx, x_ir, y_onnx, y_ir, low, high, step, levels: int, moved) -> bool:
    """Whether at every element whose level differs, both inputs lie within ``BOUNDARY`` of the same half level
    and the outputs are one quantum apart."""
    level = [((np.asarray(x, np.float64) - low) / (high - low) * (levels - 1))[moved] for x in (x_onnx, x_ir)]
    half = np.floor(level[1]) + 0.5
    near = [np.abs(v - half) <= BOUNDARY for v in level]
    one_step = np.abs(y_onnx.astype(np.float64)[moved] - y_ir[moved]) <= step[moved] * 1.01
    return bool(np.all(near[0] & near[1] & one_step))


def judge(rows: list, found: Localised) -> tuple[list, str]:
    """The rows with what the levels say (an output whose values differ, each stretch between FakeQuantizes
    matching on the same levels and every level that differs a flip at a rounding boundary, is ok; one after a
    departure is not, even within its tolerance) and the clause for the summary."""
    judged = []
    for row in rows:
        valued = row.note in ("", "quantized")  # not a shape, dtype or missing output
        if valued and row.name in found.departing:
            row = replace(row, ok=False, note=f"departs at {found.where}")
        elif valued and not row.ok and not found.departure and found.flips:
            row = replace(row, ok=True, note="level flips carried")
        judged.append(row)
    if found.departure:
        return judged, f"the conversion departs first at {found.departure}"
    if not found.flips:
        return judged, ""
    carried = [r for r in judged if r.note == "level flips carried"]
    layers = ", ".join(f"{name!r}" + (f" x{n}" if n > 1 else "") for name, n in list(found.flips.items())[:3])
    more = f" and {len(found.flips) - 3} more" if len(found.flips) > 3 else ""
    count = sum(found.flips.values())
    clause = f"{count} level flip{'s' if count > 1 else ''} at rounding boundaries (layer {layers}{more})"
    if carried:
        clause += f", carried to outputs within {max(r.max_rel for r in carried):.2g} of max|IR|"
    return judged, clause
