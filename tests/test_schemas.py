"""The ops' ONNX schemas: onnx's shape inference and checker on models with domain nodes and
no function bodies. Differential, over the op tests' random cases: the inferred type and every
inferred dim agree with the value the op computes (the numpy reference, which the op tests
hold to OpenVINO and to the bodies); with constant shape-like inputs and known data shapes
the shape is fully static."""

import importlib

import numpy as np
import onnx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx import helper, numpy_helper

import onnx_ext
from onnx_ext.ops import SPECS
from onnx_ext.types import from_numpy
from test_broadcast import broadcast_attrs, broadcast_cases
from test_gather import gather_cases
from test_range import FLOAT_TYPES, INT_TYPES, NUMERIC, range_cases
from test_strided_slice import strided_slice_cases

ROOT = onnx_ext.__file__.rsplit("/", 2)[0]


def bare_model(op, inputs, attrs, const, known_shapes=False, constant_nodes=False, out=None):
    """One node of the domain, no function bodies; const inputs are initializers or Constant
    nodes; runtime inputs have symbolic dims ``in{i}_d{j}`` unless known_shapes. The output is
    declared with the type and rank of ``out`` (an array) and unknown dims, or bare."""
    names = [f"in{i}" if v is not None else "" for i, v in enumerate(inputs)]
    graph_inputs, inits, nodes = [], [], []
    for name, value, is_const in zip(names, inputs, const):
        if value is None:
            continue
        value = np.asarray(value)
        if is_const and constant_nodes:
            nodes.append(helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value)))
        elif is_const:
            inits.append(numpy_helper.from_array(value, name))
        else:
            dims = list(value.shape) if known_shapes else [f"{name}_d{j}" for j in range(value.ndim)]
            graph_inputs.append(helper.make_tensor_value_info(name, from_numpy(value.dtype).onnx, dims))
    while names and names[-1] == "":
        names.pop()
    nodes.append(onnx_ext.make_node(op, names, ["out"], name=f"{op}_under_test", **attrs))
    output = onnx.ValueInfoProto(name="out")
    if out is not None:
        output = helper.make_tensor_value_info("out", from_numpy(out.dtype).onnx, [None] * out.ndim)
    graph = helper.make_graph(nodes, op, graph_inputs, [output], initializer=inits)
    return helper.make_model(graph, ir_version=onnx_ext.IR_VERSION, opset_imports=[
        helper.make_opsetid("", onnx_ext.ONNX_OPSET), helper.make_opsetid(onnx_ext.DOMAIN, onnx_ext.DOMAIN_VERSION)])


def inferred_output(model) -> onnx.TypeProto:
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    return next(vi.type for vi in list(inferred.graph.output) + list(inferred.graph.value_info)
                if vi.name == "out" and vi.type.tensor_type.elem_type)


def check_inferred(model, inputs, const, expected: np.ndarray, static: bool):
    """Type, rank and every known dim of the inferred output against ``expected``; symbolic dims
    that name input dims must have their size; ``static``: every dim must be an int."""
    t = inferred_output(model).tensor_type
    assert t.elem_type == from_numpy(expected.dtype).onnx
    assert len(t.shape.dim) == expected.ndim, f"rank {len(t.shape.dim)} inferred, {expected.ndim} computed"
    sizes = {f"in{i}_d{j}": n for i, (v, c) in enumerate(zip(inputs, const)) if v is not None and not c
             for j, n in enumerate(np.shape(v))}
    for k, (dim, want) in enumerate(zip(t.shape.dim, expected.shape)):
        if dim.HasField("dim_value"):
            assert dim.dim_value == want, f"dim {k}: inferred {dim.dim_value}, computed {want}"
        elif dim.dim_param in sizes:  # (onnx names unknown dims unk__N)
            assert sizes[dim.dim_param] == want, f"dim {k}: inferred {dim.dim_param}, computed {want}"
        assert not static or dim.HasField("dim_value"), f"dim {k} not static: {t.shape}"
    onnx.checker.check_model(model, full_check=True)


def reference_or_error(op, inputs, attrs):
    try:
        return SPECS[op].reference(*inputs, **SPECS[op].normalize(attrs))
    except onnx_ext.OnnxExtError as e:
        return e


