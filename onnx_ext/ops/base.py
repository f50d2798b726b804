"""What every op of the domain provides, in one record (``OpSpec``), and what their bodies share: the overload
codec (``Overload`` families spelled with ``Token``s), the lazy body cache (``Bodies``) and the walker over a
body's nodes (``walk``). The node-by-node builder of the families' bodies is ``builder.BodyBuilder``."""

from __future__ import annotations

import abc
import copy
import re
import typing
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from functools import cache, cached_property, lru_cache
from typing import Any, Callable, ClassVar, Sequence

import numpy as np
import onnx
from onnxscript.values import OnnxFunction

from ..domain import DOMAIN, DOMAIN_VERSION
from ..errors import OpAttributeError, OpInputError
from ..types import ElementType
from .builder import BodyBuilder, BuiltFunction, copy_function


@dataclass(frozen=True)
class Attr:
    kind: str  # "int", "ints", "float", "floats" or "string"
    default: Any = None  # None: required

    @property
    def onnx_type(self) -> int:
        return {
            "int": onnx.AttributeProto.INT,
            "ints": onnx.AttributeProto.INTS,
            "float": onnx.AttributeProto.FLOAT,
            "floats": onnx.AttributeProto.FLOATS,
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


# --- the attribute checks the ops' ``check_attributes`` share: each raises OpAttributeError naming the op, the
# attribute, its value and what is allowed; a list attribute is checked entry by entry.


def _require(op: str, attrs: dict, names: Sequence[str], ok: Callable[[Any], bool], allowed: str) -> None:
    for name in names:
        value = attrs[name]
        if not ok(value):
            each = "each entry " if isinstance(value, (list, tuple)) else ""
            raise OpAttributeError(op, name, f"is {value!r}: {each}must be {allowed}")


def _floats(value) -> np.ndarray:
    return np.asarray(value, np.float64)


def require_bool(op: str, attrs: dict, *names: str) -> None:
    """INT attributes that OpenVINO has as booleans."""
    _require(op, attrs, names, lambda v: v in (0, 1), "0 or 1 (a boolean)")


def require_one_of(op: str, attrs: dict, name: str, allowed: Sequence | Mapping) -> None:
    _require(op, attrs, (name,), lambda v: v in allowed, f"one of {', '.join(map(repr, allowed))}")


def require_version(op: str, attrs: dict, versions: Sequence[int]) -> None:
    _require(op, attrs, ("version",), lambda v: v in versions, f"one of OpenVINO's {op} versions {tuple(versions)}")


def require_index_type(op: str, attrs: dict, *names: str) -> None:
    """An ONNX element type of indices: INT64 or INT32."""
    types = (onnx.TensorProto.INT64, onnx.TensorProto.INT32)
    _require(op, attrs, names, lambda v: v in types, f"INT64 ({types[0]}) or INT32 ({types[1]})")


def require_finite(op: str, attrs: dict, *names: str) -> None:
    _require(op, attrs, names, lambda v: bool(np.isfinite(_floats(v)).all()), "finite")


def require_positive(op: str, attrs: dict, *names: str) -> None:
    _require(op, attrs, names, lambda v: bool((np.isfinite(_floats(v)) & (_floats(v) > 0)).all()),
             "positive (and finite)")


def require_non_negative(op: str, attrs: dict, *names: str) -> None:
    _require(op, attrs, names, lambda v: bool((np.isfinite(_floats(v)) & (_floats(v) >= 0)).all()),
             "finite and not negative")


@dataclass(frozen=True)
class OpSpec:
    """One OpenVINO op as it lives in the domain.

    ``bodies`` maps an overload name to the function whose body serves it (``Bodies``);
    ``select_body(attrs, operands)`` picks the overload for a node from what is known of its
    inputs (``Operand``; missing optional inputs are absent). ``public`` is the onnxscript
    function users call; its FunctionProto (no overload) is the general body.
    """

    name: str
    inputs: tuple[str, ...]
    min_inputs: int
    attributes: dict[str, Attr]
    check_attributes: Callable[[dict], dict]
    select_body: Callable[[dict, Sequence[Operand]], str]
    output_type: Callable[[dict, Sequence[Operand]], ElementType | None]
    bodies: Bodies
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
    #: The outputs' names. With several, ``output_type`` and ``output_shape`` give one entry per output and
    #: ``reference`` returns a tuple.
    outputs: tuple[str, ...] = ("output",)
    #: The last input may repeat (ExperimentalDetectronROIFeatureExtractor's feature maps): a node takes
    #: ``min_inputs`` or more; each body (overload) is a function of its own number of inputs.
    variadic: bool = False
    #: The standard opset the bodies need at least (attach refuses older models with one line).
    min_opset: int | None = None
    #: (attrs, OpenVINO inputs) -> the native OpenVINO node, for ``openvino.openvino_extensions`` (every op's,
    #: beside the op; ``ops/native.py`` builds through NodeFactory).
    openvino: Callable[[dict, list], Any] | None = None
    #: Outputs every node has; the ones after are optional (Proposal-1 has the boxes only: its nodes have one
    #: output and a body of one output). None: every output.
    min_outputs: int | None = None

    def output_types(self, attrs: dict, operands: Sequence[Operand]) -> list[ElementType | None]:
        """``output_type`` as one entry per output."""
        types = self.output_type(attrs, operands)
        return list(types) if len(self.outputs) > 1 else [types]

    def output_shapes(self, attrs: dict, operands: Sequence[Operand]) -> list[tuple | None]:
        """``output_shape`` as one entry per output."""
        shapes = self.output_shape(attrs, operands)
        if len(self.outputs) == 1:
            return [shapes]
        return [None] * len(self.outputs) if shapes is None else list(shapes)

    def run_reference(self, *inputs, **attrs) -> tuple[np.ndarray, ...]:
        """The numpy reference's outputs as a tuple, one array per output."""
        result = self.reference(*inputs, **attrs)
        return tuple(result) if len(self.outputs) > 1 else (result,)

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
        if not self.min_inputs <= n_inputs <= (n_inputs if self.variadic else len(self.inputs)):
            most = len(self.inputs)
            want = (f"{self.min_inputs} or more" if self.variadic else f"{self.min_inputs}" if self.min_inputs == most
                    else f"{self.min_inputs} to {most}")
            raise OpInputError(self.name, f"takes {want} inputs ({', '.join(self.inputs)}), got {n_inputs}", node)
        try:
            self.check_operands(attrs, operands)
        except (OpInputError, OpAttributeError) as e:
            raise e.at(node) from None

    def function_proto(self, overload: str | None, opset: int | None = None) -> onnx.FunctionProto:
        """The body for one overload (None: the public, general body), a copy of the cached one.

        ``opset``: the standard ONNX opset to import (the model's; onnxruntime and
        the inliner want function and model to agree). The bodies use ops whose
        semantics hold from MIN_ONNX_OPSET on.
        """
        (proto,) = self._protos(overload, opset, helpers=False)
        return copy_function(proto)

    def helper_protos(self, opset: int | None = None) -> list[onnx.FunctionProto]:
        return [copy_function(p) for p in self._protos(None, opset, helpers=True)]

    @cached_property
    def _protos(self) -> Callable[..., tuple[onnx.FunctionProto, ...]]:
        # By (overload, opset): onnxscript's to_function_proto is slow, and a model with thousands of
        # domain nodes would spend seconds there. Bound: a model names a few hundred overloads at most.
        return lru_cache(maxsize=4096)(self._make_protos)

    def _make_protos(self, overload: str | None, opset: int | None, helpers: bool) -> tuple[onnx.FunctionProto, ...]:
        if helpers:
            return tuple(_with_opset(_named_nodes(fn.to_function_proto()), opset) for fn in self.helpers)
        fn = self.public if overload is None else self.bodies[overload]
        proto = _with_opset(_named_nodes(fn.to_function_proto()), opset)
        proto.name, proto.domain = self.name, DOMAIN
        if overload is not None:
            proto.overload = overload
        return (proto,)


def _with_opset(proto: onnx.FunctionProto, opset: int | None) -> onnx.FunctionProto:
    if opset is not None:
        for imp in proto.opset_import:
            if imp.domain in ("", "ai.onnx"):
                imp.version = opset
    return proto


def _named_nodes(proto: onnx.FunctionProto) -> onnx.FunctionProto:
    # Runtime checks are Gathers whose output names the condition; onnxruntime's
    # error message quotes the node name, so name each node after its output.
    _sort_if_outputs(proto)
    _sort_loop_carried(proto)
    for node in walk(proto.node):
        node.name = node.output[0]
    if any(n.domain == DOMAIN for n in walk(proto.node)) and DOMAIN not in {o.domain for o in proto.opset_import}:
        proto.opset_import.append(onnx.helper.make_opsetid(DOMAIN, DOMAIN_VERSION))
    return proto


_NUMBERED = re.compile(r"(.+)_([0-9]+)")


def _sort_if_outputs(proto: onnx.FunctionProto) -> None:
    """onnxscript lists an If's outputs in set order, which hash randomisation changes from one process to the
    next: sort them by variable name and number them in that order, so that a body's bytes are reproducible."""
    renamed = {}
    for node in walk(proto.node):
        numbered = [_NUMBERED.fullmatch(name) for name in node.output]
        if node.op_type != "If" or len(numbered) < 2 or not all(numbered):
            continue
        order = sorted(range(len(numbered)), key=lambda i: numbered[i].group(1))
        numbers = sorted(int(m.group(2)) for m in numbered)
        names = [f"{numbered[i].group(1)}_{n}" for i, n in zip(order, numbers)]
        renamed.update((node.output[i], name) for i, name in zip(order, names))
        node.output[:] = names
        for branch in node.attribute:
            outputs = [copy.deepcopy(branch.g.output[i]) for i in order]
            del branch.g.output[:]
            branch.g.output.extend(outputs)
    graphs = [a.g for n in walk(proto.node) for a in n.attribute if a.HasField("g")]
    for node in walk(proto.node):
        node.input[:] = [renamed.get(name, name) for name in node.input]
    for value in [v for g in graphs for v in g.output]:
        value.name = renamed.get(value.name, value.name)
    proto.output[:] = [renamed.get(name, name) for name in proto.output]


def _sort_loop_carried(proto: onnx.FunctionProto) -> None:
    """onnxscript orders a Loop's carried values by set iteration too: sort them by variable name (the node's
    inputs and outputs, the body's inputs and outputs) and number the names onnxscript gave them in that order."""
    renamed = {}
    for node in walk(proto.node):
        if node.op_type != "Loop":
            continue
        body = next(a.g for a in node.attribute if a.name == "body")
        count = len(node.input) - 2
        carried = [_NUMBERED.fullmatch(v.name) for v in body.input[2:]]
        finals = [_NUMBERED.fullmatch(name) for name in node.output[:count]]
        if count < 2 or not all(carried) or not all(finals):
            continue
        # (the node's outputs may come in another set order than the body's carried values: each sorts by its own)
        order = sorted(range(count), key=lambda i: carried[i].group(1))
        order_out = sorted(range(count), key=lambda i: finals[i].group(1))
        for numbered, names, by in ((carried, [v.name for v in body.input[2:]], order),
                                    (finals, node.output[:count], order_out)):
            numbers = sorted(int(m.group(2)) for m in numbered)
            renamed.update((names[i], f"{numbered[i].group(1)}_{n}") for i, n in zip(by, numbers))
        node.input[2:] = [node.input[2 + i] for i in order]
        node.output[:count] = [node.output[i] for i in order_out]
        inputs = [copy.deepcopy(body.input[2 + i]) for i in order]
        outputs = [copy.deepcopy(v) for v in (body.output[0], *(body.output[1 + i] for i in order),
                                              *body.output[count + 1:])]
        del body.input[2:]
        body.input.extend(inputs)
        del body.output[:]
        body.output.extend(outputs)
    if not renamed:
        return
    graphs = [a.g for n in walk(proto.node) for a in n.attribute if a.HasField("g")]
    for node in walk(proto.node):
        node.input[:] = [renamed.get(name, name) for name in node.input]
        node.output[:] = [renamed.get(name, name) for name in node.output]
    for value in [v for g in graphs for v in (*g.input, *g.output)]:
        value.name = renamed.get(value.name, value.name)
    proto.output[:] = [renamed.get(name, name) for name in proto.output]


def graphs(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """``graph`` and the bodies of its If, Loop and Scan nodes, at any depth: depth first, outer graphs first."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from graphs(sub)


def walk(nodes: Sequence[onnx.NodeProto]) -> Iterator[onnx.NodeProto]:
    """Every node of ``nodes`` and of their sub-graphs (If branches), depth first."""
    for node in nodes:
        yield node
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from walk(sub.node)


def _coerce(op_name: str, name: str, kind: str, value, node) -> Any:
    if kind in ("float", "floats"):
        return _coerce_floats(op_name, name, kind, value, node)
    if kind == "int":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise OpAttributeError(op_name, name, f"must be an integer, got {value!r}", node)
        return int(value)
    if kind == "ints":
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise OpAttributeError(op_name, name, f"must be a list of integers, got {value!r}", node)
        values = list(value)
        if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) for v in values):
            raise OpAttributeError(op_name, name, f"must be a list of integers, got {values!r}", node)
        return [int(v) for v in values]
    if isinstance(value, bytes):
        value = value.decode()
    if not isinstance(value, str):
        raise OpAttributeError(op_name, name, f"must be a string, got {value!r}", node)
    return value


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _coerce_floats(op_name: str, name: str, kind: str, value, node) -> float | list[float]:
    """A float attribute as ONNX stores it: float32 values (as Python floats)."""
    if kind == "float":
        if not _is_number(value):
            raise OpAttributeError(op_name, name, f"must be a number, got {value!r}", node)
        return float(np.float32(value))
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise OpAttributeError(op_name, name, f"must be a list of numbers, got {value!r}", node)
    values = list(value)
    if not all(_is_number(v) for v in values):
        raise OpAttributeError(op_name, name, f"must be a list of numbers, got {values!r}", node)
    return [float(np.float32(v)) for v in values]


# --- overload names ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    """How one field of an overload name is written: a regular expression (no capturing group) and the
    conversions both ways; ``coerce`` makes a value given to the record hashable (lists to tuples)."""

    pattern: str
    parse: Callable[[str], Any]
    format: Callable[[Any], str] = str
    coerce: Callable[[Any], Any] = lambda value: value


def words(spellings: Sequence[str] | Mapping[str, Any]) -> Token:
    """One of a few words: the value is the word, or what the mapping word -> value gives."""
    table = dict(spellings) if isinstance(spellings, Mapping) else {w: w for w in spellings}
    written = {value: word for word, value in table.items()}
    return Token("|".join(map(re.escape, table)), table.__getitem__, written.__getitem__)


def _int(text: str) -> int:
    return -int(text[1:]) if text.startswith("m") else int(text)


def _int_text(value: int) -> str:
    return f"m{-value}" if value < 0 else str(value)


def _dims(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split("x")) if text else ()


#: A count, rank or dim.
NAT = Token("[0-9]+", int)
#: Any integer, ``m`` for minus (names keep to [a-z0-9_]).
INT = Token("m?[0-9]+", _int, _int_text)
#: Dims ``2x3x4``; nothing for none.
DIMS = Token("(?:[0-9]+(?:x[0-9]+)*)?", _dims, lambda v: "x".join(map(str, v)), tuple)
#: Integers each after an underscore: ``_1_m2_3``.
INTS = Token("(?:_m?[0-9]+)*", lambda text: tuple(_int(v) for v in text.split("_")[1:]),
             lambda v: "".join(f"_{_int_text(x)}" for x in v), tuple)


def _f32_hex(value: float) -> str:
    return f"{int(np.array(value, np.float32).view(np.uint32)):08x}"


def _hex_f32(text: str) -> float:
    return float(np.array(int(text, 16), np.uint32).view(np.float32))


#: A float32 as its 8 hex digits (exact; names keep to [a-z0-9_]).
FLOAT = Token("[0-9a-f]{8}", _hex_f32, _f32_hex, lambda v: float(np.float32(v)))
#: float32 values each after an underscore: ``_3f800000_40000000``.
FLOATS = Token("(?:_[0-9a-f]{8})*", lambda text: tuple(_hex_f32(v) for v in text.split("_")[1:]),
               lambda v: "".join(f"_{_f32_hex(x)}" for x in v), lambda v: tuple(float(np.float32(x)) for x in v))


class Overload(abc.ABC):
    """A family of overloads, declared by a subclass that is a frozen dataclass: its fields are the family's
    parameters, each annotated with its Token (``axis: Annotated[int, INT]``), and ``SPELLING`` writes them
    into the overload name: ``{field}`` where a field goes, ``[text{field}text]`` around a part written only
    when its field is not at its default. A name belongs to the family when it is the one spelling of fields that
    pass ``valid`` (``decode``); ``name`` encodes. ``build`` emits the body the fields describe."""

    SPELLING: ClassVar[str]

    def __post_init__(self):
        for name, token in _grammar(type(self)).tokens.items():
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, token.coerce(value))

    def valid(self) -> bool:
        """The family's rules on its fields, beyond what each token reads."""
        return True

    @abc.abstractmethod
    def build(self, g: BodyBuilder) -> str | Sequence[str]:
        """Emits the body's nodes into ``g`` (which reads the op's inputs by name); returns its output value
        (its output values, in order, for an op of several outputs)."""

    def inputs(self) -> Sequence[str] | None:
        """The body's inputs when they are not the general body's (a variadic op's count); None: the same."""
        return None

    @property
    def name(self) -> str:
        grammar = _grammar(type(self))
        out = []
        for before, field_name, after, optional in grammar.parts:
            if field_name is None:
                out.append(before)
                continue
            value = getattr(self, field_name)
            if not optional or value != grammar.defaults[field_name]:
                out.append(before + grammar.tokens[field_name].format(value) + after)
        return "".join(out)

    @classmethod
    def decode(cls, name) -> Overload | None:
        """The record that ``name`` spells, or None when it is not this family's canonical spelling."""
        grammar = _grammar(cls)
        match = grammar.regex.fullmatch(name) if isinstance(name, str) else None
        if match is None:
            return None
        try:
            record = cls(**{k: grammar.tokens[k].parse(v) for k, v in match.groupdict().items() if v is not None})
        except (ValueError, KeyError):  # e.g. an integer of more digits than int() reads
            return None
        return record if record.valid() and record.name == name else None


@dataclass(frozen=True)
class _Grammar:
    parts: tuple[tuple[str, str | None, str, bool], ...]  # (text before, field or None, text after, optional)
    tokens: dict[str, Token]
    defaults: dict[str, Any]
    regex: re.Pattern


@cache
def _grammar(family: type[Overload]) -> _Grammar:
    hints = typing.get_type_hints(family, include_extras=True)
    tokens = {f.name: hints[f.name].__metadata__[0] for f in fields(family)}
    defaults = {f.name: f.default for f in fields(family) if f.default is not MISSING}
    parts = []
    for optional, plain in re.findall(r"\[([^\]]*)\]|([^\[]+)", family.SPELLING):
        if optional:
            before, name, after = re.split(r"\{(\w+)\}", optional)  # one field
            parts.append((before, name, after, True))
        else:  # text, field, text, field...
            parts += [(piece, None, "", False) if i % 2 == 0 else ("", piece, "", False)
                      for i, piece in enumerate(re.split(r"\{(\w+)\}", plain)) if piece]
    regex = []
    for before, name, after, optional in parts:
        group = re.escape(before) + (f"(?P<{name}>{tokens[name].pattern})" if name else "") + re.escape(after)
        regex.append(f"(?:{group})?" if optional else group)
    return _Grammar(tuple(parts), tokens, defaults, re.compile("".join(regex)))


# --- bodies -------------------------------------------------------------------------------------


class Bodies(Mapping):
    """Overload name -> body, for one op: its fixed onnxscript functions, which it lists, and the bodies of
    its overload families, built from the decoded name on first use (so that ``attach_functions`` can
    rebuild any overload a node names). ``general``: the op's general body, whose name, inputs and
    attributes the built bodies take. ``listed``: records of the families listed with the fixed bodies (a
    family of a few overloads, all of which ``function_protos`` gives)."""

    def __init__(self, general: OnnxFunction, fixed: dict[str, OnnxFunction], families: Sequence[type[Overload]] = (),
                 listed: Sequence[Overload] = ()):
        self._general, self._fixed, self._families = general, fixed, tuple(families)
        self._listed = tuple(record.name for record in listed)
        # By record: a model may name thousands of value-specialised overloads; their protos are cached too.
        self._built = lru_cache(maxsize=1024)(self._build)

    def overload(self, name) -> Overload | None:
        """The record of a family's overload name; None for other names (the fixed ones included)."""
        return next((r for r in (family.decode(name) for family in self._families) if r is not None), None)

    def __getitem__(self, name: str):
        if name in self._fixed:
            return self._fixed[name]
        record = self.overload(name)
        if record is None:
            raise KeyError(name)
        return self._built(record)

    def __iter__(self):
        return iter((*self._fixed, *self._listed))

    def __len__(self):
        return len(self._fixed) + len(self._listed)

    def __contains__(self, name) -> bool:
        return name in self._fixed or self.overload(name) is not None

    def _build(self, record: Overload) -> BuiltFunction:
        g = BodyBuilder()
        return g.function(record.build(g), self._like, record.name, record.inputs())

    @cached_property
    def _like(self) -> onnx.FunctionProto:
        return self._general.to_function_proto()
