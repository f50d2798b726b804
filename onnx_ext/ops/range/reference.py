"""Range-4 in numpy, exact for every integer value, and the value checks the node checks share with it."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from ...errors import OpAttributeError, OpInputError
from ...types import NUMERIC_TYPES, ElementType, from_onnx

INPUTS = ("start", "stop", "step")


def range_reference(start, stop, step, output_type: int) -> np.ndarray:
    """Range-4 in numpy, exact for every integer value (see the module docstring)."""
    et = output_element_type(output_type)
    values = [scalar_value(name, v) for name, v in zip(INPUTS, (start, stop, step))]
    count = range_length(start, stop, step, output_type)
    if et.is_integer:
        s, t = math.trunc(values[0]), math.trunc(values[2])
        mask = (1 << 64) - 1
        i = np.arange(count, dtype=np.uint64)
        bits = np.uint64(s & mask) + i * np.uint64(t & mask)  # wraps modulo 2^64
        return bits.astype(et.numpy)
    s, t = float(values[0]), float(values[2])
    i = np.arange(count, dtype=np.int64)
    if et.numpy == np.float64:
        return np.float64(s) + i.astype(np.float64) * np.float64(t)
    with np.errstate(over="ignore"):  # beyond the output type's range: inf, as Cast gives
        return (np.float32(s) + i.astype(np.float32) * np.float32(t)).astype(et.numpy)


def range_length(start, stop, step, output_type: int) -> int:
    """The number of elements Range-4 gives, after the checks the bodies make."""
    et = output_element_type(output_type)
    values = [scalar_value(name, v) for name, v in zip(INPUTS, (start, stop, step))]
    for name, v in zip(INPUTS, values):
        check_value(name, v, et)
    return element_count(*values, et)


def scalar_value(name: str, value) -> int | float:
    """The value of a 0-d numeric input: a Python int (exact) or float."""
    a = np.asarray(value)
    if a.ndim != 0:
        raise OpInputError("Range", f"{name} must be a scalar (0-d), got shape {list(a.shape)}")
    if a.dtype.kind in "iu":
        return int(a)
    if a.dtype.kind == "f" or a.dtype == np.dtype(ml_dtypes.bfloat16):
        return float(a.astype(np.float64))
    raise OpInputError("Range", f"{name} must be numeric, got {a.dtype}")


def check_value(name: str, v: int | float, et: ElementType) -> None:
    if isinstance(v, float) and not math.isfinite(v):
        raise OpInputError("Range", f"{name} is {v}: must be finite")
    if et.is_integer and isinstance(v, float) and not -(2.0**63) <= v < 2.0**64:
        raise OpInputError("Range", f"{name} is {v}: with integer output_type it must lie in [-2^63, 2^64)")
    if name == "step" and (math.trunc(v) if et.is_integer else v) == 0:
        after = " after truncation toward zero (integer output_type)" if et.is_integer else ""
        raise OpInputError("Range", f"step is {v}: must not be 0{after}")


def element_count(start, stop, step, et: ElementType) -> int:
    if et.is_integer:
        s, e, t = math.trunc(start), math.trunc(stop), math.trunc(step)
        count = max(0, -((s - e) // t))  # ceil((e - s) / t), exact
    else:
        with np.errstate(over="ignore"):
            q = (np.float64(stop) - np.float64(start)) / np.float64(step)  # as the reference: in double
        count = math.ceil(max(float(q), 0.0)) if math.isfinite(q) else math.inf
    if count >= 2**63:
        raise OpInputError("Range", f"the output would have {count} elements: more than int64 can count")
    return int(count)


def output_element_type(code) -> ElementType:
    try:
        et = from_onnx(code)
    except ValueError:
        et = None
    if et not in NUMERIC_TYPES:  # (None, bool, 4-bit)
        raise OpAttributeError(
            "Range", "output_type", f"is {code}: must be a numeric ONNX element type (f16, bf16, f32, f64, i8..u64)"
        )
    return et