def check_case(op, inputs, attrs, const, known_shapes, constant_nodes, static):
    expected = reference_or_error(op, inputs, attrs)
    if isinstance(expected, Exception):  # the op refuses these inputs: inference may say so, naming it
        try:
            inferred_output(bare_model(op, inputs, attrs, const, known_shapes, constant_nodes))
        except onnx.shape_inference.InferenceError as e:
            assert op in str(e)
        return
    expected = np.asarray(expected)
    model = bare_model(op, inputs, attrs, const, known_shapes, constant_nodes, expected)
    check_inferred(model, inputs, const, expected, static)


@given(st.one_of(range_cases(FLOAT_TYPES, NUMERIC, 2.0**20), range_cases(INT_TYPES, NUMERIC, 2**31 - 1)),
       st.booleans())
def test_range_shape_inference(case, constant_nodes):
    inputs, out, const = case
    check_case("Range", inputs, {"output_type": from_numpy(out).onnx}, const, False, constant_nodes, all(const))


@given(gather_cases(), st.booleans(), st.booleans())
def test_gather_shape_inference(case, known_shapes, constant_nodes):
    data, indices, axis, batch_dims, const = case
    static = const[2] and (known_shapes or all(np.shape(v) == () for v, c in zip((data, indices), const) if not c))
    check_case("Gather", [data, indices, axis], {"batch_dims": batch_dims}, const, known_shapes, constant_nodes,
               static)


@given(broadcast_cases(), st.booleans(), st.booleans())
def test_broadcast_shape_inference(case, known_shapes, constant_nodes):
    mode, version, axis, inputs, const, _ = case
    static = const[1] and (known_shapes or mode in ("numpy", "explicit", "none") or np.ndim(inputs[0]) == 0)
    check_case("Broadcast", inputs, broadcast_attrs(mode, version, axis), const, known_shapes, constant_nodes,
               static)


@given(strided_slice_cases(), st.booleans())
def test_strided_slice_shape_inference(case, constant_nodes):
    data, begin, end, stride, attrs, const, known_shapes = case
    inputs = [data, begin, end] + ([] if stride is None else [stride])
    static = all(const[1:]) and (known_shapes or data.ndim == 0)
    check_case("StridedSlice", inputs, attrs, const, known_shapes, constant_nodes, static)


I64_MAX = np.iinfo(np.int64).max


@pytest.mark.parametrize("op, inputs, attrs, const, want", [
    # data dims symbolic (in0_d{j}), shape-like inputs constant: symbolic where the op keeps a dim
    ("Broadcast", [np.ones((1, 3), np.float32), np.array([2, 3])], {"mode": "bidirectional"}, [False, True],
     [2, 3]),
    ("Broadcast", [np.ones((1, 3), np.float32), np.array([4, 1, 1])], {"mode": "bidirectional"}, [False, True],
     [4, "in0_d0", "in0_d1"]),
    ("Broadcast", [np.ones((1, 3), np.float32), np.array([5, 2, 1])], {"mode": "pdpd"}, [False, True],
     [5, 2, "in0_d1"]),
    ("Broadcast", [np.ones((1, 3), np.float32), np.array([2, 0, 3])], {"mode": "numpy"}, [False, True], [2, 0, 3]),
    ("StridedSlice", [np.ones((4, 5, 6), np.float32), np.array([0, 1, 0]), np.array([I64_MAX, 3, 0]),
                      np.array([1, 1, -1])], {"begin_mask": [0, 0, 1], "end_mask": [0, 0, 1]},
     [False, True, True, True], ["in0_d0", None, "in0_d2"]),
    ("Gather", [np.ones((4, 5, 6), np.float32), np.zeros((4, 2), np.int64), np.array(1)], {"batch_dims": 1},
     [False, False, False], ["in0_d0", None, None]),
    ("Gather", [np.ones((4, 5, 6), np.float32), np.zeros((4, 2), np.int64), np.array(-1)], {}, [False, False, True],
     ["in0_d0", "in0_d1", "in1_d0", "in1_d1"]),
    ("Range", [np.array(1), np.array(10), np.array(3)], {"output_type": onnx.TensorProto.UINT8}, [True, False, True],
     [None]),
])
def test_symbolic_and_unknown_dims(op, inputs, attrs, const, want):
    t = inferred_output(bare_model(op, inputs, attrs, const)).tensor_type
    got = [d.dim_value if d.HasField("dim_value") else d.dim_param if d.dim_param.startswith("in") else None
           for d in t.shape.dim]
    assert got == want
    check_case(op, inputs, attrs, const, False, False, False)


