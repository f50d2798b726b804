"""OpenVINO runs in a worker process of its own (converters/verify/isolated.py): a crash of its CPU plugin is
verify's one-line error naming the file, the stage and the signal (exit status 2), not the death of the caller."""

import os
import signal
import time

import numpy as np
import pytest

ov = pytest.importorskip("openvino")

import converters  # noqa: E402
from converters.cli import main  # noqa: E402
from converters.verify import VerifyError  # noqa: E402
from converters.verify.isolated import Crashed, Worker, stage  # noqa: E402


def _die_by(signum: int, where: str):
    stage(where)
    os.kill(os.getpid(), signum)


def _raise(message: str):
    raise VerifyError(message)


def _echo(*args):
    return args


def test_worker_reports_the_stage_and_signal_of_a_crash_and_starts_again():
    worker = Worker()
    try:
        big = np.arange(3 * 1024 * 1024, dtype=np.float32).reshape(3, 1024, 1024)  # 12 MB each way
        got, label = worker.call(_echo, big, "x")
        assert label == "x" and got.dtype == np.float32 and np.array_equal(got, big)
        with pytest.raises(Crashed) as crashed:
            worker.call(_die_by, signal.SIGSEGV, "compiling")
        assert (crashed.value.stage, crashed.value.signal, crashed.value.exitcode) == ("compiling", "SIGSEGV",
                                                                                       -signal.SIGSEGV)
        with pytest.raises(VerifyError, match="^bad input$"):  # a new worker; the job's exception crosses
            worker.call(_raise, "bad input")
        assert worker.call(_echo, 1) == (1,)
    finally:
        worker.close()


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def test_a_reused_worker_reads_relative_paths_from_the_callers_directory(tmp_path, monkeypatch):
    """The worker outlives a chdir of its caller (a script, a test moving between folders): a relative path names
    the file in the caller's directory of the moment (once failed in test_docs under -n 2: 'cannot read the IR')."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f.txt").write_text(name)
    worker = Worker()
    try:
        monkeypatch.chdir(tmp_path / "a")
        assert worker.call(_read, "f.txt") == "a"
        monkeypatch.chdir(tmp_path / "b")
        assert worker.call(_read, "f.txt") == "b"
    finally:
        worker.close()


def _interrupt(*_):
    raise KeyboardInterrupt


def test_an_interrupted_call_leaves_no_answer_for_the_next():
    """Ctrl-C while the worker runs a job: the worker is ended, so its late answer is not the next call's."""
    worker = Worker()
    previous = signal.signal(signal.SIGALRM, _interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        with pytest.raises(KeyboardInterrupt):
            worker.call(time.sleep, 60)
        assert worker.call(_echo, 2) == (2,)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        worker.close()


def _ctc_loss_pair(tmp_path):
    """CTCLoss-4 with a label length of 0: the reference gives -0, the CPU plugin dies by SIGSEGV running it
    (docs/ops/ctc_loss.md; every run of OpenVINO 2026.4)."""
    import openvino.opset4 as ops

    logits = ops.parameter([1, 4, 3], ov.Type.f32, name="logits")
    node = ops.ctc_loss(logits, ops.constant(np.array([4], np.int32)), ops.constant(np.zeros((1, 4), np.int32)),
                        ops.constant(np.array([0], np.int32)))
    node.output(0).get_tensor().set_names({"loss"})
    xml = tmp_path / "ctc.xml"
    ov.save_model(ov.Model([node], [logits], "ctc"), str(xml), compress_to_fp16=False)
    onnx_path = tmp_path / "ctc.onnx"
    converters.convert(xml, onnx_path)
    return xml, onnx_path


def test_cpu_plugin_crash_is_one_line_naming_file_stage_and_signal(tmp_path):
    xml, onnx_path = _ctc_loss_pair(tmp_path)
    with pytest.raises(VerifyError) as failed:
        converters.verify(xml, onnx_path, backend="cpu")
    message = str(failed.value)
    assert message.startswith(f"OpenVINO's CPU plugin crashed (SIGSEGV) running {xml}: an OpenVINO bug"), message
    assert "\n" not in message
    with pytest.raises(VerifyError) as failed:  # the reference has no evaluate for CTCLoss: the plugin, again
        converters.verify(xml, onnx_path, inputs={"logits": np.zeros((1, 4, 3), np.float32)})
    assert str(failed.value) == (f"OpenVINO's CPU plugin crashed (SIGSEGV) running {xml}: an OpenVINO bug (it killed "
                                 "the worker process verify runs OpenVINO in; the reference: it has no evaluate for "
                                 "CTCLoss); --backend numpy runs onnx-ext's numpy references")


def test_cli_exit_status_2_and_one_line_on_a_crash(tmp_path, capsys):
    xml, onnx_path = _ctc_loss_pair(tmp_path)
    capsys.readouterr()
    assert main(["verify", str(xml), str(onnx_path), "--backend", "cpu"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and f"OpenVINO's CPU plugin crashed (SIGSEGV) running {xml}:" in err, err
