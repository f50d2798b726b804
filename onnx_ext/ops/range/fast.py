"""Range-4's fast bodies, when the input types are known: the ``FastRange`` family."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np
import onnx
from onnxscript import INT64

from ...domain import ov_ext
from ...types import NUMERIC_TYPES, ElementType, from_ov
from ..base import Overload, words
from ..builder import BodyBuilder
from .exact import EXACT, exact_overload
from .reference import INPUTS

#: With start at run time, float ranges of this many elements or more test start == 0.
_LARGE = 2**16
#: Range's compute type and bound of |start|, |stop|, |step| per integer output type
#: (onnxruntime computes limit - start in T, promoted to int for int16).
_INT_RANGE = {"i64": ("i64", 2**31), "i32": ("i32", 2**30), "i16": ("i16", 2**15)}
_TYPE = words({t.ov: t for t in NUMERIC_TYPES})


@dataclass(frozen=True)
class FastRange(Overload):
    """Range-4(start, stop, step: scalars of the types ``start``, ``stop``, ``step``; output_type ``output``).

    A few scalar ops check that the values are small, finite and the step non-zero; then onnxruntime's
    Range gives Range-4's values, which it does exactly there (docs/onnxruntime.md#range-kernel):

    - integer output: start, stop and step (truncated toward zero) each of magnitude < B; Range in
      int64 (B = 2^31), int32 (2^30: also for 8-bit and unsigned output, then Cast, which wraps as
      Range-4 does) or int16 (start and stop in [-2^15, 2^15), |step| < 2^15);
    - float output: q = (stop - start) / step in double (|q| < 2^24, or 2^31 for f64, and step
      finite), count = ceil(q); Range(0, count, 1) in f (f32, or f64 for f64 output) gives i
      exactly, then f(start) + i * f(step) in f. With start 0 that is i * f(step), save the sign of
      a zero: one pass over the output fewer. ``constant_start`` says what the converter knew of
      start: ``from0`` (the constant +0 or -0: Range and Mul, no Add, which onnxruntime would drop
      when start is a constant 0, turning +0 + -0 into -0: docs/onnxruntime.md#noop-elimination),
      ``offset`` (a constant other than 0: Range, Mul and Add); None (start at run time): Range,
      Mul and Add below _LARGE elements, and above it an If on start == 0.

    Anything else (huge values, non-finite inputs, a zero step) runs the exact body ``exact`` (the
    one that serves these types) in the If's other branch, which raises the named errors. Each body
    checks what it assumes and is right for any inputs.
    """

    SPELLING = "fast_{output}_{exact}_{start}_{stop}_{step}[_{constant_start}]"
    output: Annotated[ElementType, _TYPE]
    exact: Annotated[str, words(tuple(EXACT))]
    start: Annotated[ElementType, _TYPE]
    stop: Annotated[ElementType, _TYPE]
    step: Annotated[ElementType, _TYPE]
    constant_start: Annotated[str | None, words(("from0", "offset"))] = None

    def valid(self) -> bool:
        types = (self.start, self.stop, self.step)
        return exact_overload(self.output, types) == self.exact and (
            self.constant_start is None or self.output.is_float)

    def build(self, g: BodyBuilder) -> str:
        et, types = self.output, (self.start, self.stop, self.step)
        f64 = from_ov("f64")
        sd, ed, td = (x if t == f64 else g("Cast", x, to=f64.onnx) for x, t in zip(INPUTS, types))
        if et.is_float:
            return _float_fast(g, et, self.exact, types, self.constant_start, sd, ed, td)
        return _int_fast(g, et, self.exact, types, sd, ed, td)


def _float_fast(g: BodyBuilder, et: ElementType, exact: str, types, start: str | None, sd: str, ed: str,
                td: str) -> str:
    """Float output: count in double, i * step (+ start) in f32 or f64."""
    f64 = from_ov("f64")
    c = f64 if et.ov == "f64" else from_ov("f32")
    limit = 2.0**31 if c == f64 else 2.0**24
    if f64 in types:
        # f64 inputs through a Gather at an index 0 that depends on every input (Less(x, x) is False for
        # NaN too): none is a lone constant unless all are (docs/onnxruntime.md#noop-elimination).
        total = g("Sum", sd, ed, td)
        zero = g("Cast", g("Less", total, total), to=INT64.dtype)
        sd, ed, td = (g("Gather", g("Reshape", x, g.const([1])), zero) if t == f64 else x
                      for x, t in zip((sd, ed, td), types))
    q = g("Div", g("Sub", ed, sd), td)
    abs_q = g("Abs", g("Add", q, g("Sub", td, td)))  # NaN if step is inf; inf, NaN fail every Less below
    # Inside the Ifs each input goes by one name: the input itself where it already has the compute
    # type f32, else its double (docs/onnxruntime.md#cast-elimination).
    v = [x if t == c and c != f64 else xd for x, xd, t in zip(INPUTS, (sd, ed, td), types)]
    ok = None if start is None else g("Less", abs_q, g.const(limit, np.float64))
    if start == "offset":
        fast = g.branch()
        y = _float_values(fast, q, v, types, et, c, from_zero=False)
        return _or_exact(g, et, exact, ok, fast, y, v)
    if start == "from0":
        fast = g.branch()
        y = _float_values(fast, q, v, types, et, c, from_zero=True)
        ok = g("And", ok, g("Equal", sd, g.const(0.0, np.float64)))
        return _or_exact(g, et, exact, ok, fast, y, v)
    # Start at run time: one If for small ranges, where the If and scalar ops cost more than
    # the pass over the output that a start of 0 saves; large ones choose in a nested If.
    small = g("Less", abs_q, g.const(float(_LARGE), np.float64))
    fast_small = g.branch()
    y_small = _float_values(fast_small, q, v, types, et, c, from_zero=False)
    large = g.branch()
    fast = large.branch()
    from0, offset = fast.branch(), fast.branch()
    y = fast.if_(fast("Equal", v[0], _zero_like(fast, v[0], c)),
                 from0, _float_values(from0, q, v, types, et, c, from_zero=True),
                 offset, _float_values(offset, q, v, types, et, c, from_zero=False))
    y_large = _or_exact(large, et, exact, large("Less", abs_q, large.const(limit, np.float64)), fast, y, v)
    return g.if_(small, fast_small, y_small, large, y_large)


def _int_fast(g: BodyBuilder, et: ElementType, exact: str, types, sd: str, ed: str, td: str) -> str:
    """Integer output: onnxruntime's Range in int64, int32 or int16 where it is exact."""
    names = list(INPUTS)
    fast = g.branch()
    r_name, bound = _INT_RANGE.get(et.ov, ("i32", 2**30))
    r = from_ov(r_name)
    # |step| is bounded for a Cast to int32/int16 and for float steps (Floor below); any int64
    # step serves Range in int64 (its quotient and sums stay within start and stop)
    abs_t = g("Abs", td) if r.ov != "i64" or types[2].is_float else None
    a = [g("Abs", sd), g("Abs", ed)] if r.ov != "i16" else []
    # 1 / max(0, (stop - start) * step) is inf for an empty range or a zero step: the exact
    # body then (OpenVINO's Range, reading the inlined model, counts |stop - start| / |step|
    # and would not see an empty range); 1 / floor(|step|) is inf for a float step that
    # truncates to 0. Max propagates NaN; comparisons with NaN are False.
    inv = [g("Reciprocal", g("Relu", g("Mul", g("Sub", ed, sd), td)))]
    if types[2].is_float:
        inv.append(g("Reciprocal", g("Floor", abs_t)))
    if abs_t is not None:
        a.append(abs_t)
    if r.ov == "i16":  # every int16 value: start and stop in [-2^15, 2^15), |step| < 2^15
        hi = g("Less", g("Max", sd, ed, *a, *inv), g.const(float(bound), np.float64))
        ok = g("And", hi, g("GreaterOrEqual", g("Min", sd, ed), g.const(-float(bound), np.float64)))
    else:
        ok = g("Less", g("Max", *a, *inv), g.const(float(bound), np.float64))
    y = fast("Range", *(x if t == r else fast("Cast", x, to=r.onnx) for x, t in zip(names, types)))
    if et != r:
        y = fast("Cast", y, to=et.onnx)
    return _or_exact(g, et, exact, ok, fast, y)


def _float_values(b: BodyBuilder, q: str, v, types, et: ElementType, c: ElementType, from_zero: bool) -> str:
    """f(i) * f(step) + f(start) for i < ceil(q), in f = c, then cast to the output type; ``v``:
    start, stop, step as the Ifs read them (c, or double).
    ``from_zero`` (start is +0 or -0): no Add. Element 0 is then start + 0 * step, which is -0
    only for -0 with step < 0, while i * step gives -0 for any step < 0: so (-i) * (-step) there."""
    # (Relu: OpenVINO's Range, reading the inlined model, counts |stop - start| / |step|)
    count = b("Cast", b("Relu", b("Ceil", q)), to=c.onnx)

    def in_c(x: str) -> str:  # v[i] in the compute type
        return x if x in INPUTS or c == from_ov("f64") else b("Cast", x, to=c.onnx)

    if from_zero:
        plus_zero_start = b("Greater", b("Reciprocal", v[0]), _zero_like(b, v[0], c))  # 1 / +0 = +inf
        d = b("Where", b("And", plus_zero_start, b("Less", v[2], _zero_like(b, v[2], c))),
              b.const(-1, c.numpy), b.const(1, c.numpy))
        i = b("Range", b.const(0, c.numpy), b("Mul", count, d), d)  # 0, d, 2d, ...: exact
        y = b("Mul", i, b("Mul", in_c(v[2]), d))
    else:
        i = b("Range", b.const(0, c.numpy), count, b.const(1, c.numpy))
        y = b("Add", b("Mul", i, in_c(v[2])), in_c(v[0]))
    return y if et == c else b("Cast", y, to=et.onnx)


def _zero_like(b: BodyBuilder, x: str, c: ElementType) -> str:
    """The constant 0 of the type of ``x``, an input in the compute type c or a double."""
    return b.const(0.0, c.numpy if x in INPUTS else np.float64)


def _or_exact(host: BodyBuilder, et: ElementType, exact: str, ok: str, fast: BodyBuilder, y: str, v=INPUTS) -> str:
    """If(ok, the branch ``fast`` giving y, the exact body ``exact``), built in ``host``; the
    exact body reads v (each input, or its double: the float bodies work on the doubles)."""
    exact_path = host.branch()
    y_exact = exact_path.fresh("exact")
    exact_path.nodes.append(onnx.helper.make_node(EXACT[exact].name, list(v), [y_exact],
                                                  domain=ov_ext.domain, output_type=et.onnx))
    return host.if_(ok, fast, y, exact_path, y_exact)




#: The largest |step| the If-free body takes: a span |stop - start| past 2^53 (where onnxruntime's double count
#: may be off) then has at least 2^53 / 64 = 2^47 elements, which no machine allocates.
_SMALL_STEP = 64
_INTEGER_INPUTS = tuple(t for t in NUMERIC_TYPES if t.is_integer and t.ov != "u64")


@dataclass(frozen=True)
class SmallStepRange(Overload):
    """Range-4 with int64 output, integer start and stop (not uint64) and a step (any type) that truncates
    to 1..64 (``up``) or -64..-1 (``down``), the converter's choice for a constant step (position ids,
    arange(n)): one onnxruntime Range and no If (OpenVINO's CPU plugin computes a wrong first inference
    after an If: docs/spec-corrections.md).

    Range(start, stop', step) in int64 is exact when 0 <= (stop' - start) / step and |stop' - start| <=
    2^53 (onnxruntime counts ceil((stop' - start) / step) in double: then exactly, as the quotient of two
    exact doubles of a non-integer is at least 1/|step| from an integer). stop' clips stop to start (an
    empty range, which OpenVINO's Range, counting |stop - start| / |step|, needs) and to the int64 values
    beyond which stop' - start would overflow; a span past 2^53 has at least 2^47 elements, and onnxruntime
    fails (its count check, or the allocation), as it should. A step outside the direction's bounds fails
    its check.
    """

    SPELLING = "fast_i64_smallstep_{direction}_{start}_{stop}_{step}"
    direction: Annotated[str, words(("up", "down"))]
    start: Annotated[ElementType, words({t.ov: t for t in _INTEGER_INPUTS})]
    stop: Annotated[ElementType, words({t.ov: t for t in _INTEGER_INPUTS})]
    step: Annotated[ElementType, _TYPE]

    def build(self, g: BodyBuilder) -> str:
        i64 = from_ov("i64")
        s, e = (x if t == i64 else g("Cast", x, to=i64.onnx) for x, t in zip(INPUTS[:2], (self.start, self.stop)))
        td = INPUTS[2] if self.step.ov == "f64" else g("Cast", INPUTS[2], to=from_ov("f64").onnx)
        # |step| in [1, 65) with the direction's sign: truncated, 1..64 (NaN fails too)
        sign = 1.0 if self.direction == "up" else -1.0
        magnitude = g("Mul", td, g.const(sign, np.float64))
        ok = g("And", g("GreaterOrEqual", magnitude, g.const(1.0, np.float64)),
               g("Less", magnitude, g.const(_SMALL_STEP + 1.0, np.float64)))
        t = INPUTS[2] if self.step == i64 else g("Cast", INPUTS[2], to=i64.onnx)
        t = g("Add", t, g.check("step_fits_the_small_step_body", ok))
        limits = np.iinfo(np.int64)
        if self.direction == "up":  # stop' in [start, start + INT64_MAX - max(start, 0)]
            bounds = (s, g("Add", g("Min", s, g.const(0)), g.const(limits.max)))
        else:  # stop' in [start + INT64_MIN - min(start, 0), start]
            bounds = (g("Add", g("Max", s, g.const(0)), g.const(limits.min)), s)
        return g("Range", s, g("Clip", e, *bounds), t)


def small_step_direction(et: ElementType, types, step) -> str | None:
    """``up`` or ``down``: SmallStepRange serves int64 output from these input types and this step (a
    constant, or None); None: it does not."""
    if et.ov != "i64" or step is None or any(t not in _INTEGER_INPUTS for t in types[:2]):
        return None
    t = np.asarray(step).astype(np.float64)
    if not 1 <= abs(t) < _SMALL_STEP + 1:
        return None
    return "up" if t > 0 else "down"
