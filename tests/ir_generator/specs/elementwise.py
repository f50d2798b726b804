"""Elementwise ops: unary math and activations, binary arithmetic, comparisons, logic, bitwise ops,
Select. Values are drawn from each op's domain (Acos in [-1, 1], Log above 0), integers from the same
interval rounded."""

from __future__ import annotations

import numpy as np

from ..spec import ALL, FLOATS, INTEGERS, spec
from ..spec import WEIGHTS_AT

SHAPE = (2, 3, 4)
#: The data's shape per rank (``$rank``: 3, the first, then a scalar, a vector, a matrix and ranks 5-6); each rank
#: is tried once (``cover``), not crossed with the other attributes.
RANKS = {3: SHAPE, 0: (), 1: (5,), 2: (3, 4), 5: (2, 1, 3, 2, 2), 6: (1, 2, 1, 3, 2, 2)}
RANK = {"$rank": list(RANKS)}


def _unary(op: str, lo: float = -4, hi: float = 4, ilo: int | None = None, ihi: int | None = None, **kwargs):
    def inputs(c):
        shape = RANKS[c.attrs["$rank"]]
        if c.t in FLOATS:
            return [c.data(shape, lo=lo, hi=hi)]
        return [c.data(shape, lo=lo if ilo is None else ilo, hi=hi if ihi is None else ihi)]
    spec(op, grid=RANK, cover=("$rank",), **kwargs)(inputs)


for _op, _lo, _hi, _ilo, _ihi in [
    ("Abs", -4, 4, None, None), ("Acos", -0.95, 0.95, -1, 1), ("Acosh", 1, 5, None, None),
    ("Asin", -0.95, 0.95, -1, 1), ("Asinh", -4, 4, None, None), ("Atan", -4, 4, None, None),
    ("Atanh", -0.95, 0.95, 0, 0), ("Ceiling", -4, 4, None, None), ("Cos", -4, 4, None, None),
    ("Cosh", -3, 3, None, None), ("Erf", -3, 3, None, None), ("Exp", -4, 4, None, None),
    ("Floor", -4, 4, None, None), ("Log", 0.05, 10, 1, 10), ("Negative", -4, 4, None, None),
    ("Sigmoid", -6, 6, None, None), ("Sign", -4, 4, None, None), ("Sin", -4, 4, None, None),
    ("Sinh", -3, 3, None, None), ("Sqrt", 0, 10, None, None), ("Tan", -1.3, 1.3, -1, 1),
    ("Tanh", -4, 4, None, None), ("Relu", -4, 4, None, None), ("SoftPlus", -6, 6, None, None),
    ("SoftSign", -4, 4, None, None), ("Mish", -4, 4, None, None), ("HSwish", -5, 5, None, None),
    ("HSigmoid", -5, 5, None, None),
]:
    _unary(_op, _lo, _hi, _ilo, _ihi)


def _shape(c) -> tuple:
    """The data's shape: ``$rank``'s (3 where the spec has no ``$rank``)."""
    return RANKS[c.attrs.get("$rank", 3)]


@spec("Gelu", grid={"approximation_mode": ["ERF", "TANH"], **RANK}, cover=("$rank",))
def gelu(c):
    return [c.data(_shape(c))]


@spec("Elu", grid={"alpha": [1.0, 0.3], **RANK}, cover=("$rank",))
def elu(c):
    return [c.data(_shape(c))]


@spec("Clamp", grid={"$bounds": [(-1.0, 1.5), (0.0, 6.0), (-2.5, -0.5), (0.2, 0.7)], **RANK}, cover=("$rank",),
      fixed={"min": "from $bounds", "max": "from $bounds"})
def clamp(c):
    c.attrs["min"], c.attrs["max"] = c.attrs["$bounds"]
    return [c.data(_shape(c))]


@spec("Selu", grid={"$weights_at": WEIGHTS_AT, **RANK}, cover=("$rank",))
def selu(c):
    return [c.data(_shape(c)), c.weight([1.67]), c.weight([1.05])]


