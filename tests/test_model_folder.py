"""optimum-intel folders that are not decoder LLMs (converters/model_folder.py, docs/converters.md "Model folders"):
an encoder's (BERT, ViT, CLIP, wav2vec2: ``openvino_model.xml`` with no KV cache), a seq2seq model's or a VLM's
(``openvino_<name>_model.xml``, no ``openvino_model.xml``) convert as a plain folder: each model IR to
``<name>.onnx`` + external data, the tokenizer IRs left out, the other files copied, no genai_config.json; a
stateful decoder's state as inputs and outputs. Were: refused ("the IR holds no KV cache") or converted as a batch
whose tokenizer IRs failed (exit 1). The folders are built here from tiny openvino models; one test exports a real
Whisper with optimum-intel (slow: /tmp/llmvenv).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import openvino as ov  # noqa: F401  (the test extra installs it)

import converters
from converters import ConvertError, OnnxExtError
from converters import cli as cli_module
from converters.model_folder import is_llm_folder, is_model_folder

FEATURES, HIDDEN = 16, 24
CONFIG = {"model_type": "whisper", "d_model": HIDDEN}
#: what an optimum-intel export holds beside its IRs, copied as they are
EXTRA = {"config.json": json.dumps(CONFIG), "generation_config.json": json.dumps({"decoder_start_token_id": 1}),
         "tokenizer.json": "{}", "preprocessor_config.json": json.dumps({"feature_size": FEATURES})}


def _encoder() -> ov.Model:
    """last_hidden_state = tanh(features @ W + b), batch and length dynamic."""
    import openvino.opset13 as ops

    rng = np.random.default_rng(0)
    x = ops.parameter([-1, -1, FEATURES], np.float32, name="input_features")
    h = ops.add(ops.matmul(x, ops.constant(rng.standard_normal((FEATURES, HIDDEN)).astype(np.float32)), False, False),
                ops.constant(rng.standard_normal(HIDDEN).astype(np.float32)))
    out = ops.result(ops.tanh(h))
    out.output(0).get_tensor().set_names({"last_hidden_state"})
    return ov.Model([out], [x], "encoder")


def _decoder() -> ov.Model:
    """A stateful decoder: its variable sums the encoder's states step after step; logits = (state + h) @ W."""
    import openvino.opset6 as o6
    import openvino.opset13 as ops
    from openvino.op.util import Variable, VariableInfo

    rng = np.random.default_rng(1)
    h = ops.parameter([2, 5, HIDDEN], np.float32, name="encoder_hidden_states")
    info = VariableInfo()
    info.variable_id, info.data_type, info.data_shape = "total", ov.Type.f32, ov.PartialShape([2, 5, HIDDEN])
    var = Variable(info)
    state = o6.read_value(ops.constant(np.zeros((2, 5, HIDDEN), np.float32)), var)
    new = ops.add(state, h)
    out = ops.result(ops.matmul(new, ops.constant(rng.standard_normal((HIDDEN, 7)).astype(np.float32)), False, False))
    out.output(0).get_tensor().set_names({"logits"})
    return ov.Model([out], [o6.assign(new, var)], [h], "decoder")


def _folder(root: Path, models: dict, extra: dict = EXTRA) -> Path:
    """An optimum-intel-like folder: ``models`` (IR name -> ov.Model), a tokenizer IR stand-in, ``extra`` files."""
    root.mkdir(parents=True)
    for name, model in models.items():
        ov.save_model(model, str(root / f"{name}.xml"), compress_to_fp16=False)
    for name in ("openvino_tokenizer", "openvino_detokenizer"):  # never read: string tensors, openvino-tokenizers' ops
        (root / f"{name}.xml").write_text("<net name='tokenizer'/>")
        (root / f"{name}.bin").write_bytes(b"")
    for name, text in extra.items():
        (root / name).write_text(text)
    return root


