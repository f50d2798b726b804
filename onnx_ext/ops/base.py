"""What every op of the domain provides, in one record: see ``OpSpec``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import onnx
from onnxscript.values import OnnxFunction

from ..domain import DOMAIN, DOMAIN_VERSION
from ..errors import OpAttributeError, OpInputError
from ..types import ElementType


@dataclass(frozen=True)
class Attr:
    kind: str  # "int", "ints" or "string"
    default: Any = None  # None: required

    @property
    def onnx_type(self) -> int:
        return {
            "int": onnx.AttributeProto.INT,
            "ints": onnx.AttributeProto.INTS,
            "string": onnx.AttributeProto.STRING,
        }[self.kind]


@dataclass(frozen=True)
class Operand:
    """What is known of one input of a node when it is built: any field may be None."""

    type: ElementType | None = None
    shape: tuple[int | str | None, ...] | None = None  # None: rank unknown; str/None entries: dynamic dims
    value: np.ndarray | None = None  # set when the input is a constant

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)


@dataclass(frozen=True)
class OpSpec:
    """One OpenVINO op as it lives in the domain.

    ``bodies`` maps an overload name to the onnxscript function whose body serves
    it; ``select_body(attrs, operands)`` picks the overload for a node from what
    is known of its inputs (``Operand``; missing optional inputs are absent). ``public`` is the onnxscript function users
    call; its FunctionProto (no overload) is the general body.
    """

    name: str
    inputs: tuple[str, ...]
    min_inputs: int
    attributes: dict[str, Attr]
    check_attributes: Callable[[dict], dict]
    select_body: Callable[[dict, Sequence[Operand]], str]
    output_type: Callable[[dict, Sequence[Operand]], ElementType | None]
    bodies: dict[str, OnnxFunction]
    public: OnnxFunction
    reference: Callable[..., np.ndarray]
    #: Functions of the domain that the bodies call (attached with any body).
    helpers: tuple[OnnxFunction, ...] = ()
    #: Rejects inputs known to be bad when the node is built (types, ranks, constant values).
    check_operands: Callable[[dict, Sequence[Operand]], None] = field(default=lambda attrs, operands: None)
    #: The output shape as far as the operands tell (dims: int, a symbolic name, or None for
    #: unknown), None when the rank is unknown; attrs normalised, operands checked. Never wrong.
    output_shape: Callable[[dict, Sequence[Operand]], tuple | None] = field(default=lambda attrs, operands: None)
    #: The operands the op reads: a node calling the public body passes every input (an ONNX
    #: function cannot tell one is absent), such as Broadcast's axes_mapping in every mode.
    read_operands: Callable[[dict, Sequence[Operand]], Sequence[Operand]] = field(
        default=lambda attrs, operands: operands)

    def normalize(self, attrs: dict, node: str | None = None) -> dict:
        """Fill defaults, reject unknown or missing attributes, run the op's own checks."""
        unknown = sorted(set(attrs) - set(self.attributes))
        if unknown:
            raise OpAttributeError(self.name, unknown[0], "is not an attribute of this op", node)
        full = {}
        for name, spec in self.attributes.items():
            value = attrs.get(name, spec.default)
            if value is None:
                raise OpAttributeError(self.name, name, "is required", node)
            full[name] = _coerce(self.name, name, spec.kind, value, node)
        try:
            return self.check_attributes(full)
        except OpAttributeError as e:
            raise e.at(node) from None

    def check_inputs(self, attrs: dict, operands: Sequence[Operand], node=None):
        n_inputs = len(operands)
        if not self.min_inputs <= n_inputs <= len(self.inputs):
            want = (
                f"{self.min_inputs}" if self.min_inputs == len(self.inputs) else f"{self.min_inputs} to {len(self.inputs)}"
            )
            raise OpInputError(self.name, f"takes {want} inputs ({', '.join(self.inputs)}), got {n_inputs}", node)
        try:
            self.check_operands(attrs, operands)
        except (OpInputError, OpAttributeError) as e:
            raise e.at(node) from None

    def function_proto(self, overload: str | None, opset: int | None = None) -> onnx.FunctionProto:
        """The body for one overload (None: the public, general body).

        ``opset``: the standard ONNX opset to import (the model's; onnxruntime and
        the inliner want function and model to agree). The bodies use ops whose
        semantics hold from MIN_ONNX_OPSET on.
        """
        key = (self.name, id(self), overload, opset)
        if key not in _PROTO_CACHE:
            fn = self.public if overload is None else self.bodies[overload]
            proto = _with_opset(_named_nodes(fn.to_function_proto()), opset)
            proto.name, proto.domain = self.name, DOMAIN
            if overload is not None:
                proto.overload = overload
            _cache_proto(key, proto)
        return _copy(_PROTO_CACHE[key])

    def helper_protos(self, opset: int | None = None) -> list[onnx.FunctionProto]:
        key = (self.name, id(self), "(helpers)", opset)
        if key not in _PROTO_CACHE:
            _cache_proto(key, [_with_opset(_named_nodes(fn.to_function_proto()), opset) for fn in self.helpers])
        return [_copy(p) for p in _PROTO_CACHE[key]]