@spec("HardSigmoid", grid={"$form": ["const", "param"], **RANK}, cover=("$rank",))
def hard_sigmoid(c):
    alpha, beta = np.array(0.2), np.array(0.5)
    if c.attrs["$form"] == "param":
        return [c.data(_shape(c)), c.feed(alpha), c.feed(beta)]
    return [c.data(_shape(c)), c.const(alpha), c.const(beta)]


@spec("Swish", grid={"$beta": ["absent", "const", "one", "param"], **RANK}, cover=("$rank",))
def swish(c):
    beta = {"absent": None, "const": c.const(np.array(0.7)), "one": c.const(np.array(1.0)),
            "param": c.feed(np.array(1.3))}[c.attrs["$beta"]]
    return [c.data(_shape(c))] + ([beta] if beta is not None else [])


@spec("PRelu", grid={"$slope": ["scalar", "channel", "full", "trailing"], "$weights_at": WEIGHTS_AT,
                     "$rank": [r for r in RANKS if r > 0]},
      cover=("$weights_at",), empty_invalid=lambda a: "its slope has the emptied dim's length" if (
          a["$slope"] == "full" or (a["$rank"] == 1 and a["$slope"] != "scalar")) else "")
def prelu(c):
    """A 1-D slope of dim 1's length is per channel (dim 0's at rank 1), else it broadcasts numpy-style: at rank 6
    (1, 2, 1, 3, 2, 2) the channel slope has the last dim's length too. Not rank 0: OpenVINO's reference reads the
    data's dim 0 for the channel count, which a scalar does not have."""
    data = _shape(c)
    channel = data[1] if len(data) > 1 else data[0]
    shape = {"scalar": (1,), "channel": (channel,), "full": data, "trailing": (data[-1],)}[c.attrs["$slope"]]
    return [c.data(data), c.weight(shape, lo=-1, hi=1)]


def _softmax_ok(attrs, version):
    """The axis within the rank (no scalars); Softmax-1's axis is unsigned: ranks other than 3 on axis 0."""
    rank, axis = attrs["$rank"], attrs["axis"]
    return rank > 0 and -rank <= axis < rank and (version > 1 or axis >= 0 or rank == 3)


@spec("Softmax", grid={"axis": [-1, 0, 1, 2], **RANK}, cover=("$rank",), where=_softmax_ok)
def softmax(c):
    return [c.data(RANKS[c.attrs["$rank"]])]


@spec("LogSoftmax", grid={"axis": [-1, 0, 1, 2], **RANK}, cover=("$rank",), where=_softmax_ok)
def log_softmax(c):
    return [c.data(RANKS[c.attrs["$rank"]])]


@spec("Round", grid={"mode": ["half_to_even", "half_away_from_zero"], **RANK}, cover=("$rank",))
def round_(c):
    shape = _shape(c)
    if c.t in FLOATS:  # halves, the values the modes differ on, and others
        halves = c.rng.integers(-10, 10, shape) / 2.0
        noise = np.where(c.rng.random(shape) < 0.5, 0.0, c.rng.uniform(-0.4, 0.4, shape))
        return [c.feed(halves + noise)]
    return [c.data(shape)]


def _special_floats(c):
    """Floats with infinities and NaNs among them."""
    shape = _shape(c)
    x = c.values(shape).astype(np.float64)
    pick = c.rng.random(shape)
    x[pick < 0.15] = np.inf
    x[(pick >= 0.15) & (pick < 0.3)] = -np.inf
    x[(pick >= 0.3) & (pick < 0.45)] = np.nan
    return c.feed(x)


@spec("IsFinite", grid=RANK, cover=("$rank",))
def is_finite(c):
    return [_special_floats(c) if c.t in FLOATS else c.data(_shape(c))]


@spec("IsNaN", grid=RANK, cover=("$rank",))
def is_nan(c):
    return [_special_floats(c) if c.t in FLOATS else c.data(_shape(c))]


@spec("IsInf", grid={"detect_negative": [True, False], "detect_positive": [True, False], **RANK}, cover=("$rank",))
def is_inf(c):
    return [_special_floats(c) if c.t in FLOATS else c.data(_shape(c))]


