"""CTCLoss-4: the function (onnxruntime), the inlined model and the numpy reference against OpenVINO's reference
(its path search transcribed below: the reference has no evaluate for the op) and its CPU plugin (which runs the
same path search, and crashes on a label_length of 0) on random cases; the named checks; the schema; the
translator; IR -> ONNX -> IR."""

import itertools

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import EXAMPLES, check_inference, node_model, round_trip, run_three_ways
from ir_testing import convert, evaluate_model_cpu, parameter, run_onnx, save_ir
from onnx_ext.ops.ctc_loss import ctc_loss_reference, decoded_target
from ov_reference import OVCrashed, OVRejected

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(t) for t in (np.float32, np.float16, np.float64, BF16)]
FLAGS = ("preprocess_collapse_repeated", "ctc_merge_repeated", "unique")
#: (rtol, atol) of the f32 and f64 bodies against the f64 numpy reference (the forward algorithm's sums in
#: another order); f16 and bf16 are computed in f32 and rounded once.
TOLERANCE = {"float64": (1e-12, 1e-12), "float32": (2e-6, 2e-6), "float16": (1e-3, 1e-4), "bfloat16": (8e-3, 1e-3)}


def assert_close(got, want, what, tolerance=None):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, f"{what}: {got.dtype}{got.shape} vs " \
        f"{want.dtype}{want.shape}"
    rtol, atol = tolerance or TOLERANCE[want.dtype.name]
    g, w = got.astype(np.float64), want.astype(np.float64)
    assert np.array_equal(np.isinf(g), np.isinf(w)), f"{what}: {got} vs {want}"
    finite = np.isfinite(w)
    assert np.allclose(g[finite], w[finite], rtol=rtol, atol=atol), f"{what}: {got} vs {want}"
    assert np.array_equal(np.signbit(g[w == 0]), np.signbit(w[w == 0])), f"{what}: the sign of 0: {got} vs {want}"


def paths_reference(logits, logit_length, labels, label_length, blank_index=None, preprocess_collapse_repeated=0,
                    ctc_merge_repeated=1, unique=0):
    """OpenVINO's reference (ctc_loss.hpp) transcribed: the aligned paths searched one by one (in f64)."""
    batch, _, classes = logits.shape
    blank = classes - 1 if blank_index is None else int(blank_index)
    out = np.empty(batch, logits.dtype)
    x = logits.astype(np.float64)
    for b in range(batch):
        steps = int(logit_length[b])
        target = decoded_target(labels[b], int(label_length[b]), preprocess_collapse_repeated, unique)
        log_p = x[b] - np.log(np.exp(x[b]).sum(axis=1, keepdims=True))
        res = [-np.inf, False]

        def find_paths(idx, start, end, prev):
            if end > steps:
                res[0] = prev if not res[1] else np.logaddexp(res[0], prev)
                res[1] = True
                return
            for pos in range(start, end):
                p = prev + sum(log_p[t, blank] for t in range(start, pos))
                if end == steps:  # the last label: blanks after it
                    p += sum(log_p[t, blank] for t in range(pos + 1, steps))
                if not ctc_merge_repeated:
                    find_paths(idx + 1, pos + 1, end + 1, p + log_p[pos, target[idx]])
                    continue
                next_start = pos + 1
                if idx < len(target) - 1 and target[idx] == target[idx + 1]:
                    p += log_p[next_start, blank]
                    next_start += 1
                for run_start in range(pos, start - 1, -1):  # the label on [run_start, pos]
                    p += log_p[run_start, target[idx]]
                    find_paths(idx + 1, next_start, end + 1, p)
                    if run_start > 0:
                        p -= log_p[run_start - 1, blank]

        find_paths(0, 0, steps - len(target) + 1, 0.0)
        out[b] = -res[0]
    return out


