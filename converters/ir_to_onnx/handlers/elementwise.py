"""Element-wise arithmetic, comparisons, logic, Select and unary math.

Binary ops take ``auto_broadcast`` numpy (ONNX's own broadcasting), none (equal
shapes: the same) or pdpd (the second input aligned at ``axis`` of the first:
reshaped to the first's rank, then numpy). Integer Divide with ``m_pythondiv``
(the default) floors like Python; FloorMod takes the divisor's sign, Mod the
dividend's.
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..kernels import compute_type
from ..registry import op_version, translator
from . import float64

_BOOL = from_ov("boolean")
_F64 = from_ov("f64")
#: OpenVINO's auto_broadcast names (its AutoBroadcastType; explicit is none).
AUTO_BROADCAST = ("none", "explicit", "numpy", "pdpd")


def binary_inputs(ctx: Context, layer) -> tuple[str, str, Value, Value]:
    """The two inputs, the second reshaped for pdpd broadcasting."""
    a, b = ctx.input(0), ctx.input(1)
    if attr.choice(ctx, layer, "auto_broadcast", AUTO_BROADCAST, "numpy") != "pdpd":
        return a.name, b.name, a, b
    axis = attr.integer(ctx, layer, "auto_broadcast.auto_broadcast_axis", 0)
    return a.name, pdpd_align(ctx, a, b, axis), a, b


def pdpd_align(ctx: Context, a: Value, b: Value, axis: int) -> str:
    """``b`` reshaped so that numpy broadcasting puts its dims at ``axis`` of ``a``
    (OpenVINO: trailing ones of b are dropped, then b is padded with ones)."""
    if a.rank is None or b.rank is None:
        raise ctx.error("pdpd broadcasting needs inputs of known rank")
    if axis == -1:
        axis = a.rank - b.rank
    dims = list(b.shape)
    while dims and dims[-1] == 1:
        dims.pop()
    k = len(dims)
    if axis < 0 or axis + k > a.rank:
        raise ctx.error(f"pdpd broadcasting of shape {list(b.shape)} into rank {a.rank} at axis {axis} is out of range")
    tail = a.rank - axis - k
    if axis == 0 and k == b.rank and tail == 0:
        return b.name
    if all(d is not None for d in dims):
        shape = ctx.i64([1] * axis + dims + [1] * tail)
    else:
        parts = [ctx.i64([1] * axis)] if axis else []
        parts.append(ctx.one("Shape", [b.name], end=k))
        if tail:
            parts.append(ctx.i64([1] * tail))
        shape = ctx.one("Concat", parts, axis=0)
    return ctx.one("Reshape", [b.name, shape])


#: The ops pdpd_align may emit (declared by the translators of binary ops).
_PDPD = ("Concat", "Reshape", "Shape")


def _by_type(table: dict, layer):
    """``table[layer.type]``, with OpenVINO's case-insensitive type names."""
    return {k.lower(): v for k, v in table.items()}[layer.type.lower()]


def _data_type(ctx: Context, v: Value):
    if v.type is None:
        raise ctx.error("an input has no element type")
    return v.type


# --- arithmetic -------------------------------------------------------------------

_ARITH = {"Add": ("Add", "bits"), "Subtract": ("Sub", "bits"), "Multiply": ("Mul", "bits"),
          "Power": ("Pow", "value")}


def _arith(ctx: Context, layer) -> None:
    onnx_op, kind = _by_type(_ARITH, layer)
    x, y, a, _ = binary_inputs(ctx, layer)
    ctx.emit(onnx_op, [x, y], _data_type(ctx, a), ctx.out(0), kind=kind)


for _op, (_onnx_op, _) in _ARITH.items():
    translator(_op, since=1, emits=(_onnx_op, *_PDPD))(_arith)


def _nan_free(v: Value) -> bool:
    return v.const is not None and not np.isnan(np.asarray(v.const, np.float64)).any()


