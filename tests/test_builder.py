"""BodyBuilder.function: a built body takes the name, inputs, outputs and attributes of the op's general body,
for ops of one output and of several; BodyBuilder.loop: carried and stacked values, stacked values only."""

import numpy as np
import onnx
import pytest
from onnx import helper

import onnx_ext
from onnx_ext.ops.builder import BodyBuilder


def _like(outputs):
    return helper.make_function(onnx_ext.DOMAIN, "Op", ["x"], outputs, [], [helper.make_opsetid("", 21)])


def _run(proto, x):
    node = helper.make_node("Op", ["x"], [f"y{i}" for i in range(len(proto.output))], domain=onnx_ext.DOMAIN,
                            overload=proto.overload)
    outs = [helper.make_tensor_value_info(f"y{i}", onnx.TensorProto.FLOAT, None) for i in range(len(proto.output))]
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3])], outs)
    model = helper.make_model(graph, functions=[proto], ir_version=10,
                              opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(onnx_ext.DOMAIN, 1)])
    return onnx_ext.run(model, {"x": x})


def test_one_output_is_named_output_and_renames_the_last_node():
    g = BodyBuilder()
    proto = g.function(g("Neg", "x"), _like(["return_val"]), "neg").to_function_proto()
    assert list(proto.output) == ["output"] and [n.op_type for n in proto.node] == ["Neg"]
    assert np.array_equal(_run(proto, np.array([1, 2, 3], np.float32))[0], [-1, -2, -3])


def test_several_outputs_keep_the_general_body_names():
    g = BodyBuilder()
    neg = g("Neg", "x")
    total = g("ReduceSum", neg, keepdims=0)  # reads neg: neg gets an Identity of its own
    proto = g.function([neg, total, "x"], _like(["a", "b", "c"]), "three").to_function_proto()
    assert list(proto.output) == ["a", "b", "c"]
    assert [n.op_type for n in proto.node] == ["Neg", "ReduceSum", "Identity", "Identity"]
    x = np.array([1, 2, 3], np.float32)
    a, b, c = _run(proto, x)
    assert np.array_equal(a, -x) and b == -6 and np.array_equal(c, x)


def test_a_count_of_outputs_other_than_the_ops_is_refused():
    g = BodyBuilder()
    with pytest.raises(ValueError, match="2 outputs built, the op has 1"):
        g.function([g("Neg", "x"), "x"], _like(["y"]), "two")


def test_loop_carries_and_stacks_values():
    g = BodyBuilder()
    body = g.branch()
    total = body("Add", "acc_sum_in", "x")
    body("Identity", total, out="acc_sum_out")
    body("Mul", total, body("Cast", "step", to=onnx.TensorProto.FLOAT), out="scaled")
    final, stacked = g.loop("acc", g.const(4), body, "step", carried={"sum": ("x", onnx.TensorProto.FLOAT, [3])},
                            scanned={"scaled": ("stacked", onnx.TensorProto.FLOAT)})
    proto = g.function([final, stacked], _like(["final", "stacked"]), "loop").to_function_proto()
    x = np.array([1, 2, 3], np.float32)
    got_final, got_stacked = _run(proto, x)
    assert np.array_equal(got_final, 5 * x)
    assert np.array_equal(got_stacked, [(i + 2) * x * i for i in range(4)])


def test_loop_of_stacked_values_only():
    g = BodyBuilder()
    body = g.branch()
    body("Mul", "x", body("Cast", "step", to=onnx.TensorProto.FLOAT), out="scaled")
    (stacked,) = g.loop("only", g.const(3), body, "step", scanned={"scaled": ("stacked", onnx.TensorProto.FLOAT)})
    proto = g.function(stacked, _like(["y"]), "loop").to_function_proto()
    x = np.array([1, 2, 3], np.float32)
    assert np.array_equal(_run(proto, x)[0], [x * i for i in range(3)])
