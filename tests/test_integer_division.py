"""Integer division semantics of Divide (``m_pythondiv`` true and false), FloorMod and Mod against
OpenVINO's reference (issue 20): every integer type, signed values of every sign combination and the
types' extremes (not a zero divisor, not the minimum over -1: undefined in C++ and in onnxruntime).

Divide with ``m_pythondiv`` (the default) floors, as OpenVINO's reference does; its CPU plugin
truncates (README, deliberate differences): torch's ``div(rounding_mode="trunc")`` on integers comes
out of OpenVINO's PyTorch frontend as such a Divide after ConvertPromoteTypes-14, so onnxruntime
gives the reference's floor where torch and the CPU plugin give the truncation.
"""

from __future__ import annotations

import numpy as np
import pytest

import openvino as ov  # noqa: E402  (the test extra installs it)
import openvino.opset1 as o1  # noqa: E402
import openvino.opset14 as o14  # noqa: E402
from openvino.utils.node_factory import NodeFactory  # noqa: E402

from ir_testing import (assert_close, convert, evaluate_ir, evaluate_ir_cpu, evaluate_model, run_onnx,  # noqa: E402
                        save_ir)

TYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
OPS = ["Divide-pythondiv", "Divide-trunc", "FloorMod", "Mod"]


def _operands(et: str) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of a few small values and the type's extremes, divisors non-zero, no min / -1."""
    dtype = np.dtype({"i": "int", "u": "uint"}[et[0]] + et[1:])
    info = np.iinfo(dtype)
    small = [0, 1, 2, 3, 5, 7, 8, 100] + ([-1, -2, -3, -5, -7, -8, -100] if info.min < 0 else [])
    values = [v for v in small if info.min <= v <= info.max] + [info.max, info.max - 1, info.min, info.min + 1]
    a, b = np.array(values, dtype=object)[:, None], np.array(values, dtype=object)[None, :]
    a, b = np.broadcast_arrays(a, b)
    keep = (b != 0) & ~((a == info.min) & (b == -1))
    return a[keep].astype(dtype), b[keep].astype(dtype)


def _layer(op: str, x, y):
    if op == "FloorMod":
        return o1.floor_mod(x, y)
    if op == "Mod":
        return o1.mod(x, y)
    return NodeFactory("opset1").create("Divide", [x.output(0), y.output(0)],
                                        {"m_pythondiv": op == "Divide-pythondiv", "auto_broadcast": "numpy"})


def _definition(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """What the reference's templates compute, in exact integers: Divide floors (pythondiv) or truncates
    (C's /), FloorMod takes the divisor's sign (x - y floor(x/y)), Mod the dividend's (C's %)."""
    def one(x: int, y: int) -> int:
        if op == "Divide-pythondiv":
            return x // y
        trunc = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        return trunc if op == "Divide-trunc" else x % y if op == "FloorMod" else x - trunc * y
    return np.array([one(int(x), int(y)) for x, y in zip(a, b)], dtype=object).astype(a.dtype)


#: Type x op pairs OpenVINO's reference has no kernel for (``Model.evaluate`` fails).
def _reference_runs(op: str, et: str) -> bool:
    return et in ("i32", "i64", "u32", "u64") or (op == "Mod" and et in ("i8", "i16", "u8", "u16"))


@pytest.mark.parametrize("et", TYPES)
@pytest.mark.parametrize("op", OPS)
def test_integer_division_matches_reference(op, et, tmp_path):
    """Exact for every value; the same as the reference where it runs the type, on every value but
    i64 FloorMod's beyond 2^53, which the reference computes through double (1 floormod -2^63 is
    -2^63 + 1, the reference says -2^63: README, deliberate differences)."""
    a, b = _operands(et)
    x, y = (o1.parameter([-1], getattr(ov.Type, et), name=n) for n in ("x", "y"))
    xml = save_ir(ov.Model([_layer(op, x, y)], [x, y], op), tmp_path)
    got = run_onnx(convert(xml), [a, b])[0]
    assert_close(got, _definition(op, a, b), f"{op} {et}")
    if _reference_runs(op, et):
        want = evaluate_ir(xml, [a, b])[0]
        exact = np.ones(len(a), bool) if op != "FloorMod" or et != "i64" else \
            (np.abs(a.astype(np.float64)) < 2.0**53) & (np.abs(b.astype(np.float64)) < 2.0**53)
        assert_close(got[exact], want[exact], f"{op} {et} (reference)")


@pytest.mark.parametrize("types", [("i32", "i64"), ("i64", "i32"), ("u8", "i32"), ("i8", "u8"), ("i32", "f32")])
def test_promoted_division_matches_reference(types, tmp_path):
    """torch's integer division: ConvertPromoteTypes-14 of mixed types, then Divide (pythondiv). The
    reference has no ConvertPromoteTypes: it runs the same Divide on the inputs converted to the type
    the IR says the promotion gives (or, where it has no Divide of that type, the definition)."""
    x, y = (o1.parameter([-1], getattr(ov.Type, t), name=n) for t, n in zip(types, ("x", "y")))
    promoted = o14.convert_promote_types(x, y, promote_unsafe=True)
    et = promoted.get_output_element_type(0)
    xml = save_ir(ov.Model([o1.divide(promoted.output(0), promoted.output(1))], [x, y], "promoted"), tmp_path)
    rng = np.random.default_rng(len(types[0]) + len(types[1]))
    a, b = _values(types[0], rng), _values(types[1], rng)
    b[b == 0] = 3
    got = run_onnx(convert(xml), [a, b])[0]
    same = ov.Model([o1.divide(o1.convert(x, et), o1.convert(y, et))], [x, y], "converted")
    if et.is_real() or et.get_type_name() in ("i32", "i64", "u32", "u64"):
        want = evaluate_model(same, [a, b])[0]
    else:
        want = _definition("Divide-pythondiv", a.astype(got.dtype), b.astype(got.dtype))
    assert_close(got, want, str(types))


def _values(et: str, rng) -> np.ndarray:
    dtype = np.dtype({"i": "int", "u": "uint", "f": "float"}[et[0]] + et[1:])
    lo = 0 if et[0] == "u" else -50
    return rng.integers(lo, 50, 64).astype(dtype)


def test_pythondiv_floors_where_the_cpu_plugin_truncates(tmp_path):
    """The deliberate difference: the reference floors (and so do we), the CPU plugin truncates."""
    x, y = (o1.parameter([-1], ov.Type.i64, name=n) for n in ("x", "y"))
    xml = save_ir(ov.Model([o1.divide(x, y)], [x, y], "div"), tmp_path)
    a, b = np.array([-7, 7, -7], np.int64), np.array([2, -2, -2], np.int64)
    got = run_onnx(convert(xml), [a, b])[0]
    np.testing.assert_array_equal(got, evaluate_ir(xml, [a, b])[0])
    np.testing.assert_array_equal(got, [-4, -4, 3])
    np.testing.assert_array_equal(evaluate_ir_cpu(xml, [a, b])[0], [-3, -3, 3])
