"""What every op of the domain provides, in one record: see ``OpSpec``."""

from __future__ import annotations

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
        fn = self.public if overload is None else self.bodies[overload]
        proto = _with_opset(_named_nodes(fn.to_function_proto()), opset)
        proto.name, proto.domain = self.name, DOMAIN
        if overload is not None:
            proto.overload = overload
        return proto

    def helper_protos(self, opset: int | None = None) -> list[onnx.FunctionProto]:
        return [_with_opset(_named_nodes(fn.to_function_proto()), opset) for fn in self.helpers]


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
