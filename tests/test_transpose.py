"""Transpose-1 with a run-time order: the function (onnxruntime), the inlined model and the numpy reference
against OpenVINO's reference on random cases; the named checks; the schema; IR -> ONNX -> IR."""

import itertools

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import EXAMPLES, check_inference, node_model, round_trip, run_three_ways
from helpers import DATA_TYPES, assert_same, random_values
from ir_testing import evaluate_model, evaluate_model_cpu, parameter, save_ir, convert, run_onnx
from ov_reference import OVCrashed, OVRejected


@st.composite
def transpose_cases(draw, max_rank=4):
    rank = draw(st.integers(0, max_rank))
    shape = draw(st.lists(st.integers(0 if draw(st.booleans()) else 1, 3), min_size=rank, max_size=rank))
    order = draw(st.sampled_from([[], *itertools.islice(itertools.permutations(range(rank)), 0, None, 7)]))
    if order == [] and draw(st.booleans()):
        order = list(draw(st.permutations(range(rank))))
    dtype = draw(st.sampled_from(DATA_TYPES))
    order_dtype = draw(st.sampled_from([np.int64, np.int32, np.uint8]))
    data = random_values(np.random.default_rng(draw(st.integers(0, 2**32 - 1))), shape, dtype)
    const = [False, draw(st.booleans())]
    return data, np.array(order, order_dtype).reshape(len(order)), const, draw(st.booleans())


@settings(max_examples=EXAMPLES)
@given(transpose_cases())
def test_transpose_matches_openvino(ov_reference, case):
    data, order, const, known_shapes = case
    try:
        (expected,) = ov_reference("Transpose", 1, [data, order], {}, const=const)
    except (OVRejected, OVCrashed) as e:
        raise AssertionError(f"the reference refused a valid case: {e}") from None
    (mine,) = onnx_ext.SPECS["Transpose"].run_reference(data, order)
    assert_same(mine, expected, "numpy reference")
    model = node_model("Transpose", [data, order], {}, [(data.dtype, data.ndim)], const, known_shapes)
    for how, (got,) in run_three_ways(model, [data, order]).items():
        assert_same(got, expected, how)


@pytest.mark.parametrize("rank", range(8))
def test_every_rank_picks_its_body_and_transposes(rank):
    """rank <= 5: the If tree (rank{r}); 6 and 7: the general Gather body; both on a few orders."""
    shape = tuple(range(2, 2 + rank))
    data = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    perms = [p for i, p in enumerate(itertools.permutations(range(rank))) if i % 97 in (0, 1)][:3]
    model = node_model("Transpose", [data, np.arange(rank)], {}, [(np.float32, rank)])
    assert model.graph.node[0].overload == (f"rank{rank}" if rank <= 5 else "general")
    for perm in perms + [()]:
        order = np.array(perm, np.int64)
        want = np.transpose(data, perm if perm or rank == 0 else None)
        for how, (got,) in run_three_ways(model, [data, order]).items():
            assert_same(got, want, f"{how} {perm}")


def test_constant_order_is_onnx_transpose():
    data = np.zeros((2, 3, 4), np.int8)
    model = node_model("Transpose", [data, np.array([2, 0, 1])], {}, [(np.int8, 3)], const=[False, True])
    assert model.graph.node[0].overload == "perm_2_0_1"
    (body,) = [f for f in model.functions if f.overload == "perm_2_0_1"]
    assert [n.op_type for n in body.node] == ["Transpose"]


@pytest.mark.parametrize("order, check", [
    ([0, 0, 1], "order_is_a_permutation"),
    ([-1, 0, 1], "order_is_a_permutation"),
    ([3, 0, 1], "order_is_a_permutation"),
    ([1, 0], "order_length_is_rank_or_0"),
    ([0, 1, 2, 3], "order_length_is_rank_or_0"),
])
@pytest.mark.parametrize("rank_known", [True, False])
def test_bad_runtime_orders_fail_naming_the_check(order, check, rank_known):
    data = np.zeros((2, 3, 4), np.float32)
    model = node_model("Transpose", [data, np.array([0, 1, 2])], {}, [(np.float32, 3)], bodies=False)
    if not rank_known:
        model.graph.input[0].type.tensor_type.ClearField("shape")
    model = onnx_ext.attach_functions(model)
    assert model.graph.node[0].overload == ("rank3" if rank_known else "general")
    with pytest.raises(Exception, match=check):
        onnx_ext.run(model, {"in0": data, "in1": np.array(order, np.int64)})
    with pytest.raises(onnx_ext.OpInputError, match="Transpose: order"):
        onnx_ext.SPECS["Transpose"].reference(data, np.array(order))


@pytest.mark.parametrize("order, message", [
    ([0, 0, 1], r"Transpose \(node 'n'\): order \[0, 0, 1\] is not a permutation of 0..2"),
    ([1, 0], "order has 2 entries for data of rank 3"),
    ([[0, 1, 2]], "order must be a 1-D vector"),
])
def test_bad_constant_orders_are_refused_when_the_node_is_built(order, message):
    operands = [onnx_ext.Operand(shape=(2, 3, 4)), onnx_ext.Operand(value=np.array(order), shape=np.shape(order))]
    with pytest.raises(onnx_ext.OpInputError, match=message):
        onnx_ext.make_node("Transpose", ["d", "o"], ["y"], name="n", operands=operands)
    with pytest.raises(onnx_ext.OpInputError, match="order must be integers"):
        onnx_ext.make_node("Transpose", ["d", "o"], ["y"], operands=[operands[0], onnx_ext.Operand(
            type=onnx_ext.types.from_ov("f32"))])


@settings(max_examples=EXAMPLES)
@given(transpose_cases(), st.booleans())
def test_transpose_shape_inference(case, known_shapes):
    data, order, const, _ = case
    expected = onnx_ext.SPECS["Transpose"].reference(data, order)
    check_inference("Transpose", [data, order], {}, const, [expected], known_shapes,
                    static=const[1] and (known_shapes or data.ndim == 0))


def test_bad_order_fails_inference_naming_the_op():
    model = node_model("Transpose", [np.zeros((2, 3), np.float32), np.array([0, 0])], {}, [(np.float32, None)],
                       const=[False, True], bodies=False)
    with pytest.raises(onnx.shape_inference.InferenceError, match="Transpose.*not a permutation"):
        onnx.shape_inference.infer_shapes(model, strict_mode=True)


def _runtime_order_ir(tmp_path, et="f32", rank=4):
    import openvino as ov
    import openvino.opset1 as o1

    x = parameter([-1] * rank, et, name="x")
    order = parameter([rank], "i32", name="order")
    return ov.Model([o1.transpose(x, order).output(0)], [x, order], "m")


@pytest.mark.parametrize("et", ["f32", "i64", "u8", "boolean"])
def test_ir_with_a_runtime_order_converts_and_comes_back(et, tmp_path):
    first, again = round_trip(_runtime_order_ir(tmp_path, et), tmp_path, "Transpose")
    data = random_values(np.random.default_rng(0), (2, 3, 1, 4), onnx_ext.types.from_ov(et).numpy)
    for perm in ([3, 1, 0, 2], [0, 1, 2, 3]):
        feeds = [data, np.array(perm, np.int32)]
        want = evaluate_model(first, feeds)[0]
        assert_same(evaluate_model(again, feeds)[0], want, "round trip, reference")
        assert_same(evaluate_model_cpu(again, feeds)[0], want, "round trip, CPU")
        model = convert(save_ir(_runtime_order_ir(tmp_path, et), tmp_path, "again"))
        assert_same(run_onnx(model, feeds)[0], want, "converted")