@st.composite
def ctc_loss_cases(draw, max_time=6, dtypes=FLOATS):
    batch, t_len, classes = draw(st.integers(1, 3)), draw(st.integers(0, max_time)), draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from(dtypes))
    lengths_type, labels_type = (draw(st.sampled_from([np.int32, np.int64])) for _ in range(2))
    logit_length = rng.integers(0, t_len + 1, batch)
    full = draw(st.booleans())  # label_length == logit_length
    label_length = logit_length if full else np.array([rng.integers(0, n + 1) for n in logit_length])
    explicit = draw(st.booleans())
    blank = int(rng.integers(0, classes)) if explicit else classes - 1
    # labels other than the blank, few classes: repeats (and so merges, collapses, unique) are frequent
    others = [c for c in range(classes) if c != blank] or [blank]
    inputs = [(rng.standard_normal((batch, t_len, classes)) * 2).astype(dtype), logit_length.astype(lengths_type),
              rng.choice(others, (batch, t_len)).astype(labels_type), label_length.astype(lengths_type)]
    if explicit:
        inputs.append(np.array(blank, labels_type))
    attrs = {name: int(draw(st.booleans())) for name in FLAGS}
    const = [False] + [draw(st.booleans()) for _ in inputs[1:]]
    return inputs, attrs, const, draw(st.booleans())


def _ov_attrs(attrs):
    return {k: bool(v) for k, v in attrs.items()}


def _check_case(ov_reference, case):
    inputs, attrs, const, known_shapes = case
    want = ctc_loss_reference(*inputs, **attrs)
    wide = [inputs[0].astype(np.float64), *inputs[1:]]
    assert_close(ctc_loss_reference(*wide, **attrs), paths_reference(*wide, **attrs), "forward vs paths (f64)",
                 (1e-12, 1e-12))
    blank = inputs[4] if len(inputs) > 4 else inputs[0].shape[2] - 1
    labelled_blank = any(blank in decoded_target(row, n, attrs["preprocess_collapse_repeated"], attrs["unique"])
                         for row, n in zip(inputs[2], inputs[3]))
    plugin_runs = inputs[0].dtype == np.float32 and inputs[0].shape[1] > 0 and (inputs[3] > 0).all()
    if plugin_runs and not labelled_blank:  # (it crashes on a label_length of 0; a target holding the blank
        # (C = 1 here; the spec excludes it) it counts other paths than the reference searches)
        try:
            (ov,) = ov_reference("CTCLoss", 4, inputs, _ov_attrs(attrs), const=const, device="cpu")
        except (OVRejected, OVCrashed) as e:
            raise AssertionError(f"OpenVINO refused a valid case: {e}") from None
        assert_close(want, ov, "numpy reference vs OpenVINO CPU", (1e-5, 1e-5))
    model = node_model("CTCLoss", inputs, attrs, [(want.dtype, 1)], const, known_shapes)
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_close(got, want, how)


@settings(max_examples=EXAMPLES)
@given(ctc_loss_cases())
def test_ctc_loss_matches_openvino(ov_reference, case):
    _check_case(ov_reference, case)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(ctc_loss_cases(max_time=8))
def test_ctc_loss_matches_openvino_sweep(ov_reference, case):
    _check_case(ov_reference, case)


@pytest.mark.parametrize("n, c, merge", [(2, 3, 1), (1, 1, 0)])
@pytest.mark.parametrize("const", [c for c in itertools.product([False, True], repeat=3) if any(c)],
                         ids=lambda c: "".join("c" if x else "p" for x in c))
def test_zero_steps_with_constant_lengths(const, n, c, merge):
    """T == 0 (no step): the loss of an empty target is -0 for every row, whichever inputs are constants
    (was: onnxruntime's Expand to [N, 0, S] left a dim of 1 with constant lengths, GatherElements failed;
    then, with constant labels, the steps' padding to four, an Expand to [0, N, 3, S], failed the same way)."""
    inputs = [np.zeros((n, 0, c), np.float32), np.zeros(n, np.int32), np.zeros((n, 0), np.int32),
              np.zeros(n, np.int32)]
    attrs = dict(preprocess_collapse_repeated=0, ctc_merge_repeated=merge, unique=0)
    want = ctc_loss_reference(*inputs, **attrs)
    model = node_model("CTCLoss", inputs, attrs, [(want.dtype, 1)], [False, *const], True)
    for how, (got,) in run_three_ways(model, inputs).items():
        assert got.dtype == want.dtype and got.shape == (n,), how
        np.testing.assert_array_equal(got, want, err_msg=how)