def run_main(capsys, *args):
    status = cli_module.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def test_encoder_folder_converts_as_plain_folder(capsys, tmp_path):
    """openvino_model.xml with no KV cache (was: "the IR holds no KV cache"): model.onnx + model.onnx.data, the
    other files copied, no genai_config.json; --verify runs it; one "wrote DIR/:" line and the tokenizer note."""
    src = _folder(tmp_path / "ov_bert", {"openvino_model": _encoder()})
    assert is_model_folder(src) and not is_llm_folder(src)
    out = tmp_path / "onnx_bert"
    status, stdout, err = run_main(capsys, "convert", src, out, "--verify", "--backend", "cpu")
    assert status == 0 and not err, err
    names = ["config.json", "generation_config.json", "model.onnx", "model.onnx.data", "preprocessor_config.json",
             "tokenizer.json"]
    lines = stdout.splitlines()
    assert lines[0] == f"wrote {out}/: {', '.join(names)}"
    assert lines[1] == ("openvino_detokenizer.xml, openvino_tokenizer.xml: OpenVINO tokenizer IRs, not converted "
                        "(onnxruntime-genai reads tokenizer.json)")
    assert lines[2] == "model.onnx:" and "last_hidden_state" in stdout and "all 1 outputs match" in stdout
    assert sorted(p.name for p in out.iterdir()) == names
    for name, text in EXTRA.items():
        assert (out / name).read_text() == text
    model = onnx.load(str(out / "model.onnx"), load_external_data=False)
    assert any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer)
    x = np.random.default_rng(5).standard_normal((3, 11, FEATURES)).astype(np.float32)
    got = ort.InferenceSession(str(out / "model.onnx")).run(["last_hidden_state"], {"input_features": x})[0]
    want = ov.Core().compile_model(str(src / "openvino_model.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(
        {"input_features": x})["last_hidden_state"]
    assert got.shape == (3, 11, HIDDEN) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_seq2seq_folder_converts_each_model(tmp_path):
    """Whisper's layout (no openvino_model.xml; was: a batch whose tokenizer IRs failed, exit 1): encoder_model.onnx,
    decoder_model.onnx with its state as an input and an output, stepped like OpenVINO's stateful run; verify runs
    the encoder and says why the decoder is not verified."""
    src = _folder(tmp_path / "ov_whisper", {"openvino_encoder_model": _encoder(), "openvino_decoder_model": _decoder()})
    assert is_model_folder(src) and not is_llm_folder(src)
    out = tmp_path / "onnx_whisper"
    done = converters.convert(src, out, verify=True, backend="cpu")
    assert sorted(p.name for p in done.written) == sorted(p.name for p in out.iterdir())
    assert {"encoder_model.onnx", "encoder_model.onnx.data", "decoder_model.onnx", "decoder_model.onnx.data"} <= \
        {p.name for p in out.iterdir()}
    assert not (out / "genai_config.json").exists() and not list(out.glob("openvino_*"))
    assert [name for name, _ in done.reports] == ["encoder_model.onnx"] and done.ok
    assert done.notes[1] == ("openvino_decoder_model.xml: not verified: stateful (1 ReadValue/Assign variables, which "
                             "decoder_model.onnx takes as inputs and returns as outputs; run it step by step, "
                             "docs/converters.md)")
    session = ort.InferenceSession(str(out / "decoder_model.onnx"))
    assert [i.name for i in session.get_inputs()] == ["encoder_hidden_states", "input_restored.total"]
    assert [o.name for o in session.get_outputs()] == ["logits", "output_restored.total"]
    request = ov.Core().compile_model(str(src / "openvino_decoder_model.xml"), "CPU",
                                      {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
    rng = np.random.default_rng(2)
    state = np.zeros((2, 5, HIDDEN), np.float32)
    for _ in range(3):
        h = rng.standard_normal((2, 5, HIDDEN)).astype(np.float32)
        logits, state = session.run(None, {"encoder_hidden_states": h, "input_restored.total": state})
        want = request.infer({"encoder_hidden_states": h})["logits"]
        assert logits.shape == (2, 5, 7)
        np.testing.assert_allclose(logits, want, rtol=1e-5, atol=1e-5)


def test_batch_of_plain_irs_without_config_is_unchanged(capsys, tmp_path):
    """No config.json: not an optimum-intel folder, every IR converted as a file of a batch (names kept)."""
    src = tmp_path / "irs"
    src.mkdir()
    ov.save_model(_encoder(), str(src / "openvino_encoder_model.xml"), compress_to_fp16=False)
    assert not is_model_folder(src)
    status, stdout, err = run_main(capsys, "convert", src, tmp_path / "out")
    assert status == 0, err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["openvino_encoder_model.onnx"]


def _broken_decoder(src: Path) -> None:
    (src / "openvino_decoder_model.xml").write_text("<net name='decoder' version='11'><layers>")


def _only_tokenizers(src: Path) -> None:
    for name in ("openvino_encoder_model", "openvino_decoder_model"):
        (src / f"{name}.xml").unlink()
        (src / f"{name}.bin").unlink()


@pytest.mark.parametrize("change, message", [
    (_only_tokenizers, r"ov: an optimum-intel folder \(config.json\) with no model IR: only openvino_detokenizer.xml, "
                       "openvino_tokenizer.xml, which are not converted$"),
    (_broken_decoder, r"ov/openvino_decoder_model.xml: "),
    (lambda src: (src / "config.json").write_text("{"), r"ov/config.json: not valid JSON"),
], ids=["no-model-ir", "broken-ir", "bad-config"])
def test_bad_folder_is_one_line_error(capsys, tmp_path, change, message):
    """One line naming the folder or the IR at fault, exit 2, nothing written (no destination, no private folder)."""
    import re

    src = _folder(tmp_path / "ov", {"openvino_encoder_model": _encoder(), "openvino_decoder_model": _decoder()})
    change(src)
    status, stdout, err = run_main(capsys, "convert", src, tmp_path / "out")
    assert status == 2 and not stdout and len(err.splitlines()) == 1, err
    assert re.search(message, err), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ov"]
    with pytest.raises(OnnxExtError, match=message):
        converters.convert(src, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ov"]


def test_verify_names_of_a_folder_are_checked_first(capsys, tmp_path):
    """--shape names an input of one of the models (applied to that one only); a name none has: exit 2, nothing
    written."""
    src = _folder(tmp_path / "ov", {"openvino_encoder_model": _encoder(), "openvino_decoder_model": _decoder()})
    status, _, err = run_main(capsys, "convert", src, tmp_path / "out", "--verify", "--shape", "input_feature=2,3,4")
    assert status == 2 and err == (f"onnx-ext: error: --shape input_feature=2,3,4: no input of the model IRs of {src} "
                                   "is named 'input_feature'\n")
    assert not (tmp_path / "out").exists()
    done = converters.convert(src, tmp_path / "out", verify=True, shapes={"input_features": (2, 3, FEATURES)})
    assert done.reports[0][1].inputs["input_features"].shape == (2, 3, FEATURES)
    x = np.random.default_rng(4).standard_normal((1, 2, FEATURES)).astype(np.float32)
    done = converters.convert(src, tmp_path / "out2", verify=True, inputs={"input_features": x})
    np.testing.assert_array_equal(done.reports[0][1].inputs["input_features"], x)
    with pytest.raises(OnnxExtError, match="^inputs: no input of the model IRs of .* is named 'x'$"):
        converters.convert(src, tmp_path / "out3", verify=True, inputs={"x": x})
    assert not (tmp_path / "out3").exists()


def test_rope_in_attention_is_refused_on_a_plain_folder(tmp_path):
    src = _folder(tmp_path / "ov", {"openvino_model": _encoder()})
    with pytest.raises(OnnxExtError, match="rope_in_attention .* fuses a decoder LLM's RoPE, and this folder holds "
                                           "none"):
        converters.convert(src, tmp_path / "out", rope_in_attention=True)
    assert not (tmp_path / "out").exists()


def test_verify_of_an_llm_folder_says_how_to_check_it(tmp_path):
    """A stateful openvino_model.xml is the LLM path, which verify does not run (it compares two model files)."""
    folder = _folder(tmp_path / "ov_llm", {"openvino_model": _decoder()})
    assert is_llm_folder(folder)
    with pytest.raises(ConvertError, match=r"ov_llm: --verify \(verify=True\) compares two model files, not LLM "
                                           r"folders: convert without it, then generate .*\(notebooks/04_llm_to_onnx"):
        converters.convert(folder, tmp_path / "onnx_llm", verify=True)
    assert not (tmp_path / "onnx_llm").exists()


LLMVENV = Path("/tmp/llmvenv/bin/python")


@pytest.mark.slow
@pytest.mark.skipif(not LLMVENV.exists(), reason="needs /tmp/llmvenv (optimum-intel)")
def test_real_whisper_export(capsys, tmp_path):
    """A tiny random Whisper exported by optimum-intel (automatic-speech-recognition-with-past): the encoder verified
    against the CPU plugin, the stateful decoder's first step in onnxruntime against OpenVINO's."""
    script = f"""
import transformers
from transformers import WhisperConfig, WhisperForConditionalGeneration
config = WhisperConfig(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
    decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, vocab_size=100, num_mel_bins=80,
    max_source_positions=1500, max_target_positions=64, decoder_start_token_id=1, pad_token_id=0, eos_token_id=2,
    bos_token_id=1)
WhisperForConditionalGeneration(config).save_pretrained(r"{tmp_path / 'hf'}")
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([str(LLMVENV), "-c", script], check=True, env=env, capture_output=True)
    cli = LLMVENV.with_name("optimum-cli")
    subprocess.run([str(cli), "export", "openvino", "-m", str(tmp_path / "hf"), "--task",
                    "automatic-speech-recognition-with-past", "--weight-format", "fp32", str(tmp_path / "ov")],
                   check=True, env=env, capture_output=True)
    src, out = tmp_path / "ov", tmp_path / "onnx"
    assert not (src / "openvino_model.xml").exists()
    status, stdout, err = run_main(capsys, "convert", src, out, "--verify", "--backend", "cpu")
    assert status == 0, err + stdout
    assert stdout.startswith(f"wrote {out}/: ") and "openvino_decoder_model.xml: not verified: stateful" in stdout
    assert "encoder_model.onnx:" in stdout and "all 1 outputs match" in stdout
    rng = np.random.default_rng(0)
    enc = ort.InferenceSession(str(out / "encoder_model.onnx")).run(
        None, {"input_features": rng.standard_normal((1, 80, 3000)).astype(np.float32)})[0]
    dec = ort.InferenceSession(str(out / "decoder_model.onnx"))
    feeds = {"input_ids": np.array([[1]], np.int64), "encoder_hidden_states": enc}
    for i in dec.get_inputs()[len(feeds):]:  # the state, empty on the first step (cross-attention: its If)
        dims = [d if isinstance(d, int) else 1 for d in i.shape]
        dims[2] = 0
        feeds[i.name] = np.zeros(dims, np.float32)
    names = {i.name for i in dec.get_inputs()}
    feeds = {k: v for k, v in feeds.items() if k in names}
    got = dec.run(["logits"], feeds)[0]
    request = ov.Core().compile_model(str(src / "openvino_decoder_model.xml"), "CPU", {
        "INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32"}).create_infer_request()
    ov_inputs = {p.get_any_name() for p in request.model_inputs}
    want_feeds = {"input_ids": feeds["input_ids"], "encoder_hidden_states": enc}
    if "beam_idx" in ov_inputs:
        want_feeds["beam_idx"] = np.arange(1, dtype=np.int32)
    want = request.infer({k: v for k, v in want_feeds.items() if k in ov_inputs})["logits"]
    assert got.shape == want.shape == (1, 1, 100)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())
