"""onnx_ext.openvino_extensions(): OpenVINO's ONNX frontend reads the domain's nodes as native ops.

(a) both ways a user reads a model (``convert_model(..., extension=)``, ``Core.add_extension``
    then ``read_model``), with and without the function bodies in the model: the node becomes
    the op with its version and attributes, nothing of the body is left, and the result is
    the one of the op built with ``openvino.opset*`` directly (same device);
(b) every shared OpenVINO op-test vector, as a one-node model of the domain converted to IR
    (``convert_onnx_file``), likewise;
(c) what OpenVINO's node refuses and the contract allows: masks of unequal length, an
    ellipsis bit over a new-axis or shrink bit; absent optional inputs; errors.
"""

from __future__ import annotations

import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import openvino as ov  # noqa: E402

import onnx_ext  # noqa: E402
from converters.onnx_to_ir import convert_onnx_file  # noqa: E402
from helpers import assert_same, one_node_model  # noqa: E402
from ir_testing import domain_ops, evaluate_model, evaluate_model_cpu, native_model  # noqa: E402
from vectors import INPUT_NAMES, SHAPE_LIKE, load_vectors, vector_expected, vector_inputs  # noqa: E402

DOMAIN = onnx_ext.DOMAIN


# --- helpers --------------------------------------------------------------------------------


def read(path, how: str):
    if how == "convert_model":
        return ov.convert_model(str(path), extension=onnx_ext.openvino_extensions())
    core = ov.Core()
    core.add_extension(onnx_ext.openvino_extensions())
    return core.read_model(str(path))