@pytest.mark.parametrize("flags", list(itertools.product([0, 1], repeat=3)), ids=lambda f: "".join(map(str, f)))
def test_every_attribute_combination(ov_reference, flags):
    """Labels with repeats and recurring classes; one row whose label_length is its logit_length (no path
    when merging repeats: +inf), one shorter."""
    attrs = dict(zip(FLAGS, flags))
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((3, 7, 4)).astype(np.float32)
    labels = np.array([[0, 0, 1, 0, 2, 2, 1], [1, 2, 2, 1, 0, 0, 0], [2, 2, 2, 0, 1, 1, 0]], np.int32)
    inputs = [logits, np.array([7, 5, 6], np.int32), labels, np.array([5, 5, 4], np.int32)]
    want = ctc_loss_reference(*inputs, **attrs)
    assert_close(want, paths_reference(*inputs, **attrs), "forward vs paths")
    (ov,) = ov_reference("CTCLoss", 4, inputs, _ov_attrs(attrs), const=[False] * 4, device="cpu")
    assert_close(want, ov, "numpy reference vs OpenVINO CPU", (1e-5, 1e-5))
    model = node_model("CTCLoss", inputs, attrs, [(np.float32, 1)], known_shapes=True)
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_close(got, want, how)


def test_spec_example_target_and_corners():
    """The spec's example: G = (0, 3, 2, 2, 2, 2, 2, 4, 3), label_length 4 -> (0, 3, 2, 2); unique; an empty
    target gives 0 (-0, as the reference); a collapsed empty target keeps labels[0] (no step: +inf)."""
    g = np.array([0, 3, 2, 2, 2, 2, 2, 4, 3])
    assert decoded_target(g, 4, False, False) == [0, 3, 2, 2]
    assert decoded_target(g, 9, True, False) == [0, 3, 2, 4, 3]
    assert decoded_target(np.array([0, 1, 1, 0, 1, 3, 3, 2, 2, 3]), 10, False, True) == [0, 1, 3, 2]
    logits = np.zeros((3, 4, 5), np.float32)
    inputs = [logits, np.array([4, 0, 4]), np.array([[1, 2, 3, 4]] * 3), np.array([0, 0, 2])]
    for collapse in (0, 1):
        want = ctc_loss_reference(*inputs, preprocess_collapse_repeated=collapse)
        assert_close(want, paths_reference(*inputs, preprocess_collapse_repeated=collapse), "forward vs paths")
        # uniform probabilities 1/5: every path of 4 steps has probability 5^-4; b* 1+ b* (collapsed (1)) has 10,
        # b* 1+ b* 2+ b* has 15; the empty target 0, a target with no step none
        paths = {0: [0, 0, 15], 1: [10, None, 15]}[collapse]
        expected = [-0.0 if n == 0 else np.inf if n is None else 4 * np.log(5) - np.log(n) for n in paths]
        assert_close(want, np.array(expected, np.float32), "by hand")
        model = node_model("CTCLoss", inputs, {"preprocess_collapse_repeated": collapse}, [(np.float32, 1)])
        for how, (got,) in run_three_ways(model, inputs).items():
            assert_close(got, want, how)