@translator("Maximum", since=1, emits=("Cast", "Identity", "Less", "Max", "Where", *_PDPD))
@translator("Minimum", since=1, emits=("Cast", "Identity", "Less", "Min", "Where", *_PDPD))
def min_max(ctx: Context, layer) -> None:
    maximum = layer.type.lower() == "maximum"
    x, y, a, b = binary_inputs(ctx, layer)
    et = _data_type(ctx, a)
    if not et.is_float or _nan_free(b):
        ctx.emit("Max" if maximum else "Min", [x, y], et, ctx.out(0))
        return
    # OpenVINO's reference is `x < y ? y : x` (Minimum: `y < x ? y : x`): a NaN in x is kept, one in y
    # dropped; onnxruntime's Max and Min propagate both. (Signed zeros: onnxruntime's Where turns a -0 taken
    # from its first branch into +0.)
    less = ctx.emit("Less", [x, y] if maximum else [y, x], et, result_type=_BOOL)
    where(ctx, less, Value(y, et, None), Value(x, et, None), ctx.out(0))


@translator("SquaredDifference", since=1, emits=("Mul", "Sub", *_PDPD))
def squared_difference(ctx: Context, layer) -> None:
    x, y, a, _ = binary_inputs(ctx, layer)
    et = _data_type(ctx, a)
    d = ctx.emit("Sub", [x, y], et, kind="bits")
    ctx.emit("Mul", [d, d], et, ctx.out(0), kind="bits")


@translator("Divide", since=1, emits=("And", "Cast", "Div", "Equal", "Less", "Mul", "Not", "Sub", "Xor", *_PDPD))
def divide(ctx: Context, layer) -> None:
    x, y, a, _ = binary_inputs(ctx, layer)
    et = _data_type(ctx, a)
    if et.kind != "int" or not attr.boolean(layer, "m_pythondiv", True):
        ctx.emit("Div", [x, y], et, ctx.out(0))
        return
    # Floor division: truncate, then step down where the remainder is non-zero and
    # its sign differs from the divisor's.
    zero = ctx.const(np.zeros((), et.numpy))
    q = ctx.emit("Div", [x, y], et)
    r = ctx.emit("Sub", [x, ctx.emit("Mul", [q, y], et)], et)
    nonzero = ctx.one("Not", [ctx.emit("Equal", [r, zero], et, result_type=_BOOL)])
    signs_differ = ctx.one("Xor", [ctx.emit("Less", [r, zero], et, result_type=_BOOL),
                                   ctx.emit("Less", [y, zero], et, result_type=_BOOL)])
    step = ctx.cast(ctx.one("And", [nonzero, signs_differ]), _BOOL, et)
    ctx.emit("Sub", [q, step], et, ctx.out(0))


@translator("FloorMod", since=1, emits=("Cast", "Div", "Floor", "Identity", "Mod", "Mul", "Sub", *_PDPD))
def floor_mod(ctx: Context, layer) -> None:
    x, y, a, _ = binary_inputs(ctx, layer)
    et = _data_type(ctx, a)
    if et.is_integer:
        ctx.emit("Mod", [x, y], et, ctx.out(0), fmod=0)  # the divisor's sign, like Python
        return
    # OpenVINO computes x - y * floor(x / y) in double and rounds to the type once.
    xd, yd = ctx.cast(x, et, _F64), ctx.cast(y, et, _F64)
    fl = ctx.one("Floor", [ctx.one("Div", [xd, yd])])
    res = ctx.one("Sub", [xd, ctx.one("Mul", [yd, fl])])
    ctx.cast(res, _F64, et, ctx.out(0))