def without_bodies(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.functions[:]
    for node in out.graph.node:
        node.ClearField("overload")
    return out


def runtime_feeds(inputs, const):
    return [np.asarray(v) for v, c in zip(inputs, const) if v is not None and not c]


# --- (a) the four ops, every version and mode, both reading ways, with and without bodies -------

# name: (op, inputs, const, domain attributes, out_type, (OpenVINO version, OpenVINO attributes))
CASES = {
    "range_f32": ("Range", [np.float32(-1.5), np.float32(2.5), np.float32(0.5)], [False] * 3,
                  {"output_type": TensorProto.FLOAT}, "f32", (4, {"output_type": "f32"})),
    "range_i32_from_f32": ("Range", [np.float32(1.5), np.float32(7.9), np.float32(1.7)], [False] * 3,
                           {"output_type": TensorProto.INT32}, "i32", (4, {"output_type": "i32"})),
    "range_u8_const": ("Range", [np.int32(250), np.int32(255), np.int32(2)], [True] * 3,
                       {"output_type": TensorProto.UINT8}, "u8", (4, {"output_type": "u8"})),
    "broadcast3_numpy": ("Broadcast", [np.arange(3, dtype=np.float32).reshape(3, 1), np.array([2, 3, 4])],
                         [False, True], {"mode": "numpy", "version": 3}, None, (3, {"mode": "numpy"})),
    "broadcast3_explicit": ("Broadcast", [np.arange(3, dtype=np.int32), np.array([2, 3]), np.array([1])],
                            [False, True, True], {"mode": "explicit", "version": 3}, None, (3, {"mode": "explicit"})),
    "broadcast3_bidirectional": ("Broadcast", [np.arange(3, dtype=np.float32).reshape(3, 1), np.array([1, 4])],
                                 [False, False], {"mode": "bidirectional", "version": 3}, None,
                                 (3, {"mode": "bidirectional"})),
    "broadcast3_pdpd": ("Broadcast", [np.arange(3, dtype=np.float32).reshape(3, 1), np.array([2, 3, 4])],
                        [False, True], {"mode": "pdpd", "axis": 1, "version": 3}, None,
                        (3, {"mode": "pdpd", "mode.mode.axis": 1})),
    "broadcast1_numpy": ("Broadcast", [np.arange(2, dtype=np.int64), np.array([3, 2])], [False, False],
                         {"mode": "numpy", "version": 1}, None, (1, {"mode": "numpy"})),
    "broadcast1_explicit": ("Broadcast", [np.arange(3, dtype=np.float32), np.array([3, 2]), np.array([0])],
                            [False, True, True], {"mode": "explicit", "version": 1}, None, (1, {"mode": "explicit"})),
    "broadcast1_none": ("Broadcast", [np.arange(3, dtype=np.float32), np.array([3, 2]), np.array([0])],
                        [False, True, True], {"mode": "none", "version": 1}, None, (1, {"mode": "none"})),
    "broadcast1_pdpd": ("Broadcast", [np.arange(3, dtype=np.float32).reshape(3, 1), np.array([2, 3, 4]),
                                      np.uint8(0)], [False, True, True],
                        {"mode": "pdpd", "axis": 1, "version": 1}, None,
                        (1, {"mode": "pdpd", "mode.auto_broadcast_axis": 1})),
    "gather8_batch": ("Gather", [np.arange(24, dtype=np.int32).reshape(2, 3, 4), np.array([[0, 2], [1, -1]]),
                                 np.array(2)], [False, False, True], {"batch_dims": 1}, None, (8, {"batch_dims": 1})),
    "gather8_zero_fill": ("Gather", [np.arange(6, dtype=np.int64).reshape(2, 3), np.array([0, 5, -4, 2]),
                                     np.array(1)], [False, False, True], {}, None, (8, {"batch_dims": 0})),
    "gather7": ("Gather", [np.arange(12, dtype=np.float32).reshape(3, 4), np.array([[1], [2], [0]]), np.array(1)],
                [False, False, True], {"batch_dims": 1, "version": 7}, None, (7, {"batch_dims": 1})),
    "gather1": ("Gather", [np.arange(12, dtype=np.uint8).reshape(3, 4), np.array([2, 0]), np.array(0)],
                [False, False, True], {"version": 1}, None, (1, {})),
    "strided_slice": ("StridedSlice", [np.arange(24, dtype=np.float32).reshape(2, 3, 4), np.array([0, 1, 0]),
                                       np.array([2, 3, -1]), np.array([1, 1, 2])], [False, True, True, True],
                      {"begin_mask": [1, 0, 0], "end_mask": [0, 1, 0]}, None,
                      (1, {"begin_mask": [1, 0, 0], "end_mask": [0, 1, 0], "new_axis_mask": [],
                           "shrink_axis_mask": [], "ellipsis_mask": []})),  # empty masks: accepted, kept
    "strided_slice_runtime": ("StridedSlice", [np.arange(24, dtype=np.int32).reshape(2, 3, 4), np.array([1, 0]),
                                               np.array([2, -1]), np.array([1, -1])], [False] * 4,
                              {"begin_mask": [0, 1], "end_mask": [0, 0], "shrink_axis_mask": [1, 0]}, None,
                              (1, {"begin_mask": [0, 1], "end_mask": [0, 0], "new_axis_mask": [],
                                   "shrink_axis_mask": [1, 0], "ellipsis_mask": []})),
}


@pytest.mark.parametrize("bodies", [True, False], ids=["with_bodies", "without_bodies"])
@pytest.mark.parametrize("how", ["read_model", "convert_model"])
@pytest.mark.parametrize("case", list(CASES))
def test_domain_node_becomes_the_native_op(case, how, bodies, tmp_path):
    op, inputs, const, attrs, out_type, (version, ov_attrs) = CASES[case]
    model = one_node_model(op, inputs, attrs, const=const, out_type=out_type)
    assert model.functions and model.graph.node[0].overload  # attach_functions gave it its bodies
    path = tmp_path / "m.onnx"
    onnx.save(model if bodies else without_bodies(model), path)
    got = read(path, how)
    feeds = runtime_feeds(inputs, const)
    native = native_model(op, version, inputs, const, ov_attrs)
    if how == "convert_model" and all(const):  # convert_model folds constant sub-graphs
        assert domain_ops(got) == []
        assert_same(evaluate_model(got, [])[0], evaluate_model(native, [])[0], "folded")
        return
    (node,) = domain_ops(got)  # the op alone: nothing of the function body
    assert (node.get_type_name(), node.get_type_info().version_id) == (op, f"opset{version}")
    (want,) = domain_ops(native)
    assert node.get_attributes() == want.get_attributes()
    assert_same(evaluate_model(got, feeds)[0], evaluate_model(native, feeds)[0], "reference")
    if op != "Gather":  # the CPU plugin reads arbitrary memory for out-of-range Gather indices
        assert_same(evaluate_model_cpu(got, feeds)[0], evaluate_model_cpu(native, feeds)[0], "CPU")


def test_without_the_extensions_openvino_cannot_read_the_domain(tmp_path):
    # The frontend does not fall back to the bodies: the extension is what makes the model readable.
    op, inputs, const, attrs, out_type, _ = CASES["gather7"]
    onnx.save(one_node_model(op, inputs, attrs, const=const, out_type=out_type), tmp_path / "m.onnx")
    with pytest.raises(Exception, match=DOMAIN):
        ov.Core().read_model(str(tmp_path / "m.onnx"))


# --- (b) every shared OpenVINO op-test vector -------------------------------------------------


def _vector_cases():
    for op, names in INPUT_NAMES.items():
        for v in load_vectors(op):
            for const in (False, True):
                yield pytest.param(op, names, v, const, id=f"{op}{v['version']}-{v['test_name']}-"
                                                           f"{'const' if const else 'runtime'}")


def _domain_attrs(op, vector):
    attrs = dict(vector["attrs"])
    if op == "Range":
        attrs["output_type"] = onnx_ext.types.from_ov(attrs["output_type"]).onnx
    if op in ("Broadcast", "Gather"):
        attrs["version"] = vector["version"]
    return attrs


@pytest.mark.parametrize("op, names, vector, const_indices", list(_vector_cases()))
def test_vector_through_the_frontend_matches_the_native_op(op, names, vector, const_indices, tmp_path):
    inputs = vector_inputs(vector, names)
    expected = vector_expected(vector)
    const = [const_indices and name in SHAPE_LIKE for name in names[: len(inputs)]]
    model = one_node_model(op, inputs, _domain_attrs(op, vector), const=const, out_type=expected.dtype)
    onnx.save(model, tmp_path / "m.onnx")
    xml, _ = convert_onnx_file(tmp_path / "m.onnx", tmp_path / "m.xml")  # domain -> IR
    got = ov.Core().read_model(str(xml))
    (node,) = [n for n in domain_ops(got) if n.get_type_name() == op]  # (no stride input: ones beside it)
    assert node.get_type_info().version_id == f"opset{vector['version']}"
    native_inputs, native_const = list(inputs), list(const)
    if op == "StridedSlice" and len(inputs) == 3:  # StridedSlice-1's constructor gives ones
        native_inputs.append(np.ones(len(inputs[1]), np.int64))
        native_const.append(True)
    native = native_model(op, vector["version"], native_inputs, native_const, vector["attrs"])
    feeds = runtime_feeds(inputs, const)
    try:
        want, device = evaluate_model(native, feeds)[0], evaluate_model
    except RuntimeError:  # the reference refuses a few (scalar explicit Broadcast-1): the CPU plugin then
        want, device = evaluate_model_cpu(native, feeds)[0], evaluate_model_cpu
    assert_same(device(got, feeds)[0], want, device.__name__)


# --- (c) what the contract allows beyond OpenVINO's node -----------------------------------------


@pytest.mark.parametrize("begin_length", ["const", "runtime", "runtime_unknown_length"])
@pytest.mark.parametrize("masks, native_masks", [
    # each mask zero-extended or cut to len(begin) = 2
    ({"begin_mask": [1], "end_mask": [], "shrink_axis_mask": [0, 1, 1]},
     {"begin_mask": [1, 0], "end_mask": [0, 0], "new_axis_mask": [0, 0], "shrink_axis_mask": [0, 1],
      "ellipsis_mask": [0, 0]}),
    ({"begin_mask": [0, 1, 1, 1], "end_mask": [1], "new_axis_mask": [1]},
     {"begin_mask": [0, 1], "end_mask": [1, 0], "new_axis_mask": [1, 0], "shrink_axis_mask": [0, 0],
      "ellipsis_mask": [0, 0]}),
    # the ellipsis wins over a new-axis or shrink bit at its index
    ({"begin_mask": [0, 0], "end_mask": [0, 0], "new_axis_mask": [0, 1], "shrink_axis_mask": [1, 1],
      "ellipsis_mask": [0, 1]},
     {"begin_mask": [0, 0], "end_mask": [0, 0], "new_axis_mask": [0, 0], "shrink_axis_mask": [1, 0],
      "ellipsis_mask": [0, 1]}),
])
def test_strided_slice_masks_are_normalised(masks, native_masks, begin_length, tmp_path):
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    inputs = [data, np.array([1, 0]), np.array([2, 2]), np.ones(2, np.int64)]
    const = begin_length == "const"
    model = one_node_model("StridedSlice", inputs, masks, const=[False] + [const] * 3,
                           known_shapes=begin_length != "runtime_unknown_length")
    onnx.save(model, tmp_path / "ss.onnx")
    got = read(tmp_path / "ss.onnx", "read_model")
    (node,) = domain_ops(got)
    if begin_length != "runtime_unknown_length":  # else extended to the longest mask (bits past begin are ignored)
        assert {k: node.get_attributes()[k] for k in native_masks} == native_masks
    want = onnx_ext.run(one_node_model("StridedSlice", inputs, masks, const=[False, True, True, True]),
                        {"in0": data})[0]
    native = native_model("StridedSlice", 1, inputs, [False, True, True, True], native_masks)
    assert_same(evaluate_model(native, [data])[0], want, "the native op with the normalised masks vs onnxruntime")
    feeds = [data] if const else inputs
    assert_same(evaluate_model(got, feeds)[0], want, "reference")
    if const:  # (the CPU plugin fails on runtime begin with an ellipsis or with masks longer than begin,
        # the native op built directly included)
        assert_same(evaluate_model_cpu(got, feeds)[0], want, "CPU")


@pytest.mark.parametrize("op, inputs, attrs", [
    ("StridedSlice", [np.arange(12, dtype=np.float32).reshape(3, 4), np.array([1, 0]), np.array([3, 3]), None],
     {"begin_mask": [0, 1], "end_mask": [0, 0]}),
    ("Broadcast", [np.arange(3, dtype=np.float32), np.array([2, 3]), None], {"mode": "numpy", "version": 1}),
    ("Broadcast", [np.arange(3, dtype=np.float32), np.array([2, 3]), None], {"mode": "numpy", "version": 3}),
])
def test_an_absent_optional_input_is_a_null_node(op, inputs, attrs, tmp_path):
    # `""` as the last input: the frontend hands the extension a NullNode, which counts as absent.
    model = one_node_model(op, inputs, attrs, const=[False] + [True] * (len(inputs) - 1))
    assert model.graph.node[0].input[-1] == ""
    onnx.save(model, tmp_path / "m.onnx")
    got = read(tmp_path / "m.onnx", "read_model")
    feeds = [inputs[0]]
    assert_same(evaluate_model(got, feeds)[0], onnx_ext.run(model, {"in0": inputs[0]})[0], "reference")


def _bad_node_model(op, inputs, **attrs):
    node = helper.make_node(op, inputs, ["y"], domain=DOMAIN, name="bad", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.INT64, [2]) for n in inputs
                                            if n], [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(DOMAIN, 1)])
    model.ir_version = 10
    return model


