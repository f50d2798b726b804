"""verify on the models that used to break it, through the command (in-process): each failure
is one line and exit 2, a mismatch exit 1."""


import numpy as np
import onnx
import pytest

pytest.importorskip("openvino")

import converters  # noqa: E402
from converters.cli import main  # noqa: E402

from converters.verify.runners import BACKENDS  # noqa: E402

import verify_models as vm  # noqa: E402


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("verify_models")
    out = {}
    for builder in (vm.range_runtime_stop, vm.convolution, vm.gather_runtime_axis, vm.embedding):
        xml = vm.save(builder, d)
        converters.convert(xml, xml.with_suffix(".onnx"))
        out[builder.__name__] = xml
    return out


def run(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def row(table: str, name: str) -> list[str]:
    """The cells of the table row of output ``name``."""
    return next(line.split() for line in table.splitlines() if line.split()[:1] == [name])


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("onnx-ext: error: "), err
    return lines[0]


def test_output_shape_from_input_values_runs_on_the_reference(models, capsys, tmp_path):
    xml = models["range_runtime_stop"]
    npz = tmp_path / "stop.npz"
    np.savez(npz, stop=np.array(7, np.int64))
    status, out, err = run(capsys, "verify", xml, xml.with_suffix(".onnx"), "--inputs", npz)
    assert status == 0 and not err
    assert row(out, "out")[:3] == ["out", "7", "int64"] and "IR: OpenVINO's reference (Model.evaluate)" in out
    report = converters.verify(xml, xml.with_suffix(".onnx"), inputs={"stop": np.array(7, np.int64)})
    assert report.backend == "reference" and report.rows[0].shape_ir == (7,)


def test_convolution_falls_back_to_the_cpu_plugin_and_says_so(models, capsys):
    xml = models["convolution"]
    status, out, err = run(capsys, "verify", xml, xml.with_suffix(".onnx"))
    assert status == 0 and not err
    # which backend ran each side, and why the reference did not: a short note
    assert "ONNX: onnxruntime 1.31" in out
    assert "IR: OpenVINO's CPU plugin at f32 (the reference: it has no evaluate for Convolution)" in out
    assert row(out, "output")[-2:] == ["tolerance", "result"] and row(out, "y")[-6:] == "1e-05 x max|IR| + 1e-06 ok".split()
    assert "all 1 outputs match (OpenVINO's CPU plugin at f32)" in out
    report = converters.verify(xml, xml.with_suffix(".onnx"))
    assert report.backend == "cpu" and report.rows[0].shape_onnx == (1, 3, 5, 5) and report.rows[0].max_abs < 1e-5
    # asked for explicitly, the reference fails in one line
    status, _, err = run(capsys, "verify", xml, xml.with_suffix(".onnx"), "--backend", "reference")
    assert status == 2 and "cannot run the IR: Evaluation failed on opset1::Convolution" in one_error_line(err)


def test_gather_with_a_runtime_axis(models, capsys, tmp_path):
    xml = models["gather_runtime_axis"]
    npz = tmp_path / "g.npz"
    np.savez(npz, data=np.arange(12, dtype=np.float32).reshape(3, 4), idx=np.array([2, 0]), axis=np.array(1))
    status, _, err = run(capsys, "verify", xml, xml.with_suffix(".onnx"), "--inputs", npz, "--backend", "cpu")
    line = one_error_line(err)
    assert status == 2 and "CPU plugin at f32 cannot run the IR: axis value is not set" in line
    status, out, err = run(capsys, "verify", xml, xml.with_suffix(".onnx"), "--inputs", npz)
    assert status == 0 and row(out, "g")[1] == "3x2" and "IR: OpenVINO's reference" in out
    # random integers up to 4 make an axis that is out of range for rank 2: onnxruntime fails in one line
    status, _, err = run(capsys, "verify", xml, xml.with_suffix(".onnx"), "--int-range", "2", "3")
    assert status == 2 and "onnxruntime failed" in one_error_line(err)


@pytest.mark.parametrize("arrays, expected", [
    ({"idz": np.zeros((2, 3), np.int64)}, "no model input named 'idz' (the inputs: ids)"),
    ({}, "input 'ids' is missing"),
    ({"ids": np.zeros((2, 3), np.int32)}, "input 'ids' has dtype int32, the model expects int64 (i64)"),
    ({"ids": np.zeros((2, 3, 1), np.int64)}, "input 'ids' has shape [2, 3, 1], the model expects [ids_d0, ids_d1]"),
])
def test_bad_npz_one_line_naming_the_input(models, capsys, tmp_path, arrays, expected):
    xml = models["embedding"]
    npz = tmp_path / "in.npz"
    np.savez(npz, **arrays)
    status, out, err = run(capsys, "verify", xml, xml.with_suffix(".onnx"), "--inputs", npz)
    assert status == 2 and not out
    assert one_error_line(err) == f"onnx-ext: error: {npz}: {expected}"


def test_npz_with_a_wrong_static_dim(models, capsys, tmp_path):
    xml = models["convolution"]
    npz = tmp_path / "in.npz"
    np.savez(npz, x=np.zeros((1, 2, 5, 6), np.float32))
    status, _, err = run(capsys, "verify", xml, xml.with_suffix(".onnx"), "--inputs", npz)
    assert status == 2
    assert one_error_line(err).endswith("input 'x' has shape [1, 2, 5, 6], the model expects [1, 2, 5, 5]")


def test_unreadable_npz(models, capsys, tmp_path):
    xml = models["embedding"]
    npz = tmp_path / "in.npz"
    npz.write_bytes(b"not a zip")
    status, _, err = run(capsys, "verify", xml, xml.with_suffix(".onnx"), "--inputs", npz)
    assert status == 2 and one_error_line(err) == (f"onnx-ext: error: {npz}: cannot read inputs (not an .npz archive: "
                                                   "numpy.savez(path, NAME=array, ...) writes one)")
    np.save(tmp_path / "one.npy", np.zeros(3))  # a single array: numpy's other format
    status, _, err = run(capsys, "verify", xml, xml.with_suffix(".onnx"), "--inputs", tmp_path / "one.npy")
    assert status == 2 and "one.npy: cannot read inputs (not an .npz archive" in one_error_line(err)


def test_models_that_do_not_belong_together(models, capsys, tmp_path):
    emb, conv = models["embedding"], models["convolution"]
    status, _, err = run(capsys, "verify", emb, conv.with_suffix(".onnx"))
    assert status == 2
    assert one_error_line(err) == (f"onnx-ext: error: {emb} and {conv.with_suffix('.onnx')} do not belong together: "
                                   "ONNX input 'x' is not an input of the IR (IR inputs: ids)")
    # same input name, another element type
    model = onnx.load(str(emb.with_suffix(".onnx")))
    model.graph.input[0].type.tensor_type.elem_type = onnx.TensorProto.INT32
    other = tmp_path / "i32.onnx"
    onnx.save(model, str(other))
    status, _, err = run(capsys, "verify", emb, other)
    assert status == 2 and "input 'ids' is i32 in the ONNX model and i64 in the IR" in one_error_line(err)
    # one output fewer
    model = onnx.load(str(emb.with_suffix(".onnx")))
    del model.graph.output[1]
    onnx.save(model, str(other))
    status, _, err = run(capsys, "verify", emb, other)
    assert status == 2 and "the ONNX model has 1 outputs (emb), the IR 2" in one_error_line(err)
    # same name and type, another rank: said before random inputs are sized from the ONNX model
    model = onnx.load(str(emb.with_suffix(".onnx")))
    model.graph.input[0].type.tensor_type.shape.dim.add().dim_value = 4
    onnx.save(model, str(other))
    status, _, err = run(capsys, "verify", emb, other)
    assert status == 2 and one_error_line(err).endswith("input 'ids' has shape [?, ?, 4] in the ONNX model and "
                                                        "[?, ?] in the IR")


def test_dim_names_are_checked_and_used(models, capsys):
    xml = models["embedding"]
    onnx_path = xml.with_suffix(".onnx")
    status, _, err = run(capsys, "verify", xml, onnx_path, "--dim", "seq=5")
    assert status == 2 and one_error_line(err) == (
        "onnx-ext: error: --dim seq=5: the model's inputs have no dim named 'seq' "
        "(their symbolic dims: ids_d0, ids_d1)")
    status, out, err = run(capsys, "verify", xml, onnx_path, "--dim", "ids_d1=5", "--dynamic-size", "2", "--verbose")
    assert status == 0 and "input ids: 2x5 int64" in out and row(out, "pos")[1] == "5"
    status, _, err = run(capsys, "verify", xml, onnx_path, "--dim", "ids_d1")
    assert status == 2 and "--dim ids_d1: expected NAME=SIZE" in one_error_line(err)


def test_onnx_to_ir_with_verify(models, capsys, tmp_path):
    src = models["embedding"].with_suffix(".onnx")
    status, out, err = run(capsys, "convert", src, tmp_path / "e.xml", "--verify", "--seed", "2")
    assert status == 0 and not err, err
    assert f"wrote {tmp_path / 'e.xml'} and {tmp_path / 'e.bin'}" in out
    assert "all 2 outputs match" in out


def test_numpy_backend_and_mismatch_exit_1(models, capsys, tmp_path):
    xml = models["embedding"]
    model = onnx.load(str(xml.with_suffix(".onnx")))
    for init in model.graph.initializer:
        if list(init.dims) == [16, 4]:
            init.CopyFrom(onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(init) * 2, init.name))
    bad = tmp_path / "bad.onnx"
    onnx.save(model, str(bad))
    for backend in ("numpy", "reference", "cpu"):
        status, out, _ = run(capsys, "verify", xml, bad, "--backend", backend)
        assert status == 1 and f"IR: {BACKENDS[backend]}" in out
        assert "emb" in out and "MISMATCH" in out and "1 of 2 outputs differ: emb" in out
    status, out, err = run(capsys, "verify", xml, bad, "--quiet")
    assert status == 1 and not out and err.strip() == "onnx-ext: 1 of 2 outputs differ: emb"


def test_ir_v10_outputs_compare_in_the_irs_own_types(tmp_path):
    """Core.read_model gives an IR v10 the old API's edges (f16 in and out as f32, i64 out as i32): verify
    reads v10 through the IR frontend, so an f16 and an i64 output compare as themselves (they were a
    dtype MISMATCH)."""
    import openvino as ov
    import openvino.opset8 as o8
    from ir_testing import save_ir

    from converters.verify import verify_files

    x = o8.parameter([2, 3], ov.Type.f16, name="x")
    rounded = o8.round(x, "half_to_even")
    as_int = o8.convert(rounded, "i64")
    xml = save_ir(ov.Model([rounded, as_int], [x], "m"), tmp_path, version=10)
    assert [o.get_element_type() for o in ov.Core().read_model(str(xml)).outputs] == [ov.Type.f32, ov.Type.i32]
    onnx_path = tmp_path / "m.onnx"
    converters.convert(xml, onnx_path)
    report = verify_files(xml, onnx_path)
    assert report.ok, str(report)
    assert [(r.dtype_onnx, r.dtype_ir) for r in report.rows] == [("float16", "float16"), ("int64", "int64")]
