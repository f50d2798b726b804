"""The package's model-level API: attach_functions, inline, onnxscript use, ReferenceEvaluator."""

import numpy as np
import onnx
import onnx_ir as ir
import pytest
from onnx import TensorProto, helper

from onnxscript import FLOAT, INT64, script
from onnxscript import opset21 as op

import onnx_ext
import onnx_ext.model
from onnx_ext.functions import Gather

DATA = np.arange(12, dtype=np.float32).reshape(3, 4)
FEEDS = {"data": DATA, "indices": np.array([2, -1, 7]), "axis": np.array(0)}
EXPECTED = np.array([[8, 9, 10, 11], [8, 9, 10, 11], [0, 0, 0, 0]], np.float32)


def gather_then_relu(opset: int, ir_version: int = 8) -> onnx.ModelProto:
    nodes = [onnx_ext.make_node("Gather", ["data", "indices", "axis"], ["g"], name="lookup"),
             helper.make_node("Relu", ["g"], ["out"])]
    graph = helper.make_graph(nodes, "g", [
        helper.make_tensor_value_info("data", TensorProto.FLOAT, ["N", 4]),
        helper.make_tensor_value_info("indices", TensorProto.INT64, ["M"]),
        helper.make_tensor_value_info("axis", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["M", 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)


@pytest.mark.parametrize("opset", [15, 17, 21, 26])
def test_attach_and_inline_at_every_supported_opset(opset):
    model = onnx_ext.attach_functions(gather_then_relu(opset))
    assert 10 <= model.ir_version <= 13
    assert {(o.domain, o.version) for o in model.opset_import} == {("", opset), (onnx_ext.DOMAIN, 1)}
    assert all(f.opset_import[0].version == opset for f in model.functions)
    onnx.checker.check_model(model, full_check=True)
    plain = onnx_ext.inline(model)
    assert not plain.functions and all(n.domain == "" for n in plain.graph.node)
    assert [o.domain for o in plain.opset_import] == [""]
    onnx.checker.check_model(plain, full_check=True)
    for m in (model, plain):
        np.testing.assert_array_equal(onnx_ext.run(m, FEEDS)[0], EXPECTED)
    np.testing.assert_array_equal(onnx_ext.reference_evaluator(model).run(None, FEEDS)[0], EXPECTED)


def test_old_opset_gets_a_clear_error():
    with pytest.raises(onnx_ext.OnnxExtError, match="opset 13.*15 to 26"):
        onnx_ext.attach_functions(gather_then_relu(13))


def test_attach_picks_overload_and_writes_defaults():
    model = onnx_ext.attach_functions(gather_then_relu(21))
    node = model.graph.node[0]
    assert node.overload == "plain_rank2_1"  # runtime axis, ranks known (static-rank reshapes)
    assert {a.name: helper.get_attribute_value(a) for a in node.attribute} == {"batch_dims": 0, "version": 8}
    assert ("Gather", "plain_rank2_1") in {(f.name, f.overload) for f in model.functions}


def test_attach_rejects_bad_attribute_naming_node():
    model = gather_then_relu(21)
    model.graph.node[0].attribute.append(helper.make_attribute("batch_dims", 1))
    model.graph.node[0].attribute[-1].name = "versoin"
    with pytest.raises(onnx_ext.OpAttributeError, match="Gather \\(node 'lookup'\\): attribute 'versoin'"):
        onnx_ext.attach_functions(model)


@script()
def lookup(table: FLOAT["V", 8], ids: INT64["B", "S"]) -> FLOAT["B", "S", 8]:  # onnxscript reads module globals
    return Gather(table, ids, op.Constant(value_int=0), batch_dims=0)


def test_onnxscript_users_call_the_ops_and_get_bodies():
    raw = lookup.to_model_proto()
    assert any(f.domain == onnx_ext.DOMAIN and f.name == "Gather" for f in raw.functions)
    # as onnxscript writes it, onnxruntime runs it too (the general bodies): a helper that calls another
    # inside an If branch imports the domain (onnxscript alone leaves it out)
    table, ids = np.arange(80, dtype=np.float32).reshape(10, 8), np.array([[3, -1, 12]], np.int64)
    got = onnx_ext.run(raw, {"table": table, "ids": ids})[0]
    want = np.stack([table[3], table[9], np.zeros(8, np.float32)])[None]
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.float32
    model = onnx_ext.attach_functions(raw)
    onnx.checker.check_model(model, full_check=True)
    table = np.arange(80, dtype=np.float32).reshape(10, 8)
    ids = np.array([[1, -1, 12]])
    want = np.stack([table[1], table[9], np.zeros(8, np.float32)])[None]
    np.testing.assert_array_equal(onnx_ext.run(model, {"table": table, "ids": ids})[0], want)
    np.testing.assert_array_equal(onnx_ext.run(onnx_ext.inline(model), {"table": table, "ids": ids})[0], want)


def test_function_protos_cover_every_op_and_overload():
    protos = onnx_ext.function_protos()
    names = {(p.name, p.overload) for p in protos}
    for name, spec in onnx_ext.SPECS.items():
        assert (name, "") in names
        assert {(name, o) for o in spec.bodies} <= names
    assert all(p.domain == onnx_ext.DOMAIN for p in protos)


def test_unknown_op_is_named():
    with pytest.raises(onnx_ext.OnnxExtError, match="'Gatherr' is not an op of the onnx-ext domain"):
        onnx_ext.make_node("Gatherr", ["a"], ["b"])


def test_the_onnx_ir_core_gives_what_the_model_functions_give():
    model = gather_then_relu(21)
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.array([0, 2], np.int64), "unused"))
    attached, inlined = ir.serde.deserialize_model(model), ir.serde.deserialize_model(model)
    onnx_ext.model.attach_ir(attached)
    onnx_ext.model.inline_ir(inlined)
    # the ModelProto functions differ in one thing: attach_functions keeps a model's initializers
    # without value_info (onnx_ir's reader gives each its type), inline writes them
    attached.graph.initializers["unused"].type = attached.graph.initializers["unused"].shape = None
    assert ir.serde.serialize_model(attached) == onnx_ext.attach_functions(model)
    assert ir.serde.serialize_model(inlined) == onnx_ext.inline(model)


def test_ir_node_is_make_node_on_onnx_ir_values():
    values = [ir.Value(name=n) for n in ("data", "indices", "axis")]
    node = onnx_ext.model.ir_node("Gather", values, ["g"], name="lookup", batch_dims=0)
    assert list(node.inputs) == values and node.outputs[0].name == "g" and node.domain == onnx_ext.DOMAIN
    assert ir.serde.serialize_node(node) == onnx_ext.make_node("Gather", ["data", "indices", "axis"], ["g"],
                                                               name="lookup", batch_dims=0)


_BODY_DIGEST = """
import hashlib
from onnx_ext.ops import SPECS
h = hashlib.sha256()
for name, spec in sorted(SPECS.items()):
    protos = [spec.function_proto(None), *spec.helper_protos(), *(spec.function_proto(k) for k in sorted(spec.bodies))]
    for proto in protos:
        h.update(proto.SerializeToString(deterministic=True))
print(h.hexdigest())
"""


def test_bodies_are_the_same_bytes_in_every_process():
    """onnxscript orders an If's outputs by set iteration (Broadcast's general body has such Ifs): with
    two hash seeds the attached bodies must still be byte-identical (reproducible model files)."""
    import os
    import subprocess
    import sys

    digests = {subprocess.run([sys.executable, "-c", _BODY_DIGEST], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(digests) == 1, digests
