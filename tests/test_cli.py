"""The onnx-ext command: convert both ways, verify, and one-line errors with exit 2."""

import re
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
    """The installed command in a new process (as a user runs it)."""
    exe = shutil.which("onnx-ext")
    cmd = [exe] if exe else [sys.executable, "-m", "converters.cli"]
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True, cwd=cwd, timeout=300)


def cli_here(*args):
    """The command's main() in this process (no interpreter start-up), with its output captured."""
    import contextlib
    import io
    import types

    from converters.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return types.SimpleNamespace(returncode=status, stdout=out.getvalue(), stderr=err.getvalue())


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
    r = cli_here("convert", EXAMPLE, out, "--inline", "--verify", "--backend", "cpu", "--dynamic-size", "5")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "5x5x1x8" in r.stdout
    model = onnx.load(str(out))
    assert all(n.domain == "" for n in model.graph.node) and not model.functions


def test_onnx_to_ir_restores_native_ops(tmp_path):
    onnx_path, xml = tmp_path / "m.onnx", tmp_path / "back.xml"
    assert cli_here("convert", EXAMPLE, onnx_path).returncode == 0
    r = cli_here("convert", onnx_path, xml)
    assert r.returncode == 0, r.stderr
    text = xml.read_text()
    for layer in ('type="Range" version="opset4"', 'type="Broadcast" version="opset3"',
                  'type="Gather" version="opset8"', 'type="StridedSlice" version="opset1"'):
        assert layer in text
    assert cli_here("verify", xml, onnx_path).returncode == 0


def test_verify_with_npz_inputs_and_numpy_backend(tmp_path):
    onnx_path = tmp_path / "m.onnx"
    assert cli_here("convert", EXAMPLE, onnx_path).returncode == 0
    npz = tmp_path / "in.npz"
    np.savez(npz, input_ids=np.array([[1, 63, 64, -1]], np.int64))  # out-of-range ids give zeros on both sides
    r = cli_here("verify", EXAMPLE, onnx_path, "--inputs", npz, "--backend", "numpy")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "1x4x1x8" in r.stdout


def test_mismatch_exits_1_with_table(tmp_path):
    onnx_path = tmp_path / "m.onnx"
    assert cli_here("convert", EXAMPLE, onnx_path).returncode == 0
    model = onnx.load(str(onnx_path))
    for init in model.graph.initializer:  # perturb the embedding table
        if init.dims and init.dims[0] == 64:
            arr = onnx.numpy_helper.to_array(init) + 1
            init.CopyFrom(onnx.numpy_helper.from_array(arr, init.name))
    onnx.save(model, str(onnx_path))
    r = cli_here("verify", EXAMPLE, onnx_path)
    assert r.returncode == 1
    assert "MISMATCH" in r.stdout and "outputs differ" in r.stdout
    assert r.stdout.rstrip().endswith("\n" + cli_module.MISMATCH_HINT) and not r.stderr


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
    r = cli_here(*args)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("onnx-ext: error:"), r.stderr
    assert "Traceback" not in r.stderr
    if case not in ("bad_dim_flag",):
        assert not out.exists()
    if case in ("malformed", "short_bin", "missing"):
        assert ".xml" in lines[0] or ".bin" in lines[0]


# --- batches, flags and the behaviour of a Unix tool ------------------------------------

import io  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402

from converters import batch  # noqa: E402
from converters import cli as cli_module  # noqa: E402


def run_main(capsys, *args):
    status = cli_module.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def make_tree(root: Path, copies: int = 1) -> Path:
    """root/a.xml (+ .bin), root/sub/deeper/b{i}.xml, a garbage and an empty .onnx in sub/."""
    (root / "sub" / "deeper").mkdir(parents=True)
    shutil.copy(EXAMPLE, root / "a.xml")
    shutil.copy(EXAMPLE.with_suffix(".bin"), root / "a.bin")
    for i in range(copies):
        shutil.copy(EXAMPLE, root / "sub" / "deeper" / f"b{i}.xml")
        shutil.copy(EXAMPLE.with_suffix(".bin"), root / "sub" / "deeper" / f"b{i}.bin")
    (root / "sub" / "garbage.onnx").write_bytes(b"\x00\xffnot a model" * 10)
    (root / "sub" / "empty.onnx").write_bytes(b"")
    return root


