"""``converters.convert_all``: the public batch conversion (the command's batch mode is built on it): one
result per file, a bad file recorded and the others converted, verified against OpenVINO."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

import converters
from converters import cli as cli_module

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "embedding_block.xml"


def _tree(root: Path) -> Path:
    """root/a.xml (+ .bin), root/sub/b.xml (+ .bin), root/sub/broken.xml (no .bin), root/sub/garbage.onnx."""
    (root / "sub").mkdir(parents=True)
    for xml in (root / "a.xml", root / "sub" / "b.xml", root / "sub" / "broken.xml"):
        shutil.copy(EXAMPLE, xml)
    for bin_ in (root / "a.bin", root / "sub" / "b.bin"):
        shutil.copy(EXAMPLE.with_suffix(".bin"), bin_)
    (root / "sub" / "garbage.onnx").write_bytes(b"\x00\xffnot a model" * 10)
    return root


def test_a_bad_file_is_recorded_and_the_others_convert_and_verify(tmp_path):
    src, out = _tree(tmp_path / "models"), tmp_path / "out"
    results = converters.convert_all(src, out, verify=True, seed=1)
    assert [(r.src.relative_to(src).as_posix(), r.status) for r in results] == [
        ("a.xml", "ok"), ("sub/b.xml", "ok"), ("sub/broken.xml", "failed"), ("sub/garbage.onnx", "failed")]
    ok, failed = results[:2], results[2:]
    assert [r.dst for r in ok] == [out / "a.onnx", out / "sub" / "b.onnx"]
    for r in ok:  # verified against OpenVINO: every output within tolerance
        assert r.ok and r.message.startswith("all 2 outputs match (OpenVINO"), r.message
        assert [o.name for o in onnx.load(str(r.dst)).graph.output] == ["features", "last_token"]
    assert "broken.bin" in failed[0].message and "\n" not in failed[0].message
    assert failed[1].message.startswith(str(src / "sub" / "garbage.onnx")) and not failed[1].ok
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == ["a.onnx", "sub/b.onnx"]


def test_to_and_a_list_of_sources(tmp_path):
    src = _tree(tmp_path / "models")
    results = converters.convert_all([src / "a.xml", src / "sub"], tmp_path / "out", to="onnx")
    assert [(r.label, r.dst.name, r.status) for r in results] == [
        (str(src / "a.xml"), "a.onnx", "ok"), (str(src / "sub" / "b.xml"), "b.onnx", "ok"),
        (str(src / "sub" / "broken.xml"), "broken.onnx", "failed")]
    model = onnx.load(str(tmp_path / "out" / "b.onnx"))
    ids = np.arange(32).reshape(2, 16) % 64
    report = converters.verify(src / "sub" / "b.xml", model, inputs={"input_ids": ids})
    assert report.ok and all(r.shape_onnx == r.shape_ir for r in report.rows)


def test_what_stops_before_converting(tmp_path):
    src = _tree(tmp_path / "models")
    with pytest.raises(TypeError, match=r"^convert_all: got an unexpected keyword argument 'verfy' \(the options "
                                        r"are convert's keywords: inline, verify, .*\)$"):
        converters.convert_all(src, tmp_path / "out", verfy=True)
    with pytest.raises(converters.OnnxExtError, match="DST must be a directory"):
        converters.convert_all(src, tmp_path / "out.onnx")
    assert not (tmp_path / "out").exists()


def test_the_command_batch_mode_is_convert_all(tmp_path, capsys, monkeypatch):
    src, calls = _tree(tmp_path / "models"), []
    real = converters.api.convert_all

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(converters.api, "convert_all", spy)
    status = cli_module.main(["convert", str(src), str(tmp_path / "out"), "-j", "1", "--inline"])
    out, _ = capsys.readouterr()
    assert status == 2 and calls and calls[0]["inline"] is True and calls[0]["jobs"] == 1
    assert out.splitlines()[-1] == "4 files: 2 ok, 0 differ, 2 failed"