def test_large_logits_stay_finite():
    """log-softmax with the largest logit factored out: logits of 1,000 (the reference sums exp(logit) as
    they are: inf, the loss NaN) give the loss of the logits less 1,000."""
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((2, 6, 4)).astype(np.float32)
    inputs = [logits, np.array([6, 5]), np.array([[0, 1, 1, 2, 0, 0]] * 2), np.array([3, 2])]
    want = ctc_loss_reference(*inputs)
    model = node_model("CTCLoss", [logits + 1000, *inputs[1:]], {}, [(np.float32, 1)])
    for how, (got,) in run_three_ways(model, [logits + 1000, *inputs[1:]]).items():
        assert_close(got, want, how, (1e-4, 1e-4))


@pytest.mark.parametrize("inputs, check, message", [
    ([(1, 4), (2, 1)], "lengths_within_time", "logit_length 1 and label_length 2"),
    ([(5, 2), (2, 1)], "lengths_within_time", "logit_length 5"),
    ([(4, 4), (-1, 1)], "lengths_within_time", "label_length -1"),
    ([(4, 4), (2, 2), [[0, 7, 0, 0], [1, 1, 1, 1]]], "labels_within_classes", "labels \\[0, 7\\]"),
    ([(4, 4), (2, 2), [[0, -1, 0, 0], [1, 1, 1, 1]]], "labels_within_classes", "labels \\[0, -1\\]"),
    ([(4, 4), (2, 2), [[0, 1, 0, 0], [1, 1, 1, 1]], 3], "blank_index_within_classes", "blank_index 3"),
])
def test_bad_runtime_inputs_fail_naming_the_check(inputs, check, message):
    logit_length, label_length, *rest = inputs
    labels = np.array(rest[0] if rest else [[0, 1, 0, 1]] * 2, np.int64)
    feeds = [np.zeros((2, 4, 3), np.float32), np.array(logit_length, np.int64), labels,
             np.array(label_length, np.int64)] + ([np.int64(rest[1])] if len(rest) > 1 else [])
    model = node_model("CTCLoss", feeds, {}, [(np.float32, 1)])
    with pytest.raises(Exception, match=check):
        onnx_ext.run(model, {f"in{i}": v for i, v in enumerate(feeds)})
    with pytest.raises(onnx_ext.OpInputError, match=f"CTCLoss.*{message}"):
        ctc_loss_reference(*feeds)


@pytest.mark.parametrize("name", FLAGS)
def test_bad_attributes_name_op_and_attribute(name):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"CTCLoss.*{name}' is 2"):
        onnx_ext.make_node("CTCLoss", ["a", "b", "c", "d"], ["y"], **{name: 2})


F32, I32 = onnx_ext.types.from_ov("f32"), onnx_ext.types.from_ov("i32")


@pytest.mark.parametrize("operands, message", [
    ([((2, 5),), ((2,),), ((2, 5),), ((2,),)], "logits must have rank 3"),
    ([((2, 5, 3),), ((3,),), ((2, 5),), ((2,),)], "logit_length has 3 entries for a batch of 2"),
    ([((2, 5, 3),), ((2,),), ((2, 4),), ((2,),)], "labels \\[2, 4\\] does not match"),
    ([((2, 5, 3),), ((2,),), ((2, 5),), ((2, 1),)], "label_length must be a 1-D vector"),
    ([((2, 5, 3),), ((2,),), ((2, 5),), ((2,),), ((2,),)], "blank_index must be a scalar"),
    ([((2, 5, 3), "i32"), ((2,),), ((2, 5),), ((2,),)], "logits must be floating-point"),
    ([((2, 5, 3),), ((2,),), ((2, 5), "f32"), ((2,),)], "labels must be i32 or i64, got f32"),
    ([((2, 5, 3),), ((2,),), ((2, 5),), ((2,),), ((), "i32", 3)], "blank_index 3 is outside \\[0, 3\\)"),
])
def test_bad_inputs_are_refused_when_the_node_is_built(operands, message):
    def operand(shape, et=None, value=None):
        et = onnx_ext.types.from_ov(et) if et else None
        return onnx_ext.Operand(et, shape, None if value is None else np.array(value, np.int32))

    ops = [operand(*o) for o in operands]
    ops = [o if o.type is not None else onnx_ext.Operand(F32 if i == 0 else I32, o.shape, o.value)
           for i, o in enumerate(ops)]
    with pytest.raises(onnx_ext.OpInputError, match=f"CTCLoss.*{message}"):
        onnx_ext.make_node("CTCLoss", list("abcde")[:len(ops)], ["y"], operands=ops)