def test_directory_batch_in_parallel_processes_with_summary(tmp_path):
    src = make_tree(tmp_path / "models", copies=2)
    out = tmp_path / "out"
    r = cli("convert", src, out, "--verify", "--jobs", "2")
    assert r.returncode == 2, r.stdout + r.stderr
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == ["a.onnx", "sub/deeper/b0.onnx", "sub/deeper/b1.onnx"]
    for p in out.rglob("*.onnx"):
        assert [o.name for o in onnx.load(str(p)).graph.output] == ["features", "last_token"]
    rows = {line.split()[0]: line.split()[1] for line in r.stdout.splitlines()[1:-1]}
    assert rows == {str(src / "a.xml"): "ok", str(src / "sub/deeper/b0.xml"): "ok",
                    str(src / "sub/deeper/b1.xml"): "ok", str(src / "sub/empty.onnx"): "failed",
                    str(src / "sub/garbage.onnx"): "failed"}
    assert r.stdout.splitlines()[0].split() == ["file", "status", "time", "message"]
    assert "all 2 outputs match" in r.stdout
    assert r.stdout.splitlines()[-1] == "5 files: 3 ok, 0 differ, 2 failed"
    # redirected: rows as long as their cells, the message without the file again, each failure once
    lines = r.stdout.splitlines()
    longest_ok = max((line for line in lines if " ok " in line), key=len)  # file, ok, time, -> dst; summary
    assert all(line == line.rstrip() for line in lines) and max(map(len, lines)) == len(longest_ok)
    empty = next(line for line in lines if line.startswith(str(src / "sub/empty.onnx")))
    assert empty.split()[1] == "failed" and empty.count("empty.onnx") == 1
    assert re.search(r" s +an empty file, not an ONNX model$", empty), empty
    assert r.stderr.strip() == "onnx-ext: error: 2 of 5 files failed (the table above says why)"
    # --quiet: no table, one line per bad file on stderr, naming it
    r = cli("convert", src, tmp_path / "out2", "--quiet")
    errors = r.stderr.strip().splitlines()
    assert r.returncode == 2 and r.stdout == "" and len(errors) == 2 and "Traceback" not in r.stderr
    assert errors[0] == f"onnx-ext: error: {src / 'sub/empty.onnx'}: an empty file, not an ONNX model"
    assert errors[1].startswith(f"onnx-ext: error: {src / 'sub/garbage.onnx'}: ")


def test_several_files_into_a_directory_with_to(tmp_path, capsys):
    src = make_tree(tmp_path / "models")
    out = tmp_path / "out"
    assert run_main(capsys, "convert", src / "a.xml", out / "a.onnx")[0] == 0
    status, stdout, err = run_main(capsys, "convert", src / "a.xml", src / "sub/deeper/b0.xml", out / "a.onnx",
                                   out / "ir", "--to", "xml")
    assert status == 2 and "a.xml: already IR (--to xml converts .onnx files)" in err  # --to xml takes .onnx only
    status, stdout, err = run_main(capsys, "convert", out / "a.onnx", out / "ir", "--to", "xml", "--jobs", "1")
    assert status == 0, err
    assert sorted(p.name for p in (out / "ir").iterdir()) == ["a.bin", "a.xml"]
    assert stdout.splitlines()[-1] == "1 file: 1 ok, 0 differ, 0 failed"
    status, _, err = run_main(capsys, "convert", src / "sub" / "deeper", out / "x", "--to", "xml")
    assert status == 2 and err.strip() == f"onnx-ext: error: no .onnx files in {src / 'sub' / 'deeper'}"
    assert not (out / "x").exists()


