"""The command's and the API's rough edges of issue 19, each fixed: the --help example of several
files, `| head` exiting 141, DST checks, the .npz checked before converting, the verification's
error naming the file it leaves, --jobs, --verbose in a batch and on a bug, the API's errors."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import converters
from converters import cli as cli_module

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "embedding_block.xml"


def run(capsys, *args):
    status = cli_module.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def copy_example(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(EXAMPLE, path)
    shutil.copy(EXAMPLE.with_suffix(".bin"), path.with_suffix(".bin"))
    return path


@pytest.fixture(scope="module")
def example_onnx(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("example") / "b.onnx"
    converters.convert(EXAMPLE, path)
    return path


def test_the_help_example_of_several_files_runs(tmp_path, capsys, example_onnx):
    pytest.importorskip("openvino")
    line = next(ln for ln in cli_module.EPILOG.splitlines() if "several files into a directory" in ln)
    argv = line.strip().split("  ")[0].split()[1:]  # onnx-ext convert a.xml b.onnx out/
    assert argv == ["convert", "a.xml", "b.onnx", "out/"]
    copy_example(tmp_path / "a.xml")
    shutil.copy(example_onnx, tmp_path / "b.onnx")
    status, out, err = run(capsys, "convert", *[tmp_path / a for a in argv[1:]])
    assert status == 0, err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.onnx", "b.bin", "b.xml"]


def test_closed_stdout_exits_141_in_a_batch(tmp_path):
    src = tmp_path / "models"
    for i in range(3):
        copy_example(src / f"m{i}.xml")
    proc = subprocess.Popen([sys.executable, "-m", "converters.cli", "convert", str(src), str(tmp_path / "out")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    proc.stdout.close()  # as `| head -0`: the reader is gone before the table is written
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 141 and err == b""


def test_source_directory_that_is_dst(tmp_path, capsys):
    copy_example(tmp_path / "same" / "m.xml")
    status, _, err = run(capsys, "convert", tmp_path / "same", tmp_path / "same")
    assert status == 2 and err.strip() == (f"onnx-ext: error: {tmp_path / 'same'}: the source directory is DST "
                                           "itself: give another DST directory")


def test_directory_source_with_a_model_suffix_dst(tmp_path, capsys):
    copy_example(tmp_path / "models" / "m.xml")
    status, _, err = run(capsys, "convert", tmp_path / "models", tmp_path / "one.onnx")
    assert status == 2 and "one.onnx: with several sources or a directory source, DST must be a directory" in err
    assert not (tmp_path / "one.onnx").exists()


def test_npz_checked_before_converting(tmp_path, capsys):
    xml = copy_example(tmp_path / "m.xml")
    npz = tmp_path / "in.npz"
    np.savez(npz, tokens=np.zeros((1, 4), np.int64))
    status, _, err = run(capsys, "convert", xml, tmp_path / "m.onnx", "--verify", "--inputs", npz)
    assert status == 2 and err.strip() == (f"onnx-ext: error: {npz}: no model input named 'tokens' "
                                           f"(the inputs of {xml}: input_ids)")
    assert not (tmp_path / "m.onnx").exists()


def test_an_error_of_the_verification_names_the_file_written(tmp_path, capsys):
    xml = copy_example(tmp_path / "m.xml")
    npz = tmp_path / "in.npz"
    np.savez(npz, input_ids=np.zeros((1, 4), np.int32))  # the right name, the wrong dtype
    status, _, err = run(capsys, "convert", xml, tmp_path / "m.onnx", "--verify", "--inputs", npz)
    assert status == 2 and "input 'input_ids' has dtype int32, the model expects int64" in err
    assert err.strip().endswith(f"(converted: {tmp_path / 'm.onnx'} written)") and (tmp_path / "m.onnx").exists()


@pytest.mark.parametrize("jobs", ["0", "-1", "two"])
def test_jobs_must_be_positive(tmp_path, capsys, jobs):
    with pytest.raises(SystemExit) as info:
        cli_module.main(["convert", str(EXAMPLE), str(tmp_path / "out"), "--jobs", jobs])
    err = capsys.readouterr().err
    assert info.value.code == 2 and f"expected a whole number >= 1, not '{jobs}'" in err and len(err.splitlines()) == 1


def test_verbose_batch_shows_each_report(tmp_path, capsys):
    for i in range(2):
        copy_example(tmp_path / "models" / f"m{i}.xml")
    status, out, _ = run(capsys, "convert", tmp_path / "models", tmp_path / "out", "--verify", "-v", "-j", "1")
    assert status == 0
    for i in range(2):
        assert f"{tmp_path / 'models' / f'm{i}.xml'}:\noutput" in out
    assert out.count("max rel err: max abs err over the largest |IR output|") == 2


def test_dims_in_a_batch_apply_to_the_models_that_have_them(tmp_path, capsys, example_onnx):
    pytest.importorskip("openvino")
    import openvino as ov
    import openvino.opset13 as ops

    copy_example(tmp_path / "models" / "a.xml")
    x = ops.parameter([-1, 4], ov.Type.f32, name="x")
    y = ops.relu(x)
    y.output(0).get_tensor().set_names({"y"})
    ov.save_model(ov.Model([y], [x], "other"), str(tmp_path / "models" / "b.xml"))
    status, out, err = run(capsys, "convert", tmp_path / "models", tmp_path / "out", "--verify", "-v", "-j", "1",
                           "--dim", "input_ids_d1=6", "--shape", "x=5,4")
    assert status == 0, out + err
    assert re.search(r"features +\dx6x1x8 ", out) and re.search(r"\ny +5x4 ", out)
    status, _, err = run(capsys, "verify", EXAMPLE, example_onnx, "--dim", "x_d0=5")  # one model: checked
    assert status == 2 and "no dim named 'x_d0'" in err


def test_verbose_shows_the_traceback_it_promises(tmp_path, capsys, monkeypatch):
    import converters.api

    def bug(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(converters.api, "convert", bug)
    status, _, err = run(capsys, "convert", EXAMPLE, tmp_path / "m.onnx")
    assert status == 2 and err.strip() == "onnx-ext: error: internal error: RuntimeError: a bug (--verbose shows " \
                                          "the traceback)"
    status, _, err = run(capsys, "convert", EXAMPLE, tmp_path / "m.onnx", "-v")
    assert status == 2 and err.startswith("Traceback") and "--verbose" not in err
    assert err.strip().splitlines()[-1] == "onnx-ext: error: internal error: RuntimeError: a bug (the traceback above)"


def test_api_errors_speak_python(example_onnx):
    with pytest.raises(converters.VerifyError) as info:
        converters.verify(EXAMPLE, example_onnx, dims={"foo": 3})
    assert str(info.value).startswith("dim foo=3: the model's inputs have no dim named 'foo'")
    with pytest.raises(converters.VerifyError, match=r"^inputs must be arrays by input name \(a dict\) or an .npz "
                                                     r"path, not list$"):
        converters.verify(EXAMPLE, example_onnx, inputs=[np.zeros((1, 4), np.int64)])
    with pytest.raises(FileNotFoundError):
        converters.verify(EXAMPLE.with_name("missing.xml"), example_onnx)
    with pytest.raises(converters.OnnxExtError):  # IRError included
        converters.convert(EXAMPLE.with_suffix(".bin"), example_onnx.with_name("x.onnx"))


def test_verify_docstring_explains_the_backends():
    doc = converters.verify.__doc__
    for text in ('"reference"', '"cpu"', '"numpy"', "onnxruntime", "TOLERANCES", "shapes", "onnx_model"):
        assert text in doc
    assert "the module" not in doc


WITHOUT_OPENVINO = """
import sys
class NoOpenVINO:  # as if the package were installed without its [openvino] extra
    def find_spec(self, name, path=None, target=None):
        if name == "openvino" or name.startswith("openvino."):
            raise ImportError("openvino is not installed")
sys.meta_path.insert(0, NoOpenVINO())
from converters.cli import main
status = main(sys.argv[1:])
assert not [m for m in sys.modules if m.startswith("openvino")]
sys.exit(status)
"""


def test_ir_to_onnx_and_its_verification_need_no_openvino(tmp_path):
    # README: "[openvino] is needed for ONNX -> IR and to verify against OpenVINO"; the rest runs without it
    def command(*args):
        return subprocess.run([sys.executable, "-c", WITHOUT_OPENVINO, *map(str, args)], capture_output=True,
                              text=True, timeout=300, cwd=tmp_path)

    r = command("convert", EXAMPLE, tmp_path / "m.onnx", "--verify")
    assert r.returncode == 0, r.stderr
    assert "IR: onnx-ext's numpy references (openvino is not installed)" in r.stdout
    assert "all 2 outputs match" in r.stdout
    r = command("convert", tmp_path / "m.onnx", tmp_path / "back.xml")
    assert r.returncode == 2 and r.stderr == "onnx-ext: error: openvino is not installed: pip install 'onnx-ext[openvino]'\n"