#: Generated FunctionProtos (onnxscript's to_function_proto is slow: a model with thousands
#: of domain nodes would spend seconds there), copied out on each use.
_PROTO_CACHE: dict[tuple, object] = {}


def _cache_proto(key, value) -> None:
    if len(_PROTO_CACHE) > 4096:
        _PROTO_CACHE.clear()
    _PROTO_CACHE[key] = value


def _copy(proto: onnx.FunctionProto) -> onnx.FunctionProto:
    out = onnx.FunctionProto()
    out.CopyFrom(proto)
    return out


def _with_opset(proto: onnx.FunctionProto, opset: int | None) -> onnx.FunctionProto:
    if opset is not None:
        for imp in proto.opset_import:
            if imp.domain in ("", "ai.onnx"):
                imp.version = opset
    return proto


def _named_nodes(proto: onnx.FunctionProto) -> onnx.FunctionProto:
    # Runtime checks are Gathers whose output names the condition; onnxruntime's
    # error message quotes the node name, so name each node after its output.
    for node in _nodes(proto.node):
        node.name = node.output[0]
    if any(n.domain == DOMAIN for n in _nodes(proto.node)) and DOMAIN not in {o.domain for o in proto.opset_import}:
        proto.opset_import.append(onnx.helper.make_opsetid(DOMAIN, DOMAIN_VERSION))
    return proto


def _nodes(nodes):
    for node in nodes:
        yield node
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _nodes(sub.node)


def _coerce(op: str, name: str, kind: str, value, node) -> Any:
    if kind == "int":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise OpAttributeError(op, name, f"must be an integer, got {value!r}", node)
        return int(value)
    if kind == "ints":
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise OpAttributeError(op, name, f"must be a list of integers, got {value!r}", node)
        values = list(value)
        if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) for v in values):
            raise OpAttributeError(op, name, f"must be a list of integers, got {values!r}", node)
        return [int(v) for v in values]
    if isinstance(value, bytes):
        value = value.decode()
    if not isinstance(value, str):
        raise OpAttributeError(op, name, f"must be a string, got {value!r}", node)
    return value


# --- bodies built node by node ------------------------------------------------------------------


class BuiltFunction:
    """A body built node by node: specialised on values (a constant axis, slice bounds...)
    that onnxscript cannot take as parameters. OpSpec uses it like an onnxscript function."""

    def __init__(self, proto: onnx.FunctionProto):
        self._proto = proto

    def to_function_proto(self) -> onnx.FunctionProto:
        proto = onnx.FunctionProto()
        proto.CopyFrom(self._proto)
        return proto


