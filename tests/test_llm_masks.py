"""model_folder._finite_attention_masks: ScaledDotProductAttention's boolean mask (OPT's, OLMo2's: causality and
padding) with a row that attends to nothing, a pad token of a left-padded batch. -inf gives that row NaN, which the
next layer's keys and values carry into every row of the batch; OpenVINO's stateful CPU kernel gives it the average
of the values. Two stacked attentions converted and run in onnxruntime: with the -inf, NaN in every row of the padded
batch (as in OpenVINO's stateless run); with the lowest float, no NaN, OpenVINO's values in the unpadded batch, and
numpy's (a row without keys: the mean of the values) everywhere.
No LLM export needed (the default environment); tests/test_llm.py checks OPT and OLMo2 exports."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import openvino as ov
import openvino.opset13 as ops

from converters.ir_reader import read_ir
from converters.ir_to_onnx.convert import convert_model
from converters.model_folder import _finite_attention_masks
from converters.onnx_file import write_onnx


def _two_layers() -> ov.Model:
    q = ops.parameter([-1, 2, -1, 8], np.float32, name="q")
    k = ops.parameter([-1, 2, -1, 8], np.float32, name="k")
    mask = ops.parameter([-1, 1, -1, -1], np.bool_, name="mask")
    first = ops.scaled_dot_product_attention(q, k, k, mask, causal=False)  # the pad rows' keys: its output
    second = ops.scaled_dot_product_attention(q, first, first, mask, causal=False)
    return ov.Model([ops.result(second)], [q, k, mask])


def _feeds() -> dict:
    rng = np.random.default_rng(0)
    q, k = (rng.standard_normal((2, 2, 5, 8)).astype(np.float32) for _ in range(2))
    causal = np.tril(np.ones((5, 5), bool))
    real = np.array([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]], bool)  # row 0 left-padded by 2
    mask = (causal[None] & real[:, None, :])[:, None]  # [2, 1, 5, 5]: rows 0 and 1 of batch 0 attend to nothing
    return {"q": q, "k": k, "mask": mask}


def test_rows_without_keys_are_finite_and_the_others_unchanged(tmp_path):
    model = _two_layers()
    ov.save_model(model, tmp_path / "m.xml", compress_to_fp16=False)
    feeds = _feeds()
    want = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(feeds)[0]
    onnx_model, weights = convert_model(read_ir(tmp_path / "m.xml"))

    def run(path):
        write_onnx(onnx_model, weights, path)
        return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]

    before = run(tmp_path / "before.onnx")
    assert _finite_attention_masks(onnx_model) == 2
    after = run(tmp_path / "after.onnx")
    attends = feeds["mask"].any(-1)[:, 0]  # [batch, rows]
    assert np.isnan(before[0][:, ~attends[0]]).all() and np.isnan(want[0][:, ~attends[0]]).all()
    assert not np.isnan(after).any()
    # the rows that attend to something: OpenVINO's wherever its keys are finite (batch 1), and bit for bit the -inf
    # form's (batch 0's real rows read the pad rows' keys: NaN with -inf, hence NaN in OpenVINO's stateless run too)
    np.testing.assert_allclose(after[1], want[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(after[1], before[1])
    # batch 0: a row that attends to nothing takes the mean of the values, as OpenVINO's stateful kernel does
    np.testing.assert_allclose(after, _reference(**feeds), rtol=1e-5, atol=1e-6)


def _reference(q, k, mask):
    def attention(keys):
        scores = q @ keys.transpose(0, 1, 3, 2) / np.sqrt(8)
        scores = np.where(mask, scores, np.finfo(np.float32).min)  # a row without keys: all equal, the mean
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        return weights / weights.sum(-1, keepdims=True) @ keys

    return attention(attention(k))
