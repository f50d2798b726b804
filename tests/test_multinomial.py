"""Multinomial-13. OpenVINO 2026.4's reference has no evaluate for it and its CPU plugin draws with std::mt19937
(its own TODO: it should use RandomUniform's generator), so the samples are checked against a numpy transcription
of the reference (multinomial.hpp), whose uniforms are checked against OpenVINO's RandomUniform reference for the
same seeds; the CPU plugin is compared where the samples do not depend on the draws. Also: three ways, the named
checks, the schema, the translator (constant inputs folded), IR -> ONNX -> IR."""

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import EXAMPLES, check_inference, node_model, round_trip, run_three_ways
from helpers import assert_same
from ir_testing import convert, evaluate_model_cpu, parameter, run_onnx, save_ir
from onnx_ext.ops.multinomial import BLOCK, TABLE_WORDS, multinomial_reference
from onnx_ext.ops.random_uniform import random_uniform_reference

BF16 = np.dtype(ml_dtypes.bfloat16)
I32, I64 = onnx.TensorProto.INT32, onnx.TensorProto.INT64


@st.composite
def multinomial_cases(draw, seeded=True):
    dtype = np.dtype(draw(st.sampled_from([np.float32, np.float16, np.float64, BF16])))
    batch, classes = draw(st.integers(1, 4)), draw(st.integers(1, 9))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    probs = rng.random((batch, classes)) * (rng.random((batch, classes)) > 0.3)
    probs[:, 0] += 0.01
    log_probs = draw(st.sampled_from([0, 1]))
    if log_probs:
        probs = np.log(probs + 1e-3)
    replacement = draw(st.sampled_from([0, 1]))
    n = draw(st.integers(0, 6 if replacement else classes))
    seeds = (draw(st.integers(1, 2**40)), draw(st.integers(0, 2**40))) if seeded else (0, 0)
    attrs = {"convert_type": draw(st.sampled_from([I32, I64])), "with_replacement": replacement,
             "log_probs": log_probs, "global_seed": seeds[0], "op_seed": seeds[1]}
    inputs = [probs.astype(dtype), np.array(n, draw(st.sampled_from([np.int32, np.int64])))]
    return inputs, attrs, [False, draw(st.booleans())], draw(st.booleans())


@settings(max_examples=EXAMPLES)
@given(multinomial_cases())
def test_multinomial_matches_the_reference(ov_reference, case):
    inputs, attrs, const, known_shapes = case
    batch, n = inputs[0].shape[0], int(inputs[1])
    # the uniforms the reference draws: OpenVINO's RandomUniform for the same seeds, shape and type
    u_ours = random_uniform_reference(np.array([batch, n]), np.array(0, inputs[0].dtype), np.array(1, inputs[0].dtype),
                                      onnx_ext.types.from_numpy(inputs[0].dtype).onnx, attrs["global_seed"],
                                      attrs["op_seed"])
    (u_ov,) = ov_reference("RandomUniform", 8, [np.array([batch, n]), np.array(0, inputs[0].dtype),
                                                np.array(1, inputs[0].dtype)],
                           {"output_type": onnx_ext.types.from_numpy(inputs[0].dtype).ov,
                            "global_seed": attrs["global_seed"], "op_seed": attrs["op_seed"]})
    np.testing.assert_array_equal(u_ours.astype(np.float64), u_ov.astype(np.float64))  # (bf16: 0 and 1 exact)
    want = multinomial_reference(*inputs, **attrs)
    model = node_model("Multinomial", inputs, attrs, [(want.dtype, 2)], const, known_shapes)
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("known", [True, False])
def test_samples_without_replacement_unrolled_or_looped(dtype, known):
    # num_samples known: the steps unrolled (Sampler ..._n12); at run time: a Loop; both the reference's samples
    rng = np.random.default_rng(7)
    probs = (rng.random((3, 400)) ** 8).astype(dtype)  # (many tiny probabilities: cdf steps that round)
    inputs = [probs, np.array(12, np.int64)]
    attrs = {"convert_type": I64, "with_replacement": 0, "log_probs": 0, "global_seed": 5, "op_seed": 9}
    want = multinomial_reference(*inputs, **attrs)
    model = node_model("Multinomial", inputs, attrs, [(want.dtype, 2)], [False, known])
    overloads = {f.overload for f in model.functions if f.name == "Multinomial"}
    assert any(o.endswith("_n12") for o in overloads) == known, overloads
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("known", [True, False])
@pytest.mark.parametrize("nan", [False, True])
def test_samples_without_replacement_across_blocks(dtype, known, nan):
    # classes over several of the search's blocks (BLOCK, not a multiple of it: padded); a row with an infinite
    # probability (cdf 0 before it, NaN from it on, searched as -inf: a block's ReduceMax over a NaN is unreliable)
    rng = np.random.default_rng(11)
    probs = rng.random((4, 3 * BLOCK + 17)) ** 6
    probs[2, :2 * BLOCK] = 0  # (the first hits in the last blocks)
    if nan:
        probs[1, 500] = np.inf
    inputs = [probs.astype(dtype), np.array(10, np.int64)]
    attrs = {"convert_type": I64, "with_replacement": 0, "log_probs": 0, "global_seed": 3, "op_seed": 4}
    want = multinomial_reference(*inputs, **attrs)
    assert (want[2] >= 2 * BLOCK).all() and len(set(want[0])) == 10
    model = node_model("Multinomial", inputs, attrs, [(want.dtype, 2)], [False, known])
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


