"""The onnx-ext command: convert both ways, verify, and one-line errors with exit 2."""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import onnx_ext

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "embedding_block.xml"


def cli(*args, cwd=None):
    exe = shutil.which("onnx-ext")
    cmd = [exe] if exe else [sys.executable, "-m", "converters.cli"]
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_convert_and_verify_bundled_example(tmp_path):
    out = tmp_path / "sub" / "model.onnx"
    r = cli("convert", EXAMPLE, out, "--verify")
    assert r.returncode == 0, r.stderr
    assert "all 2 outputs match" in r.stdout
    model = onnx.load(str(out))
    assert {n.op_type for n in model.graph.node if n.domain == onnx_ext.DOMAIN} == {"Range", "Gather", "Broadcast",
                                                                                    "StridedSlice"}
    assert [i.name for i in model.graph.input] == ["input_ids"]
    assert [o.name for o in model.graph.output] == ["features", "last_token"]


def test_inline_gives_standard_onnx_and_verifies_on_cpu_plugin(tmp_path):
    out = tmp_path / "plain.onnx"
    r = cli("convert", EXAMPLE, out, "--inline", "--verify", "--backend", "cpu", "--dynamic-size", "5")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "5x5x1x8" in r.stdout
    model = onnx.load(str(out))
    assert all(n.domain == "" for n in model.graph.node) and not model.functions


def test_onnx_to_ir_restores_native_ops(tmp_path):
    onnx_path, xml = tmp_path / "m.onnx", tmp_path / "back.xml"
    assert cli("convert", EXAMPLE, onnx_path).returncode == 0
    r = cli("convert", onnx_path, xml)
    assert r.returncode == 0, r.stderr
    text = xml.read_text()
    for layer in ('type="Range" version="opset4"', 'type="Broadcast" version="opset3"',
                  'type="Gather" version="opset8"', 'type="StridedSlice" version="opset1"'):
        assert layer in text
    assert cli("verify", xml, onnx_path).returncode == 0


def test_verify_with_npz_inputs_and_numpy_backend(tmp_path):
    onnx_path = tmp_path / "m.onnx"
    assert cli("convert", EXAMPLE, onnx_path).returncode == 0
    npz = tmp_path / "in.npz"
    np.savez(npz, input_ids=np.array([[1, 63, 64, -1]], np.int64))  # out-of-range ids give zeros on both sides
    r = cli("verify", EXAMPLE, onnx_path, "--inputs", npz, "--backend", "numpy")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "1x4x1x8" in r.stdout


def test_mismatch_exits_1_with_table(tmp_path):
    onnx_path = tmp_path / "m.onnx"
    assert cli("convert", EXAMPLE, onnx_path).returncode == 0
    model = onnx.load(str(onnx_path))
    for init in model.graph.initializer:  # perturb the embedding table
        if init.dims and init.dims[0] == 64:
            arr = onnx.numpy_helper.to_array(init) + 1
            init.CopyFrom(onnx.numpy_helper.from_array(arr, init.name))
    onnx.save(model, str(onnx_path))
    r = cli("verify", EXAMPLE, onnx_path)
    assert r.returncode == 1
    assert "MISMATCH" in r.stdout and "outputs differ" in r.stdout


@pytest.mark.parametrize("case", ["missing", "malformed", "short_bin", "garbage_onnx", "bad_extension", "bad_dim_flag"])
def test_bad_input_one_line_exit_2_no_output(tmp_path, case):
    xml, bin_ = tmp_path / "m.xml", tmp_path / "m.bin"
    shutil.copy(EXAMPLE, xml)
    shutil.copy(EXAMPLE.with_suffix(".bin"), bin_)
    out = tmp_path / "out.onnx"
    if case == "missing":
        args = ["convert", tmp_path / "nope.xml", out]
    elif case == "malformed":
        xml.write_text(xml.read_text()[:500])
        args = ["convert", xml, out]
    elif case == "short_bin":
        bin_.write_bytes(bin_.read_bytes()[:100])
        args = ["convert", xml, out]
    elif case == "garbage_onnx":
        garbage = tmp_path / "g.onnx"
        garbage.write_bytes(b"\x00\xffnot a model" * 10)
        args = ["verify", xml, garbage]
    elif case == "bad_extension":
        args = ["convert", xml, tmp_path / "out.txt"]
    else:
        args = ["convert", xml, out, "--verify", "--dim", "batch"]
    r = cli(*args)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("onnx-ext: error:"), r.stderr
    assert "Traceback" not in r.stderr
    if case not in ("bad_dim_flag",):
        assert not out.exists()
    if case in ("malformed", "short_bin", "missing"):
        assert ".xml" in lines[0] or ".bin" in lines[0]
