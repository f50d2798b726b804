"""ScaledDotProductAttention-13 with a boolean mask that leaves a row nothing to attend to: a pad token of a
left-padded batch under the causal and padding mask OPT's and OLMo2's optimum-intel exports build. OpenVINO's
reference (reference/scaled_dot_product_attention.hpp) adds the lowest finite float where the mask is false, so that
row averages the values (OpenVINO's stateful CPU kernel gives the same; the CPU plugin's decomposition of the op adds
-inf and gives NaN, which the next layer's keys and values carry into every row of the batch). Two stacked attentions
converted and run in onnxruntime against numpy written after the reference, and against the CPU plugin on the
unpadded batch; an all-false constant mask likewise."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import openvino as ov
import openvino.opset13 as ops
import pytest

from converters.ir_reader import read_ir
from converters.ir_to_onnx.convert import convert_model
from converters.onnx_file import write_onnx

LOWEST = np.finfo(np.float32).min


def _attention(q, keys, mask):
    scores = q @ keys.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    scores = np.where(mask, scores, scores + LOWEST)  # OpenVINO's reference: a row without keys, the values' mean
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True) @ keys


def _run(model: ov.Model, feeds: dict, tmp_path) -> np.ndarray:
    ov.save_model(model, tmp_path / "m.xml", compress_to_fp16=False)
    onnx_model, weights, _ = convert_model(read_ir(tmp_path / "m.xml"))
    write_onnx(onnx_model, weights, tmp_path / "m.onnx")
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    return session.run(None, {k: v for k, v in feeds.items() if k in {i.name for i in session.get_inputs()}})[0]


def test_padded_rows_average_the_values_and_leave_the_others_alone(tmp_path):
    q = ops.parameter([-1, 2, -1, 8], np.float32, name="q")
    k = ops.parameter([-1, 2, -1, 8], np.float32, name="k")
    mask = ops.parameter([-1, 1, -1, -1], np.bool_, name="mask")
    first = ops.scaled_dot_product_attention(q, k, k, mask, causal=False)  # the second layer's keys and values
    model = ov.Model([ops.result(ops.scaled_dot_product_attention(q, first, first, mask, causal=False))],
                     [q, k, mask])
    rng = np.random.default_rng(0)
    feeds = {"q": rng.standard_normal((2, 2, 5, 8)).astype(np.float32),
             "k": rng.standard_normal((2, 2, 5, 8)).astype(np.float32)}
    real = np.array([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]], bool)  # batch 0 left-padded by 2
    feeds["mask"] = (np.tril(np.ones((5, 5), bool))[None] & real[:, None, :])[:, None]  # its rows 0, 1: no key
    got = _run(model, feeds, tmp_path)
    assert not np.isnan(got).any()
    want = _attention(feeds["q"], _attention(feeds["q"], feeds["k"], feeds["mask"]), feeds["mask"])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    cpu = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(feeds)[0]
    np.testing.assert_allclose(got[1], cpu[1], rtol=1e-5, atol=1e-6)  # every row attends to something there
    assert np.isnan(cpu[0]).all()  # the decomposition's -inf: NaN in every row of the padded batch


@pytest.mark.parametrize("causal", [False, True])
def test_all_false_constant_mask_is_the_values_mean(causal, tmp_path):
    q, k, v = (ops.parameter([1, 2, -1, 4], np.float32, name=n) for n in "qkv")
    none = ops.constant(np.zeros((1, 1, 3, 3), bool))
    model = ov.Model([ops.result(ops.scaled_dot_product_attention(q, k, v, none, causal=causal))], [q, k, v])
    rng = np.random.default_rng(1)
    feeds = {n: rng.standard_normal((1, 2, 3, 4)).astype(np.float32) for n in "qkv"}
    got = _run(model, feeds, tmp_path)
    q, k, v = feeds["q"], feeds["k"], feeds["v"]
    keep = np.tril(np.ones((3, 3), bool)) if causal else np.zeros((3, 3), bool)  # causal: the mask is ignored
    scores = q @ k.transpose(0, 1, 3, 2) / 2
    scores = np.where(keep, scores, scores + LOWEST)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    np.testing.assert_allclose(got, weights / weights.sum(-1, keepdims=True) @ v, rtol=1e-5, atol=1e-6)
    if not causal:
        np.testing.assert_allclose(got, np.broadcast_to(v.mean(2, keepdims=True), got.shape), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mask", ["bool", "float"])
def test_sink_is_one_more_logit_in_the_softmax_sum(mask, tmp_path):
    """The sink input (GPT-OSS, [1, heads, 1, 1]): softmax(concat(scores, sink)) without its last column (OpenVINO's
    reference), against numpy and the CPU plugin; a boolean mask's padded row now takes only the sink's share."""
    from openvino.utils.node_factory import NodeFactory

    q, k, v = (ops.parameter([-1, 2, -1, 4], np.float32, name=n) for n in "qkv")
    m = ops.parameter([-1, 1, -1, -1], np.bool_ if mask == "bool" else np.float32, name="mask")
    sink = np.array([0.5, -1.0], np.float32).reshape(1, 2, 1, 1)
    inputs = [q, k, v, m, ops.constant(np.float32(0.3)), ops.constant(sink)]
    node = NodeFactory("opset13").create("ScaledDotProductAttention", [x.output(0) for x in inputs], {"causal": False})
    model = ov.Model([ops.result(node)], [q, k, v, m])
    rng = np.random.default_rng(2)
    feeds = {n: rng.standard_normal((2, 2, 3, 4)).astype(np.float32) for n in "qkv"}
    keep = np.tril(np.ones((3, 3), bool))[None, None].repeat(2, 0)
    keep[0, :, :, :1] = False  # batch 0 left-padded by 1: its row 0 attends to nothing but the sink
    feeds["mask"] = keep if mask == "bool" else np.where(keep, 0, -1e4).astype(np.float32)
    got = _run(model, feeds, tmp_path)
    scores = feeds["q"] @ feeds["k"].transpose(0, 1, 3, 2) * np.float32(0.3)
    scores = np.where(keep, scores, scores + (LOWEST if mask == "bool" else np.float32(-1e4)))
    scores = np.concatenate([scores, np.broadcast_to(sink, (2, 2, 3, 1))], axis=-1)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    want = (weights / weights.sum(-1, keepdims=True))[..., :-1] @ feeds["v"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    cpu = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(feeds)[0]
    np.testing.assert_allclose(got, cpu, rtol=1e-5, atol=1e-6)
