"""NF4 weights (NNCF ``CompressWeightsMode.NF4``) of a MatMul in onnxruntime: the three forms of
``decompression.NF4_MATMUL``, and 4-bit integer weights of the same shape as MatMulNBits for scale.

One layer as NNCF writes it: nf4 codes [N, G, g] -> Convert(f16) -> Multiply(f16 scale [N, G, 1]) -> Reshape
[N, K] -> Convert(f32) -> MatMul(x, W, transpose_b). Converted by ``converters.ir_to_onnx`` as:

- ``folded`` (the default): Gather into the f32 NF4 table, Mul by the scales, Reshape, on initializers:
  onnxruntime folds them at load, so it runs an f32 MatMul;
- ``bnb4``: ``com.microsoft.MatMulBnb4`` (quant_type NF4), weights 4-bit in memory, dequantized at every run;
- ``layers``: the IR's layers one by one (the form before: the f16 Multiply is not folded, no f16 Mul kernel);
- ``int4``: for scale, i4 weights of the same shape and group as ``MatMulNBits`` (bench_quantized.py's layer).

Then a whole Llama-like decoder (transformers' LlamaForCausalLM, random weights: hidden 256, MLP 768, 2 layers,
vocabulary 512, no KV cache; ``openvino.convert_model``, then NF4 with group size 64, embeddings and lm_head
8-bit) in the three NF4 forms, on 1 and 32 tokens.

All run in onnxruntime in this process at its default optimisation level, interleaved round by round; ratios
are medians of per-round ratios against ``folded``. Also printed: each NF4 form's error against OpenVINO's CPU
plugin at f32 (no dynamic quantization), relative to max|expected|.

    python benchmarks/bench_nf4.py [--rounds 7] [--threads 1,2]

Writes ``benchmarks/results/bench_nf4.{json,md}``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_quantized import make_ir, timed  # noqa: E402
from harness import rounds_threads_args, session, write_results  # noqa: E402

#: (name, N, K, group)
SCENARIOS = [("1024x1024-g64", 1024, 1024, 64), ("2048x2048-g128", 2048, 2048, 128)]
ROWS = (1, 32)  # rows of x: one token, a short prompt
FORMS = ("folded", "bnb4", "layers")
DECODER = dict(vocab_size=512, hidden_size=256, intermediate_size=768, num_hidden_layers=2, num_attention_heads=4,
               num_key_value_heads=2, max_position_embeddings=64)
TOKENS = (1, 32)
CPU_EXACT = {"INFERENCE_PRECISION_HINT": "f32", "LP_TRANSFORMS_MODE": False, "DYNAMIC_QUANTIZATION_GROUP_SIZE": 0}


def make_nf4_ir(path: Path, n: int, k: int, group: int) -> Path:
    import openvino as ov
    import openvino.opset13 as ops

    rng = np.random.default_rng(0)
    shape = [n, k // group, group]
    codes = rng.integers(0, 16, n * k).astype(np.uint8)
    tensor = ov.Tensor(ov.Type.nf4, ov.Shape(shape))
    tensor.data[:] = codes[0::2] | (codes[1::2] << 4)  # two per byte, low nibble first
    scale = (rng.random(shape[:2] + [1]) * 0.02 + 0.001).astype(np.float16)
    w = ops.multiply(ops.convert(ops.constant(tensor), "f16"), ops.constant(scale))
    w = ops.convert(ops.reshape(w, ops.constant(np.array([n, k])), False), "f32")
    x = ops.parameter([-1, k], np.float32, name="x")
    xml = path / f"nf4-{n}x{k}-g{group}.xml"
    ov.save_model(ov.Model([ops.matmul(x, w, False, True)], [x], "linear"), str(xml), compress_to_fp16=False)
    return xml


def convert(xml: Path, form: str):
    from converters.ir_reader import read_ir
    from converters.ir_to_onnx import ir_to_onnx
    from converters.ir_to_onnx.handlers import decompression

    default = decompression.NF4_MATMUL
    decompression.NF4_MATMUL = form
    try:
        return ir_to_onnx(read_ir(xml))
    finally:
        decompression.NF4_MATMUL = default


def make_decoder_ir(path: Path) -> Path:
    import nncf
    import openvino as ov

    sys.path.insert(0, str(ROOT / "tests"))
    from real_models import hf_models as hf

    cfg = hf._config("LlamaConfig", **{**hf._DECODER, **DECODER})
    model = hf._convert(hf._model("LlamaForCausalLM", cfg), hf.text_inputs(0), ["logits"], hf._TEXT_DYN)
    model = nncf.compress_weights(model, mode=nncf.CompressWeightsMode.NF4, group_size=64, ratio=1.0)
    xml = path / "llama-nf4.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    return xml


def decoder_rows(tmp: Path, args) -> list[dict]:
    import openvino as ov

    xml = make_decoder_ir(tmp)
    models = {form: convert(xml, form) for form in FORMS}
    assert sum(n.op_type == "MatMulBnb4" for n in models["bnb4"].graph.node) == 14  # 7 linear layers x 2
    compiled = ov.Core().compile_model(str(xml), "CPU", CPU_EXACT)
    rows = []
    for tokens in TOKENS:
        rng = np.random.default_rng(tokens)
        feeds = {"input_ids": rng.integers(0, DECODER["vocab_size"], (1, tokens)).astype(np.int64),
                 "attention_mask": np.ones((1, tokens), np.int64)}
        want = np.asarray(compiled(feeds)[0])
        for t in args.threads:
            sessions = {key: session(m.SerializeToString(), t) for key, m in models.items()}
            errors = {key: float(np.abs(s.run(None, feeds)[0] - want).max() / np.abs(want).max())
                      for key, s in sessions.items()}
            repeat = max(3, int(0.2 / max(timed(sessions["layers"], feeds, 1), 1e-6)))
            times = {key: [] for key in FORMS}
            for _ in range(args.rounds):
                for key in FORMS:
                    times[key].append(timed(sessions[key], feeds, repeat))
            row = {"scenario": "llama-256x768x2-g64", "N": 0, "K": 0, "group": 64, "rows": tokens, "threads": t,
                   **{f"{key}_us": statistics.median(times[key]) * 1e6 for key in FORMS},
                   **{f"{key}_over_folded": statistics.median(a / b for a, b in zip(times[key], times["folded"]))
                      for key in FORMS if key != "folded"},
                   **{f"err_{key}": errors[key] for key in FORMS}, "int4_us": float("nan"),
                   "int4_over_folded": float("nan")}
            rows.append(row)
            print(f"llama decoder {tokens:3d} tokens {t} thr: folded {row['folded_us']:7.0f} us, MatMulBnb4 "
                  f"{row['bnb4_us']:7.0f} us ({row['bnb4_over_folded']:.2f}x), layers {row['layers_us']:7.0f} us "
                  f"({row['layers_over_folded']:.2f}x); error/max|CPU| {row['err_folded']:.1e} / "
                  f"{row['err_bnb4']:.1e} / {row['err_layers']:.1e}", flush=True)
    return rows


def _or_dash(value: float, spec: str) -> str:
    return "-" if value != value else format(value, spec)  # (NaN: no int4 form of the decoder)


def main(argv=None) -> int:
    import openvino as ov

    args = rounds_threads_args(__doc__, ROOT / "benchmarks" / "results", argv)
    keys = FORMS + ("int4",)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, n, k, group in SCENARIOS:
            xml = make_nf4_ir(Path(tmp), n, k, group)
            models = {form: convert(xml, form) for form in FORMS}
            models["int4"] = convert(make_ir(Path(tmp), "i4", n, k, group, False), "folded")
            ops = {key: {node.op_type for node in m.graph.node} for key, m in models.items()}
            assert ops["bnb4"] == {"MatMulBnb4"} and "MatMulNBits" in ops["int4"], ops
            assert {"Gather", "Mul", "MatMul"} <= ops["folded"] and "Gather" in ops["layers"], ops
            compiled = ov.Core().compile_model(str(xml), "CPU", CPU_EXACT)
            for m_rows in ROWS:
                x = np.random.default_rng(1).standard_normal((m_rows, k)).astype(np.float32)
                want = np.asarray(compiled(x)[0])
                for t in args.threads:
                    sessions = {key: session(m.SerializeToString(), t) for key, m in models.items()}
                    errors = {key: float(np.abs(sessions[key].run(None, {"x": x})[0] - want).max()
                                         / np.abs(want).max()) for key in FORMS}
                    repeat = max(3, int(0.2 / max(timed(sessions["layers"], {"x": x}, 1), 1e-6)))
                    times = {key: [] for key in keys}
                    for _ in range(args.rounds):
                        for key in keys:
                            times[key].append(timed(sessions[key], {"x": x}, repeat))
                    row = {"scenario": name, "N": n, "K": k, "group": group, "rows": m_rows, "threads": t,
                           **{f"{key}_us": statistics.median(times[key]) * 1e6 for key in keys},
                           **{f"{key}_over_folded": statistics.median(a / b for a, b in zip(times[key],
                                                                                           times["folded"]))
                              for key in keys if key != "folded"},
                           **{f"err_{key}": errors[key] for key in FORMS}}
                    rows.append(row)
                    print(f"{name:15s} x[{m_rows},{k}] {t} thr: folded {row['folded_us']:7.0f} us, MatMulBnb4 "
                          f"{row['bnb4_us']:7.0f} us ({row['bnb4_over_folded']:.2f}x), layers {row['layers_us']:7.0f}"
                          f" us ({row['layers_over_folded']:.2f}x), int4 MatMulNBits {row['int4_us']:7.0f} us "
                          f"({row['int4_over_folded']:.2f}x); error/max|CPU| {row['err_folded']:.1e} / "
                          f"{row['err_bnb4']:.1e} / {row['err_layers']:.1e}", flush=True)
        rows += decoder_rows(Path(tmp), args)
    write_results(args.out, "bench_nf4", rows,
                  ["scenario (N x K, group)", "x rows (decoder: tokens)", "threads", "folded µs", "MatMulBnb4 µs",
                   "layers µs", "int4 MatMulNBits µs", "MatMulBnb4 / folded", "layers / folded", "int4 / folded",
                   "error/max\\|CPU\\| folded", "MatMulBnb4", "layers"],
                  lambda r: [r["scenario"], str(r["rows"]), str(r["threads"]), f"{r['folded_us']:.0f}",
                             f"{r['bnb4_us']:.0f}", f"{r['layers_us']:.0f}", _or_dash(r["int4_us"], ".0f"),
                             f"{r['bnb4_over_folded']:.2f}", f"{r['layers_over_folded']:.2f}",
                             _or_dash(r["int4_over_folded"], ".2f"), f"{r['err_folded']:.1e}", f"{r['err_bnb4']:.1e}",
                             f"{r['err_layers']:.1e}"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