@pytest.mark.parametrize("known", [True, False])
def test_a_row_left_all_nan_draws_nothing_more(known):
    # one class with all the probability (beyond the first block): taking it out divides by 1 - p = 0, leaving the
    # row NaN (0 / 0), where no class is a hit: the later samples 0, as the reference's; the other rows go on
    rng = np.random.default_rng(5)
    probs = rng.random((3, 2 * BLOCK + 9)).astype(np.float32)
    probs[1] = 0
    probs[1, BLOCK + 40] = 1
    inputs = [probs, np.array(5, np.int64)]
    attrs = {"convert_type": I64, "with_replacement": 0, "log_probs": 0, "global_seed": 8, "op_seed": 2}
    want = multinomial_reference(*inputs, **attrs)
    assert list(want[1]) == [BLOCK + 40, 0, 0, 0, 0] and len(set(want[0])) == 5
    model = node_model("Multinomial", inputs, attrs, [(want.dtype, 2)], [False, known])
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


@pytest.mark.parametrize("known", [True, False])
@pytest.mark.parametrize("replacement", [0, 1])
def test_a_batch_of_no_rows_draws_no_rows(known, replacement):
    # [0, C] probabilities (the ir generator's `empty` mode): a [0, n] output (was: without replacement the
    # search's Reshape to [0, -1, BLOCK] made onnxruntime refuse the model)
    inputs = [np.zeros((0, 5), np.float32), np.array(3, np.int64)]
    attrs = {"convert_type": I64, "with_replacement": replacement, "log_probs": 1, "global_seed": 3, "op_seed": 4}
    want = multinomial_reference(*inputs, **attrs)
    assert want.shape == (0, 3) and want.dtype == np.int64
    model = node_model("Multinomial", inputs, attrs, [(want.dtype, 2)], [False, known])
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_draws_beyond_the_bodys_table_are_computed_exactly(dtype):
    # more words of the Philox stream than the body keeps (TABLE_WORDS; f64: two a value): the computed branch
    probs = np.random.default_rng(3).random((3, 10)).astype(dtype)
    n = TABLE_WORDS // (2 if dtype == np.float64 else 1) // 3 + 2
    inputs = [probs, np.array(n, np.int64)]
    attrs = {"convert_type": I64, "with_replacement": 1, "log_probs": 0, "global_seed": 2**40 + 3, "op_seed": 7}
    want = multinomial_reference(*inputs, **attrs)
    model = node_model("Multinomial", inputs, attrs, [(want.dtype, 2)], [False, True])
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


def test_where_the_draws_do_not_matter_openvino_agrees(ov_reference):
    """A class with all the probability: every sample is it (with replacement); every class of positive
    probability, as many samples: a permutation (without). The CPU plugin, whose draws differ, agrees."""
    for probs, replacement, n in ((np.array([[0, 0, 1, 0]], np.float32), True, 5),
                                  (np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]], np.float32), False, 4)):
        attrs = {"convert_type": "i64", "with_replacement": replacement, "log_probs": False, "global_seed": 3,
                 "op_seed": 4}
        (ov,) = ov_reference("Multinomial", 13, [probs, np.array(n)], attrs, device="cpu")
        inputs = [probs, np.array(n)]
        model = node_model("Multinomial", inputs, {**attrs, "convert_type": I64, "with_replacement": int(replacement),
                                                   "log_probs": 0}, [(np.int64, 2)])
        for got in [ov, *(r[0] for r in run_three_ways(model, inputs).values())]:
            if replacement:
                np.testing.assert_array_equal(got, np.full((1, 5), 2))
            else:
                assert all(sorted(row) == [0, 1, 2, 3] for row in got), got


