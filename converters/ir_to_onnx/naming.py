"""ONNX names: unique value and node names, and the names the IR's ports and Results give."""

from __future__ import annotations

from ..ir import IRError, IRModel, Layer
from ..ir_text import split_names


class Names:
    """The value and node names taken in one model (its sub-graphs share them)."""

    def __init__(self):
        self.values: set[str] = set()
        self.nodes: set[str] = set()

    def unique(self, wanted: str) -> str:
        """``wanted``, or ``wanted_1``, ``wanted_2``... if taken."""
        name = wanted or "value"
        if name in self.values:
            i = 1
            while f"{wanted}_{i}" in self.values:
                i += 1
            name = f"{wanted}_{i}"
        self.values.add(name)
        return name

    def node(self, base: str, op_type: str) -> str:
        """A node of ``op_type`` made for ``base`` (the layer's name): ``base``, else ``base/op_type``,
        else ``base/op_type_1``..."""
        name = base if base not in self.nodes else f"{base}/{op_type}"
        i = 1
        while name in self.nodes:
            name = f"{base}/{op_type}_{i}"
            i += 1
        self.nodes.add(name)
        return name


def preferred_name(names: list[str]) -> str | None:
    # Exporters list an internal number first ("316,last_hidden_state"): prefer a real name.
    return next((n for n in names if not n.isdigit()), names[0] if names else None)


def assign_names(ctx, ir: IRModel, layers: list[Layer]) -> None:
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
            wanted = preferred_name(port.names) or layer.name
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
        wanted = preferred_name(names) or layer.name
        if ctx.in_body:
            # A body output must be made by a node of the body, and its producer may turn out an
            # outer value or a (folded) constant: always a fresh name and an Identity.
            ctx.result_names[layer.id] = ctx.unique(wanted)
        elif src in ctx.port_names:  # a Parameter, or a value another Result named
            if ctx.port_names[src] == wanted and wanted not in ctx.result_names.values():
                ctx.result_names[layer.id] = wanted
            else:
                ctx.result_names[layer.id] = ctx.unique(wanted)
        elif wanted not in ctx.names.values:
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