@spec("LogicalNot", grid=RANK, cover=("$rank",))
def logical_not(c):
    return [c.data(_shape(c))]


@spec("BitwiseNot", grid=RANK, cover=("$rank",))
def bitwise_not(c):
    return [c.data(_shape(c), lo=-100, hi=100)]


# --- binary ops --------------------------------------------------------------------------------

#: (shape of a, shape of b) per broadcast form, and the auto_broadcast modes each is valid in.
_FORMS = {"same": ((2, 3, 4), (2, 3, 4)), "numpy": ((2, 1, 4), (3, 1)), "scalar": ((2, 3), ()),
          "pdpd": ((2, 3, 4), (3, 4)),
          # two scalars (torch's 0-d arithmetic), a scalar first operand, 1-D against a column
          "scalars": ((), ()), "scalar_first": ((), (2, 3)), "vector": ((4,), (3, 1))}
_VALID = {"none": ("same", "scalars"), "numpy": ("same", "numpy", "scalar", "pdpd", "scalars", "scalar_first", "vector"),
          "pdpd": ("same", "scalar", "pdpd", "scalars")}
_BROADCAST = {"auto_broadcast": ["numpy", "none", "pdpd"], "$shapes": list(_FORMS)}


def _broadcast_ok(attrs, version):
    return attrs["$shapes"] in _VALID[attrs.get("auto_broadcast", "numpy")]


def _binary(op: str, make, grid=None, **kwargs):
    spec(op, grid={**_BROADCAST, **(grid or {})}, where=_broadcast_ok, **kwargs)(make)


def _pair(lo=-4, hi=4, blo=None, bhi=None, nonzero=False):
    def make(c):
        sa, sb = _FORMS[c.attrs["$shapes"]]
        a = c.data(sa, lo=lo, hi=hi)
        b = c.data(sb, lo=lo if blo is None else blo, hi=hi if bhi is None else bhi)
        if nonzero:  # a divisor: no zeros (integer division by zero is undefined)
            v = b.value
            b.value = np.where(v == 0, np.ones_like(v), v)
        return [a, b]
    return make


for _op in ("Add", "Subtract", "Multiply", "Maximum", "Minimum", "SquaredDifference", "Equal", "NotEqual",
            "Less", "LessEqual", "Greater", "GreaterEqual"):
    _binary(_op, _pair())
_binary("Divide", _pair(-20, 20, -5, 5, nonzero=True), grid={"m_pythondiv": [True, False]})
_binary("Mod", _pair(-20, 20, -5, 5, nonzero=True))
_binary("FloorMod", _pair(-20, 20, -5, 5, nonzero=True))
for _op in ("LogicalAnd", "LogicalOr", "LogicalXor", "BitwiseAnd", "BitwiseOr", "BitwiseXor"):
    _binary(_op, _pair(-100, 100))


def _power(c):
    sa, sb = _FORMS[c.attrs["$shapes"]]
    if c.t in FLOATS:
        return [c.data(sa, lo=0.1, hi=3), c.data(sb, lo=-2, hi=2)]
    return [c.data(sa, lo=-3, hi=3), c.data(sb, lo=0, hi=3)]


_binary("Power", _power)


def _shift(c):
    sa, sb = _FORMS[c.attrs["$shapes"]]
    bits = 8 if c.t in ("i8", "u8", "boolean") else 16 if c.t in ("i16", "u16") else 32
    return [c.data(sa, lo=-100, hi=100), c.data(sb, lo=0, hi=bits - 1)]


_binary("BitwiseLeftShift", _shift, types={"T": INTEGERS + ("boolean",) + FLOATS})
_binary("BitwiseRightShift", _shift, types={"T": INTEGERS + ("boolean",) + FLOATS})


@spec("Select", grid=_BROADCAST, where=_broadcast_ok, types={"T": ALL})
def select(c):
    sa, sb = _FORMS[c.attrs["$shapes"]]
    return [c.data(sa, "boolean"), c.data(sa), c.data(sb)]