def test_frequencies_follow_the_probabilities():
    probs = np.array([[0.1, 0.6, 0.3]], np.float32)
    inputs = [probs, np.array(20000)]
    attrs = {"convert_type": I64, "with_replacement": 1, "global_seed": 7, "op_seed": 1}
    model = node_model("Multinomial", inputs, attrs, [(np.int64, 2)])
    (got,) = run_three_ways(model, inputs)["function"]
    np.testing.assert_allclose(np.bincount(got[0], minlength=3) / 20000, probs[0], atol=0.015)


def test_seeds_both_zero_draw_anew():
    inputs = [np.array([[0.25, 0.25, 0.25, 0.25]], np.float32), np.array(64)]
    model = node_model("Multinomial", inputs, {"convert_type": I32, "with_replacement": 1}, [(np.int32, 2)])
    first, second = run_three_ways(model, inputs), run_three_ways(model, inputs)
    for how in ("function", "inlined"):
        assert first[how][0].shape == (1, 64) and not np.array_equal(first[how][0], second[how][0]), how


@pytest.mark.parametrize("n, replacement, check", [(-1, 1, "num_samples_non_negative"),
                                                   (5, 0, "num_samples_within_classes")])
def test_bad_sample_counts_fail_naming_the_check(n, replacement, check):
    inputs = [np.full((2, 4), 0.25, np.float32), np.array(n)]
    attrs = {"convert_type": I64, "with_replacement": replacement, "global_seed": 1}
    model = node_model("Multinomial", inputs, attrs, [(np.int64, 2)])
    with pytest.raises(Exception, match=check):
        onnx_ext.run(model, {"in0": inputs[0], "in1": inputs[1]})
    operands = [onnx_ext.Operand(onnx_ext.types.from_ov("f32"), (2, 4)), onnx_ext.Operand(value=np.array(n), shape=())]
    with pytest.raises(onnx_ext.OpInputError, match="Multinomial"):
        onnx_ext.make_node("Multinomial", ["p", "n"], ["y"], operands=operands, **attrs)


@pytest.mark.parametrize("attrs, message", [
    ({"convert_type": onnx.TensorProto.FLOAT}, "convert_type' is 1"),
    ({"convert_type": I32, "with_replacement": 2}, "with_replacement' is 2"),
    ({}, "convert_type' is required"),
])
def test_bad_attributes_name_op_and_attribute(attrs, message):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"Multinomial.*{message}"):
        onnx_ext.make_node("Multinomial", ["p", "n"], ["y"], **attrs)


@settings(max_examples=EXAMPLES)
@given(multinomial_cases())
def test_multinomial_shape_inference(case):
    inputs, attrs, const, known_shapes = case
    check_inference("Multinomial", inputs, attrs, const, [multinomial_reference(*inputs, **attrs)], known_shapes,
                    static=known_shapes and const[1])


def _ir(constant=False, replacement=True):
    import openvino as ov
    import openvino.opset1 as o1
    import openvino.opset13 as o13

    probs = o1.constant(np.array([[0.2, 0.5, 0.3]], np.float32)) if constant else parameter([-1, 5], name="probs")
    node = o13.multinomial(probs, o1.constant(np.array(4)), "i32", replacement, True, 11, 22)
    return ov.Model([node.output(0)], [] if constant else [probs], "m")


@pytest.mark.parametrize("replacement", [True, False])
def test_ir_converts_and_comes_back(replacement, tmp_path):
    first, again = round_trip(_ir(replacement=replacement), tmp_path, "Multinomial")
    probs = np.log(np.array([[0.1, 0.2, 0.3, 0.2, 0.2], [0.5, 0.1, 0.1, 0.1, 0.2]], np.float32))
    want = multinomial_reference(probs, np.array(4), I32, int(replacement), 1, 11, 22)
    got = run_onnx(convert(save_ir(_ir(replacement=replacement), tmp_path, "again")), [probs])[0]
    assert_same(got, want, "converted")
    assert evaluate_model_cpu(again, [probs])[0].shape == (2, 4)  # (the CPU plugin's draws differ)


def test_constant_inputs_fold(tmp_path):
    model = convert(save_ir(_ir(constant=True), tmp_path))
    assert not [n for n in model.graph.node if n.domain == onnx_ext.DOMAIN]
    assert_same(run_onnx(model, [])[0], multinomial_reference(np.log(np.array([[0.2, 0.5, 0.3]], np.float32)),
                                                              np.array(4), I32, 1, 1, 11, 22), "folded")