def test_batch_refuses_two_sources_writing_one_file(tmp_path, capsys):
    (tmp_path / "x").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "x" / "m.xml")
    shutil.copy(EXAMPLE, tmp_path / "m.xml")
    status, out, err = run_main(capsys, "convert", tmp_path / "m.xml", tmp_path / "x" / "m.xml", tmp_path / "out")
    assert status == 2 and not out
    assert err.strip() == (f"onnx-ext: error: {tmp_path / 'm.xml'} and {tmp_path / 'x' / 'm.xml'} "
                           f"would both write {tmp_path / 'out' / 'm.onnx'}")
    assert not (tmp_path / "out").exists()


def test_progress_bar_on_a_terminal(tmp_path, capsys, monkeypatch):
    from rich.console import Console

    buf = io.StringIO()
    real = batch.console
    monkeypatch.setattr(batch, "console",
                        lambda f: Console(file=buf, force_terminal=True, width=120) if f is sys.stderr else real(f))
    src = make_tree(tmp_path / "models")
    status, out, _ = run_main(capsys, "convert", src / "a.xml", src / "sub/deeper/b0.xml", tmp_path / "out", "-j", "1")
    assert status == 0
    assert "converting" in buf.getvalue() and "2/2" in buf.getvalue()
    status, out, err = run_main(capsys, "convert", src / "a.xml", tmp_path / "out2", "--quiet")  # DST without suffix
    assert status == 0 and out == "" and err == ""
    assert [p.name for p in (tmp_path / "out2").iterdir()] == ["a.onnx"]


def test_quiet_and_verbose_single_file(tmp_path, capsys):
    status, out, err = run_main(capsys, "convert", EXAMPLE, tmp_path / "m.onnx", "--verify", "-q")
    assert status == 0 and out == "" and err == ""
    status, out, err = run_main(capsys, "convert", EXAMPLE, tmp_path / "m.onnx", "--verify", "-v")
    assert status == 0 and "converted in" in out and "input input_ids: 3x3 int64" in out