@translator("Mod", since=1, emits=("Div", "Mod", "Mul", "Sub", *_PDPD))
def mod(ctx: Context, layer) -> None:
    """The remainder with the dividend's sign (C fmod). onnxruntime's Mod(fmod=1) goes
    through double even for integers (wrong beyond 2^53): integers use x - trunc(x/y)*y."""
    x, y, a, _ = binary_inputs(ctx, layer)
    et = _data_type(ctx, a)
    if et.kind == "uint":
        ctx.emit("Mod", [x, y], et, ctx.out(0), fmod=0)  # no negative values: floor and trunc agree
    elif et.kind == "int":
        q = ctx.emit("Div", [x, y], et)  # integer Div truncates
        ctx.emit("Sub", [x, ctx.emit("Mul", [q, y], et, kind="bits")], et, ctx.out(0), kind="bits")
    else:
        ctx.emit("Mod", [x, y], et, ctx.out(0), fmod=1)


# --- comparisons and logic --------------------------------------------------------

_COMPARE = {"Equal": "Equal", "Less": "Less", "Greater": "Greater", "LessEqual": "LessOrEqual",
            "GreaterEqual": "GreaterOrEqual"}


def _compare(ctx: Context, layer) -> None:
    x, y, a, _ = binary_inputs(ctx, layer)
    ctx.emit(_by_type(_COMPARE, layer), [x, y], _data_type(ctx, a), ctx.out(0), result_type=_BOOL)


for _op, _onnx_op in _COMPARE.items():
    translator(_op, since=1, emits=(_onnx_op, *_PDPD))(_compare)


@translator("NotEqual", since=1, emits=("Equal", "Not", *_PDPD))
def not_equal(ctx: Context, layer) -> None:
    x, y, a, _ = binary_inputs(ctx, layer)
    eq = ctx.emit("Equal", [x, y], _data_type(ctx, a), result_type=_BOOL)
    ctx.one("Not", [eq], ctx.out(0))


_LOGIC = {"LogicalAnd": "And", "LogicalOr": "Or", "LogicalXor": "Xor"}


def _logic(ctx: Context, layer) -> None:
    x, y, a, b = binary_inputs(ctx, layer)
    x, y = ctx.cast(x, a.type, _BOOL), ctx.cast(y, b.type, _BOOL)
    ctx.one(_by_type(_LOGIC, layer), [x, y], ctx.out(0))


for _op, _onnx_op in _LOGIC.items():
    translator(_op, since=1, emits=(_onnx_op, "Cast", *_PDPD))(_logic)


@translator("LogicalNot", since=1, emits=("Cast", "Not"))
def logical_not(ctx: Context, layer) -> None:
    """On numeric data too: 1 where the input is 0, else 0, in the input's type (OpenVINO keeps it)."""
    v = ctx.input(0)
    if v.type == _BOOL:
        ctx.one("Not", [v.name], ctx.out(0))
        return
    ctx.cast(ctx.one("Not", [ctx.cast(v.name, v.type, _BOOL)]), _BOOL, v.type, ctx.out(0))


_BITWISE = {"BitwiseAnd": ("BitwiseAnd", "And"), "BitwiseOr": ("BitwiseOr", "Or"), "BitwiseXor": ("BitwiseXor", "Xor")}


def _bitwise(ctx: Context, layer) -> None:
    x, y, a, _ = binary_inputs(ctx, layer)
    et = _data_type(ctx, a)
    int_op, bool_op = _by_type(_BITWISE, layer)
    if et.kind == "bool":
        ctx.one(bool_op, [x, y], ctx.out(0))
    else:
        ctx.emit(int_op, [x, y], et, ctx.out(0), kind="bits")


for _op, _onnx_ops in _BITWISE.items():
    translator(_op, since=13, emits=(*_onnx_ops, *_PDPD))(_bitwise)


@translator("BitwiseNot", since=13, emits=("BitwiseNot", "Not"))
def bitwise_not(ctx: Context, layer) -> None:
    v = ctx.input(0)
    et = _data_type(ctx, v)
    ctx.one("Not" if et.kind == "bool" else "BitwiseNot", [v.name], ctx.out(0))


