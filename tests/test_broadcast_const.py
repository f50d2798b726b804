"""Broadcast bodies for a constant target_shape (and axes_mapping): ``numpy_to_...`` and
``explicit_to_..._axes...``: against the numpy reference on random cases, their overload names,
and what onnxruntime keeps of them."""

import numpy as np
import onnx
import pytest
from hypothesis import given
from hypothesis import strategies as st

import onnx_ext
from helpers import assert_same, feeds_of, one_node_model, run_three_ways
from helpers import optimised_op_types
from onnx_ext.ops.broadcast import SPEC, ToTarget, broadcast_reference
from test_broadcast import broadcast_cases


def _out_rank(mode, data, target):
    if mode == "pdpd" or mode == "bidirectional":
        return max(np.ndim(data), len(target))
    return len(target)


@given(broadcast_cases(), st.booleans())
def test_const_bodies_match_reference(case, known_shapes):
    mode, version, axis, inputs, _, _ = case
    if mode not in ("numpy", "explicit", "none"):
        return
    attrs = {"mode": mode, "version": version}
    const = [False] + [True] * (len(inputs) - 1)
    try:
        want = broadcast_reference(*inputs, **attrs)
    except onnx_ext.OnnxExtError:
        want = None
    try:
        model = one_node_model("Broadcast", inputs, attrs, const=const, out_rank=_out_rank(mode, *inputs[:2]),
                               known_shapes=known_shapes)
    except onnx_ext.OnnxExtError:
        assert want is None, "refused when built, accepted by the reference"
        return
    overload = model.graph.node[0].overload
    if inputs[0].dtype.name != "bfloat16":
        assert "_to_" in overload, overload
    if want is None:
        with pytest.raises(Exception):
            onnx_ext.run(model, feeds_of(model, inputs))
        return
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, want, f"{how} ({overload})")


@pytest.mark.parametrize("inputs, attrs, check", [
    ([np.zeros((3, 1), np.float32), np.array([1, 4])], {}, "target_shape_numpy_compatible"),  # two-way
    ([np.zeros((2, 3), np.float32), np.array([2, 1, 3])], {}, "target_shape_numpy_compatible"),
    ([np.zeros((3,), np.int8), np.array([3, 1]), np.array([1])], {"mode": "explicit"},
     "data_dims_match_target_at_axes_mapping"),
    ([np.zeros((0, 1), np.float32), np.array([1, 1])], {}, "target_shape_numpy_compatible"),  # 0 beside a 1
    ([np.zeros((0, 1), np.float32), np.array([1, 1]), np.array([0, 1])], {"mode": "explicit"},
     "data_dims_match_target_at_axes_mapping"),
])
def test_dynamic_dims_against_target_1_are_checked_at_run_time(inputs, attrs, check):
    const = [False] + [True] * (len(inputs) - 1)
    model = one_node_model("Broadcast", inputs, attrs, const=const, out_rank=len(inputs[1]))
    assert "_check" in model.graph.node[0].overload
    feeds = feeds_of(model, inputs)
    for m in (model, onnx_ext.inline(model)):
        with pytest.raises(Exception, match=check):
            onnx_ext.run(m, feeds)


@pytest.mark.parametrize("inputs, attrs", [
    ([np.zeros((3, 2), np.float32), np.array([3, 1])], {}),
    ([np.zeros((3, 2), np.float32), np.array([4, 3, 3]), np.array([1, 2])], {"mode": "explicit"}),
])
def test_known_dims_are_checked_when_built(inputs, attrs):
    # Only the first dim is dynamic: the known one is checked when the node is built.
    import onnx.helper as h

    const = [False] + [True] * (len(inputs) - 1)
    node = onnx_ext.make_node("Broadcast", [f"in{i}" for i in range(len(inputs))], ["out"], **attrs)
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("in0", onnx.TensorProto.FLOAT, ["N", 2])],
                         [h.make_tensor_value_info("out", onnx.TensorProto.FLOAT, None)],
                         initializer=[onnx.numpy_helper.from_array(v, f"in{i}") for i, v in enumerate(inputs) if i])
    del const
    with pytest.raises(onnx_ext.OnnxExtError, match="Broadcast"):
        onnx_ext.attach_functions(h.make_model(graph, opset_imports=[h.make_opsetid("", onnx_ext.ONNX_OPSET)]))


@pytest.mark.parametrize("name, parsed", [
    ("numpy_to_4x12x256x256", ("numpy", [4, 12, 256, 256], None, [])),  # numpy mode: no axes_mapping
    ("numpy_to_", ("numpy", [], None, [])),
    ("numpy_to_2x1x3_check0", ("numpy", [2, 1, 3], None, [0])),
    ("explicit_to_8x64x56x56_axes1", ("explicit", [8, 64, 56, 56], [1], [])),
    ("explicit_to_3x1_axes0x1_check1", ("explicit", [3, 1], [0, 1], [1])),
    ("explicit_to_2x3_axes", ("explicit", [2, 3], [], [])),
])
def test_const_names_round_trip(name, parsed):
    assert SPEC.bodies.overload(name) == ToTarget(*parsed)
    assert ToTarget(*parsed).name == name
    assert name in SPEC.bodies
    assert SPEC.function_proto(name).overload == name


@pytest.mark.parametrize("name", ["numpy_to", "numpy_to_2x", "numpy_to_2_axes1", "explicit_to_2x3",
                                  "explicit_to_2x3_axes1x0", "explicit_to_2x3_axes2", "numpy_to_2x3_check5",
                                  "numpy_to_02", "pdpd_to_2"])
def test_bad_const_names_are_refused(name):
    assert name not in SPEC.bodies


@pytest.mark.parametrize("inputs, attrs, nodes", [
    ([np.zeros((2, 1, 3), np.float32), np.array([4, 2, 5, 3])], {}, ["Expand"]),
    ([np.zeros((3,), np.float32), np.array([2, 3, 4]), np.array([1])], {"mode": "explicit"}, ["Expand", "Unsqueeze"]),
    ([np.zeros((2, 3), np.float32), np.array([2, 3]), np.array([0, 1])], {"mode": "explicit"}, ["Expand"]),
])
def test_const_target_leaves_the_native_nodes(tmp_path, inputs, attrs, nodes):
    # Symbolic data dims (nothing folds on the data's shape): the check is Expand's own.
    const = [False] + [True] * (len(inputs) - 1)
    model = one_node_model("Broadcast", inputs, attrs, const=const, out_rank=len(inputs[1]))
    assert sorted(optimised_op_types(model, tmp_path)) == nodes
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, broadcast_reference(*inputs, **attrs), how)
