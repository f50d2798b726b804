"""An in-memory OpenVINO IR (v10/v11) graph: what model.xml + model.bin hold.

``ir_reader`` fills it from files; the IR -> ONNX handlers translate its layers.
(ONNX -> IR goes through OpenVINO's own ONNX frontend: ``converters.onnx_to_ir``.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from onnx_ext.errors import OnnxExtError
from onnx_ext.types import ElementType


class IRError(OnnxExtError):
    """A problem with an IR file or graph; the message names the file and layer."""


@dataclass
class Port:
    id: int
    element_type: ElementType | None = None  # `precision` attribute
    dims: list[int | None] = field(default_factory=list)  # None: dynamic (-1 or ? in the XML)
    names: list[str] = field(default_factory=list)  # tensor names (`names="a,b"`)


@dataclass
class MapEntry:
    """One child element of a sub-graph layer's map section (If's ``then_port_map``,
    Loop's ``port_map`` or ``back_edges``): its tag ("input", "output", "edge") and
    attributes as written (``external_port_id``, ``internal_layer_id``, ``axis``, ...)."""

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class Layer:
    id: int
    name: str
    type: str  # "Gather", "Const", ...
    version: str  # "opset8"
    data: dict[str, str] = field(default_factory=dict)  # the <data> element's attributes, as written
    inputs: list[Port] = field(default_factory=list)
    outputs: list[Port] = field(default_factory=list)
    rt_info: dict[str, str] = field(default_factory=dict)  # flattened <rt_info> (e.g. "decompression")
    value: np.ndarray | None = None  # Const payload, read from or written to the .bin
    #: Other attributes of the <layer> element, as written (Result's ``output_names`` in IR v11).
    extra: dict[str, str] = field(default_factory=dict)
    # Sub-graph layers (If, Loop, TensorIterator), in the order written; empty for others.
    # bodies: section name ("then_body", "else_body", "body") -> the body's graph (its
    # layer ids are its own; its Const payloads share the model's .bin).
    bodies: dict[str, "IRModel"] = field(default_factory=dict)
    # maps: section name ("then_port_map", "else_port_map", "port_map", "back_edges") -> entries.
    maps: dict[str, list[MapEntry]] = field(default_factory=dict)

    @property
    def opset(self) -> int:
        """The opset number of ``version`` ("opset8" -> 8); 0 for non-standard opsets."""
        digits = self.version.removeprefix("opset")
        return int(digits) if digits.isdigit() else 0

    def describe(self) -> str:
        return f"layer {self.id} {self.name!r} ({self.type}-{self.version})"


@dataclass(frozen=True)
class Edge:
    from_layer: int
    from_port: int
    to_layer: int
    to_port: int


@dataclass
class IRModel:
    name: str = "model"
    ir_version: int = 11
    layers: list[Layer] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    source: str = "<memory>"  # file the model came from, for error messages

    def layer(self, layer_id: int) -> Layer:
        for layer in self.layers:
            if layer.id == layer_id:
                return layer
        raise IRError(f"{self.source}: no layer with id {layer_id}")

    def producers(self) -> dict[tuple[int, int], tuple[int, int]]:
        """(to_layer, to_port) -> (from_layer, from_port)."""
        return {(e.to_layer, e.to_port): (e.from_layer, e.from_port) for e in self.edges}

    def readers(self) -> dict[tuple[int, int], list[tuple[int, int]]]:
        """(from_layer, from_port) -> the (to_layer, to_port) that read it, in the order of the edges."""
        found: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for e in self.edges:
            found.setdefault((e.from_layer, e.from_port), []).append((e.to_layer, e.to_port))
        return found

    def topological_layers(self) -> list[Layer]:
        """Layers in an order where producers come first; raises IRError on a cycle."""
        by_id = {layer.id: layer for layer in self.layers}
        deps: dict[int, set[int]] = {i: set() for i in by_id}
        for e in self.edges:
            deps[e.to_layer].add(e.from_layer)
        order, state = [], {}
        for start in by_id:
            stack = [(start, iter(sorted(deps[start])))]
            if state.get(start):
                continue
            state[start] = 1
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    state[node] = 2
                    order.append(by_id[node])
                elif state.get(nxt) == 1:
                    raise IRError(f"{self.source}: the graph has a cycle through {by_id[nxt].describe()}")
                elif not state.get(nxt):
                    state[nxt] = 1
                    stack.append((nxt, iter(sorted(deps[nxt]))))
        return order
