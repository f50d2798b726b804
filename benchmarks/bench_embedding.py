"""4- and 8-bit embedding tables (NNCF ``compress_weights``: ``all_layers``, int4 embeddings, and tied lm_heads) in
onnxruntime: ``com.microsoft.GatherBlockQuantized`` on the compressed table against the forms before it
(``decompression.USE_GATHER_BLOCK_QUANTIZED = False``): the table folded to f32 at load (f16 scales), or three
Gather-8s of the 8-bit rows, scales and zero points.

One table [V, H] as NNCF writes it: Const(u4/i4/u8) [V, G, g] -> Convert(f16) [-> Subtract zp] -> Multiply(f16
scale [V, G, 1]) -> Reshape [V, H] -> Convert(f32) -> Gather(ids, axis 0); ``tied``: the same table is the lm_head
too (MatMul(rows, table, transpose_b): MatMulNBits after, an f32 MatMul on the folded table before).

Per scenario and form: the file's size; peak RSS of a fresh process that creates the onnxruntime session from the
file and runs it once, less that process's RSS before (numpy and onnxruntime imported); and the time of a run for
one id (a decoding step) and 128 (a prompt), both forms interleaved in one process round by round (ratios: medians
of per-round ratios, after / before). Every run's rows are checked equal between the forms.

    python benchmarks/bench_embedding.py [--rounds 7] [--threads 1]

Writes ``benchmarks/results/bench_embedding.{json,md}``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import machine_info, rounds_threads_args, session, time_interleaved, write_results  # noqa: E402

V, H = 32000, 512
#: (name, weights' type, group (None: per row), zero point, tied)
SCENARIOS = [("u4-g32", "u4", 32, True, False), ("u4-g64", "u4", 64, True, False), ("u4-g128", "u4", 128, True, False),
             ("i4-g64", "i4", 64, False, False), ("u8-row", "u8", None, True, False),
             ("u4-g64-tied", "u4", 64, True, True)]
IDS = (1, 128)
FORMS = ("before", "after")

#: (VmHWM, not ru_maxrss: Linux keeps that across execve, the benchmark's own peak)
_RSS = """
import sys
import numpy as np, onnxruntime as ort
def status(key):
    line = next(x for x in open("/proc/self/status") if x.startswith(key + ":"))
    return int(line.split()[1]) * 1024
