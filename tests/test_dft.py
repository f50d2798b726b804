"""DFT-7, IDFT-7, RDFT-9, IRDFT-9 with run-time axes and signal sizes: the function (onnxruntime), the inlined
model and the numpy reference against OpenVINO's CPU plugin (its reference has no evaluate for these ops; the
plugin runs them with the same axes and sizes as constants: with run-time axes it crashes on RDFT and refuses
IRDFT) on random cases; the named checks; the schema; the translators; IR -> ONNX -> IR."""

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import EXAMPLES, check_inference, node_model, round_trip, run_three_ways
from ir_testing import convert, evaluate_model_cpu, parameter, run_onnx, save_ir
from onnx_ext.ops.dft import KINDS, spectral_reference
from ov_reference import OVCrashed, OVRejected

VERSION = {"DFT": 7, "IDFT": 7, "RDFT": 9, "IRDFT": 9}
BF16 = np.dtype(ml_dtypes.bfloat16)


def assert_spectrum(got, want, what=""):
    """Values within the error of a transform: a few units of the compute type's precision at the largest
    magnitude (f16 and bf16 are computed in f32 and rounded once: one ulp of theirs there)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, f"{what}: {got.dtype}{got.shape} vs {want.dtype}" \
                                                                 f"{want.shape}"
    g, w = got.astype(np.float64), want.astype(np.float64)
    scale = max(1.0, float(np.abs(w).max(initial=0)))
    eps = {"float64": 1e-12, "float32": 2e-6, "float16": 2.0**-10, "bfloat16": 2.0**-7}[got.dtype.name]
    err = float(np.abs(g - w).max(initial=0)) / scale
    assert err <= 4 * eps, f"{what}: error {err:.2e} of the largest magnitude {scale:.3g}"


@st.composite
def dft_cases(draw, kinds=KINDS, dtypes=(np.float32, np.float64, np.float16, BF16)):
    kind = draw(st.sampled_from(kinds))
    rank = draw(st.integers(1, 3))  # the transform's rank (complex dims, or RDFT's real dims)
    shape = draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank))
    count = draw(st.integers(1, rank))
    axes = draw(st.permutations(range(rank)))[:count]
    axes = [a - rank if draw(st.booleans()) else a for a in axes]
    sizes = None
    if draw(st.booleans()):
        sizes = [draw(st.sampled_from([-1, 1, 2, 3, 5, 8])) for _ in axes]
    if kind == "IRDFT":
        last = axes[-1] % rank
        assume((sizes and sizes[-1] != -1) or shape[last] >= 2)  # else 0 output points
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    data = rng.standard_normal(shape + ([] if kind == "RDFT" else [2])).astype(dtype)
    inputs = [data, np.array(axes, draw(st.sampled_from([np.int64, np.int32])))]
    if sizes is not None:
        inputs.append(np.array(sizes, np.int64))
    const = [False] + [draw(st.booleans()) for _ in inputs[1:]]
    return kind, inputs, const, draw(st.booleans())


def _explicit_sizes(kind, inputs):
    """The inputs with each signal size of -1 spelled out: OpenVINO's CPU plugin fails on an RDFT with a
    signal size of -1 ("cannot create std::vector larger than max_size()")."""
    if len(inputs) < 3:
        return inputs
    data, axes, sizes = inputs
    rank = data.ndim if kind == "RDFT" else data.ndim - 1
    dims = [data.shape[a % rank] for a in axes]
    if kind == "IRDFT":
        dims[-1] = 2 * (dims[-1] - 1)
    return [data, axes, np.array([d if s == -1 else s for s, d in zip(sizes, dims)], sizes.dtype)]


def _pads_an_inner_axis(kind, inputs):
    """IRDFT whose signal size pads an axis other than the last: OpenVINO's CPU plugin returns garbage there
    (checked against numpy.fft.irfftn; tests/test_ir_translators_b.py)."""
    if kind != "IRDFT" or len(inputs) < 3:
        return False
    data, axes, sizes = inputs
    rank = data.ndim - 1
    return any(s > data.shape[a % rank] for a, s in zip(axes[:-1], sizes[:-1]))


@settings(max_examples=EXAMPLES)
@given(dft_cases())
def test_dft_matches_openvino(ov_reference, case):
    kind, inputs, const, known_shapes = case
    want = spectral_reference(kind, *inputs)
    if inputs[0].dtype == np.float32 and not _pads_an_inner_axis(kind, inputs):
        try:
            (ov,) = ov_reference(kind, VERSION[kind], _explicit_sizes(kind, inputs), {},
                                 const=[False] + [True] * (len(inputs) - 1), device="cpu")
        except OVRejected:  # the plugin fails on some valid cases (RDFT of [1, 1, 1] to sizes [1, 1, 2]):
            ov = None       # numpy's FFT is the reference there
        except OVCrashed as e:
            raise AssertionError(f"OpenVINO crashed on a valid case: {e}") from None
        if ov is not None:
            assert_spectrum(want, ov, "numpy reference vs OpenVINO CPU")
    model = node_model(kind, inputs, {}, [(want.dtype, want.ndim)], const, known_shapes)
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_spectrum(got, want, how)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("with_size", [True, False])
def test_bodies_by_what_is_known(kind, with_size):
    """Axes of known count: the unrolled body, in f32 for f16 data; unknown: the general body (a Loop, f64)."""
    data = np.random.default_rng(1).standard_normal((4, 6, 5) if kind == "RDFT" else (4, 6, 5, 2))
    data = data.astype(np.float16)
    inputs = [data, np.array([2, 0])] + ([np.array([4, -1])] if with_size else [])
    want = spectral_reference(kind, *inputs)
    for known, overload in ((True, f"f16_axes2{'' if with_size else '_nosize'}"),
                            (False, "general" if with_size else "general_nosize")):
        model = node_model(kind, inputs, {}, [(want.dtype, want.ndim)], known_shapes=known)
        assert model.graph.node[0].overload == overload
        for how, (got,) in run_three_ways(model, inputs).items():
            assert_spectrum(got, want, f"{overload} {how}")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("length", [7, 130, 256])
def test_matmul_and_dft_paths(kind, length):
    """40 signals: 7 points go through the MatMul by the transform's matrix, 256 (a power of two above 128)
    through ONNX DFT, 130 through the MatMul on one axis and ONNX DFT (3 signals) on the other."""
    rng = np.random.default_rng(length)
    shape = (40, 3, length) if kind == "RDFT" else (40, 3, length, 2)
    data = rng.standard_normal(shape).astype(np.float32)
    inputs = [data, np.array([-1, 0] if length == 130 else [-1]), np.array([length + 2, -1] if length == 130
                                                                           else [length - 1])]
    want = spectral_reference(kind, *inputs)
    model = node_model(kind, inputs, {}, [(want.dtype, want.ndim)], known_shapes=True)
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_spectrum(got, want, how)


CHECKS = [
    ("DFT", [np.zeros((3, 4, 2), np.float32), np.array([2])], "axes_within_rank"),
    ("DFT", [np.zeros((3, 4, 2), np.float32), np.array([-3])], "axes_within_rank"),
    ("IDFT", [np.zeros((3, 4, 2), np.float32), np.array([1, -1])], "axes_unique"),
    ("RDFT", [np.zeros((3, 4), np.float32), np.array([0]), np.array([0])], "signal_size_positive_or_minus_1"),
    ("RDFT", [np.zeros((3, 4), np.float32), np.array([0]), np.array([2, 2])], "signal_size_length_is_axes_length"),
    ("DFT", [np.zeros((3, 4, 3), np.float32), np.array([0])], "data_is_complex"),
    ("IRDFT", [np.zeros((3, 1, 2), np.float32), np.array([1])], "output_length_positive"),
]


@pytest.mark.parametrize("kind, inputs, check", CHECKS, ids=[c[2] + "_" + c[0] for c in CHECKS])
@pytest.mark.parametrize("known_shapes", [True, False])
def test_bad_runtime_inputs_fail_naming_the_check(kind, inputs, check, known_shapes):
    # (runtime inputs: only their shapes matter when the model is built, where known bad shapes are refused)
    shape_level = check in ("data_is_complex", "signal_size_length_is_axes_length")
    model = node_model(kind, inputs, {}, [(np.float32, None)], known_shapes=known_shapes and not shape_level)
    with pytest.raises(Exception, match=check):
        onnx_ext.run(model, {f"in{i}": v for i, v in enumerate(inputs)})
    with pytest.raises(onnx_ext.OpInputError, match=kind):
        spectral_reference(kind, *inputs)


@pytest.mark.parametrize("kind, inputs, message", [
    ("DFT", [np.zeros((3, 4, 2), np.float32), np.array([2])], r"DFT \(node 'n'\): axes \[2\] must lie in \[-2, 1\]"),
    ("IRDFT", [np.zeros((3, 4, 2), np.float32), np.array([0, -2])], "repeat an axis"),
    ("RDFT", [np.zeros((3, 4), np.float32), np.array([0]), np.array([-2])], "positive or -1"),
    ("IDFT", [np.zeros((3, 4), np.float32), np.array([0])], "data must be complex"),
    ("DFT", [np.zeros((3, 4, 2), np.int32), np.array([0])], "data must be floating-point"),
])
def test_bad_constant_inputs_are_refused_when_the_node_is_built(kind, inputs, message):
    operands = [onnx_ext.Operand(onnx_ext.types.from_numpy(v.dtype), v.shape, v if i else None)
                for i, v in enumerate(inputs)]
    with pytest.raises(onnx_ext.OpInputError, match=message):
        onnx_ext.make_node(kind, [f"i{i}" for i in range(len(inputs))], ["y"], name="n", operands=operands)


@settings(max_examples=EXAMPLES)
@given(dft_cases(dtypes=(np.float32, np.float16)), st.booleans())
def test_dft_shape_inference(case, known_shapes):
    kind, inputs, const, _ = case
    want = spectral_reference(kind, *inputs)
    check_inference(kind, inputs, {}, const, [want], known_shapes, static=known_shapes and all(const))


def test_models_of_an_older_opset_are_refused():
    model = node_model("DFT", [np.zeros((3, 4, 2), np.float32), np.array([0])], {}, [(np.float32, 3)], bodies=False)
    model.opset_import[0].version = 19
    with pytest.raises(onnx_ext.OnnxExtError, match="DFT .*opset 20, the model imports 19"):
        onnx_ext.attach_functions(model)


def _runtime_axes_ir(kind, sizes: bool):
    import openvino as ov
    import openvino.opset7 as o7
    import openvino.opset9 as o9

    x = parameter([-1, 6, 5] + ([] if kind == "RDFT" else [2]), name="x")
    axes = parameter([2], "i64", name="axes")
    params = [x, axes]
    args = [x, axes]
    if sizes:
        s = parameter([2], "i32", name="sizes")
        params.append(s)
        args.append(s)
    node = {"DFT": o7.dft, "IDFT": o7.idft, "RDFT": o9.rdft, "IRDFT": o9.irdft}[kind](*args)
    return ov.Model([node.output(0)], params, "m")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("sizes", [True, False])
def test_ir_with_runtime_axes_converts_and_comes_back(kind, sizes, tmp_path):
    first, again = round_trip(_runtime_axes_ir(kind, sizes), tmp_path, kind)
    rng = np.random.default_rng(3)
    data = rng.standard_normal((2, 6, 5) + (() if kind == "RDFT" else (2,))).astype(np.float32)
    feeds = [data, np.array([1, -1])] + ([np.array([4, 7], np.int32)] if sizes else [])
    want = spectral_reference(kind, *feeds)
    model = convert(save_ir(_runtime_axes_ir(kind, sizes), tmp_path, "again"))
    assert [n.op_type for n in model.graph.node if n.domain == onnx_ext.DOMAIN] == [kind]
    assert_spectrum(run_onnx(model, feeds)[0], want, "converted")
    if kind in ("DFT", "IDFT"):  # (the CPU plugin crashes on RDFT and refuses IRDFT with run-time axes)
        assert_spectrum(evaluate_model_cpu(again, feeds)[0], want, "round trip, CPU")


def test_irdft_of_unknown_bins_without_a_signal_size_is_the_domain_op(tmp_path):
    import openvino as ov
    import openvino.opset8 as o8
    import openvino.opset9 as o9

    x = parameter([2, -1, 2], name="x")
    model = convert(save_ir(ov.Model([o9.irdft(x, o8.constant(np.array([0, 1])))], [x], "m"), tmp_path))
    assert [n.op_type for n in model.graph.node if n.domain == onnx_ext.DOMAIN] == ["IRDFT"]
    data = np.random.default_rng(4).standard_normal((2, 5, 2)).astype(np.float32)
    assert_spectrum(run_onnx(model, [data])[0], spectral_reference("IRDFT", data, np.array([0, 1])), "converted")