def test_shape_computations_count_as_constants_with_data_prop():
    # target_shape = Concat(Shape(x), [4]): onnx folds it with data_prop, and Broadcast sees it.
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Constant", [], ["four"], value=numpy_helper.from_array(np.array([4], np.int64))),
             helper.make_node("Concat", ["s", "four"], ["t"], axis=0),
             onnx_ext.make_node("Broadcast", ["b", "t"], ["out"], mode="numpy")]
    b = helper.make_tensor_value_info("b", onnx.TensorProto.INT8, [3, 1])
    out = helper.make_tensor_value_info("out", onnx.TensorProto.INT8, [None, None, None])
    model = helper.make_model(helper.make_graph(nodes, "g", [x, b], [out]), ir_version=onnx_ext.IR_VERSION,
                              opset_imports=[helper.make_opsetid("", onnx_ext.ONNX_OPSET),
                                             helper.make_opsetid(onnx_ext.DOMAIN, onnx_ext.DOMAIN_VERSION)])
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    assert [d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim] == [2, 3, 4]
    onnx.checker.check_model(model, full_check=True)


@pytest.mark.parametrize("op, inputs, attrs, message", [
    ("Gather", [np.zeros((2, 3), np.float32), np.zeros(2, np.int64), np.array(0)], {"batch_dims": 5},
     "Gather.*batch_dims"),
    ("StridedSlice", [np.zeros((2, 3), np.float32), np.zeros(2, np.int64), np.zeros(2, np.int64)],
     {"begin_mask": [2], "end_mask": []}, "StridedSlice.*begin_mask"),
    ("Broadcast", [np.zeros(3, np.float32), np.array([2, 3])], {"mode": "sideways"}, "Broadcast.*mode"),
    ("Range", [np.array(0.0), np.array(1.0), np.array(0.0)], {"output_type": onnx.TensorProto.FLOAT}, "Range.*step"),
])
def test_bad_attributes_or_inputs_fail_inference_naming_the_op(op, inputs, attrs, message):
    good = {"Gather": {}, "StridedSlice": {"begin_mask": [], "end_mask": []}, "Broadcast": {},
            "Range": attrs}[op]
    model = bare_model(op, inputs, good, [False, False, True] + [True] * (len(inputs) - 3))  # bad attrs below
    node = model.graph.node[-1]
    del node.attribute[:]
    node.attribute.extend(helper.make_attribute(k, v) if v != [] else helper.make_attribute(k, v, attr_type=7)
                          for k, v in attrs.items())
    with pytest.raises(onnx.shape_inference.InferenceError, match=message):
        onnx.shape_inference.infer_shapes(model, strict_mode=True)


def test_registration_is_idempotent():
    import onnx_ext.schemas as schemas

    schemas.register()
    importlib.reload(schemas).register()
    importlib.reload(onnx_ext)
    for name in SPECS:
        assert onnx.defs.get_schema(name, onnx_ext.DOMAIN_VERSION, onnx_ext.DOMAIN).name == name
    inputs = [np.zeros((4, 5), np.float32), np.array([1, -1]), np.array(1)]
    check_case("Gather", inputs, {}, [False, False, True], False, False, False)


def test_converted_model_infers_and_checks_without_functions():
    from converters.ir_reader import read_ir
    from converters.ir_to_onnx import ir_to_onnx

    model = ir_to_onnx(read_ir(f"{ROOT}/examples/embedding_block.xml"))
    assert any(n.domain == onnx_ext.DOMAIN for n in model.graph.node)
    del model.functions[:]
    for node in model.graph.node:
        node.ClearField("overload")
    onnx.checker.check_model(model, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    types = {vi.name: vi.type.tensor_type for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for node in model.graph.node:
        if node.domain == onnx_ext.DOMAIN:
            t = types[node.output[0]]
            assert t.elem_type and t.HasField("shape"), f"{node.op_type} {node.output[0]}: {t}"
