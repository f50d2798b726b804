"""Range-4: the op's record (checks, body selection). Bodies: ``exact.py`` (onnxscript) and ``fast.py``
(``FastRange``, input types known); numpy reference: ``reference.py``.

OpenVINO: Range-4(start, stop, step; output_type) -> 1-D tensor of output_type.
start, stop and step are scalars (0-d) of any numeric types, which may differ.

- Float output: the count is ceil((stop - start) / step) computed in double from
  the inputs (0 when the step points away from stop); element i is
  f(start) + f(i) * f(step) computed in f = f64 for f64 output, f32 for f32, f16
  and bf16 output (then rounded to the output type). No accumulation.
- Integer output: start, stop and step are truncated toward zero; the count is
  ceil((stop - start) / step) over the integers; element i is
  T(start) + i * T(step) with the wrap-around of T (u8 from 250 to 260 gives
  250..255, 0..3), T(x) being x modulo 2^bits.
- NaN or infinite start, stop or step fail; so does a zero step (after
  truncation for integer output).

Deliberate differences from OpenVINO's reference (node.evaluate):
- Integer output is exact for every int64/uint64 value (and any mix of them);
  the reference goes through double and loses integers beyond 2^53
  (i64 (2^53+1, 2^53+10, 3) starts at 2^53; u64 (2^64-3, 2^64-1, 1) is empty).
- A step that is zero after truncation (0.5 with integer output) fails here;
  the reference returns an empty tensor (the spec calls it undefined).
- Float inputs beyond [-2^63, 2^64) with integer output fail here; the reference
  converts them with undefined C++ casts. Within that interval, values that do
  not fit the output type wrap modulo 2^bits; the reference agrees where its
  casts wrap too (8/16-bit output: |x| < 2^31; u32: |x| < 2^63; u64: all) and
  gives INT_MIN for i32/i64 out of range.
- bf16 output: the reference rounds f32 to bf16 with its own non-IEEE rounding;
  ONNX Cast rounds to nearest even, so bf16 values may differ by one bf16 ulp.
- A count that does not fit int64 fails; the reference truncates it to 32 bits.

Runtime failures name the check that failed (``start_is_finite``,
``step_is_not_zero``, ``range_size_fits_int64``, ...): onnxruntime quotes the
node name in its message. Constant inputs are checked when the node is built.

Bodies (overloads, chosen from output_type and the input types; no Loop):
``float`` (f32, f64: arithmetic in the output type), ``half`` (f16, bf16: f32,
then Cast); for integer output ``signed`` (integer inputs that fit int64),
``unsigned`` (unsigned inputs) and ``integer`` (anything: floats, uint64 mixed
with signed, unknown types), each also as ``*_i64`` for int64 output, which ends
without a Cast. Integer values come from onnxruntime's own Range when it is exact
(|start| and count * |step| <= 2^52), else from i * step + start in int64. The
public ``Range`` (what onnxscript users call) branches on output_type at run time.
With the input types known (always, from an IR): ``FastRange``, whose If chooses the exact body for huge
values; int64 output with a constant step of 1..64 and integer start and stop (position ids, arange(n)):
``SmallStepRange``, Clip and Range with no If (OpenVINO's CPU plugin computes a wrong first inference per
input shape after an If: docs/spec-corrections.md).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import OpInputError
from ...types import NUMERIC_TYPES, from_onnx
from ..base import Attr, Bodies, OpSpec, Operand
from .exact import EXACT, HELPERS, Range, exact_overload
from .fast import FastRange, SmallStepRange, small_step_direction
from .reference import (
    INPUTS,
    check_value,
    element_count,
    output_element_type,
    range_length,
    range_reference,
    scalar_value,
)

__all__ = ["SPEC", "FastRange", "Range", "SmallStepRange", "range_length", "range_reference"]


def check_attributes(attrs: dict) -> dict:
    output_element_type(attrs["output_type"])
    return attrs


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    et = output_element_type(attrs["output_type"])
    for name, o in zip(INPUTS, operands):
        if o.type is not None and o.type not in NUMERIC_TYPES:
            raise OpInputError("Range", f"{name} must be numeric (f16, bf16, f32, f64, i8..u64), got {o.type.ov}")
        shape = o.shape if o.value is None else np.shape(o.value)
        if shape is not None and len(shape) != 0:
            raise OpInputError("Range", f"{name} must be a scalar (0-d), got shape {list(shape)}")
    # Known values: reject now what would fail at run time, with a clear message.
    known = [None if o.value is None else scalar_value(name, o.value) for name, o in zip(INPUTS, operands)]
    for name, v in zip(INPUTS, known):
        if v is not None:
            check_value(name, v, et)
    if all(v is not None for v in known):
        element_count(*known, et)


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    et = output_element_type(attrs["output_type"])
    types = [o.type for o in operands]
    if all(t is not None and t.kind != "bool" for t in types):
        direction = small_step_direction(et, types, operands[2].value)
        if direction is not None:
            return SmallStepRange(direction, *types).name
        start = None if operands[0].value is None else scalar_value(INPUTS[0], operands[0].value)
        constant_start = None if start is None or not et.is_float else "from0" if start == 0 else "offset"
        return FastRange(et, exact_overload(et, types), *types, constant_start).name
    return exact_overload(et, types)


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    """1-D; its length when start, stop and step are constants."""
    if all(o.value is not None for o in operands):
        return (range_length(*(o.value for o in operands), attrs["output_type"]),)
    return (None,)


def openvino_node(attrs: dict, inputs: list):
    from openvino import Type
    from openvino.opset4.ops import range as range4  # openvino.opset4.range is Range-1

    return range4(*inputs, output_type=getattr(Type, from_onnx(attrs["output_type"]).ov))


SPEC = OpSpec(
    name="Range",
    inputs=INPUTS,
    min_inputs=3,
    attributes={"output_type": Attr("int")},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: from_onnx(attrs["output_type"]),
    output_shape=output_shape,
    bodies=Bodies(Range, EXACT, [FastRange, SmallStepRange]),
    helpers=HELPERS,
    public=Range,
    reference=range_reference,
    openvino=openvino_node,
)
