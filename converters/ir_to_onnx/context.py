"""What a translator works with: the values of the graph so far and helpers to emit ONNX.

Every IR output port becomes one ONNX value (``Value``: name, element type,
shape with ``None`` for dynamic dims or ``None`` for an unknown rank, and the
array when it is a constant). Translators read their inputs with
``ctx.input(i)``, write the ONNX value named ``ctx.out(i)`` for output ``i``,
and emit nodes with ``ctx.node``. ``ctx.emit`` runs a standard op on an
element type that onnxruntime has no kernel for by widening losslessly
(bf16 -> f32, i16 -> i32, bool -> u8, ...) and casting the result back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

from onnx_ext.types import ElementType, from_numpy, from_ov

from ..ir import IRError, IRModel, Layer

# Element types onnxruntime 1.31's CPU provider has kernels for, per standard op
# (probed by loading one-node models); ops not listed take every type.
_ALL_NUMERIC = frozenset({"f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"})
ORT_KERNELS: dict[str, frozenset[str]] = {
    **{op: _ALL_NUMERIC for op in ("Add", "Sub", "Mul", "Div", "Mod", "Less", "Greater", "LessOrEqual",
                                   "GreaterOrEqual", "Abs")},
    "Equal": _ALL_NUMERIC | {"boolean"},
    "Max": frozenset({"f16", "f32", "f64", "i8", "i32", "i64", "u8", "u32", "u64"}),
    "Min": frozenset({"f16", "f32", "f64", "i8", "i32", "i64", "u8", "u32", "u64"}),
    "Pow": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "Neg": frozenset({"f16", "f32", "f64", "i8", "i16", "i32", "i64"}),
    "Sign": _ALL_NUMERIC | {"bf16"},
    "Clip": _ALL_NUMERIC | {"bf16"},
    "MatMul": frozenset({"f16", "f32", "f64", "i32", "i64", "u32", "u64"}),
    "Where": frozenset({"f16", "f32", "f64", "i8", "i32", "i64", "u8", "u32"}),
    "ReduceSum": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "ReduceProd": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "ReduceMean": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "ReduceL1": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "ReduceL2": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "ReduceMax": frozenset({"f16", "f32", "f64", "i8", "i32", "i64", "u8", "boolean"}),
    "ReduceMin": frozenset({"f16", "f32", "f64", "i8", "i32", "i64", "u8", "boolean"}),
    "CumSum": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "NonZero": frozenset({"f16", "f32", "i32", "i64", "u8", "boolean"}),
    "Expand": _ALL_NUMERIC | {"boolean"},
    "Tile": _ALL_NUMERIC | {"boolean"},
    "Relu": frozenset({"f16", "f32", "f64", "i8", "i32"}),
    "BitwiseAnd": frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}),
    "BitwiseOr": frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}),
    "BitwiseXor": frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}),
    "BitwiseNot": frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}),
    **{op: frozenset({"f16", "f32", "f64"}) for op in (
        "Floor", "Ceil", "Round", "Sqrt", "Exp", "Log", "Sigmoid", "Tanh", "Sin", "Cos", "Tan", "Asin", "Acos",
        "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softmax", "LogSoftmax", "Elu", "Selu", "HardSigmoid",
        "Softplus", "Softsign", "Gelu", "Reciprocal", "Mish", "HardSwish")},
    "Erf": frozenset({"f16", "f32"}),
}

# Lossless widenings, best first. "bits": the op only needs the value modulo 2^n
# (add, multiply, select...), so u64 may travel as i64. "value": the op needs the
# exact value.
_WIDER = {
    "bf16": ("f32", "f64"),
    "f16": ("f32", "f64"),
    "f32": ("f64",),
    "i8": ("i16", "i32", "i64"),
    "i16": ("i32", "i64"),
    "i32": ("i64",),
    "u8": ("u16", "i16", "u32", "i32", "u64", "i64"),
    "u16": ("u32", "i32", "u64", "i64"),
    "u32": ("u64", "i64"),
    "boolean": ("u8", "i32", "i64", "f32"),
}
_WIDER_BITS = {"u64": ("i64",), "u32": ("u64", "i64", "i32")}


def compute_type(op: str, et: ElementType, kind: str = "value") -> ElementType | None:
    """The type to run ``op`` in for data of type ``et``: ``et`` itself, a lossless
    widening of it that has a kernel, or None."""
    supported = ORT_KERNELS.get(op)
    if supported is None or et.ov in supported:
        return et
    candidates = _WIDER.get(et.ov, ())
    if kind == "bits":
        candidates = _WIDER_BITS.get(et.ov, ()) + candidates
    for cand in candidates:
        if cand in supported:
            return from_ov(cand)
    return None


#: Constants of this many bytes or more are kept as arrays until the model is written.
LARGE_INITIALIZER_BYTES = 1024


@dataclass
class Value:
    """One ONNX value: what an IR output port became."""

    name: str
    type: ElementType | None
    shape: tuple[int | None, ...] | None  # None: rank unknown
    const: np.ndarray | None = None

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @property
    def static_shape(self) -> bool:
        return self.shape is not None and all(d is not None for d in self.shape)


def value_info(name: str, v: Value) -> onnx.ValueInfoProto:
    if v.type is None:
        raise IRError(f"{name}: no element type")
    if v.shape is None:
        return helper.make_tensor_value_info(name, v.type.onnx, None)
    dims = [d if d is not None else f"{name}_d{i}" for i, d in enumerate(v.shape)]
    return helper.make_tensor_value_info(name, v.type.onnx, dims)


class Context:
    """The translation of one graph: the model's, or (``parent`` given) a sub-graph body
    (If), which shares the names, initializers and flags of the whole model."""

    def __init__(self, ir: IRModel, parent: "Context | None" = None):
        self.ir = ir
        self.parent = parent
        self.root: Context = parent.root if parent else self
        self.layer: Layer | None = None
        self.nodes: list[onnx.NodeProto] = []
        self.values: dict[tuple[int, int], Value] = {}  # (layer id, output port id) -> value
        self.port_names: dict[tuple[int, int], str] = {}  # (layer id, output port id) -> ONNX name
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self.result_names: dict[int, str] = {}  # Result layer id -> graph output name
        self.result_infos: dict[int, onnx.ValueInfoProto] = {}  # Result layer id -> its output
        self.rank_unknown: set[tuple[int, int]] = set()
        #: Dims that replace a port's written (empty) dims: see ranks.py.
        self.dims_override: dict[tuple[int, int], tuple] = {}
        #: In a body: Parameter layer id -> the outer value it stands for.
        self.param_values: dict[int, Value] | None = None
        self._producers = ir.producers()
        if parent is None:
            # name -> TensorProto, or the array of a large constant (see _add_initializer)
            self.initializers: dict[str, onnx.TensorProto | np.ndarray] = {}
            self.used_names: set[str] = set()
            self._const_cache: dict[tuple, str] = {}
            self._node_names: set[str] = set()
            self._domain_used = False
            #: Other operator-set domains the nodes use (com.microsoft for MatMulNBits) -> version.
            self.extra_opsets: dict[str, int] = {}
        else:
            self.initializers = self.root.initializers
            self.used_names = self.root.used_names
            self._const_cache = self.root._const_cache
            self._node_names = self.root._node_names

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
        name = wanted or "value"
        if name in self.used_names:
            i = 1
            while f"{wanted}_{i}" in self.used_names:
                i += 1
            name = f"{wanted}_{i}"
        self.used_names.add(name)
        return name

    def tmp(self, hint: str) -> str:
        base = self.layer.name if self.layer else "tmp"
        return self.unique(f"{base}/{hint}")

    # --- values -----------------------------------------------------------------------

    def input(self, i: int) -> Value:
        layer = self.layer
        if i >= len(layer.inputs):
            raise self.error(f"has {len(layer.inputs)} inputs, the op needs input {i}")
        src = self._producers[(layer.id, layer.inputs[i].id)]
        return self.values[src]

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
        return Value(self.out(i), port.element_type, shape)

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
        v = self.out_value(i)
        self.values[(self.layer.id, self.layer.outputs[i].id)] = Value(v.name, et, v.shape)

    # --- emitting ---------------------------------------------------------------------

    def node(self, op_type: str, inputs: list[str], outputs: list[str] | str | int = 1, *, domain: str = "",
             **attrs) -> list[str]:
        """Append a node; ``outputs`` are names, or a count of fresh names. Returns the output names."""
        if isinstance(outputs, int):
            outputs = [self.tmp(op_type) for _ in range(outputs)]
        elif isinstance(outputs, str):
            outputs = [outputs]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        node = helper.make_node(op_type, list(inputs), list(outputs), name=self._node_name(op_type), domain=domain or None,
                                **attrs)
        self.nodes.append(node)
        return list(outputs)

    def one(self, op_type: str, inputs: list[str], output: str | None = None, **attrs) -> str:
        return self.node(op_type, inputs, [output] if output else 1, **attrs)[0]

    def add(self, node: onnx.NodeProto) -> None:
        if not node.name:
            node.name = self._node_name(node.op_type)
        self.nodes.append(node)

    def _node_name(self, op_type: str) -> str:
        base = self.layer.name if self.layer else op_type
        name = base if base not in self._node_names else f"{base}/{op_type}"
        i = 1
        while name in self._node_names:
            name = f"{base}/{op_type}_{i}"
            i += 1
        self._node_names.add(name)
        return name

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
        # Large constants stay numpy arrays (for IR weights: views of the mapped .bin) until
        # the model is written, so that their bytes are copied once, into the output.
        if array.nbytes >= LARGE_INITIALIZER_BYTES:
            self.initializers[name] = array
        else:
            self.initializers[name] = numpy_helper.from_array(array, name)

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
        ct = compute_type(op, et, kind)
        if ct is None:
            raise self.error(f"onnxruntime has no {op} kernel for {et.ov} and no lossless widening applies")
        args = [self.cast(x, et, ct) for x in inputs] + list(extra)
        if ct == et or result_type is not None:
            return self.one(op, args, output, **attrs)
        wide = self.one(op, args, None, **attrs)
        return self.cast(wide, ct, et, output)
