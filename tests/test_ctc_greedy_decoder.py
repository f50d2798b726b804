"""CTCGreedyDecoder-1 and CTCGreedyDecoderSeqLen-6: the function (onnxruntime), the inlined model and the numpy
reference against OpenVINO's CPU plugin (its reference has no evaluate for these ops) on random cases; the
named checks; the schemas; the translators; IR -> ONNX -> IR."""

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
from onnx_ext.ops.ctc_greedy_decoder import ctc_greedy_decoder_reference, ctc_greedy_decoder_seq_len_reference
from ov_reference import OVCrashed, OVRejected

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(t) for t in (np.float32, np.float16, np.float64, BF16)]
I32, I64 = onnx.TensorProto.INT32, onnx.TensorProto.INT64


def _logits(rng, shape, dtype):
    """Small integers: ties between classes (the first wins) and repeats are frequent."""
    return rng.integers(0, 3, shape).astype(dtype)


@st.composite
def v1_cases(draw):
    t_len, batch, classes = draw(st.integers(0, 7)), draw(st.integers(1, 3)), draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from(FLOATS))
    mask = (rng.random((t_len, batch)) > 0.2).astype(dtype)  # a 0 ends its sequence
    attrs = {"ctc_merge_repeated": draw(st.sampled_from([0, 1]))}
    return [_logits(rng, (t_len, batch, classes), dtype), mask], attrs, [False, draw(st.booleans())], \
        draw(st.booleans())


@st.composite
def seq_len_cases(draw):
    batch, t_len, classes = draw(st.integers(1, 3)), draw(st.integers(0, 7)), draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from(FLOATS))
    lengths = rng.integers(0, t_len + 1, batch).astype(draw(st.sampled_from([np.int32, np.int64])))
    inputs = [_logits(rng, (batch, t_len, classes), dtype), lengths]
    blank = draw(st.sampled_from([None, "scalar", "vector"]))
    if blank is not None:
        value = draw(st.integers(0, classes))  # == classes: no class is the blank
        inputs.append(np.array(value if blank == "scalar" else [value], lengths.dtype))
    attrs = {"merge_repeated": draw(st.sampled_from([0, 1])), "classes_index_type": draw(st.sampled_from([I32, I64])),
             "sequence_length_type": draw(st.sampled_from([I32, I64]))}
    const = [False, draw(st.booleans())] + [draw(st.booleans())] * (len(inputs) - 2)
    return inputs, attrs, const, draw(st.booleans())


def _ov_attrs(attrs):
    out = {k: bool(v) if k.endswith("repeated") else v for k, v in attrs.items()}
    for k in ("classes_index_type", "sequence_length_type"):
        if k in out:
            out[k] = onnx_ext.types.from_onnx(out[k]).ov
    return out


@settings(max_examples=EXAMPLES)
@given(v1_cases())
def test_ctc_greedy_decoder_matches_openvino(ov_reference, case):
    inputs, attrs, const, known_shapes = case
    want = ctc_greedy_decoder_reference(*inputs, **attrs)
    if inputs[0].dtype == np.float32 and inputs[0].shape[0] > 0:
        try:
            (ov,) = ov_reference("CTCGreedyDecoder", 1, inputs, _ov_attrs(attrs), const=const, device="cpu")
        except (OVRejected, OVCrashed) as e:
            raise AssertionError(f"OpenVINO refused a valid case: {e}") from None
        assert_same(want, ov, "numpy reference vs OpenVINO CPU")
    model = node_model("CTCGreedyDecoder", inputs, attrs, [(want.dtype, 4)], const, known_shapes)
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


@settings(max_examples=EXAMPLES)
@given(seq_len_cases())
def test_ctc_greedy_decoder_seq_len_matches_openvino(ov_reference, case):
    inputs, attrs, const, known_shapes = case
    want = ctc_greedy_decoder_seq_len_reference(*inputs, **attrs)
    if inputs[0].dtype == np.float32 and inputs[0].shape[1] > 0:
        try:
            ov = ov_reference("CTCGreedyDecoderSeqLen", 6, inputs, _ov_attrs(attrs), const=const, device="cpu")
        except (OVRejected, OVCrashed) as e:
            raise AssertionError(f"OpenVINO refused a valid case: {e}") from None
        for mine, theirs in zip(want, ov):
            assert_same(mine, theirs, "numpy reference vs OpenVINO CPU")
    model = node_model("CTCGreedyDecoderSeqLen", inputs, attrs, [(w.dtype, w.ndim) for w in want], const,
                       known_shapes)
    for how, got in run_three_ways(model, inputs).items():
        for g, w, name in zip(got, want, ("decoded", "decoded_length")):
            assert_same(g, w, f"{how} {name}")


def test_spec_example_and_hand_cases():
    """Classes 2, 2, 0 (blank 3 in v1: kept; merged), then a blank between two 1s keeps both."""
    logits = np.eye(4, dtype=np.float32)[[2, 2, 0, 1, 3, 1, 1]]  # one-hot rows [T, C]
    inputs = [logits[:, None, :], np.ones((7, 1), np.float32)]
    want = np.array([2, 0, 1, 1, -1, -1, -1], np.float32).reshape(1, 7, 1, 1)
    model = node_model("CTCGreedyDecoder", inputs, {}, [(np.float32, 4)], known_shapes=True)
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, want, how)
    seq = [logits[None], np.array([6], np.int32), np.int32(0)]  # blank 0, the first 6 steps
    want = (np.array([[2, 1, 3, 1, -1, -1, -1]], np.int32), np.array([4], np.int32))
    model = node_model("CTCGreedyDecoderSeqLen", seq, {}, [(np.int32, 2), (np.int32, 1)], known_shapes=True)
    for how, got in run_three_ways(model, seq).items():
        assert_same(got[0], want[0], how)
        assert_same(got[1], want[1], how)


