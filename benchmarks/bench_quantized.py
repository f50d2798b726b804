"""4-bit weights of a MatMul: onnxruntime's MatMulNBits vs DequantizeLinear + MatMul.

One IR layer as NNCF's INT4 weight compression writes it (OpenVINO's Python API, then
``openvino.save_model``): i4 or u4 weights [N, G, g] -> Convert(f16) [-> Subtract(u4 zero
point)] -> Multiply(f16 scale [N, G, 1]) -> Reshape [N, K] -> Convert(f32) -> MatMul(x,
W, transpose_b). It is converted twice by ``converters.ir_to_onnx``: as it does by
default (``com.microsoft.MatMulNBits``) and with ``decompression.USE_MATMUL_NBITS = False``
(``DequantizeLinear`` with ``block_size`` + ``Transpose`` + ``MatMul``). Both run in
onnxruntime in this process, interleaved round by round; the ratio DQ / MatMulNBits is
the median of the per-round ratios. Also printed: each model's error against OpenVINO's
reference (``Model.evaluate``) relative to max|reference|.

    python benchmarks/bench_quantized.py [--rounds 7] [--threads 1,2]

Writes ``benchmarks/results/bench_quantized.{json,md}``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import rounds_threads_args, session, write_results  # noqa: E402

#: (name, weight type, N, K, group size, with zero point)
SCENARIOS = [
    ("i4-sym-g32", "i4", 1024, 1024, 32, False),
    ("u4-asym-g32", "u4", 1024, 1024, 32, True),
    ("i4-sym-g128", "i4", 2048, 2048, 128, False),
    ("u4-asym-g128", "u4", 2048, 2048, 128, True),
]
BATCHES = (1, 32)  # rows of x: one token, a short prompt


def make_ir(path: Path, wtype: str, n: int, k: int, group: int, zero_point: bool) -> Path:
    import openvino as ov
    import openvino.opset13 as ops

    rng = np.random.default_rng(0)
    lo, hi = (0, 15) if wtype == "u4" else (-8, 7)
    shape = [n, k // group, group]
    w = ops.convert(ov.op.Constant(getattr(ov.Type, wtype), ov.Shape(shape),
                                   rng.integers(lo, hi + 1, shape).reshape(-1).tolist()), "f16")
    if zero_point:
        zp = ov.op.Constant(getattr(ov.Type, wtype), ov.Shape(shape[:2] + [1]),
                            rng.integers(lo, hi + 1, n * (k // group)).tolist())
        w = ops.subtract(w, ops.convert(zp, "f16"))
    scale = (rng.random(shape[:2] + [1]) * 0.02 + 0.001).astype(np.float16)
    w = ops.convert(ops.reshape(ops.multiply(w, ops.constant(scale)), ops.constant(np.array([n, k])), False), "f32")
    x = ops.parameter([-1, k], np.float32, name="x")
    model = ov.Model([ops.matmul(x, w, False, True)], [x], "linear")
    xml = path / f"{wtype}-{n}x{k}-g{group}.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    return xml


def convert(xml: Path, nbits: bool):
    from converters.ir_reader import read_ir
    from converters.ir_to_onnx import ir_to_onnx
    from converters.ir_to_onnx.handlers import decompression

    decompression.USE_MATMUL_NBITS = nbits
    try:
        return ir_to_onnx(read_ir(xml))
    finally:
        decompression.USE_MATMUL_NBITS = True


def reference(xml: Path, x: np.ndarray) -> np.ndarray:
    import openvino as ov

    model = ov.Core().read_model(str(xml))
    out = [ov.Tensor(model.output(0).get_element_type(), ov.Shape([0]))]
    assert model.evaluate(out, [ov.Tensor(x)])
    return np.array(out[0].data)


def timed(sess, feeds: dict, repeat: int) -> float:
    sess.run(None, feeds)
    start = time.perf_counter()
    for _ in range(repeat):
        sess.run(None, feeds)
    return (time.perf_counter() - start) / repeat


def main(argv=None) -> int:
    args = rounds_threads_args(__doc__, ROOT / "benchmarks" / "results", argv)
    threads = args.threads
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, wtype, n, k, group, zp in SCENARIOS:
            xml = make_ir(Path(tmp), wtype, n, k, group, zp)
            models = {"nbits": convert(xml, True), "dq": convert(xml, False)}
            ops = {key: sorted({node.op_type for node in m.graph.node}) for key, m in models.items()}
            assert "MatMulNBits" in ops["nbits"] and "DequantizeLinear" in ops["dq"], ops
            rng = np.random.default_rng(1)
            for m_rows in BATCHES:
                x = rng.standard_normal((m_rows, k)).astype(np.float32)
                want = reference(xml, x)
                for t in threads:
                    sessions = {key: session(m.SerializeToString(), t) for key, m in models.items()}
                    errors = {key: float(np.abs(s.run(None, {"x": x})[0] - want).max() / np.abs(want).max())
                              for key, s in sessions.items()}
                    repeat = max(3, int(0.2 / max(timed(sessions["dq"], {"x": x}, 1), 1e-6)))
                    times = {"nbits": [], "dq": []}
                    for _ in range(args.rounds):
                        for key in ("nbits", "dq"):
                            times[key].append(timed(sessions[key], {"x": x}, repeat))
                    ratios = [d / b for d, b in zip(times["dq"], times["nbits"])]
                    row = {"scenario": name, "N": n, "K": k, "group": group, "rows": m_rows, "threads": t,
                           "nbits_us": statistics.median(times["nbits"]) * 1e6,
                           "dq_us": statistics.median(times["dq"]) * 1e6,
                           "dq_over_nbits": statistics.median(ratios),
                           "err_nbits": errors["nbits"], "err_dq": errors["dq"]}
                    rows.append(row)
                    print(f"{name:14s} x[{m_rows},{k}] {t} thr: MatMulNBits {row['nbits_us']:8.0f} us, "
                          f"DQ+MatMul {row['dq_us']:8.0f} us, ratio {row['dq_over_nbits']:5.1f}x; "
                          f"error/max|ref| {row['err_nbits']:.1e} / {row['err_dq']:.1e}", flush=True)
    write_results(args.out, "bench_quantized", rows,
                  ["scenario", "N x K", "group", "x rows", "threads", "MatMulNBits µs", "DQ + MatMul µs",
                   "DQ / MatMulNBits", "error/max\\|ref\\| MatMulNBits", "DQ"],
                  lambda r: [r["scenario"], f"{r['N']} x {r['K']}", str(r["group"]), str(r["rows"]),
                             str(r["threads"]), f"{r['nbits_us']:.0f}", f"{r['dq_us']:.0f}",
                             f"{r['dq_over_nbits']:.1f}", f"{r['err_nbits']:.1e}", f"{r['err_dq']:.1e}"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