@translator("Select", since=1, emits=("Cast", "Identity", "Where"))
def select(ctx: Context, layer) -> None:
    cond, then, other = ctx.input(0), ctx.input(1), ctx.input(2)
    mode = attr.choice(ctx, layer, "auto_broadcast", AUTO_BROADCAST, "numpy")
    if mode == "pdpd":
        raise ctx.error(f"Select with auto_broadcast={mode!r} is not supported (numpy and none are)")
    where(ctx, ctx.cast(cond.name, cond.type, _BOOL), then, other, ctx.out(0))


def where(ctx: Context, c: str, then: Value, other: Value, output: str | None = None) -> str:
    """Where(c, then, other) for any element type (widened where onnxruntime has no kernel)."""
    et = _data_type(ctx, then)
    ct = compute_type("Where", et, "bits")
    if ct is None:
        raise ctx.error(f"onnxruntime has no Where kernel for {et.ov}")
    out = ctx.one("Where", [c, ctx.cast(then.name, et, ct), ctx.cast(other.name, et, ct)], None if ct != et else output)
    return ctx.cast(out, ct, et, output) if ct != et else out


# --- unary ------------------------------------------------------------------------

_UNARY_FLOAT = {"Sqrt": "Sqrt", "Exp": "Exp", "Log": "Log", "Sigmoid": "Sigmoid", "Tanh": "Tanh", "Erf": "Erf",
                "Sin": "Sin", "Cos": "Cos", "Tan": "Tan", "Asin": "Asin", "Acos": "Acos", "Atan": "Atan",
                "Sinh": "Sinh", "Cosh": "Cosh", "Asinh": "Asinh", "Acosh": "Acosh", "Atanh": "Atanh",
                "SoftPlus": "Softplus", "HSwish": "HardSwish", "Mish": "Mish", "SoftSign": "Softsign"}
# Asinh/Acosh/Atanh are version 3 ops that save_model writes as opset4.
_UNARY_SINCE = {"Asinh": 3, "Acosh": 3, "Atanh": 3, "SoftPlus": 4, "HSwish": 4, "Mish": 4, "SoftSign": 9}


def _unary_float(ctx: Context, layer) -> None:
    v = ctx.input(0)
    float64.unary(ctx, _by_type(_UNARY_FLOAT, layer), v.name, _data_type(ctx, v), ctx.out(0))


for _op, _onnx_op in _UNARY_FLOAT.items():
    _f64 = float64.EMITS if _onnx_op in float64.FORMS else ()
    translator(_op, since=_UNARY_SINCE.get(_op, 1), emits=tuple(sorted({_onnx_op, *_f64})))(_unary_float)


@translator("Abs", since=1, emits=("Abs",))
def abs_(ctx: Context, layer) -> None:
    v = ctx.input(0)
    ctx.emit("Abs", [v.name], _data_type(ctx, v), ctx.out(0))


@translator("Sign", since=1, emits=("Sign",))
def sign(ctx: Context, layer) -> None:
    v = ctx.input(0)
    ctx.emit("Sign", [v.name], _data_type(ctx, v), ctx.out(0))


@translator("Negative", since=1, emits=("Neg", "Sub"))
def negative(ctx: Context, layer) -> None:
    v = ctx.input(0)
    et = _data_type(ctx, v)
    if et.kind == "uint":  # wraps, as 0 - x
        ctx.emit("Sub", [ctx.const(np.zeros((), et.numpy)), v.name], et, ctx.out(0), kind="bits")
    else:
        ctx.emit("Neg", [v.name], et, ctx.out(0))


def _round_like(onnx_op: str):
    def translate(ctx: Context, layer) -> None:
        v = ctx.input(0)
        et = _data_type(ctx, v)
        if et.is_float:
            ctx.emit(onnx_op, [v.name], et, ctx.out(0))
        else:
            ctx.one("Identity", [v.name], ctx.out(0))
    return translate


translator("Floor", since=1, emits=("Floor", "Identity"))(_round_like("Floor"))
translator("Ceiling", since=1, emits=("Ceil", "Identity"))(_round_like("Ceil"))


