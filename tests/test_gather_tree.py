"""GatherTree-1: the function (onnxruntime), the inlined model and the numpy reference against OpenVINO's CPU
plugin (its reference has no evaluate for the op; the plugin leaves the output uninitialised when a
max_seq_len is 0 or beyond MAX_TIME, where the numpy transcription of the reference is the truth) on random
cases; the named checks; the schema; the translator; IR -> ONNX -> IR."""

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
from onnx_ext.ops.gather_tree import doubling_steps, gather_tree_reference
from ov_reference import OVCrashed, OVRejected

TYPES = [np.int32, np.float32, np.int64, np.float16, np.float64, np.uint8, np.int8, np.uint16, np.int16,
         np.uint32, np.uint64, ml_dtypes.bfloat16]


@st.composite
def gather_tree_cases(draw, types=TYPES):
    t_len, batch, beams = draw(st.integers(0, 9)), draw(st.integers(1, 3)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = np.dtype(draw(st.sampled_from(types)))
    step = rng.integers(0, 6, (t_len, batch, beams))
    parent = rng.integers(0, beams, (t_len, batch, beams))
    within = draw(st.booleans())  # every max_seq_len in [1, MAX_TIME], where the CPU plugin is right
    low = 1 if within or dtype.kind == "u" else -1
    msl = rng.integers(min(low, t_len), t_len + 1 if within else t_len + 3, batch)
    end = draw(st.integers(0, 6))
    fractions = dtype.kind == "f" and draw(st.booleans())
    if fractions:  # (the spec wants integer values) the reference truncates indices and the end test, the
        step = step + 0.5  # CPU plugin compares values as they are: the reference is followed
        parent = parent + 0.25
    inputs = [step.astype(dtype), parent.astype(dtype), msl.astype(dtype), np.array(end, dtype)]
    const = [False, False, draw(st.booleans()), draw(st.booleans())]
    return inputs, const, draw(st.booleans()), within and t_len > 0 and not fractions


@settings(max_examples=EXAMPLES)
@given(gather_tree_cases())
def test_gather_tree_matches_openvino(ov_reference, case):
    inputs, const, known_shapes, plugin_is_right = case
    want = gather_tree_reference(*inputs)
    if plugin_is_right and inputs[0].dtype in (np.int32, np.float32):
        try:
            (ov,) = ov_reference("GatherTree", 1, inputs, {}, const=const, device="cpu")
        except (OVRejected, OVCrashed) as e:
            raise AssertionError(f"OpenVINO refused a valid case: {e}") from None
        assert_same(want, ov, "numpy reference vs OpenVINO CPU")
    model = node_model("GatherTree", inputs, {}, [(want.dtype, 3)], const, known_shapes)
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


def test_spec_algorithm_by_hand():
    """Batch 0, beam 0 from t = 3 follows parents 1, 2, 1: [2, 8, 3, 5]; beam 1 meets end_token 9 at t = 1:
    [1, 9, 9, 9]; batch 1 stops after 2 steps, end_token past them."""
    step = np.array([[[1, 2, 3], [4, 5, 6]], [[9, 7, 8], [1, 1, 1]], [[2, 3, 4], [2, 2, 2]],
                     [[5, 6, 7], [3, 3, 3]]], np.int32)
    parent = np.array([[[0, 0, 0], [0, 0, 0]], [[0, 0, 1], [1, 0, 2]], [[0, 2, 1], [0, 1, 1]],
                       [[1, 0, 2], [0, 0, 0]]], np.int32)
    inputs = [step, parent, np.array([4, 2], np.int32), np.array(9, np.int32)]
    want = np.array([[[2, 1, 1], [5, 4, 6]], [[8, 9, 7], [1, 1, 1]], [[3, 9, 4], [9, 9, 9]],
                     [[5, 9, 7], [9, 9, 9]]], np.int32)
    assert_same(gather_tree_reference(*inputs), want, "numpy reference")
    model = node_model("GatherTree", inputs, {}, [(np.int32, 3)], known_shapes=True)
    assert model.graph.node[0].overload == "steps2"
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


@pytest.mark.parametrize("t_len, steps", [(0, 0), (1, 0), (2, 0), (3, 1), (5, 2), (6, 3), (64, 6), (65, 6), (66, 7)])
def test_doubling_steps_compose_every_map(t_len, steps):
    assert doubling_steps(t_len) == steps
    assert 2**steps >= t_len - 1


@pytest.mark.parametrize("t_len", [257, 300])
@pytest.mark.parametrize("known_shapes", [True, False])
def test_long_sequences(t_len, known_shapes):
    """MAX_TIME unknown: up to 257 steps the doubling steps are unrolled in an If, beyond it a Loop runs them (the
    hypothesis cases stay below 10 steps); lengths past, at and within MAX_TIME, end tokens on the way."""
    rng = np.random.default_rng(t_len)
    step = rng.integers(0, 40, (t_len, 3, 3)).astype(np.int32)
    parent = rng.integers(0, 3, (t_len, 3, 3)).astype(np.int32)
    inputs = [step, parent, np.array([t_len + 5, t_len, t_len - 40], np.int32), np.array(7, np.int32)]
    want = gather_tree_reference(*inputs)
    model = node_model("GatherTree", inputs, {}, [(np.int32, 3)], known_shapes=known_shapes)
    assert model.graph.node[0].overload == (f"steps{doubling_steps(t_len)}" if known_shapes else "looped")
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


@pytest.mark.parametrize("known_shapes", [True, False])
def test_a_followed_parent_out_of_range_fails_naming_the_check(known_shapes):
    step = np.zeros((3, 1, 2), np.int32)
    parent = np.array([[[0, 0]], [[5, 0]], [[0, 1]]], np.int32)  # beam 0 at t = 2 follows parent 0, then 5
    inputs = [step, parent, np.array([3], np.int32), np.array(9, np.int32)]
    model = node_model("GatherTree", inputs, {}, [(np.int32, 3)], known_shapes=known_shapes)
    with pytest.raises(Exception, match="parent_ids_in_range"):
        onnx_ext.run(model, {f"in{i}": v for i, v in enumerate(inputs)})
    with pytest.raises(onnx_ext.OpInputError, match="GatherTree: parent id 5 at time 1"):
        gather_tree_reference(*inputs)
    parent[1, 0, 0] = 0  # unfollowed parents may be anything, as in the reference
    parent[0, 0, 1] = 7
    onnx_ext.run(model, {f"in{i}": v for i, v in enumerate(inputs)})


def test_mismatched_shapes_fail_naming_the_check():
    inputs = [np.zeros((3, 2, 2), np.int32), np.zeros((3, 2, 2), np.int32), np.array([3, 3], np.int32),
              np.array(9, np.int32)]
    model = node_model("GatherTree", inputs, {}, [(np.int32, 3)])
    with pytest.raises(Exception, match="shapes_agree"):
        onnx_ext.run(model, {"in0": inputs[0], "in1": np.zeros((3, 2, 1), np.int32), "in2": inputs[2],
                             "in3": inputs[3]})


@pytest.mark.parametrize("shapes, types, message", [
    ([(3, 2, 2), (3, 2, 1), (2,), ()], ["i32"] * 4, "parent_ids shape"),
    ([(3, 2), (3, 2), (2,), ()], ["i32"] * 4, "step_ids must have rank 3"),
    ([(3, 2, 2), (3, 2, 2), (3,), ()], ["i32"] * 4, "max_seq_len has 3 entries for a batch of 2"),
    ([(3, 2, 2), (3, 2, 2), (2,), (1,)], ["i32"] * 4, "end_token must be a scalar"),
    ([(3, 2, 2), (3, 2, 2), (2,), ()], ["i32", "i32", "i64", "i32"], "one element type"),
])
def test_bad_inputs_are_refused_when_the_node_is_built(shapes, types, message):
    operands = [onnx_ext.Operand(onnx_ext.types.from_ov(t), s) for s, t in zip(shapes, types)]
    with pytest.raises(onnx_ext.OpInputError, match=f"GatherTree.*{message}"):
        onnx_ext.make_node("GatherTree", ["a", "b", "c", "d"], ["y"], operands=operands)


@settings(max_examples=EXAMPLES)
@given(gather_tree_cases(types=[np.int32, np.float32]), st.booleans())
def test_gather_tree_shape_inference(case, known_shapes):
    inputs, const, _, _ = case
    check_inference("GatherTree", inputs, {}, const, [gather_tree_reference(*inputs)], known_shapes,
                    static=known_shapes)


def _beam_search_ir(et="i32"):
    import openvino as ov
    import openvino.opset1 as o1

    step, parent = parameter([-1, -1, 4], et, name="step_ids"), parameter([-1, -1, 4], et, name="parent_ids")
    msl = parameter([-1], et, name="max_seq_len")
    end = o1.constant(np.array(2, onnx_ext.types.from_ov(et).numpy))
    return ov.Model([o1.gather_tree(step, parent, msl, end).output(0)], [step, parent, msl], "m")


@pytest.mark.parametrize("et", ["i32", "f32"])
def test_ir_converts_and_comes_back(et, tmp_path):
    first, again = round_trip(_beam_search_ir(et), tmp_path, "GatherTree")
    rng = np.random.default_rng(5)
    dt = onnx_ext.types.from_ov(et).numpy
    feeds = [rng.integers(0, 5, (6, 3, 4)).astype(dt), rng.integers(0, 4, (6, 3, 4)).astype(dt),
             np.array([6, 1, 4], dt)]
    want = gather_tree_reference(*feeds, np.array(2, dt))
    assert_same(evaluate_model_cpu(first, feeds)[0], want, "OpenVINO CPU")
    assert_same(evaluate_model_cpu(again, feeds)[0], want, "round trip, CPU")
    assert_same(run_onnx(convert(save_ir(_beam_search_ir(et), tmp_path, "again")), feeds)[0], want, "converted")
