"""RandomUniform-8: bit-exact to OpenVINO's reference for given seeds (both alignments, every output type; bf16
within two ulps of the bounds: OpenVINO rounds bf16 its own way), three ways; seeds both 0 non-deterministic; the spec's
examples; the named checks; the schema; the translator (constant inputs folded); IR -> ONNX -> IR."""

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import EXAMPLES, check_inference, node_model, round_trip, run_three_ways
from helpers import assert_same
from ir_testing import convert, evaluate_model, parameter, run_onnx, save_ir
from onnx_ext.ops.random_uniform import random_uniform_reference
from onnx_ext.ops.random_uniform.streams import TABLE_WORDS
from ov_reference import OVCrashed, OVRejected

BF16 = np.dtype(ml_dtypes.bfloat16)
TYPES = {"f32": np.float32, "f16": np.float16, "bf16": BF16, "f64": np.float64, "i32": np.int32, "i64": np.int64}


def _bounds(draw, ov_type):
    if ov_type in ("i32", "i64"):
        top = 2**31 - 1 if ov_type == "i32" else 2**62
        # OpenVINO validates min < max in double: i64 bounds closer than a double's spacing are refused
        lo = draw(st.integers(-top, top - 2**11))
        return lo, draw(st.integers(lo + 1, top).filter(lambda hi: float(hi) > float(lo)))
    lo = draw(st.sampled_from([0.0, -1.0, -2.5, 3.0, -100.0]))
    return lo, lo + draw(st.sampled_from([1.0, 0.5, 7.0, 1000.0]))


@st.composite
def random_uniform_cases(draw, seeded=True):
    ov_type = draw(st.sampled_from(sorted(TYPES)))
    dtype = np.dtype(TYPES[ov_type])
    rank = draw(st.integers(0, 3))
    dims = draw(st.lists(st.sampled_from([0, 1, 2, 3, 5, 7, 64]), min_size=rank, max_size=rank))
    seeds = st.one_of(st.integers(0, 100), st.integers(0, 2**64 - 1))
    global_seed, op_seed = (draw(seeds), draw(seeds)) if seeded else (0, 0)
    if seeded and global_seed == op_seed == 0:
        op_seed = 1
    lo, hi = _bounds(draw, ov_type)
    inputs = [np.array(dims, draw(st.sampled_from([np.int64, np.int32]))), np.array(lo).astype(dtype),
              np.array(hi).astype(dtype)]
    attrs = {"output_type": onnx_ext.types.from_ov(ov_type).onnx, "global_seed": global_seed - 2**64
             if global_seed >= 2**63 else global_seed, "op_seed": op_seed - 2**64 if op_seed >= 2**63 else op_seed,
             "alignment": draw(st.sampled_from(["tensorflow", "pytorch"]))}
    const = [draw(st.booleans()), draw(st.booleans()), draw(st.booleans())]
    return inputs, attrs, const


def _ov_attrs(attrs):
    return {"output_type": onnx_ext.types.from_onnx(attrs["output_type"]).ov,
            "global_seed": attrs["global_seed"], "op_seed": attrs["op_seed"],  # (int64 bits, as OpenVINO's API)
            "alignment": attrs["alignment"]}


@settings(max_examples=EXAMPLES)
@given(random_uniform_cases())
def test_random_uniform_matches_openvino(ov_reference, case):
    inputs, attrs, const = case
    try:
        (expected,) = ov_reference("RandomUniform", 8, inputs, _ov_attrs(attrs), const=const)
    except (OVRejected, OVCrashed) as e:
        raise AssertionError(f"the reference refused a valid case: {e}") from None
    mine = random_uniform_reference(*inputs, **attrs)
    if mine.dtype == BF16:  # OpenVINO rounds bf16 its own way, after the product and after the sum (where min
        # cancels, its error is one of the product's): within 2 ulps of the bounds' magnitude
        assert mine.shape == expected.shape and expected.dtype == BF16
        scale = max(abs(float(v.astype(np.float64))) for v in inputs[1:])
        np.testing.assert_allclose(mine.astype(np.float64), expected.astype(np.float64), rtol=0,
                                   atol=2 * 2.0**-7 * max(scale, 1.0), err_msg="numpy reference vs OpenVINO")
    else:
        assert_same(mine, expected, "numpy reference vs OpenVINO")
    model = node_model("RandomUniform", inputs, attrs, [(mine.dtype, mine.ndim)], const)
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, mine, how)  # bit-exact to the numpy reference