@settings(max_examples=EXAMPLES)
@given(ctc_loss_cases(max_time=4), st.booleans())
def test_ctc_loss_shape_inference(case, known_shapes):
    inputs, attrs, const, _ = case
    check_inference("CTCLoss", inputs, attrs, const, [ctc_loss_reference(*inputs, **attrs)], known_shapes,
                    static=known_shapes or any(const[1:4]))


def _ir(blank: bool, attrs: dict):
    import openvino as ov
    import openvino.opset1 as o1
    import openvino.opset4 as o4

    logits, lengths = parameter([-1, -1, 6], name="logits"), parameter([-1], "i32", name="logit_length")
    labels, label_lengths = parameter([-1, -1], "i64", name="labels"), parameter([-1], "i32", name="label_length")
    node = o4.ctc_loss(logits, lengths, labels, label_lengths, o1.constant(np.int64(2)) if blank else None,
                       **_ov_attrs(attrs))
    return ov.Model([node.output(0)], [logits, lengths, labels, label_lengths], "m")


@pytest.mark.parametrize("blank, attrs", [(False, {}), (True, {"preprocess_collapse_repeated": 1,
                                                               "ctc_merge_repeated": 0}), (True, {"unique": 1})])
def test_ir_converts_and_comes_back(blank, attrs, tmp_path):
    first, again = round_trip(_ir(blank, attrs), tmp_path, "CTCLoss")
    rng = np.random.default_rng(3)
    feeds = [rng.standard_normal((3, 6, 6)).astype(np.float32), np.array([6, 4, 5], np.int32),
             rng.integers(0, 2, (3, 6)).astype(np.int64), np.array([3, 2, 1], np.int32)]
    want = ctc_loss_reference(*feeds, *([np.int64(2)] if blank else []), **attrs)
    assert_close(evaluate_model_cpu(first, feeds)[0], want, "OpenVINO CPU", (1e-5, 1e-5))
    assert_close(evaluate_model_cpu(again, feeds)[0], want, "round trip, CPU", (1e-5, 1e-5))
    assert_close(run_onnx(convert(save_ir(_ir(blank, attrs), tmp_path, "again")), feeds)[0], want, "converted")


@pytest.mark.parametrize("merge", [1, 0])
def test_long_sequences_match_openvino_cpu(merge):
    """8 x 100 steps x 40 classes, targets of 10-20 (the bench's size): alpha holds states far below 0 next
    to -inf ones (onnxruntime's ReduceLogSumExp gives -inf or a wrong value there: the step's log-sum-exp is
    written out)."""
    import openvino as ov
    import openvino.opset4 as o4

    rng = np.random.default_rng(8)
    inputs = [rng.standard_normal((8, 100, 40)).astype(np.float32), rng.integers(80, 101, 8).astype(np.int32),
              rng.integers(0, 39, (8, 100)).astype(np.int32), rng.integers(10, 21, 8).astype(np.int32)]
    want = ctc_loss_reference(*inputs, ctc_merge_repeated=merge)
    params = [parameter(list(v.shape), "f32" if v.dtype == np.float32 else "i32") for v in inputs]
    plugin = ov.Core().compile_model(ov.Model([o4.ctc_loss(*params, ctc_merge_repeated=bool(merge)).output(0)],
                                              params), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    assert_close(plugin(inputs)[0], want, "OpenVINO CPU", (1e-5, 1e-5))
    model = node_model("CTCLoss", inputs, {"ctc_merge_repeated": merge}, [(np.float32, 1)])
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_close(got, want, how, (1e-6, 1e-6))
