"""IR -> ONNX with weights: read without copies, written once (streamed, or as external data)."""

from __future__ import annotations

import gc

import numpy as np
import onnx
import pytest

import openvino as ov  # noqa: E402
import openvino.opset1 as o1  # noqa: E402
import openvino.opset8 as o8  # noqa: E402

from converters.ir_reader import read_ir  # noqa: E402
from converters.ir_to_onnx import convert_ir_file, ir_to_onnx  # noqa: E402
from converters import onnx_file  # noqa: E402
from ir_testing import evaluate_ir_cpu, run_onnx, save_ir  # noqa: E402

RNG = np.random.default_rng(3)


def _matmul_chain(tmp_path, n=4, size=64, repeat_first=False):
    x = o8.parameter([2, size], np.float32, name="x")
    x.output(0).get_tensor().set_names({"x"})
    y, weights = x, []
    for i in range(n):
        w = weights[0] if repeat_first and i == n - 1 else RNG.standard_normal((size, size)).astype(np.float32) / 8
        weights.append(w)
        y = o1.matmul(y, o1.constant(w), False, False)
    # large f16 and bool constants too (their bytes go through the same path)
    flag = o1.constant(RNG.integers(0, 2, (2, size)).astype(bool))
    y = o1.select(flag, y, o1.convert(o1.constant(RNG.standard_normal((2, size)).astype(np.float16)), "f32"))
    xml = save_ir(ov.Model([y], [x], "chain"), tmp_path)
    return xml, weights, {"x": RNG.standard_normal((2, size)).astype(np.float32)}


def test_read_ir_maps_weights_without_copying(tmp_path):
    xml, weights, _ = _matmul_chain(tmp_path)
    ir = read_ir(xml)
    consts = [layer.value for layer in ir.layers if layer.type == "Const" and layer.value.dtype == np.float32]
    assert len(consts) == len(weights)
    for value in consts:
        assert not value.flags.owndata and not value.flags.writeable  # a view of the mapped .bin
    assert any(np.array_equal(consts[0], w) for w in weights)


@pytest.mark.parametrize("external", [False, True])
def test_convert_ir_file_writes_the_weights(tmp_path, external):
    xml, weights, feeds = _matmul_chain(tmp_path)
    out = tmp_path / "out" / "m.onnx"
    convert_ir_file(xml, out, external_data=external)
    files = sorted(p.name for p in out.parent.iterdir())
    assert files == (["m.onnx", "m.onnx.data"] if external else ["m.onnx"])  # no temporary left
    model = onnx.load(str(out))  # loads external data from beside the model
    onnx.checker.check_model(str(out), full_check=True)
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    for w in weights:
        assert any(v.shape == w.shape and np.array_equal(v, w) for v in inits.values())
    assert not {i.name for i in model.graph.input} & set(inits)  # weights are initializers, not inputs
    if external:
        stored = onnx.load(str(out), load_external_data=False)
        big = [t for t in stored.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
        assert len(big) >= len(weights)
        assert all(int(dict((e.key, e.value) for e in t.external_data)["offset"]) % 4096 == 0 for t in big)
    got = run_onnx(onnx.load(str(out)), [feeds["x"]])[0]
    np.testing.assert_allclose(got, evaluate_ir_cpu(xml, [feeds["x"]])[0], rtol=1e-4, atol=1e-5)


def test_streamed_file_equals_the_in_memory_model(tmp_path):
    xml, _, feeds = _matmul_chain(tmp_path)
    out = tmp_path / "m.onnx"
    convert_ir_file(xml, out)
    streamed = onnx.load(str(out))
    in_memory = ir_to_onnx(read_ir(xml))
    by_name = lambda m: {t.name: t.SerializeToString() for t in m.graph.initializer}  # noqa: E731
    assert by_name(streamed) == by_name(in_memory)
    streamed.graph.ClearField("initializer")
    in_memory.graph.ClearField("initializer")
    assert streamed.SerializeToString() == in_memory.SerializeToString()
    np.testing.assert_array_equal(run_onnx(onnx.load(str(out)), [feeds["x"]])[0],
                                  run_onnx(ir_to_onnx(read_ir(xml)), [feeds["x"]])[0])


def test_equal_weights_are_stored_once(tmp_path):
    xml, weights, _ = _matmul_chain(tmp_path, repeat_first=True)
    model = ir_to_onnx(read_ir(xml))
    big = [t for t in model.graph.initializer if len(t.raw_data) == 4 * 64 * 64]
    assert len(big) == len(weights) - 1


def test_models_past_the_protobuf_limit_use_external_data(tmp_path, monkeypatch):
    xml, weights, feeds = _matmul_chain(tmp_path)
    monkeypatch.setattr(onnx_file, "PROTOBUF_LIMIT", 4 * 64 * 64 * len(weights) - 1)
    out = tmp_path / "m.onnx"
    convert_ir_file(xml, out)
    assert (tmp_path / "m.onnx.data").stat().st_size >= sum(w.nbytes for w in weights)
    got = run_onnx(onnx.load(str(out)), [feeds["x"]])[0]
    np.testing.assert_allclose(got, evaluate_ir_cpu(xml, [feeds["x"]])[0], rtol=1e-4, atol=1e-5)


def test_failed_conversion_leaves_no_data_file(tmp_path):
    xml, _, _ = _matmul_chain(tmp_path)
    xml.write_text(xml.read_text().replace('type="MatMul"', 'type="NoSuchOp"', 1))
    out = tmp_path / "o" / "m.onnx"
    with pytest.raises(Exception, match="NoSuchOp"):
        convert_ir_file(xml, out, external_data=True)
    assert not out.parent.exists() or not list(out.parent.iterdir())


def test_conversion_leaves_the_garbage_collector_as_it_was(tmp_path):
    xml, _, _ = _matmul_chain(tmp_path)
    convert_ir_file(xml, tmp_path / "m.onnx")
    assert gc.isenabled()
    xml.write_text(xml.read_text().replace('type="MatMul"', 'type="NoSuchOp"', 1))
    with pytest.raises(Exception, match="NoSuchOp"):
        convert_ir_file(xml, tmp_path / "m.onnx")
    assert gc.isenabled()
    gc.disable()
    try:
        with pytest.raises(Exception, match="NoSuchOp"):
            ir_to_onnx(read_ir(xml))
        assert not gc.isenabled()
    finally:
        gc.enable()