@pytest.mark.parametrize("alignment, ov_type, bounds", [
    ("tensorflow", "f32", (-1, 2)), ("tensorflow", "f16", (-1, 2)), ("tensorflow", "f64", (0, 1)),
    ("tensorflow", "i32", (3, 1000)),
    ("tensorflow", "i64", (-5, 2**40)), ("pytorch", "f32", (-1, 2)), ("pytorch", "f64", (0, 1)),
    ("pytorch", "i64", (0, 100)), ("pytorch", "i64", (-5, 2**40))])
def test_streams_beyond_the_table_are_computed_exactly(ov_reference, alignment, ov_type, bounds):
    # a shape of more words than the body's table of the stream's first words: the computed branch
    values = TABLE_WORDS // (2 if ov_type in ("f64", "i64") else 1) + 5
    dtype = TYPES[ov_type]
    inputs = [np.array([values], np.int64), np.array(bounds[0], dtype), np.array(bounds[1], dtype)]
    attrs = {"output_type": onnx_ext.types.from_ov(ov_type).onnx, "global_seed": 2**40 + 3, "op_seed": 7,
             "alignment": alignment}
    (expected,) = ov_reference("RandomUniform", 8, inputs, _ov_attrs(attrs), const=[False, True, True])
    model = node_model("RandomUniform", inputs, attrs, [(expected.dtype, 1)], [False, True, True])
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, expected, how)


@pytest.mark.parametrize("global_seed, op_seed", [(2**40 + 3, 2**33 + 7), (5, 2**63 + 11), (2**64 - 1, 2**32)])
def test_philox_beyond_the_table_with_high_seed_words(ov_reference, global_seed, op_seed):
    # the key's and the counter's high words enter the computed calls folded into the first rounds' constants
    inputs = [np.array([TABLE_WORDS + 9], np.int64), np.array(-1, np.float32), np.array(2, np.float32)]
    attrs = {"output_type": onnx.TensorProto.FLOAT, "global_seed": global_seed - 2**64 if global_seed >= 2**63
             else global_seed, "op_seed": op_seed - 2**64 if op_seed >= 2**63 else op_seed, "alignment": "tensorflow"}
    (expected,) = ov_reference("RandomUniform", 8, inputs, _ov_attrs(attrs), const=[False, True, True])
    model = node_model("RandomUniform", inputs, attrs, [(expected.dtype, 1)], [False, True, True])
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_same(got, expected, how)


@pytest.mark.parametrize("attrs, inputs, want", [
    ({"output_type": onnx.TensorProto.FLOAT, "global_seed": 150, "op_seed": 10},
     [np.array([3, 3]), np.float32(0), np.float32(1)],
     np.array([[0.7011236, 0.30539632, 0.93931055], [0.9456035, 0.11694777, 0.50770056],
               [0.5197197, 0.22727466, 0.991374]], np.float32)),
    ({"output_type": onnx.TensorProto.DOUBLE, "global_seed": 80, "op_seed": 100},
     [np.array([2, 2]), np.float64(2), np.float64(10)],
     np.array([[5.65927959, 4.23122376], [2.67008206, 2.36423758]])),
    ({"output_type": onnx.TensorProto.INT32, "global_seed": 80, "op_seed": 100},
     [np.array([2, 3]), np.int32(50), np.int32(100)], np.array([[65, 70, 56], [59, 82, 92]], np.int32)),
    # PyTorch alignment: the spec's examples are wrong; these are torch.manual_seed(s) then torch.rand, uniform_,
    # random_ (torch 2.13), which the reference gives
    ({"output_type": onnx.TensorProto.FLOAT, "global_seed": 150, "alignment": "pytorch"},
     [np.array([3, 3]), np.float32(0), np.float32(1)],
     np.array([[0.59748673, 0.544582, 0.04074067], [0.5810562, 0.67971706, 0.3907653],
               [0.1751616, 0.36466956, 0.70758903]], np.float32)),
    ({"output_type": onnx.TensorProto.INT32, "global_seed": 80, "alignment": "pytorch"},
     [np.array([2, 3]), np.int32(50), np.int32(100)], np.array([[77, 58, 62], [69, 60, 94]], np.int32)),
])
def test_spec_examples(attrs, inputs, want):
    inputs = [np.asarray(v) for v in inputs]
    model = node_model("RandomUniform", inputs, attrs, [(want.dtype, want.ndim)], [False, True, True])
    for how, (got,) in run_three_ways(model, inputs).items():
        np.testing.assert_allclose(got, want, rtol=1e-7, err_msg=how)


