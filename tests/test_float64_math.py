"""Unary math on f64 data, which onnxruntime computes in f32 only (issue 20): every such op converts
to a model onnxruntime loads, or is refused with one line (Erf). Before, the converter wrote models
onnxruntime refused to load (``Could not find an implementation for Tan(7)``).

OpenVINO's reference has no f64 kernel for these ops (``Model.evaluate`` fails; it has one for
SoftSign), and its CPU plugin computes f64 layers in f32. The converted models compute in f64: the
expected values are the reference's own definitions in double, the C library's functions
(numpy's, glibc's) and the reference's formulas, which the results must match within 4 ulps over
inputs that cross each range split of the f64 forms (handlers/float64.py); and OpenVINO's CPU
plugin within f32 rounding where f32 holds the values."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

import openvino as ov  # noqa: E402  (the test extra installs it)
import openvino.opset1 as o1  # noqa: E402
import openvino.opset4 as o4  # noqa: E402
import openvino.opset5 as o5  # noqa: E402
import openvino.opset7 as o7  # noqa: E402
import openvino.opset9 as o9  # noqa: E402

from converters.ir import IRError  # noqa: E402
from ir_testing import assert_close, convert, evaluate_ir_cpu, run_onnx, save_ir  # noqa: E402

_R = np.random.default_rng(64)
#: Values around every split of the forms (0.5 ln 2, 1, 2, 22, 2^28, e^x's overflow at 709.78,
#: sinh's at 710.48), tiny and huge ones, the bounds of the inverse functions, inf and NaN.
_EDGES = [0.0, -0.0, 1e-300, 2.0**-60, 1e-17, 1e-8, 1e-3, 0.1, 0.3465, 0.3466, 0.5, 0.9, 0.999999, 1.0,
          1.0000001, 1.5, 2.0, 2.0000001, 3.0, 10.0, 21.9, 22.0, 22.1, 100.0, 709.7, 709.79, 710.0, 710.47, 711.0,
          2.0**28, 2.0**28 + 1, 1e10, 1e300, np.inf, np.nan]


def _values(lo: float = -30.0, hi: float = 30.0, n: int = 400) -> np.ndarray:
    spread = np.concatenate([_R.uniform(lo, hi, n), np.exp(_R.uniform(-40, 6, n)) * _R.choice([-1, 1], n)])
    return np.concatenate([spread, _EDGES, np.negative(_EDGES)]).astype(np.float64)


def _unit() -> np.ndarray:
    near = 1 - np.exp(_R.uniform(-36, -1, 200))
    return np.concatenate([_R.uniform(-1, 1, 300), near, -near, _EDGES, np.negative(_EDGES)]).astype(np.float64)


def C(v):
    return o1.constant(np.asarray(v, np.float64))


def _em1(x):
    return np.exp(x) - 1.0  # as the reference writes it: std::exp(x) - 1


def _clip6(x):
    return np.minimum(np.maximum(x + 3.0, 0.0), 6.0)


def _softplus(x):
    with np.errstate(over="ignore"):
        return np.where(x < np.log(np.finfo(np.float64).max), np.log(np.exp(x) + 1.0), x)


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * np.power(x, 3))))


#: op -> (the layer, inputs, the reference's definition in double)
OPS = {
    "Tan": (o1.tan, _values(-8, 8), np.tan), "Asin": (o1.asin, _unit(), np.arcsin),
    "Acos": (o1.acos, _unit(), np.arccos), "Atan": (o1.atan, _values(), np.arctan),
    "Sinh": (o1.sinh, _values(-720, 720), np.sinh), "Cosh": (o1.cosh, _values(-720, 720), np.cosh),
    "Asinh": (o4.asinh, _values(-1e3, 1e3), np.arcsinh), "Acosh": (o4.acosh, _values(0, 50) + 1.0, np.arccosh),
    "Atanh": (o4.atanh, _unit(), np.arctanh),
    # (coefficients that f32 holds: OpenVINO's Python API rounds them to f32)
    "Elu": (lambda x: o1.elu(x, 0.75), _values(), lambda x: np.where(x < 0, 0.75 * _em1(x), x)),
    "Selu": (lambda x: o1.selu(x, C([1.625]), C([1.0625])), _values(),
             lambda x: np.where(x > 0, 1.0625 * x, 1.625 * 1.0625 * _em1(x))),
    "HardSigmoid": (lambda x: o1.hard_sigmoid(x, C(0.3125), C(0.375)), _values(),
                    lambda x: np.maximum(0.0, np.minimum(1.0, 0.3125 * x + 0.375))),
    "HSigmoid": (o5.hsigmoid, _values(-8, 8), lambda x: _clip6(x) / 6.0),
    "HSwish": (o4.hswish, _values(-8, 8), lambda x: x * _clip6(x) / 6.0),
    "SoftPlus": (o4.softplus, _values(-800, 800), _softplus),
    "SoftSign": (o9.softsign, _values(), lambda x: x / (1.0 + np.abs(x))),
    "Mish": (o4.mish, _values(-50, 50), lambda x: x * np.tanh(np.log(np.exp(x) + 1.0))),
    "Gelu-tanh": (lambda x: o7.gelu(x, "tanh"), _values(-10, 10), _gelu_tanh),
}


#: Where the CPU plugin's comparison draws its inputs (well inside the domains: f32 math is
#: ill-conditioned near their bounds).
CPU_DOMAIN = {"Asin": (-0.9, 0.9), "Acos": (-0.9, 0.9), "Atanh": (-0.9, 0.9), "Acosh": (1.1, 50.0), "Tan": (-1.4, 1.4)}


@pytest.mark.parametrize("op", sorted(OPS))
def test_f64_unary_matches_reference(op, tmp_path):
    build, x, definition = OPS[op]
    p = o1.parameter([-1], np.float64, name="x")
    xml = save_ir(ov.Model([build(p)], [p], op), tmp_path)
    model = convert(xml)
    ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])  # loads
    got = run_onnx(model, [x])[0]
    with np.errstate(all="ignore"):
        # Gelu's 1 + tanh(z) and Elu's e^x - 1 cancel: an ulp of tanh or exp there is many of the result
        atol = 8 * np.finfo(np.float64).eps * (np.abs(x) if op.startswith("Gelu") else 2.0 if "lu" in op else 0.0)
        assert_close(got, definition(x), op, ulps=4, atol=atol)
    # OpenVINO's CPU plugin computes f64 layers in f32: the same within f32 rounding, on inputs f32 holds
    lo, hi = CPU_DOMAIN.get(op, (-5.0, 5.0))
    x32 = _R.uniform(lo, hi, 300).astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(run_onnx(model, [x32])[0], evaluate_ir_cpu(xml, [x32])[0], rtol=1e-5, atol=1e-6,
                               err_msg=f"{op} vs the CPU plugin")


@pytest.mark.parametrize("build", [o1.erf, lambda x: o7.gelu(x, "erf")], ids=["Erf", "Gelu-erf"])
def test_f64_erf_is_refused_with_one_line(build, tmp_path):
    p = o1.parameter([3], np.float64, name="x")
    xml = save_ir(ov.Model([build(p)], [p], "erf"), tmp_path)
    with pytest.raises(IRError, match=r"(Erf|Gelu).*no (f64 )?Erf.*f64") as info:
        convert(xml)
    assert "\n" not in str(info.value)