def test_version_and_help(capsys):
    from importlib.metadata import version

    r = cli("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"onnx-ext {version('onnx-ext')}"
    with pytest.raises(SystemExit):
        cli_module.main(["convert", "--help"])
    text = capsys.readouterr().out
    for line in ("examples:", "onnx-ext convert models/ out/ --jobs 2", "exit status:", "130  interrupted",
                 "NAME_d<i>", "input_ids_d0"):
        assert line in text, line


def test_garbage_and_empty_onnx_to_ir_one_line(tmp_path, capsys):
    for name, data in (("garbage.onnx", b"\x08\x07garbage" * 5), ("empty.onnx", b"")):
        (tmp_path / name).write_bytes(data)
        status, out, err = run_main(capsys, "convert", tmp_path / name, tmp_path / "g.xml")
        assert status == 2 and not out
        assert len(err.strip().splitlines()) == 1 and err.startswith(f"onnx-ext: error: {tmp_path / name}: ")
        assert not (tmp_path / "g.xml").exists() and not (tmp_path / "g.bin").exists()


def test_output_directory_named_in_one_line(tmp_path, capsys):
    onnx_path = tmp_path / "m.onnx"
    assert run_main(capsys, "convert", EXAMPLE, onnx_path)[0] == 0
    (tmp_path / "out.bin").mkdir()
    status, _, err = run_main(capsys, "convert", onnx_path, tmp_path / "out.xml")
    assert status == 2 and err.strip() == (f"onnx-ext: error: {tmp_path / 'out.bin'}: is a directory "
                                           "(give a file name ending in .bin)")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("dst", ["afile/m.onnx", "afile/sub/m.onnx", "afile/m.xml"])
def test_output_under_a_file_is_not_a_directory(tmp_path, capsys, dst):
    """A file where the output's folder goes: "FILE: Not a directory" (mkdir's "File exists" read as if the
    output were refused for existing), both directions, nothing written."""
    onnx_path = tmp_path / "m.onnx"
    assert run_main(capsys, "convert", EXAMPLE, onnx_path)[0] == 0
    (tmp_path / "afile").write_text("x")
    status, out, err = run_main(capsys, "convert", onnx_path if dst.endswith(".xml") else EXAMPLE, tmp_path / dst)
    named = tmp_path / dst.rsplit("/", 1)[0]
    assert status == 2 and not out and err == f"onnx-ext: error: {named}: Not a directory\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "m.onnx"]


def test_existing_directory_as_destination_receives_the_file(tmp_path, capsys):
    (tmp_path / "dir.onnx").mkdir()
    status, out, err = run_main(capsys, "convert", EXAMPLE, tmp_path / "dir.onnx")
    assert status == 0, err
    assert (tmp_path / "dir.onnx" / "embedding_block.onnx").is_file()


def test_keyboard_interrupt_in_process(tmp_path, capsys, monkeypatch):
    import converters.api

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(converters.api, "verify_files", interrupted)
    status, out, err = run_main(capsys, "convert", EXAMPLE, tmp_path / "m.onnx", "--verify")
    assert status == 130 and err == "onnx-ext: interrupted\n"


def test_broken_pipe_is_quiet(tmp_path):
    onnx_path = tmp_path / "m.onnx"
    assert cli_here("convert", EXAMPLE, onnx_path).returncode == 0
    exe = shutil.which("onnx-ext")
    cmd = ([exe] if exe else [sys.executable, "-m", "converters.cli"]) + ["verify", str(EXAMPLE), str(onnx_path)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the first write, as with `| head -0`
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 141 and err == ""


def test_sigint_during_a_batch_leaves_no_partial_files(tmp_path):
    src = tmp_path / "models"
    src.mkdir()
    for i in range(80):  # enough that the batch is still running when the first model is written
        shutil.copy(EXAMPLE, src / f"m{i}.xml")
        shutil.copy(EXAMPLE.with_suffix(".bin"), src / f"m{i}.bin")
    out = tmp_path / "out"
    exe = shutil.which("onnx-ext")
    cmd = ([exe] if exe else [sys.executable, "-m", "converters.cli"]) + [
        "convert", str(src), str(out), "--verify", "--jobs", "2"]
    # SIGINT at its default in the child whatever the test runner's disposition (Python installs its
    # KeyboardInterrupt handler only over the default)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not list(out.glob("*.onnx")) and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)  # to this process only: it must stop its workers itself
    stdout, stderr = p.communicate(timeout=300)
    assert p.returncode == 130, (stdout, stderr)
    assert stderr == "onnx-ext: interrupted\n"
    files = list(out.iterdir())
    assert 0 < len(files) < 80
    for f in files:  # only complete models, no temporary files
        assert f.suffix == ".onnx" and not f.name.startswith("."), f
        assert [o.name for o in onnx.load(str(f)).graph.output] == ["features", "last_token"]


def test_jobs_default_is_one_per_cpu_at_most_one_per_file(tmp_path, capsys, monkeypatch):
    seen = []

    def fake_run(jobs, settings, n_jobs, progress, details=False):
        seen.append((len(jobs), n_jobs))
        return [batch.Outcome("ok", 0.0) for _ in jobs]

    monkeypatch.setattr(batch, "run_jobs", fake_run)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    src = make_tree(tmp_path / "models", copies=5)  # 6 .xml, 2 .onnx
    assert run_main(capsys, "convert", src, tmp_path / "out")[0] == 0
    assert run_main(capsys, "convert", src / "a.xml", tmp_path / "out")[0] == 0
    assert run_main(capsys, "convert", src, tmp_path / "out", "-j", "3")[0] == 0
    assert seen == [(8, 4), (1, 1), (8, 3)]


def crash_on_crash_xml(job, settings, details=False):
    """A stand-in for convert_job in forked workers: dies like a native crash on one file."""
    if job.src.name == "crash.xml":
        os._exit(11)
    return batch.Outcome("ok", 0.0, f"converted {job.src.name}")


@pytest.mark.skipif(__import__("multiprocessing").get_context().get_start_method() != "fork",
                    reason="the workers see the patched convert_job only when forked")
def test_a_crashing_worker_fails_its_file_only(tmp_path, monkeypatch):
    monkeypatch.setattr(batch, "convert_job", crash_on_crash_xml)
    names = ["a.xml", "b.xml", "crash.xml", "c.xml", "d.xml"]
    jobs = [batch.Job(tmp_path / n, tmp_path / "out" / n, n) for n in names]
    outcomes = batch.run_jobs(jobs, {}, 2, progress=False)
    assert [o.status for o in outcomes] == ["ok", "ok", "failed", "ok", "ok"]
    assert outcomes[2].message == "crash.xml: the worker process crashed"
    assert outcomes[4].message == "converted d.xml"


@pytest.mark.parametrize("argv", [["--help"], ["convert", "--help"], ["verify", "--help"]])
def test_help_texts_have_no_rst(capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main(argv)
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "``" not in text and ":func:" not in text and "exit status:" in text and "examples:" in text


@pytest.mark.parametrize("argv, shown, not_shown", [
    (["--help"], ["onnx-ext convert model.xml", "onnx-ext verify model.xml"], []),
    (["convert", "--help"], ["onnx-ext convert model.xml", "[--inputs FILE.npz]", "-j N, --jobs N"],
     ["onnx-ext verify model.xml"]),
    (["verify", "--help"], ["onnx-ext verify model.xml", "[--inputs FILE.npz]", "XML ONNX\n", "--dynamic-size N "],
     ["onnx-ext convert model.xml"]),
])
def test_each_help_shows_its_own_examples(capsys, argv, shown, not_shown):
    with pytest.raises(SystemExit):
        cli_module.main(argv)
    text = capsys.readouterr().out
    assert all(s in text for s in shown) and not any(s in text for s in not_shown), text


@pytest.mark.parametrize("argv, expected", [
    (["convert", "a.xml"], "onnx-ext convert: error: the following arguments are required: DST"),
    (["verify", "a.xml", "a.onnx", "--backend", "gpu"], "onnx-ext verify: error: argument --backend: invalid choice"),
])
def test_usage_errors_one_line_exit_2(capsys, argv, expected):
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and err.startswith(expected)


def test_verify_names_the_missing_ir_first(capsys, tmp_path):
    status, _, err = run_main(capsys, "verify", tmp_path / "nope.xml", tmp_path / "nope.onnx")
    assert status == 2 and err.count("\n") == 1 and "nope.xml" in err


def test_verify_with_the_models_swapped_says_the_ir_comes_first(capsys, tmp_path):
    onnx_path = tmp_path / "m.onnx"
    assert run_main(capsys, "convert", EXAMPLE, onnx_path)[0] == 0
    for args, named in (((onnx_path, EXAMPLE), onnx_path), ((EXAMPLE, EXAMPLE), EXAMPLE)):
        status, _, err = run_main(capsys, "verify", *args)
        assert status == 2 and err.count("\n") == 1 and err.startswith(f"onnx-ext: error: {named}: an ")
        assert "the IR comes first (onnx-ext verify MODEL.xml MODEL.onnx" in err


@pytest.mark.parametrize("flags, expected", [
    (["--requantize-int4"], "--requantize-int4 goes with --int8-activations (4-bit MatMulNBits at accuracy level 4)"),
    (["--int8-activations", "--no-contrib"], "--int8-activations runs onnxruntime's contrib op MatMulNBits: not with "
                                             "--no-contrib"),
    (["--to", "xml"], "--to xml: {src} -> {dst} converts to .onnx; --to picks the models of a directory or of "
                      "several sources"),
])
def test_flags_that_conflict_are_named_as_flags(capsys, tmp_path, flags, expected):
    """The API's messages name its keywords (int8_activations, contrib=False); the command names its flags."""
    dst = tmp_path / "m.onnx"
    status, out, err = run_main(capsys, "convert", EXAMPLE, dst, *flags)
    assert status == 2 and not out and err == f"onnx-ext: error: {expected.format(src=EXAMPLE, dst=dst)}\n"
    assert not dst.exists()


def test_to_that_agrees_with_one_model_is_accepted(capsys, tmp_path):
    """docs/converters.md: --to is refused on one model only where it contradicts the DST's suffix."""
    status, out, err = run_main(capsys, "convert", EXAMPLE, tmp_path / "m.onnx", "--to", "onnx")
    assert status == 0 and not err and out == f"wrote {tmp_path / 'm.onnx'}\n"


_OURS = "IR -> ONNX and optimum-intel model folders"


@pytest.mark.parametrize("src, dst, flags, expected", [
    ("m.onnx", "m.xml", ["--inline"], f"--inline applies to {_OURS}, not to {{src}} -> {{dst}} (ONNX -> IR): it "
                                      "removes the onnx-ext functions from the ONNX written"),
    ("m.onnx", "m.xml", ["--no-contrib"], f"--no-contrib applies to {_OURS}, not to {{src}} -> {{dst}} (ONNX -> IR): "
                                          "it picks the ONNX ops written"),
    ("m.onnx", "m.xml", ["--int8-activations"], f"--int8-activations applies to {_OURS}, not to {{src}} -> {{dst}} "
                                                "(ONNX -> IR): it picks how compressed weights run in the ONNX written"),
    ("m.xml", "m2.onnx", ["--rope-in-attention"], "--rope-in-attention applies to optimum-intel model folders, not to "
                                                  "{src} -> {dst} (IR -> ONNX): it fuses an LLM's RoPE into its "
                                                  "GroupQueryAttention"),
    ("m.xml", "m2.onnx", ["--jobs", "2"], "--jobs 2: {src} is one model, converted in this process; --jobs runs the "
                                          "models of a directory or of several sources in parallel"),
    ("onnx_only", "out", ["--no-contrib"], f"--no-contrib applies to {_OURS}, not to the 1 model found (ONNX -> IR): "
                                           "it picks the ONNX ops written"),
    ("both", "out", ["--rope-in-attention"], "--rope-in-attention applies to optimum-intel model folders, not to the 2 "
                                             "models found (IR -> ONNX and ONNX -> IR): it fuses an LLM's RoPE into "
                                             "its GroupQueryAttention"),
    ("llm", "out", ["--to", "onnx"], "--to onnx: {src} -> {dst} converts to a folder; --to picks the models of a "
                                     "directory or of several sources"),
    ("llm", "out", ["--jobs", "1"], "--jobs 1: {src} is one model, converted in this process; --jobs runs the "
                                    "models of a directory or of several sources in parallel"),
])
def test_a_flag_that_cannot_apply_is_refused_by_name(capsys, tmp_path, src, dst, flags, expected):
    """A flag of the ONNX written given to ONNX -> IR, an LLM folder's to one file, --jobs or --to to one model, a
    batch's flag none of its files takes: one line and exit 2, nothing written (were: silently ignored)."""
    shutil.copy(EXAMPLE, tmp_path / "m.xml")
    shutil.copy(EXAMPLE.with_suffix(".bin"), tmp_path / "m.bin")
    assert run_main(capsys, "convert", tmp_path / "m.xml", tmp_path / "m.onnx")[0] == 0
    (tmp_path / "onnx_only").mkdir()
    shutil.copy(tmp_path / "m.onnx", tmp_path / "onnx_only")
    (tmp_path / "both").mkdir()
    for name in ("m.onnx", "m.xml", "m.bin"):
        shutil.copy(tmp_path / name, tmp_path / "both" / ("n.onnx" if name == "m.onnx" else name))
    (tmp_path / "llm").mkdir()  # refused before anything is read: the names of an optimum-intel folder suffice
    for name in ("openvino_model.xml", "openvino_model.bin", "config.json"):
        (tmp_path / "llm" / name).write_text("{}")
    before = sorted(tmp_path.rglob("*"))
    status, out, err = run_main(capsys, "convert", tmp_path / src, tmp_path / dst, *flags)
    assert status == 2 and not out
    assert err == f"onnx-ext: error: {expected.format(src=tmp_path / src, dst=tmp_path / dst)}\n"
    assert sorted(tmp_path.rglob("*")) == before


def test_verification_flags_need_verify(capsys, tmp_path):
    status, _, err = run_main(capsys, "convert", EXAMPLE, tmp_path / "m.onnx", "--seed", "3", "--backend", "cpu")
    assert status == 2 and err == ("onnx-ext: error: --seed, --backend: verification options given without --verify "
                                   "(add --verify, or drop them)\n")
    status, _, err = run_main(capsys, "convert", EXAMPLE, tmp_path / "m.onnx", "--seed", "3")
    assert status == 2 and err == ("onnx-ext: error: --seed: verification option given without --verify "
                                   "(add --verify, or drop it)\n")
    assert not (tmp_path / "m.onnx").exists()


def test_mixed_batch_inline_and_no_contrib_apply_to_ir_sources(capsys, tmp_path):
    src = tmp_path / "mix"
    src.mkdir()
    shutil.copy(EXAMPLE, src / "e.xml")
    shutil.copy(EXAMPLE.with_suffix(".bin"), src / "e.bin")
    assert run_main(capsys, "convert", EXAMPLE, src / "f.onnx")[0] == 0
    status, out, err = run_main(capsys, "convert", src, tmp_path / "out", "--inline", "--no-contrib", "--jobs", "1")
    assert status == 0, err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["e.onnx", "f.bin", "f.xml"]
    plain = onnx.load(str(tmp_path / "out" / "e.onnx"))
    assert all(n.domain == "" for n in plain.graph.node) and not plain.functions


def test_an_input_range_out_of_order_is_named_as_its_flag(capsys, tmp_path):
    status, out, err = run_main(capsys, "convert", EXAMPLE, tmp_path / "m.onnx", "--verify", "--int-range", "4", "0")
    assert status == 2 and not out and err == ("onnx-ext: error: --int-range 4 0: values are drawn from [LO, HI), "
                                               "LO must be below HI\n")  # as typed, not a tuple
    assert not (tmp_path / "m.onnx").exists()


# --- the second hour: one form for a missing file, flags named as flags, a hint a wheel's user can follow --------

@pytest.mark.parametrize("case, named, what", [
    ("ir", "nope.xml", "IR file not found"),
    ("bin", "m.bin", "weights file not found (expected for"),
    ("onnx_to_ir", "nope.onnx", "ONNX file not found"),
    ("verify_onnx", "nope.onnx", "ONNX file not found"),
    ("folder", "nodir", "file or directory not found"),
    ("npz", "nope.npz", "inputs file not found"),
    ("verify_npz", "nope.npz", "inputs file not found"),
])
def test_a_missing_file_is_one_line_of_one_form(capsys, tmp_path, case, named, what):
    """Whichever file is missing: "onnx-ext: error: PATH: WHAT not found", exit 2, nothing written."""
    xml, onnx_path = tmp_path / "m.xml", tmp_path / "m.onnx"
    shutil.copy(EXAMPLE, xml)
    if case in ("verify_onnx", "verify_npz"):
        shutil.copy(EXAMPLE.with_suffix(".bin"), xml.with_suffix(".bin"))
        assert run_main(capsys, "convert", xml, onnx_path)[0] == 0
    elif case != "bin":
        shutil.copy(EXAMPLE.with_suffix(".bin"), xml.with_suffix(".bin"))
    out = tmp_path / "out"
    args = {"ir": ["convert", tmp_path / "nope.xml", out / "m.onnx"],
            "bin": ["convert", xml, out / "m.onnx"],
            "onnx_to_ir": ["convert", tmp_path / "nope.onnx", out / "m.xml"],
            "verify_onnx": ["verify", xml, tmp_path / "nope.onnx"],
            "folder": ["convert", tmp_path / "nodir", out],
            "npz": ["convert", xml, out / "m.onnx", "--verify", "--inputs", tmp_path / "nope.npz"],
            "verify_npz": ["verify", xml, onnx_path, "--inputs", tmp_path / "nope.npz"]}[case]
    status, stdout, err = run_main(capsys, *args)
    assert status == 2 and err.count("\n") == 1 and not stdout, (status, stdout, err)
    assert err.startswith(f"onnx-ext: error: {tmp_path / named}: {what}"), err
    assert not out.exists()


@pytest.mark.parametrize("command, flag, expected", [
    ("convert_ir", ["--shape", "foo=2,3"], "--shape foo=2,3: no model input named 'foo' (the inputs of {src}: "
                                           "input_ids)"),
    ("convert_onnx", ["--shape", "foo=2,3"], "--shape foo=2,3: no model input named 'foo' (the inputs of {src}: "
                                             "input_ids)"),
    ("verify", ["--shape", "foo=2,3"], "--shape foo=2,3: no model input named 'foo' (the inputs: input_ids)"),
    ("verify", ["--shape", "input_ids=2,3,4"], "--shape input_ids=2,3,4: 'input_ids' has rank 2, not 3"),
    ("verify", ["--dim", "foo=3"], "--dim foo=3: the model's inputs have no dim named 'foo' (their symbolic dims: "
                                   "input_ids_d0, input_ids_d1)"),
])
def test_shape_and_dim_errors_name_the_flag(capsys, tmp_path, command, flag, expected):
    """The API names them after its keywords (shape NAME=..., dim NAME=...); the command after its flags, never
    as the Python keyword ``shapes``."""
    onnx_path = tmp_path / "m.onnx"
    assert run_main(capsys, "convert", EXAMPLE, onnx_path)[0] == 0
    args = {"convert_ir": ["convert", EXAMPLE, tmp_path / "b.onnx", "--verify"],
            "convert_onnx": ["convert", onnx_path, tmp_path / "b.xml", "--verify"],
            "verify": ["verify", EXAMPLE, onnx_path]}[command]
    src = {"convert_ir": EXAMPLE, "convert_onnx": onnx_path}.get(command)
    status, _, err = run_main(capsys, *args, *flag)
    assert status == 2 and err == f"onnx-ext: error: {expected.format(src=src)}\n"
    assert not (tmp_path / "b.onnx").exists() and not (tmp_path / "b.xml").exists()


def test_the_mismatch_hint_points_to_help_that_states_the_tolerances(capsys):
    """A wheel's user has no docs/: the hint names `onnx-ext verify --help`, whose tolerances are the ones
    compare applies."""
    from converters.verify.compare import FAKE_QUANTIZE_TOLERANCE, QUANTIZED_TOLERANCE, TOLERANCES

    assert cli_module.MISMATCH_HINT.endswith("the tolerances: onnx-ext verify --help")
    with pytest.raises(SystemExit):
        cli_module.main(["verify", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    short = lambda x: f"{x:.0e}".replace("e-0", "e-")  # noqa: E731 - 1e-6 as the help writes it
    for ov_type, (rtol, atol) in TOLERANCES.items():
        assert f"{ov_type}: {short(atol)} + {short(rtol)} max|IR|" in text
    assert f"quantized model: {short(QUANTIZED_TOLERANCE)} max|IR| " in text
    assert f"({short(FAKE_QUANTIZE_TOLERANCE)} with QuantizeLinear)" in text