class BodyBuilder:
    """Emits the nodes of a built body; ``branch()`` gives a builder for an If branch that
    shares the value names (unique across the function)."""

    def __init__(self, _counter=None):
        self.nodes: list[onnx.NodeProto] = []
        self._counter = _counter if _counter is not None else [0]

    def fresh(self, hint: str = "t") -> str:
        self._counter[0] += 1
        return f"{hint}_{self._counter[0]}"

    def __call__(self, op_type: str, *inputs: str, out: str | None = None, **attrs) -> str:
        out = out or self.fresh(op_type.lower())
        self.nodes.append(onnx.helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def const(self, values, dtype=np.int64, out: str | None = None) -> str:
        return self("Constant", out=out or self.fresh("const"),
                    value=onnx.numpy_helper.from_array(np.array(values, dtype=dtype)))

    def check(self, name: str, ok: str) -> str:
        """The scalar 0 if the bool ``ok`` (one element) holds, else a failure at run time whose
        message names the node ``name`` (a Gather of [0] at index 1)."""
        bad = self("Cast", self("Not", self("Reshape", ok, self.const([-1]))), to=onnx.TensorProto.INT64)
        return self("ReduceSum", self("Gather", self.const([0]), bad, out=name), keepdims=0)

    def branch(self) -> "BodyBuilder":
        return BodyBuilder(self._counter)

    def graph(self, name: str, output: str) -> onnx.GraphProto:
        return onnx.helper.make_graph(self.nodes, name, [], [onnx.ValueInfoProto(name=output)])

    def if_(self, cond: str, then: "BodyBuilder", then_out: str, orelse: "BodyBuilder", else_out: str,
            out: str | None = None) -> str:
        return self("If", cond, out=out, then_branch=then.graph(self.fresh("then"), then_out),
                    else_branch=orelse.graph(self.fresh("else"), else_out))


def built_function(domain: str, name: str, overload: str, inputs: Sequence[str], builder: BodyBuilder,
                   output: str, opset: int, like: onnx.FunctionProto) -> BuiltFunction:
    """The FunctionProto of ``builder``'s nodes, with the attributes (and defaults) of ``like``
    (the op's general body), so that nodes carrying them are valid calls."""
    nodes = list(builder.nodes)
    if not nodes or nodes[-1].output[0] != output:
        nodes.append(onnx.helper.make_node("Identity", [output], ["output"]))
    else:
        _rename_output(nodes, output, "output")
    proto = onnx.helper.make_function(domain, name, list(inputs), ["output"], nodes,
                                      [onnx.helper.make_opsetid("", opset)], attributes=list(like.attribute))
    proto.attribute_proto.extend(like.attribute_proto)
    proto.overload = overload
    return BuiltFunction(proto)


def _rename_output(nodes, old: str, new: str) -> None:
    for node in _nodes(nodes):
        for i, o in enumerate(node.output):
            if o == old:
                node.output[i] = new
        for i, x in enumerate(node.input):
            if x == old:
                node.input[i] = new
    for node in nodes:
        for attr in node.attribute:
            for g in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                for o in g.output:
                    if o.name == old:
                        o.name = new


class LazyBodies(Mapping):
    """Overload name -> body: the fixed (onnxscript) bodies, listed; specialised ones are
    built on first use from the name alone (``build(name)`` returns None for names it does
    not know), so that ``attach_functions`` can rebuild any overload a node names."""

    def __init__(self, fixed: dict, build: Callable[[str], Any]):
        self._fixed = fixed
        self._build = build
        self._cache: dict[str, Any] = {}

    def __getitem__(self, name: str):
        if name in self._fixed:
            return self._fixed[name]
        if name not in self._cache:
            body = self._build(name) if isinstance(name, str) else None
            if body is None:
                raise KeyError(name)
            if len(self._cache) > 1024:
                self._cache.clear()
            self._cache[name] = body
        return self._cache[name]

    def __iter__(self):
        return iter(self._fixed)

    def __len__(self):
        return len(self._fixed)

    def __contains__(self, name) -> bool:
        try:
            self[name]
        except KeyError:
            return False
        return True


def int_token(v: int) -> str:
    """An integer in an overload name: ``m`` for minus (names keep to [a-z0-9_])."""
    return f"m{-v}" if v < 0 else str(v)


def parse_int_token(text: str) -> int:
    if text.startswith("m") and text[1:].isdigit():
        return -int(text[1:])
    if not text.isdigit():
        raise ValueError(text)
    return int(text)