@translator("Round", since=5, emits=("Abs", "Add", "Floor", "Identity", "Mul", "Round", "Sign"))
def round_(ctx: Context, layer) -> None:
    v = ctx.input(0)
    et = _data_type(ctx, v)
    if not et.is_float:
        ctx.one("Identity", [v.name], ctx.out(0))
        return
    if attr.choice(ctx, layer, "mode", ("half_to_even", "half_away_from_zero"), "half_to_even") == "half_to_even":
        ctx.emit("Round", [v.name], et, ctx.out(0))
    else:
        half = ctx.const(np.array(0.5, et.numpy))
        mag = ctx.emit("Floor", [ctx.emit("Add", [ctx.emit("Abs", [v.name], et), half], et)], et)
        ctx.emit("Mul", [ctx.emit("Sign", [v.name], et), mag], et, ctx.out(0))


@translator("ReLU", since=1, emits=("Identity", "Max", "Relu"))
def relu(ctx: Context, layer) -> None:
    v = ctx.input(0)
    et = _data_type(ctx, v)
    if et.is_float or et.ov in ("i8", "i32"):
        ctx.emit("Relu", [v.name], et, ctx.out(0))
    elif et.kind == "uint":
        ctx.one("Identity", [v.name], ctx.out(0))
    else:
        ctx.emit("Max", [v.name, ctx.const(np.zeros((), et.numpy))], et, ctx.out(0))


@translator("Clamp", since=1, emits=("Cast", "Clip", "Identity", "Less", "Where"))
def clamp(ctx: Context, layer) -> None:
    v = ctx.input(0)
    et = _data_type(ctx, v)
    lo, hi = attr.number(ctx, layer, "min", 0.0), attr.number(ctx, layer, "max", 0.0)  # absent: 0, as OpenVINO reads
    if et.is_integer:  # OpenVINO rounds the bounds inwards for integers
        info = np.iinfo(et.numpy)
        lo = int(min(max(np.ceil(lo), info.min), info.max))
        hi = int(max(min(np.floor(hi), info.max), info.min))
    if lo > hi:  # no integer in [min, max]: OpenVINO's x < min ? min : x > max ? max : x gives min or max
        below = ctx.emit("Less", [v.name, ctx.const(np.array(lo, et.numpy))], et, result_type=_BOOL)
        lo_v, hi_v = (Value(ctx.const(np.array(b, et.numpy)), et, ()) for b in (lo, hi))
        where(ctx, below, lo_v, hi_v, ctx.out(0))
        return
    ct = compute_type("Clip", et) or from_ov("f32")
    lo_c = ctx.const(np.array(lo).astype(ct.numpy))
    hi_c = ctx.const(np.array(hi).astype(ct.numpy))
    out = ctx.one("Clip", [ctx.cast(v.name, et, ct), lo_c, hi_c], ctx.out(0) if ct == et else None)
    if ct != et:
        ctx.cast(out, ct, et, ctx.out(0))


@translator("Elu", since=1, emits=("Elu", *float64.EMITS))
def elu(ctx: Context, layer) -> None:
    v = ctx.input(0)
    float64.unary(ctx, "Elu", v.name, _data_type(ctx, v), ctx.out(0), alpha=attr.number(ctx, layer, "alpha", 0.0))


@translator("HSigmoid", since=5, emits=("HardSigmoid", *float64.EMITS))
def hsigmoid(ctx: Context, layer) -> None:
    v = ctx.input(0)
    float64.unary(ctx, "HardSigmoid", v.name, _data_type(ctx, v), ctx.out(0), f64="HSigmoid", alpha=1.0 / 6.0,
                  beta=0.5)


@translator("Gelu", since=2, emits=("Gelu", *float64.EMITS))
def gelu(ctx: Context, layer) -> None:
    v = ctx.input(0)
    mode = "erf" if op_version(layer) < 7 else attr.choice(ctx, layer, "approximation_mode", ("erf", "tanh"), "erf")
    float64.unary(ctx, "Gelu", v.name, _data_type(ctx, v), ctx.out(0), approximate="none" if mode == "erf" else "tanh")
