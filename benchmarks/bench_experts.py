"""4-bit experts (MoE) in onnxruntime: one MatMulNBits per expert vs DequantizeLinear + MatMul vs f32 weights.

One experts layer as optimum-intel exports MoE decoders (Mixtral, Qwen-MoE) and NNCF's INT4_ASYM compresses it:
u4 weights [E, N, G, g] -> Convert(f16) -> Subtract(u4 zero point) -> Multiply(f16 scale) -> Reshape [E, N, K]
-> Convert(f32) -> MatMul(x [E, M, K], W, transpose_b). Converted three ways by ``converters.ir_to_onnx``:

- ``nbits``: the default, x split along E, one MatMulNBits per expert (f32 scales), concatenated;
- ``dq``: ``decompression.USE_MATMUL_NBITS = False``, one blocked DequantizeLinear with the IR's f16 scales, a
  Cast to f32 and the batched MatMul (the form before; its weights rounded to f16, not exact);
- ``f32``: the baseline, the same layer with its weights as f32 constants (the nearest native ONNX: a MatMul).

All run in onnxruntime in this process at its default optimisation level, interleaved round by round; ratios
are medians of per-round ratios against ``f32``. Also printed: each one's error against OpenVINO's CPU plugin at
f32 (no dynamic quantization), relative to max|expected|.

    python benchmarks/bench_experts.py [--rounds 7] [--threads 1,2]

Writes ``benchmarks/results/bench_experts.{json,md}``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_quantized import convert, timed  # noqa: E402
from harness import rounds_threads_args, session, write_results  # noqa: E402

#: (name, experts, N, K, group)
SCENARIOS = [("8x1024x1024-g128", 8, 1024, 1024, 128), ("16x512x1024-g32", 16, 512, 1024, 32)]
ROWS = (1, 16)  # tokens per expert: one decoding step, a short prompt
CPU_EXACT = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": 0}


def make_irs(path: Path, e: int, n: int, k: int, group: int) -> tuple[Path, Path]:
    """The compressed layer's IR and the same layer with its weights in f32, as the CPU plugin computes them."""
    import openvino as ov
    import openvino.opset13 as ops

    rng = np.random.default_rng(0)
    grouped, per_group = [e, n, k // group, group], [e, n, k // group, 1]
    q, zp = rng.integers(0, 16, grouped), rng.integers(0, 16, per_group)
    scale = (rng.random(per_group) * 0.02 + 0.001).astype(np.float16)
    w = ops.subtract(ops.convert(ov.op.Constant(ov.Type.u4, ov.Shape(grouped), q.reshape(-1).tolist()), "f16"),
                     ops.convert(ov.op.Constant(ov.Type.u4, ov.Shape(per_group), zp.reshape(-1).tolist()), "f16"))
    w = ops.convert(ops.reshape(ops.multiply(w, ops.constant(scale)), ops.constant(np.array([e, n, k])), False), "f32")
    weights = ((q - zp).astype(np.float32) * scale.astype(np.float32)).reshape(e, n, k)
    xmls = []
    for name, b in (("u4", w), ("f32", ops.constant(weights))):
        x = ops.parameter([e, -1, k], np.float32, name="x")
        xml = path / f"experts-{name}-{e}x{n}x{k}-g{group}.xml"
        ov.save_model(ov.Model([ops.matmul(x, b, False, True)], [x], "experts"), str(xml), compress_to_fp16=False)
        xmls.append(xml)
    return xmls[0], xmls[1]


def main(argv=None) -> int:
    import openvino as ov

    args = rounds_threads_args(__doc__, ROOT / "benchmarks" / "results", argv)
    threads = args.threads
    forms = ("nbits", "dq", "f32")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, e, n, k, group in SCENARIOS:
            xml, xml_f32 = make_irs(Path(tmp), e, n, k, group)
            models = {"nbits": convert(xml, True), "dq": convert(xml, False), "f32": convert(xml_f32, True)}
            ops = {key: {node.op_type for node in m.graph.node} for key, m in models.items()}
            assert "MatMulNBits" in ops["nbits"] and "DequantizeLinear" in ops["dq"], ops
            compiled = ov.Core().compile_model(str(xml), "CPU", CPU_EXACT)
            for m_rows in ROWS:
                x = np.random.default_rng(1).standard_normal((e, m_rows, k)).astype(np.float32)
                want = np.asarray(compiled(x)[0])
                for t in threads:
                    sessions = {key: session(m.SerializeToString(), t) for key, m in models.items()}
                    errors = {key: float(np.abs(s.run(None, {"x": x})[0] - want).max() / np.abs(want).max())
                              for key, s in sessions.items()}
                    repeat = max(3, int(0.2 / max(timed(sessions["f32"], {"x": x}, 1), 1e-6)))
                    times = {key: [] for key in forms}
                    for _ in range(args.rounds):
                        for key in forms:
                            times[key].append(timed(sessions[key], {"x": x}, repeat))
                    row = {"scenario": name, "E": e, "N": n, "K": k, "group": group, "rows": m_rows, "threads": t,
                           **{f"{key}_us": statistics.median(times[key]) * 1e6 for key in forms},
                           **{f"{key}_over_f32": statistics.median(a / b for a, b in zip(times[key], times["f32"]))
                              for key in ("nbits", "dq")},
                           **{f"err_{key}": errors[key] for key in forms}}
                    rows.append(row)
                    print(f"{name:18s} x[{e},{m_rows},{k}] {t} thr: MatMulNBits/expert {row['nbits_us']:7.0f} us "
                          f"({row['nbits_over_f32']:.2f}x f32), DQ+MatMul {row['dq_us']:7.0f} us "
                          f"({row['dq_over_f32']:.2f}x), f32 {row['f32_us']:7.0f} us; error/max|CPU| "
                          f"{row['err_nbits']:.1e} / {row['err_dq']:.1e} / {row['err_f32']:.1e}", flush=True)
    write_results(args.out, "bench_experts", rows,
                  ["scenario (E x N x K, group)", "x rows per expert", "threads", "MatMulNBits per expert µs",
                   "DQ + MatMul µs", "f32 MatMul µs", "MatMulNBits / f32", "DQ / f32", "error/max\\|CPU\\| MatMulNBits",
                   "DQ", "f32"],
                  lambda r: [r["scenario"], str(r["rows"]), str(r["threads"]), f"{r['nbits_us']:.0f}",
                             f"{r['dq_us']:.0f}", f"{r['f32_us']:.0f}", f"{r['nbits_over_f32']:.2f}",
                             f"{r['dq_over_f32']:.2f}", f"{r['err_nbits']:.1e}", f"{r['err_dq']:.1e}",
                             f"{r['err_f32']:.1e}"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