@pytest.mark.parametrize("lengths", [[7, 1], [-1, 2]])
def test_sequence_length_outside_time_fails_naming_the_check(lengths):
    inputs = [np.zeros((2, 6, 3), np.float32), np.array(lengths, np.int32)]
    model = node_model("CTCGreedyDecoderSeqLen", inputs, {}, [(np.int32, 2), (np.int32, 1)])
    with pytest.raises(Exception, match="sequence_length_within_time"):
        onnx_ext.run(model, {"in0": inputs[0], "in1": inputs[1]})
    with pytest.raises(onnx_ext.OpInputError, match="sequence_length .* is outside"):
        ctc_greedy_decoder_seq_len_reference(*inputs)
    operands = [onnx_ext.Operand(shape=(2, 6, 3)), onnx_ext.Operand(value=inputs[1], shape=(2,))]
    with pytest.raises(onnx_ext.OpInputError, match="CTCGreedyDecoderSeqLen.*outside \\[0, 6\\]"):
        onnx_ext.make_node("CTCGreedyDecoderSeqLen", ["d", "l"], ["y", "n"], operands=operands)


@pytest.mark.parametrize("op, attrs, message", [
    ("CTCGreedyDecoder", {"ctc_merge_repeated": 2}, "ctc_merge_repeated' is 2"),
    ("CTCGreedyDecoderSeqLen", {"classes_index_type": onnx.TensorProto.FLOAT}, "classes_index_type' is 1"),
    ("CTCGreedyDecoderSeqLen", {"sequence_length_type": onnx.TensorProto.INT8}, "sequence_length_type' is 3"),
    ("CTCGreedyDecoderSeqLen", {"merge_repeated": -1}, "merge_repeated' is -1"),
])
def test_bad_attributes_name_op_and_attribute(op, attrs, message):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"{op}.*{message}"):
        onnx_ext.make_node(op, ["a", "b"], ["y", "n"] if op.endswith("SeqLen") else ["y"], **attrs)


@pytest.mark.parametrize("op, shapes, message", [
    ("CTCGreedyDecoder", [(5, 2, 3), (5, 3)], "sequence_mask \\[5, 3\\] does not match"),
    ("CTCGreedyDecoder", [(5, 2), (5, 2)], "data must have rank 3"),
    ("CTCGreedyDecoderSeqLen", [(2, 5, 3), (3,)], "sequence_length has 3 entries for a batch of 2"),
    ("CTCGreedyDecoderSeqLen", [(2, 5, 3), (2,), (2,)], "blank_index must be a scalar"),
])
def test_bad_shapes_are_refused_when_the_node_is_built(op, shapes, message):
    operands = [onnx_ext.Operand(shape=s) for s in shapes]
    names = ["a", "b", "c"][:len(shapes)]
    with pytest.raises(onnx_ext.OpInputError, match=message):
        onnx_ext.make_node(op, names, ["y", "n"] if op.endswith("SeqLen") else ["y"], operands=operands)


@settings(max_examples=EXAMPLES)
@given(v1_cases(), seq_len_cases(), st.booleans())
def test_shape_inference(v1, seq_len, known_shapes):
    inputs, attrs, const, _ = v1
    check_inference("CTCGreedyDecoder", inputs, attrs, const, [ctc_greedy_decoder_reference(*inputs, **attrs)],
                    known_shapes, static=known_shapes)
    inputs, attrs, const, _ = seq_len
    check_inference("CTCGreedyDecoderSeqLen", inputs, attrs, const,
                    list(ctc_greedy_decoder_seq_len_reference(*inputs, **attrs)), known_shapes, static=known_shapes)


def _ir(op):
    import openvino as ov
    import openvino.opset1 as o1
    import openvino.opset6 as o6

    if op == "CTCGreedyDecoder":
        d, m = parameter([-1, -1, 6], name="logits"), parameter([-1, -1], name="mask")
        return ov.Model([o1.ctc_greedy_decoder(d, m, merge_repeated=False).output(0)], [d, m], "m")
    d, n = parameter([-1, -1, 6], name="logits"), parameter([-1], "i32", name="lengths")
    node = o6.ctc_greedy_decoder_seq_len(d, n, o1.constant(np.int32(2)), True, "i64", "i32")
    return ov.Model(node.outputs(), [d, n], "m")


@pytest.mark.parametrize("op", ["CTCGreedyDecoder", "CTCGreedyDecoderSeqLen"])
def test_ir_converts_and_comes_back(op, tmp_path):
    first, again = round_trip(_ir(op), tmp_path, op)
    rng = np.random.default_rng(7)
    if op == "CTCGreedyDecoder":
        feeds = [_logits(rng, (8, 3, 6), np.float32), (rng.random((8, 3)) > 0.15).astype(np.float32)]
        want = [ctc_greedy_decoder_reference(*feeds, ctc_merge_repeated=0)]
    else:
        feeds = [_logits(rng, (3, 8, 6), np.float32), np.array([8, 3, 0], np.int32)]
        want = list(ctc_greedy_decoder_seq_len_reference(*feeds, np.int32(2), 1, I64, I32))
    for got_first, got_again, w in zip(evaluate_model_cpu(first, feeds), evaluate_model_cpu(again, feeds), want):
        assert_same(got_first, w, "OpenVINO CPU")
        assert_same(got_again, w, "round trip, CPU")
    converted = run_onnx(convert(save_ir(_ir(op), tmp_path, "again")), feeds)
    for got, w in zip(converted, want):
        assert_same(got, w, "converted")
