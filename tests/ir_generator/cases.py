"""The cases: every registered translator's op versions x its spec's attribute combinations x element
types x shape modes x where the layer sits (alone, in an If body, in a Loop body).

Crossing everything would give millions of cases; the sweep is the union of
- every attribute combination at the primary type (f32 where allowed), static and dynamic dims;
- a covering set of attribute combinations (every value of every attribute at least once) x every
  element type, static; and at the primary type with every shape mode, alone and inside If and
  Loop bodies;
- every element type at the first attribute combination with every shape mode, alone and inside
  If and Loop bodies.
Attributes in a spec's ``cover`` take each of their values once instead of being crossed with the
others (the spatial rank of a convolution, the index type of MaxPool's indices).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from functools import lru_cache

from converters.ir_to_onnx import openvino_ops
from converters.ir_to_onnx.registry import translators, type_key

from . import specs  # noqa: F401  (registers the specs)
from .build import COMPUTED, has_shape_like
from .spec import SPECS

SHAPES = ("static", "dyn_dims", "dyn_rank")
BODIES = ("plain", "if", "loop")
#: Bodies a case is put into less often (see ``cases_of``): an If whose condition folds at conversion time
#: from the first data input's rank (its other body the layer with its outputs transposed by an empty
#: order: a dead branch, as a frontend's rank dispatch writes it; on data of dynamic rank it stays an If),
#: a TensorIterator body (one iteration, the inputs invariant), and Loops of several iterations: ``loop_sliced``
#: (the data inputs sliced per iteration, the outputs concatenated), ``loop_merged`` (the data inputs loop-carried,
#: the first's back edge the layer's output where it has its shape and type), ``loop_if`` (an If on the iteration
#: number in the body, the layer in both branches).
MORE_BODIES = ("dead_if", "ti", "loop_sliced", "loop_merged", "loop_if")
#: The layer alone with its float Constants written as f16 and a Convert to f32 after each (``ov.save_model``'s
#: ``compress_to_fp16``, which ovc does by default): the covering set at f32, static and dynamic dims.
COMPRESSED = "f16_consts"
#: The data with a dim of 0: the first dim of every data input whose first dim is the first data input's
#: (static dims; the covering set at the primary type, alone).
EMPTY = "empty"
#: The layer's shape-like Constants (i32/i64, at most 8 values: target shapes, axes, pads, sizes, begin/end,
#: repeats) computed in the graph, as the PyTorch and TensorFlow frontends emit them, the data's dims dynamic:
#: ``from_rank`` from the first data input's rank (ShapeOf -> ShapeOf), ``from_static_dims`` from static dims
#: of a Parameter whose first dim is dynamic (ShapeOf -> Gather -> Add; OpenVINO knows the values when it
#: builds the model), ``from_dynamic_dims`` from dims known at run time only. The covering set at the primary
#: type, alone, where the layer has such an input (``build.COMPUTED``, ``build.has_shape_like``).
#: Translators that every case exercises (a case is Parameters -> the layer -> Results) or that are
#: the If bodies cases are put into (Loop has a spec of its own: specs/loops.py).
WRAPPERS = {"parameter": "every case", "const": "every case with a constant input",
            "result": "every case", "if": "the cases in If bodies"}


@dataclass(frozen=True)
class Case:
    ir_type: str  # as the translator registry spells it
    op: str  # as OpenVINO's NodeFactory names it
    version: int
    opset: int  # the opset NodeFactory builds the version from
    attrs: tuple  # (name, value) pairs; ``$`` names are choices of the input function
    types: tuple  # (type parameter, element type) pairs
    shapes: str
    body: str

    @property
    def key(self) -> str:
        return self.op.lower()

    @property
    def family(self) -> str:
        return f"{self.ir_type}-{self.version}"

    @property
    def t(self) -> str:
        return dict(self.types)["T"]

    @property
    def id(self) -> str:
        attrs = ",".join(f"{k}={_show(v)}" for k, v in self.attrs)
        types = ",".join(t if p == "T" else f"{p}={t}" for p, t in self.types)
        return f"{self.family}[{attrs}]{types}:{self.shapes}:{self.body}"


def _show(value) -> str:
    return json.dumps(value, separators=(",", ":")) if not isinstance(value, str) else value


@lru_cache(maxsize=None)
def default_attributes(op: str, opset: int) -> dict:
    """The attributes of ``op`` as NodeFactory makes it in ``opset``, with their defaults."""
    from openvino.utils.node_factory import NodeFactory

    return NodeFactory(f"opset{opset}").create(op).get_attributes()


def ov_name_and_opset(ir_type: str, version: int) -> tuple[str, int] | None:
    """OpenVINO's name of an IR type and the first opset that holds ``version`` of it (None: no
    opset holds that version, e.g. Acosh-3, which OpenVINO ships as Acosh-4)."""
    for n, ops in sorted(openvino_ops.load().items()):
        for name, v in ops.items():
            if type_key(name) == type_key(ir_type) and v == version:
                return name, n
    return None


def families() -> list[tuple[str, int]]:
    """Every (translator type, op version) the registry serves, but the wrappers."""
    return [(t.op_type, v) for t in translators() for v in t.versions() if type_key(t.op_type) not in WRAPPERS]


def cases_of(ir_type: str, version: int) -> list[Case]:
    """The cases of one translated op version (none when it has no spec or no opset holds it)."""
    found = ov_name_and_opset(ir_type, version)
    spec = SPECS.get(type_key(ir_type)) if found else None
    if spec is None:
        return []
    op, opset = found
    combos = attribute_combinations(spec, opset, version)
    typings = _typings(spec.types)
    primary = typings[0]
    covering = _covering(combos)

    def make(attrs, types, shapes, body):
        return Case(ir_type, spec.op, version, opset, attrs, types, shapes, body)

    shape_modes = ("static",) if spec.static_only else SHAPES
    bodies = BODIES if spec.bodies else ("plain",)
    wanted = [make(a, primary, "static", "plain") for a in combos]
    wanted += [make(a, primary, "dyn_dims", "plain") for a in combos if "dyn_dims" in shape_modes]
    wanted += [make(a, t, "static", "plain") for a in covering for t in typings]
    for attrs, types in [(a, primary) for a in covering] + [(combos[0], t) for t in typings]:
        wanted += [make(attrs, types, shapes, body) for shapes in shape_modes for body in bodies]
    if spec.bodies:  # the covering set at the primary type in every shape mode, every type static
        wanted += [make(a, primary, shapes, body) for a in covering for shapes in shape_modes for body in MORE_BODIES]
        wanted += [make(combos[0], t, "static", body) for t in typings for body in MORE_BODIES]
    if dict(primary)["T"] == "f32":
        wanted += [make(a, primary, shapes, COMPRESSED) for a in covering for shapes in shape_modes[:2]]
    wanted += [make(a, primary, EMPTY, "plain") for a in covering if not spec.empty_reason(dict(a))]
    if not spec.static_only:
        wanted += [c for c in (make(a, primary, mode, "plain") for a in covering for mode in COMPUTED)
                   if has_shape_like(c)]
    return list({c.id: c for c in wanted}.values())


def attribute_combinations(spec, opset: int, version: int) -> list[tuple]:
    """The grid's combinations the spec allows for this version: its attributes (those the version
    has) crossed, but those in ``spec.cover``, which take each of their values once."""
    names = set(default_attributes(spec.op, opset))
    grid = {k: v for k, v in spec.grid.items() if k.startswith("$") or k in names}

    def ok(attrs):
        return spec.where is None or spec.where(_Attrs(attrs), version)

    crossed = [k for k in grid if k not in spec.cover]
    combos = []
    for values in itertools.product(*(grid[k] for k in crossed)):
        attrs = dict(zip(crossed, values)) | {k: grid[k][0] for k in grid if k in spec.cover}
        if ok(attrs):
            combos.append(tuple((k, attrs[k]) for k in grid))
    base = list(combos)
    for name in (k for k in grid if k in spec.cover):
        for value in grid[name][1:]:
            for attrs in base:
                changed = dict(attrs) | {name: value}
                if ok(changed):
                    combos.append(tuple((k, changed[k]) for k in grid))
                    break
    return list({_pairs(a): a for a in combos}.values())


def _covering(combos: list[tuple]) -> list[tuple]:
    """A few combinations that hold every value of every attribute (greedy), the first one first."""
    chosen = [combos[0]]
    left = {pair for attrs in combos for pair in _pairs(attrs)} - _pairs(combos[0])
    while left:
        best = max(combos, key=lambda a: len(_pairs(a) & left))
        chosen.append(best)
        left -= _pairs(best)
    return chosen


def _pairs(attrs: tuple) -> frozenset:
    """The (name, value) pairs of a combination, hashable (values as their text)."""
    return frozenset((k, _show(v)) for k, v in attrs)


class _Attrs(dict):
    """The attributes ``where`` sees: None for one the op version does not have."""

    def __missing__(self, key):
        return None


def _typings(types: dict) -> list[tuple]:
    """The element-type assignments: every candidate of T (the others at their first), then every
    candidate of each other parameter (T at its primary: f32 where it is a candidate)."""
    params = list(types)
    first = {p: types[p][0] for p in params}
    primary_t = "f32" if "f32" in types["T"] else types["T"][0]
    ts = [primary_t] + [t for t in types["T"] if t != primary_t]
    out = [tuple({**first, "T": t}.items()) for t in ts]
    for p in params:
        if p != "T":
            out += [tuple({**first, "T": primary_t, p: t}.items()) for t in types[p][1:]]
    return out


@lru_cache(maxsize=1)
def all_cases() -> tuple[Case, ...]:
    return tuple(c for ir_type, v in families() for c in cases_of(ir_type, v))


def type_cases() -> list[Case]:
    """One case per translated op version and element type of its data (static shapes, alone, the
    first attribute combination, the other type parameters at their first candidate)."""
    first = {}
    for c in all_cases():
        first.setdefault(c.family, c.attrs)
    others = {}
    for c in all_cases():
        others.setdefault(c.family, tuple((p, t) for p, t in c.types if p != "T"))
    return [c for c in all_cases() if c.shapes == "static" and c.body == "plain" and c.attrs == first[c.family]
            and tuple((p, t) for p, t in c.types if p != "T") == others[c.family]]


def find(case_id: str) -> Case:
    family = case_id.split("[", 1)[0]
    ir_type, _, version = family.rpartition("-")
    for c in cases_of(ir_type, int(version)):
        if c.id == case_id:
            return c
    raise KeyError(f"no case {case_id!r}")