base = status("VmRSS")
opts = ort.SessionOptions(); opts.intra_op_num_threads = 1; opts.log_severity_level = 3
s = ort.InferenceSession(sys.argv[1], opts, providers=["CPUExecutionProvider"])
s.run(None, {s.get_inputs()[0].name: np.arange(128, dtype=np.int64).reshape(1, -1)})
print(status("VmHWM") - base, status("VmRSS") - base)
"""


def make_ir(path: Path, name: str, wtype: str, group: int | None, zero_point: bool, tied: bool) -> Path:
    import openvino as ov
    import openvino.opset13 as ops

    rng = np.random.default_rng(0)
    lo, hi = {"u4": (0, 15), "i4": (-8, 7), "u8": (0, 255)}[wtype]
    held = [V, H // group, group] if group else [V, H]
    pshape = [V, H // group, 1] if group else [V, 1]
    tensor = ov.Tensor(getattr(ov.Type, wtype), ov.Shape(held))
    values = rng.integers(lo, hi + 1, V * H).astype(np.int8 if lo < 0 else np.uint8)
    if wtype == "u8":
        tensor.data[:] = values.reshape(held)
    else:
        nibbles = values.view(np.uint8) & 0x0F
        tensor.data[:] = nibbles[0::2] | (nibbles[1::2] << 4)  # two per byte, low nibble first
    w = ops.convert(ops.constant(tensor), "f16")
    if zero_point:
        zp = ov.Tensor(getattr(ov.Type, wtype), ov.Shape(pshape))
        points = rng.integers(lo, hi + 1, int(np.prod(pshape))).astype(np.uint8)
        zp.data[:] = points.reshape(pshape) if wtype == "u8" else (points[0::2] | (points[1::2] << 4))
        w = ops.subtract(w, ops.convert(ops.constant(zp), "f16"))
    w = ops.multiply(w, ops.constant((rng.random(pshape) * 0.02 + 0.001).astype(np.float16)))
    if group:
        w = ops.reshape(w, ops.constant(np.array([V, H])), False)
    w = ops.convert(w, "f32")
    ids = ops.parameter([1, -1], np.int64, name="ids")
    out = ops.gather(w, ids, ops.constant(np.int64(0)))
    if tied:
        out = ops.matmul(out, w, False, True)
    xml = path / f"{name}.xml"
    ov.save_model(ov.Model([out], [ids], name), str(xml), compress_to_fp16=False)
    return xml


def convert(xml: Path, form: str):
    from converters.ir_reader import read_ir
    from converters.ir_to_onnx import ir_to_onnx
    from converters.ir_to_onnx.handlers import decompression

    default = decompression.USE_GATHER_BLOCK_QUANTIZED
    decompression.USE_GATHER_BLOCK_QUANTIZED = form == "after"
    try:
        return ir_to_onnx(read_ir(xml))
    finally:
        decompression.USE_GATHER_BLOCK_QUANTIZED = default


def memory(path: Path) -> tuple[int, int]:
    """(peak RSS, RSS after the run) of a fresh process over its RSS before the session, bytes."""
    out = subprocess.run([sys.executable, "-c", _RSS, str(path)], check=True, capture_output=True, text=True)
    peak, after = out.stdout.split()
    return int(peak), int(after)


def main(argv=None) -> int:
    args = rounds_threads_args(__doc__, ROOT / "benchmarks" / "results", argv)
    info = machine_info()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, wtype, group, zero_point, tied in SCENARIOS:
            xml = make_ir(Path(tmp), name, wtype, group, zero_point, tied)
            row = {"scenario": name, "load_avg_start": list(os.getloadavg())}
            models = {}
            for form in FORMS:
                model = convert(xml, form)
                path = Path(tmp) / f"{name}-{form}.onnx"
                path.write_bytes(model.SerializeToString())
                models[form] = model
                row[f"{form}_ops"] = sorted({n.op_type for n in model.graph.node})
                row[f"{form}_file_mb"] = path.stat().st_size / 2**20
                peak, after = memory(path)
                row[f"{form}_peak_rss_mb"], row[f"{form}_rss_after_mb"] = peak / 2**20, after / 2**20
            assert "GatherBlockQuantized" in row["after_ops"] and "GatherBlockQuantized" not in row["before_ops"], row
            for t in args.threads:
                sessions = {form: session(m.SerializeToString(), t) for form, m in models.items()}
                for count in IDS:
                    feeds = {"ids": np.random.default_rng(count).integers(0, V, (1, count)).astype(np.int64)}
                    outs = {form: s.run(None, feeds)[0] for form, s in sessions.items()}
                    if tied:  # MatMulNBits' sums against an f32 MatMul's: the weights are equal, the order is not
                        scale = float(np.abs(outs["before"]).max())
                        assert np.abs(outs["after"] - outs["before"]).max() <= 1e-5 * scale
                    else:
                        np.testing.assert_array_equal(outs["after"], outs["before"])
                    runs = {form: (lambda s=s: s.run(None, feeds)) for form, s in sessions.items()}
                    samples = time_interleaved(runs, args.rounds, 2.0 * len(runs), calls_between=(3, 2000))
                    walls = {form: samples[form]["wall"] for form in FORMS}
                    row[f"t{t}_ids{count}"] = {
                        "before_ms": statistics.median(walls["before"]) * 1e3,
                        "after_ms": statistics.median(walls["after"]) * 1e3,
                        "ratio": statistics.median(a / b for a, b in zip(walls["after"], walls["before"]))}
            row["load_avg_end"] = list(os.getloadavg())
            rows.append(row)
            print(row, flush=True)
    header = ["table 32000x512", "file MB before / after", "peak RSS MB before / after", "RSS after run MB",
              *[f"{t} thread(s), {c} ids: ms before / after (ratio)" for t in args.threads for c in IDS], "load"]

    def cells(r: dict) -> list[str]:
        times = [f"{r[f't{t}_ids{c}']['before_ms']:.3f} / {r[f't{t}_ids{c}']['after_ms']:.3f} "
                 f"({r[f't{t}_ids{c}']['ratio']:.2f})" for t in args.threads for c in IDS]
        return [r["scenario"], f"{r['before_file_mb']:.1f} / {r['after_file_mb']:.1f}",
                f"{r['before_peak_rss_mb']:.0f} / {r['after_peak_rss_mb']:.0f}",
                f"{r['before_rss_after_mb']:.0f} / {r['after_rss_after_mb']:.0f}", *times,
                f"{r['load_avg_start'][0]:.1f}-{r['load_avg_end'][0]:.1f}"]

    write_results(args.out, "bench_embedding", rows, header, cells)
    md = args.out / "bench_embedding.md"
    md.write_text(f"# Quantized embedding tables: GatherBlockQuantized (after) vs folded / Gather-8 (before)\n\n"
                  f"{info['cpu']}, {info['cores']} cores; onnxruntime {info['onnxruntime']}; {info['date']}; "
                  f"{args.rounds} interleaved rounds. `python benchmarks/bench_embedding.py`\n\n" + md.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
