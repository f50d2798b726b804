"""What a translator works with: the values of the graph so far and helpers to emit ONNX.

Every IR output port becomes one ONNX value (``Value``: its name and what is known of
it, an ``onnx_ext.Operand``: element type, shape with ``None`` for dynamic dims or
``None`` for an unknown rank, and the array when it is a constant). Translators read
their inputs with ``ctx.input(i)``, write the ONNX value named ``ctx.out(i)`` for
output ``i``, and emit nodes with ``ctx.node`` (by value names: the context keeps the
onnx_ir graph they make). ``ctx.emit`` runs a standard op on an element type that
onnxruntime has no kernel for by widening losslessly (bf16 -> f32, i16 -> i32,
bool -> u8, ...; ``kernels.py``) and casting the result back.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
import onnx_ir as ir

from onnx_ext.ops import Operand
from onnx_ext.types import ElementType, from_numpy, from_ov

from ..ir import IRError, IRModel, Layer
from ..weight_options import WeightOptions
from .kernels import compute_type
from .naming import Names

#: Constants of this many bytes or more are the model's weights: written after the rest of the
#: model (streamed, or as external data), never copied into it while it is built and checked.
LARGE_INITIALIZER_BYTES = 1024


class Value:
    """One ONNX value: what an IR output port became, its name and what is known of it."""

    __slots__ = ("name", "operand")

    def __init__(self, name: str, type: ElementType | None, shape: tuple[int | None, ...] | None,
                 const: np.ndarray | None = None):
        self.name = name
        self.operand = Operand(type, shape, const)

    type = property(lambda self: self.operand.type)
    shape = property(lambda self: self.operand.shape)  # None: rank unknown
    const = property(lambda self: self.operand.value)
    rank = property(lambda self: self.operand.rank)

    @property
    def static_shape(self) -> bool:
        """The rank and every dim are known (integers, not None or a symbolic name)."""
        return self.shape is not None and all(isinstance(d, (int, np.integer)) for d in self.shape)


def declare(value: ir.Value, et: ElementType | None, shape: tuple | None) -> ir.Value:
    """Give a graph input or output its type and shape (unknown dims named ``<name>_d<i>``)."""
    if et is None:
        raise IRError(f"{value.name}: no element type")
    value.type = ir.TensorType(ir.DataType(et.onnx))
    value.shape = None if shape is None else ir.Shape(
        [d if d is not None else f"{value.name}_d{i}" for i, d in enumerate(shape)])
    return value


def tensor(array: np.ndarray, name: str) -> ir.Tensor:
    """``array`` as an onnx_ir tensor, not copied."""
    return ir.Tensor(array, ir.DataType(from_numpy(array.dtype).onnx), name=name)


def attribute(name: str, value) -> ir.Attr:
    """An attribute of the type its Python value says (as ``onnx.helper.make_attribute`` infers it)."""
    if isinstance(value, numbers.Integral):
        return ir.AttrInt64(name, int(value))
    if isinstance(value, numbers.Real):
        return ir.AttrFloat32(name, float(value))
    if isinstance(value, str):
        return ir.AttrString(name, value)
    if isinstance(value, ir.Graph):
        return ir.AttrGraph(name, value)
    if isinstance(value, Iterable):
        values = list(value)
        if not values:
            raise ValueError(f"Could not infer attribute `{name}` type from empty iterator")
        if all(isinstance(v, numbers.Integral) for v in values):
            return ir.AttrInt64s(name, [int(v) for v in values])
        if all(isinstance(v, numbers.Real) for v in values):
            return ir.AttrFloat32s(name, [float(v) for v in values])
        if all(isinstance(v, str) for v in values):
            return ir.AttrStrings(name, values)
        raise ValueError("Could not infer the attribute type from the elements of the passed Iterable value.")
    raise TypeError(f"'{value}' is not an accepted attribute value.")


class Hint(NamedTuple):
    key: tuple  # (IR graph, layer id, port id)
    dims: tuple | None  # as declared (None entries: dynamic dims; None: rank unknown)
    type: ElementType | None  # as declared (the port's precision)
    owner: str  # the layer, for messages


class Context:
    """The translation of one graph: the model's, or (``parent`` given) a sub-graph body
    (If, Loop), which shares the names, initializers and flags of the whole model."""

    def __init__(self, ir_model: IRModel, parent: "Context | None" = None, hint_overrides: dict | None = None):
        self.ir = ir_model
        self.parent = parent
        self.root: Context = parent.root if parent else self
        self.layer: Layer | None = None
        self.nodes: list[ir.Node] = []
        self.values: dict[tuple[int, int], Value] = {}  # (layer id, output port id) -> value
        self.port_names: dict[tuple[int, int], str] = {}  # (layer id, output port id) -> ONNX name
        self.inputs: list[ir.Value] = []
        self.outputs: list[ir.Value] = []
        self.result_names: dict[int, str] = {}  # Result layer id -> graph output name
        self.result_infos: dict[int, ir.Value] = {}  # Result layer id -> its output
        self.rank_unknown: set[tuple[int, int]] = set()
        #: Dims that replace a port's written (empty) dims: see ranks.py.
        self.dims_override: dict[tuple[int, int], tuple] = {}
        #: In a body: Parameter layer id -> the outer value it stands for.
        self.param_values: dict[int, Value] | None = None
        self._producers = ir_model.producers()
        self._scope: dict[str, ir.Value] = {}  # the values this graph defines, by name
        #: Stateful models: the variables and the graph inputs/outputs they become (handlers/state.py).
        self.state = None
        if parent is None:
            #: name -> the array of each constant (IR weights: views of the mapped .bin)
            self.constants: dict[str, np.ndarray] = {}
            #: name -> the initializer of each constant a node reads (see ``initializer``)
            self.initializers: dict[str, ir.Value] = {}
            self.names = Names()
            #: node name -> the layer that made it (``Layer.describe()``), for messages about nodes
            self.node_owners: dict[str, str] = {}
            self._const_cache: dict[tuple, str] = {}
            self._domain_used = False
            #: Other operator-set domains the nodes use (com.microsoft for MatMulNBits) -> version.
            self.extra_opsets: dict[str, int] = {}
            #: How compressed weights run: contrib ops (MatMulNBits) or standard ONNX, int8 activations.
            self.weight_options = WeightOptions()
            #: The dims and type an IR port declared, by value name, where the translation took them as
            #: they are: hints, which shape_hints.py checks against ONNX's shape inference.
            self.hints: dict[str, Hint] = {}
            #: Hint key -> the (dims, type) that replace a port's declared ones (the IR's contradicted
            #: ones dropped).
            self.hint_overrides: dict[tuple, tuple] = hint_overrides or {}
        else:
            self.constants = self.root.constants
            self.initializers = self.root.initializers
            self.names = self.root.names
            self.node_owners = self.root.node_owners
            self._const_cache = self.root._const_cache

    @property
    def domain_used(self) -> bool:
        return self.root._domain_used

    @domain_used.setter
    def domain_used(self, value: bool) -> None:
        self.root._domain_used = value

    @property
    def in_body(self) -> bool:
        return self.parent is not None

    # --- errors -----------------------------------------------------------------------

    @property
    def where(self) -> str:
        """The file and the layer being translated, for messages."""
        return f"{self.ir.source}: {self.layer.describe()}" if self.layer else self.ir.source

    def error(self, message: str) -> IRError:
        return IRError(" ".join(f"{self.where}: {message}".split()))

    # --- names ------------------------------------------------------------------------

    def unique(self, wanted: str) -> str:
        return self.names.unique(wanted)

    def tmp(self, hint: str) -> str:
        base = self.layer.name if self.layer else "tmp"
        return self.unique(f"{base}/{hint}")

    # --- values -----------------------------------------------------------------------

    def input(self, i: int) -> Value:
        layer = self.layer
        if i >= len(layer.inputs):
            raise self.error(f"has {len(layer.inputs)} inputs, the op needs input {i}")
        return self.values[self.source(layer, i)]

    def source(self, layer, i: int) -> tuple:
        """The (layer id, port id) that feeds input ``i`` of ``layer``."""
        return self._producers[(layer.id, layer.inputs[i].id)]

    def n_inputs(self) -> int:
        return len(self.layer.inputs)

    def out(self, i: int = 0) -> str:
        layer = self.layer
        if i >= len(layer.outputs):
            raise self.error(f"has {len(layer.outputs)} outputs, the op makes output {i}")
        return self.port_names[(layer.id, layer.outputs[i].id)]

    def out_type(self, i: int = 0) -> ElementType:
        et = self.layer.outputs[i].element_type
        if et is None:
            raise self.error(f"output port {self.layer.outputs[i].id} has no element type")
        return et

    def out_value(self, i: int = 0) -> Value:
        """What the IR says of output ``i`` (type, dims)."""
        port = self.layer.outputs[i]
        key = (self.layer.id, port.id)
        shape = None if key in self.rank_unknown else self.dims_override.get(key, tuple(port.dims))
        shape, et = self.root.hint_overrides.get(self._hint_key(i), (shape, port.element_type))
        return Value(self.out(i), et, shape)

    def hinted(self, i: int = 0, et: ElementType | None = None) -> Value:
        """``out_value(i)`` (of type ``et`` if given), taken as the value of output ``i``: its declared
        dims and type are hints to check."""
        v = self.out_value(i)
        if et is not None:
            v = Value(v.name, et, v.shape)
        if v.shape is not None or v.type is not None:
            owner = f"{self.layer.type}-{self.layer.version} {self.layer.name!r}"
            self.root.hints[v.name] = Hint(self._hint_key(i), v.shape, v.type, owner)
        return v

    def _hint_key(self, i: int) -> tuple:
        # The same IR objects are translated again when hints are dropped: their identity is stable.
        return id(self.ir), self.layer.id, self.layer.outputs[i].id

    def set_const(self, i: int, array: np.ndarray) -> None:
        """Output ``i`` is the constant ``array`` (an initializer under the output's name)."""
        name = self.out(i)
        array = np.asarray(array)
        self._add_initializer(name, array)
        port = self.layer.outputs[i]
        self.values[(self.layer.id, port.id)] = Value(name, from_numpy(array.dtype), tuple(array.shape), array)

    def set_type(self, i: int, et: ElementType) -> None:
        """Output ``i`` has type ``et`` whatever its port says (ports inside sub-graph bodies
        can be stale: save_model's f16 compression leaves a Convert to f32 with an FP16 port)."""
        self.values[(self.layer.id, self.layer.outputs[i].id)] = self.hinted(i, et)

    def value(self, name: str) -> ir.Value | None:
        """The onnx_ir value named ``name`` here, in an enclosing graph or among the initializers
        (None for "", an absent optional input)."""
        if not name:
            return None
        ctx = self
        while ctx is not None:
            if name in ctx._scope:
                return ctx._scope[name]
            ctx = ctx.parent
        if name not in self.constants:
            raise self.error(f"no value named {name!r} has been made (a translator's mistake)")
        return self.initializer(name)

    def initializer(self, name: str) -> ir.Value:
        """The onnx_ir initializer of the constant ``name``, made when first asked for (constants that
        handlers only read as arrays never become onnx_ir objects); it wraps the array, not copied."""
        if name not in self.initializers:
            self.initializers[name] = ir.Value(name=name, const_value=tensor(self.constants[name], name))
        return self.initializers[name]

    # --- the graph --------------------------------------------------------------------

    def graph_input(self, name: str, et: ElementType | None, shape: tuple | None) -> None:
        """Declare the graph input ``name``."""
        value = declare(ir.Value(name=name), et, shape)
        self._scope[name] = value
        self.inputs.append(value)

    def graph_output(self, result_id: int, v: Value) -> None:
        """The value ``v`` is the output of the Result layer ``result_id``."""
        # a constant's output is declared apart from its initializer, which carries no type of its own
        value = declare(ir.Value(name=v.name) if v.name in self.constants else self.value(v.name), v.type, v.shape)
        self.result_infos[result_id] = value
        self.outputs.append(value)

    def body(self) -> "Context":
        """A context for a sub-graph this layer's translation builds (an If branch, a Loop body), its nodes
        named after the layer; ``graph`` then makes the sub-graph."""
        body = Context(self.ir, self)
        body.layer = self.layer
        return body

    def graph(self, name: str, inputs: list[ir.Value], outputs: list[ir.Value]) -> ir.Graph:
        """This context's nodes as a sub-graph."""
        return ir.Graph(inputs, outputs, nodes=self.nodes, name=name)

    # --- emitting ---------------------------------------------------------------------

    def node(self, op_type: str, inputs: list[str], outputs: list[str] | str | int = 1, *, domain: str = "",
             **attrs) -> list[str]:
        """Append a node; ``outputs`` are names, or a count of fresh names. Returns the output names."""
        if isinstance(outputs, int):
            outputs = [self.tmp(op_type) for _ in range(outputs)]
        elif isinstance(outputs, str):
            outputs = [outputs]
        attributes = [attribute(k, v) for k, v in sorted(attrs.items()) if v is not None]  # as onnx.helper orders them
        self.add(ir.Node(domain, op_type, [self.value(i) for i in inputs], attributes,
                         outputs=[ir.Value(name=o) for o in outputs], name=self._node_name(op_type)))
        return list(outputs)

    def one(self, op_type: str, inputs: list[str], output: str | None = None, **attrs) -> str:
        return self.node(op_type, inputs, [output] if output else 1, **attrs)[0]

    def add(self, node: ir.Node) -> None:
        """Append ``node`` (made elsewhere, of this context's values) as it is."""
        for value in node.outputs:
            if value.name:
                self._scope[value.name] = value
        if self.layer is not None:  # a node moved from a body (an inlined If) keeps its owner
            self.node_owners.setdefault(node.name, self.layer.describe())
        self.nodes.append(node)

    def _node_name(self, op_type: str) -> str:
        return self.names.node(self.layer.name if self.layer else op_type, op_type)

    def const(self, value, dtype=None, hint: str = "const") -> str:
        """An initializer holding ``value`` (small ones are shared)."""
        array = np.asarray(value, dtype=dtype)
        key = None
        if array.size <= 64:
            key = (array.dtype.str, array.shape, array.tobytes())
            if key in self._const_cache:
                return self._const_cache[key]
        name = self.tmp(hint)
        self._add_initializer(name, array)
        if key is not None:
            self._const_cache[key] = name
        return name

    def _add_initializer(self, name: str, array: np.ndarray) -> None:
        self.constants[name] = array

    def i64(self, values) -> str:
        return self.const(np.asarray(values, dtype=np.int64), hint="i64")

    def cast(self, name: str, src: ElementType | None, dst: ElementType, output: str | None = None) -> str:
        if src == dst:
            return self.one("Identity", [name], output) if output else name
        return self.one("Cast", [name], output, to=dst.onnx)

    def as_i64(self, v: Value, flat: bool = False, floats: bool = False) -> str:
        """``v`` as int64 (a Cast unless it is already); ``flat``: reshaped to 1-D. ``v`` holds axes,
        a shape or indices, which OpenVINO requires to be integers unless ``floats`` (then
        truncated, as C++ casts them: ReverseSequence's lengths)."""
        if v.type is not None and v.type.kind not in ("int", "uint") and not (floats and v.type.is_float):
            raise self.error(f"input {v.name!r} is {v.type.ov}: axes, shapes and indices must be integers")
        if v.const is not None and not (v.type is not None and v.type.ov == "i64" and (not flat or v.rank == 1)):
            arr = np.asarray(v.const).astype(np.int64)
            return self.i64(arr.reshape(-1) if flat else arr)
        if v.type is not None and v.type.ov == "i64" and (not flat or v.rank == 1):
            return v.name
        name = self.cast(v.name, v.type, from_ov("i64"))
        if flat and v.rank != 1:
            name = self.one("Reshape", [name, self.i64([-1])])
        return name

    def emit(self, op: str, inputs: list[str], et: ElementType, output: str | None = None, *, kind: str = "value",
             extra: list[str] = (), result_type: ElementType | None = None, **attrs) -> str:
        """``op(*inputs, *extra)`` on data of type ``et`` (the ``inputs``); the result has type
        ``result_type`` if given (e.g. bool for comparisons) or ``et``. Widens when onnxruntime
        has no kernel for ``et``."""
        ct = compute_type(op, et, kind, attrs)
        if ct is None:
            raise self.error(f"onnxruntime has no {op} kernel for {et.ov} and no lossless widening applies")
        args = [self.cast(x, et, ct) for x in inputs] + list(extra)
        if ct == et or result_type is not None:
            return self.one(op, args, output, **attrs)
        wide = self.one(op, args, None, **attrs)
        return self.cast(wide, ct, et, output)
