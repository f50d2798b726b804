"""Output files: written all or nothing, with the mode a new file gets under the umask."""

import os
import stat
from pathlib import Path

import numpy as np
import onnx
import onnx_ir as ir
import pytest

from converters.files import staging_folder, write_atomically
from converters.onnx_file import write_onnx
from converters.ir_to_onnx import convert_ir_file
from converters.onnx_to_ir import convert_onnx_file

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "embedding_block.xml"


@pytest.fixture
def umask():
    def set_umask(value):
        os.umask(value)
        return value

    old = os.umask(0o022)
    os.umask(old)
    yield set_umask
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_files_get_the_umask_mode(tmp_path, umask, mask):
    umask(mask)
    a, b = tmp_path / "d" / "a.bin", tmp_path / "d" / "b.xml"
    write_atomically([(a, lambda f: f.write(b"1")), (b, lambda f: f.write(b"2"))])
    assert a.read_bytes() == b"1" and b.read_bytes() == b"2"
    assert _mode(a) == _mode(b) == 0o666 & ~mask


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_a_staged_folder_renamed_into_place_gets_the_umask_mode(tmp_path, umask, mask):
    umask(mask)
    dst = tmp_path / "model_dir"
    stage = staging_folder(dst)
    (stage / "model.onnx").write_bytes(b"1")
    os.replace(stage, dst)  # what the LLM folder conversion does when dst is new
    assert _mode(dst) == 0o777 & ~mask, oct(_mode(dst))  # mkdtemp alone gives 0700


def test_a_failed_write_leaves_nothing_and_keeps_old_files(tmp_path):
    old = tmp_path / "a.bin"
    old.write_bytes(b"old")

    def fail(f):
        f.write(b"partial")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_atomically([(old, lambda f: f.write(b"new")), (tmp_path / "b.xml", fail)])
    assert old.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin"]


def test_files_are_renamed_in_the_order_given(tmp_path, monkeypatch):
    renamed = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: (renamed.append(Path(dst).name), real(src, dst)))
    write_atomically([(tmp_path / "m.bin", lambda f: f.write(b"")), (tmp_path / "m.xml", lambda f: f.write(b""))])
    assert renamed == ["m.bin", "m.xml"]  # what readers look for comes last


@pytest.mark.parametrize("external", [False, True])
def test_converted_and_written_files_get_the_umask_mode(tmp_path, umask, external):
    umask(0o022)
    out = tmp_path / "m.onnx"
    convert_ir_file(EXAMPLE, out, external_data=external)
    written = [out] + ([tmp_path / "m.onnx.data"] if external else [])
    assert [_mode(p) for p in written] == [0o644] * len(written)
    xml, bin_ = convert_onnx_file(out, tmp_path / "ir" / "m.xml")
    assert _mode(Path(xml)) == _mode(Path(bin_)) == 0o644


class _FailingTensor(ir.Tensor):
    def tofile(self, file):
        raise OSError("disk full")


@pytest.mark.parametrize("external", [False, True])
def test_a_failed_onnx_write_keeps_the_old_model_and_data(tmp_path, external):
    model, data = tmp_path / "m.onnx", tmp_path / "m.onnx.data"
    model.write_bytes(b"old model")
    data.write_bytes(b"old data")
    weight = _FailingTensor(np.zeros((16, 16), np.float32), name="w")
    with pytest.raises(OSError, match="disk full"):
        write_onnx(onnx.ModelProto(), [weight], model, external_data=external)
    assert model.read_bytes() == b"old model" and data.read_bytes() == b"old data"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx", "m.onnx.data"]
