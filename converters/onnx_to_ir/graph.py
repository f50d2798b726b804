"""Building an IR graph from ONNX nodes: values, the graph builder, scopes and the
context a handler works with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from onnx_ext.errors import OnnxExtError
from onnx_ext.types import ElementType, UnknownElementType, from_numpy, from_onnx

from ..ir import Edge, IRModel, Layer, Port

Dims = list  # list[int | None]; None as a whole: rank unknown


class ConversionError(OnnxExtError):
    """An ONNX model (or one of its nodes) that cannot be converted to IR."""


class UnsupportedOpsError(ConversionError):
    """The model has ops no handler converts; ``ops`` maps the op ("Softmax",
    "my.domain.Op") to its number of nodes, sub-graphs included."""

    def __init__(self, ops: dict[str, int], opset: int | None = None):
        self.ops = dict(ops)
        self.opset = opset
        listed = ", ".join(f"{name} x{count}" for name, count in sorted(ops.items()))
        total = sum(ops.values())
        at = f" at ONNX opset {opset}" if opset is not None else ""
        super().__init__(f"cannot convert {total} node(s): no handler{at} for {listed}")


@dataclass(eq=False)
class Value:
    """One tensor of the IR graph being built: an output port of a layer."""

    layer: Layer
    port: Port
    type: ElementType
    dims: Dims | None  # None: rank unknown
    const: np.ndarray | None = None  # the value, when the layer is a Const
    exact: bool = False  # dims are declared (Parameter) or known (Const), not inferred

    @property
    def rank(self) -> int | None:
        return None if self.dims is None else len(self.dims)

    @property
    def static_shape(self) -> tuple[int, ...] | None:
        """The shape when it is certain (declared or constant); ONNX's inferred dims
        only annotate ports, the converter does not fold them into constants."""
        if not self.exact or self.dims is None or any(d is None for d in self.dims):
            return None
        return tuple(self.dims)

    def set_dims(self, dims: Dims | None) -> None:
        self.dims = None if dims is None else list(dims)
        self.port.dims = [] if dims is None else list(dims)


class GraphBuilder:
    """Layers and edges of one IR graph (the model's, or an If/Loop body)."""

    def __init__(self, name: str = "model"):
        self.name = name
        self.layers: list[Layer] = []
        self.edges: list[Edge] = []
        self._names: set[str] = set()
        self._mine: set[int] = set()  # id() of this graph's layers

    def unique_name(self, base: str) -> str:
        name, k = base, 1
        while name in self._names:
            k += 1
            name = f"{base}_{k}"
        self._names.add(name)
        return name

    def add_layer(
        self,
        type: str,
        version: str,
        inputs: Sequence[Value],
        data: dict[str, Any] | None,
        outputs: Sequence[tuple[ElementType, Dims | None]],
        name: str,
    ) -> tuple[Layer, list[Value]]:
        layer = Layer(id=len(self.layers), name=self.unique_name(name), type=type, version=version,
                      data={k: _data_str(v) for k, v in (data or {}).items()})
        for i, v in enumerate(inputs):
            if id(v.layer) not in self._mine:
                raise ConversionError(f"internal error: {type} {name!r} takes a value from another graph")
            layer.inputs.append(Port(i, v.type, list(v.dims or [])))
            self.edges.append(Edge(v.layer.id, v.port.id, layer.id, i))
        values = []
        for j, (et, dims) in enumerate(outputs):
            port = Port(len(inputs) + j, et, list(dims or []))
            layer.outputs.append(port)
            values.append(Value(layer, port, et, None if dims is None else list(dims)))
        self.layers.append(layer)
        self._mine.add(id(layer))
        return layer, values

    def const(self, array, name: str = "Constant") -> Value:
        array = np.asarray(array)
        et = from_numpy(array.dtype)
        layer, (value,) = self.add_layer("Const", "opset1", [], None, [(et, list(array.shape))], name)
        layer.value = array
        value.const = array
        value.exact = True
        return value

    def parameter(self, name: str, et: ElementType, dims: Dims | None, tensor_names: Sequence[str] = ()) -> Value:
        shape = "..." if dims is None else ",".join("?" if d is None else str(d) for d in dims)
        _, (value,) = self.add_layer("Parameter", "opset1", [], {"shape": shape, "element_type": et.ov}, [(et, dims)], name)
        value.port.names = list(tensor_names)
        value.exact = True
        return value

    def result(self, value: Value, tensor_name: str | None, name: str | None = None) -> Layer:
        layer, _ = self.add_layer("Result", "opset1", [value], None, [], name or f"{tensor_name or 'output'}/result")
        if tensor_name:
            # IR v11: the model output is named exactly by the Result's output_names.
            layer.extra["output_names"] = _names_attr([tensor_name])
            if tensor_name not in value.port.names and value.layer.type != "Parameter":
                value.port.names.append(tensor_name)
        return layer

    def model(self) -> IRModel:
        return IRModel(name=self.name, layers=self.layers, edges=self.edges)


@dataclass
class TensorInfo:
    """What ONNX declares or infers about a tensor."""

    type: ElementType | None
    dims: Dims | None  # None: rank unknown


def tensor_info(type_proto: onnx.TypeProto) -> TensorInfo | None:
    if not type_proto.HasField("tensor_type"):
        return None
    t = type_proto.tensor_type
    try:
        et = from_onnx(t.elem_type) if t.elem_type else None
    except UnknownElementType:
        et = None
    dims = None
    if t.HasField("shape"):
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
    return TensorInfo(et, dims)


class Scope:
    """Names of one ONNX graph bound to IR values; a body's scope reaches outward.

    A name from an enclosing graph becomes, inside a body, a Const copy (when the
    outer value is a constant) or a body Parameter recorded in ``captures`` so the
    sub-graph layer can feed it from outside.
    """

    def __init__(self, builder: GraphBuilder, graph: onnx.GraphProto, parent: "Scope | None" = None):
        self.builder = builder
        self.parent = parent
        self.values: dict[str, Value] = {}
        self.initializers = {t.name: t for t in graph.initializer}
        self.captures: list[tuple[Value, Value]] = []  # (outer value, body Parameter)

    def lookup(self, name: str) -> Value:
        value = self.values.get(name)
        if value is not None:
            return value
        if name in self.initializers:
            try:
                value = self.builder.const(numpy_helper.to_array(self.initializers[name]), name)
            except (UnknownElementType, ValueError) as e:
                raise ConversionError(f"initializer {name!r}: {e}") from None
            value.port.names = [name]
        elif self.parent is not None:
            outer = self.parent.lookup(name)
            if outer.const is not None:
                value = self.builder.const(outer.const, name)
            else:
                value = self.builder.parameter(name, outer.type, outer.dims)
                value.exact = outer.exact
                self.captures.append((outer, value))
            value.port.names = [name]
        else:
            raise ConversionError(f"tensor {name!r} is used but no node, input or initializer produces it")
        self.values[name] = value
        return value

    def bind(self, name: str, value: Value) -> None:
        self.values[name] = value


_REQUIRED = object()


class NodeContext:
    """What a handler sees: the node, its inputs as IR values, its attributes, and
    the means to add layers and bind the node's outputs."""

    def __init__(self, node: onnx.NodeProto, scope: Scope, opset: int | None, converter):
        self.node = node
        self.scope = scope
        self.builder = scope.builder
        self.opset = opset
        self.converter = converter
        names = list(node.input)
        while names and names[-1] == "":
            names.pop()
        self.input_names = names
        self.name = node.name or f"{node.op_type}:{node.output[0] if node.output else ''}"
        self._attrs = {a.name: a for a in node.attribute}
        self._created: set[int] = set()  # id() of the layers this node added

    # --- inputs and attributes -------------------------------------------------------

    @property
    def n_inputs(self) -> int:
        return len(self.input_names)

    def has_input(self, i: int) -> bool:
        return i < len(self.input_names) and self.input_names[i] != ""

    def input(self, i: int) -> Value:
        if not self.has_input(i):
            raise self.error(f"input {i} is missing")
        return self.scope.lookup(self.input_names[i])

    def optional_input(self, i: int) -> Value | None:
        return self.input(i) if self.has_input(i) else None

    def inputs(self) -> list[Value]:
        return [self.input(i) for i in range(self.n_inputs)]

    def const_input(self, i: int) -> np.ndarray | None:
        """The value of input ``i`` when it is a constant (initializer or Constant node)."""
        return self.input(i).const if self.has_input(i) else None

    def has_attr(self, name: str) -> bool:
        return name in self._attrs

    def attr(self, name: str, default: Any = _REQUIRED) -> Any:
        a = self._attrs.get(name)
        if a is None:
            if default is _REQUIRED:
                raise self.error(f"attribute {name!r} is required")
            return default
        if a.ref_attr_name:
            raise self.error(f"attribute {name!r} refers to a function attribute ({a.ref_attr_name})")
        value = helper.get_attribute_value(a)
        if isinstance(value, bytes):
            return value.decode()
        if isinstance(value, onnx.TensorProto):
            return numpy_helper.to_array(value)
        return value

    def output_info(self, j: int = 0) -> TensorInfo | None:
        if j >= len(self.node.output) or not self.node.output[j]:
            return None
        return self.converter.info.get(self.node.output[j])

    # --- building --------------------------------------------------------------------

    def op(self, type: str, version: str, inputs: Sequence[Value], data: dict | None = None,
           out: ElementType | None = None, dims: Dims | None = None) -> Value:
        """Add a one-output layer; ``out`` defaults to the first input's type."""
        et = out if out is not None else inputs[0].type
        return self.op_multi(type, version, inputs, data, [(et, dims)])[0]

    def op_multi(self, type: str, version: str, inputs: Sequence[Value], data: dict | None,
                 outputs: Sequence[tuple[ElementType, Dims | None]]) -> list[Value]:
        layer, values = self.builder.add_layer(type, version, list(inputs), data, outputs, f"{self.name}/{type}")
        self._created.add(id(layer))
        return values

    def const(self, array, dtype=None) -> Value:
        array = np.asarray(array, dtype=dtype)
        value = self.builder.const(array, f"{self.name}/Constant")
        self._created.add(id(value.layer))
        return value

    def set_outputs(self, *values: Value) -> None:
        """Bind the node's outputs (in order) to ``values``; names the ports after the
        ONNX tensors and takes their dims from ONNX's shape inference when known."""
        outputs = list(self.node.output)
        if len(values) > len(outputs):
            raise self.error(f"internal error: {len(values)} values for {len(outputs)} outputs")
        for j, (name, value) in enumerate(zip(outputs, values)):
            if not name:
                continue
            info = self.converter.info.get(name)
            if info is not None and info.type is not None and info.type != value.type:
                raise self.error(f"output {name!r} would be {value.type.ov} but ONNX says {info.type.ov}")
            if id(value.layer) in self._created:
                if info is not None and info.dims is not None and not value.exact:
                    value.set_dims(info.dims)
                if self.node.name and sum(1 for n in outputs if n) == 1:
                    self._rename(value.layer)
            # An alias (Identity) of a model input does not rename the input: OpenVINO
            # would list the internal name among the input's names.
            if name not in value.port.names and value.layer.type != "Parameter":
                value.port.names.append(name)
            self.scope.bind(name, value)

    def _rename(self, layer: Layer) -> None:
        # The layer that computes a one-output node takes the node's name.
        if self.name not in self.builder._names:
            self.builder._names.discard(layer.name)
            self.builder._names.add(self.name)
            layer.name = self.name

    def error(self, message: str) -> ConversionError:
        return ConversionError(f"node {self.name!r} ({op_name(self.node)}): {message}")


def _names_attr(names) -> str:
    return ",".join(n.replace(",", "\\,") for n in names)


def op_name(node: onnx.NodeProto) -> str:
    """"Gather" for a standard op, "domain.Op" for any other."""
    return f"{node.domain}.{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type


def _data_str(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, np.ndarray)):
        return ", ".join(_data_str(v) for v in np.asarray(value).reshape(-1).tolist()) if len(value) else ""
    return str(value)


__all__ = ["ConversionError", "UnsupportedOpsError", "Value", "GraphBuilder", "Scope", "NodeContext", "TensorInfo", "tensor_info"]