@settings(max_examples=max(1, EXAMPLES // 3))
@given(random_uniform_cases(seeded=False))
def test_seeds_both_zero_draw_a_new_sequence_each_run(ov_reference, case):
    inputs, attrs, const = case
    if np.prod(inputs[0]) < 16:
        inputs[0] = np.array([4, 8], inputs[0].dtype)
    (ov,) = ov_reference("RandomUniform", 8, inputs, _ov_attrs(attrs), const=const)
    model = node_model("RandomUniform", inputs, attrs, [(ov.dtype, ov.ndim)], const)
    first, second = run_three_ways(model, inputs), run_three_ways(model, inputs)
    lo, hi = (float(np.asarray(v).astype(np.float64)) for v in inputs[1:])
    for how in first:
        a, b = first[how][0], second[how][0]
        assert a.dtype == ov.dtype and a.shape == ov.shape, how
        if a.dtype.kind == "f" or hi - lo > 1:  # (integers in [0, 1): one value)
            assert not np.array_equal(a, b), f"{how}: the same numbers twice"
        values = a.astype(np.float64)
        assert ((values >= lo) & (values <= hi)).all(), how


def test_openvino_moves_on_where_onnx_repeats_the_first_evaluation(tmp_path):
    """OpenVINO's node keeps a state: its second evaluation continues the stream; an ONNX graph has no state,
    so each run gives the first evaluation (deliberate: docs/ops/random_uniform.md)."""
    import openvino as ov
    import openvino.opset8 as o8

    shape = parameter([1], "i64", name="shape")
    node = o8.random_uniform(shape, o8.constant(np.float32(0)), o8.constant(np.float32(1)), "f32", 3, 4)
    model = ov.Model([node.output(0)], [shape], "m")
    first, second = evaluate_model(model, [np.array([5])])[0], evaluate_model(model, [np.array([5])])[0]
    assert not np.array_equal(first, second)
    onnx_model = convert(save_ir(model, tmp_path))
    for _ in range(2):
        assert_same(run_onnx(onnx_model, [np.array([5])])[0], first, "converted")


@pytest.mark.parametrize("inputs, output_type, check", [
    ([np.array([2, -1]), np.float32(0), np.float32(1)], onnx.TensorProto.FLOAT, "shape_non_negative"),
    ([np.array([3]), np.int32(4), np.int32(4)], onnx.TensorProto.INT32, "max_differs_from_min"),
])
def test_bad_runtime_inputs_fail_naming_the_check(inputs, output_type, check):
    inputs = [np.asarray(v) for v in inputs]
    model = node_model("RandomUniform", inputs, {"output_type": output_type, "global_seed": 1}, [(inputs[1].dtype, None)])
    with pytest.raises(Exception, match=check):
        onnx_ext.run(model, {f"in{i}": v for i, v in enumerate(inputs)})
    with pytest.raises(onnx_ext.OpInputError, match="RandomUniform"):
        random_uniform_reference(*inputs, output_type=output_type, global_seed=1)


@pytest.mark.parametrize("attrs, message", [
    ({"output_type": onnx.TensorProto.UINT8}, "output_type' is 2"),
    ({"output_type": onnx.TensorProto.FLOAT, "alignment": "jax"}, "alignment' is 'jax'"),
    ({}, "output_type' is required"),
])
def test_bad_attributes_name_op_and_attribute(attrs, message):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"RandomUniform.*{message}"):
        onnx_ext.make_node("RandomUniform", ["s", "a", "b"], ["y"], **attrs)


@pytest.mark.parametrize("operands, message", [
    ([onnx_ext.Operand(value=np.array([2, -3]), shape=(2,)), onnx_ext.Operand(), onnx_ext.Operand()], "negative dim"),
    ([onnx_ext.Operand(shape=(2,)), onnx_ext.Operand(type=onnx_ext.types.from_ov("f16")), onnx_ext.Operand()],
     "min must have the output type f32, got f16"),
    ([onnx_ext.Operand(type=onnx_ext.types.from_ov("f32"), shape=(2,)), onnx_ext.Operand(), onnx_ext.Operand()],
     "shape must be i32 or i64"),
])
def test_bad_inputs_are_refused_when_the_node_is_built(operands, message):
    with pytest.raises(onnx_ext.OpInputError, match=f"RandomUniform.*{message}"):
        onnx_ext.make_node("RandomUniform", ["s", "a", "b"], ["y"], output_type=onnx.TensorProto.FLOAT,
                           operands=operands)


@settings(max_examples=EXAMPLES)
@given(random_uniform_cases())
def test_random_uniform_shape_inference(case):
    inputs, attrs, const = case
    # (the shape vector's length declared: a run-time shape of unknown length gives an output of unknown rank)
    check_inference("RandomUniform", inputs, attrs, const, [random_uniform_reference(*inputs, **attrs)],
                    known_shapes=True, static=const[0])


def _ir(alignment, seeds, constant_shape=False):
    import openvino as ov
    from openvino.utils.node_factory import NodeFactory
    import openvino.opset8 as o8

    shape = o8.constant(np.array([4, 6])) if constant_shape else parameter([2], "i64", name="shape")
    node = NodeFactory("opset8").create("RandomUniform", [shape.output(0), o8.constant(np.float32(-1)).output(0),
                                                          o8.constant(np.float32(2)).output(0)],
                                        {"output_type": "f32", "global_seed": seeds[0], "op_seed": seeds[1],
                                         "alignment": alignment})
    return ov.Model([node.output(0)], [] if constant_shape else [shape], "m")


@pytest.mark.parametrize("alignment", ["tensorflow", "pytorch"])
@pytest.mark.parametrize("seeds", [(12, 34), (5 - 2**63, 2**40)])  # (OpenVINO's Python API writes 2^63 + 5 so)
def test_ir_converts_and_comes_back(alignment, seeds, tmp_path):
    first, again = round_trip(_ir(alignment, seeds), tmp_path, "RandomUniform")
    feeds = [np.array([4, 6])]
    want = evaluate_model(_ir(alignment, seeds), feeds)[0]
    assert_same(evaluate_model(again, feeds)[0], want, "round trip, reference")
    assert_same(run_onnx(convert(save_ir(_ir(alignment, seeds), tmp_path, "again")), feeds)[0], want, "converted")


def test_constant_inputs_fold_to_the_first_evaluation(tmp_path):
    model = convert(save_ir(_ir("tensorflow", (12, 34), constant_shape=True), tmp_path))
    assert not [n for n in model.graph.node if n.domain == onnx_ext.DOMAIN]
    want = evaluate_model(_ir("tensorflow", (12, 34), constant_shape=True), [])[0]
    assert_same(run_onnx(model, [])[0], want, "folded")
    kept = convert(save_ir(_ir("tensorflow", (0, 0), constant_shape=True), tmp_path, "random"))
    assert [n.op_type for n in kept.graph.node if n.domain == onnx_ext.DOMAIN] == ["RandomUniform"]