@pytest.mark.parametrize("model, message", [
    (_bad_node_model("Gather", ["d", "i", "a"], version=5), "Gather: attribute 'version' is 5"),
    (_bad_node_model("Gather", ["d", "i", "a"], version=1, batch_dims=1), "batch_dims' must be 0 for Gather-1"),
    (_bad_node_model("Broadcast", ["d", "s"], mode="bidirectional", version=1), "Broadcast-1 modes are"),
    (_bad_node_model("Range", ["a", "b", "c"]), "'output_type' is required"),
    (_bad_node_model("StridedSlice", ["d", "b", "e"], begin_mask=[2], end_mask=[0]), "only 0 and 1"),
    (_bad_node_model("Gather", ["d", "i"]), r"Gather: takes 3 inputs \(data, indices, axis\), got 2"),
    (_bad_node_model("Broadcast", ["d", "s"], mode="explicit"), "mode 'explicit' needs the axes_mapping input"),
])
def test_bad_nodes_are_refused_with_the_op_and_attribute(model, message, tmp_path):
    onnx.save(model, tmp_path / "m.onnx")
    with pytest.raises(Exception, match=message):
        read(tmp_path / "m.onnx", "read_model")


def test_without_openvino_the_error_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "openvino.frontend.onnx", None)  # import fails
    with pytest.raises(onnx_ext.OnnxExtError, match=r"^openvino is not installed: pip install 'onnx-ext\[openvino\]'$"):
        onnx_ext.openvino_extensions()
