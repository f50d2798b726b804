"""Measure IR -> ONNX conversion at scale: time and peak memory.

Scenarios (IRs generated with OpenVINO's Python API and ``openvino.save_model``, uncompressed):

  layers-10k   10,000 layers: a chain of Add / Multiply / Gather / StridedSlice / Broadcast /
               Relu blocks, each with its small Const input (so ~half the layers are Consts);
  weights-500M 125 MatMul layers with distinct f32 [1024, 1024] weights: 500 MB of .bin;
  weights-2G   (``--with-2g``) 540 such layers: 2.26 GB of .bin, past protobuf's 2 GB limit, so
               ``convert_ir_file`` writes ONNX external data.

Each measurement runs in a fresh process: ``read_ir`` + ``convert_ir_file`` (the CLI's path:
the model written to disk), and ``read_ir`` + ``ir_to_onnx`` (the in-memory ModelProto).
Reported: wall time of each stage, peak RSS (VmHWM) and peak anonymous memory (RssAnon sampled
every 5 ms: memory-mapped .bin pages are file-backed and not in it) above the process's
baseline after imports, and how many times the .bin's bytes that is. The converted model is then
loaded by onnxruntime and compared with OpenVINO's CPU plugin on one random input.

    python benchmarks/bench_convert.py                 # 10k layers and 500 MB
    python benchmarks/bench_convert.py --with-2g       # and the 2.26 GB model (needs ~8 GB of disk)

Writes ``benchmarks/results/bench_convert.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# --- IR generation (parent process) -----------------------------------------------------------


def make_layers_ir(path: Path, n_layers: int = 10_000) -> dict:
    import numpy as np
    import openvino as ov
    from openvino import opset1, opset3, opset8

    rng = np.random.default_rng(0)
    x = opset8.parameter([1, 64], np.float32, name="x")
    x.output(0).get_tensor().set_names({"x"})
    y = x
    count = 1
    perm = rng.permutation(64).astype(np.int64)
    kinds = ["add", "mul", "gather", "slice", "broadcast", "relu"]
    i = 0
    while count < n_layers - 1:
        kind = kinds[i % len(kinds)]
        i += 1
        if kind == "add":
            y = opset1.add(y, opset1.constant(rng.standard_normal((1, 64)).astype(np.float32) * 0.01))
            count += 2
        elif kind == "mul":
            y = opset1.multiply(y, opset1.constant(np.full((1, 64), 0.999, np.float32)))
            count += 2
        elif kind == "gather":
            y = opset8.gather(y, opset1.constant(perm), opset1.constant(np.int64(1)), 0)
            count += 3
        elif kind == "slice":
            y = opset1.strided_slice(y, opset1.constant(np.array([0, 0], np.int64)),
                                     opset1.constant(np.array([0, 0], np.int64)),
                                     opset1.constant(np.array([1, -1], np.int64)), [1, 1], [1, 1])
            count += 4
        elif kind == "broadcast":
            y = opset3.broadcast(y, opset1.constant(np.array([1, 64], np.int64)))
            count += 2
        else:
            y = opset1.relu(y)
            count += 1
    y.output(0).get_tensor().set_names({"y"})
    model = ov.Model([y], [x], "layers")
    ov.save_model(model, str(path), compress_to_fp16=False)
    return {"layers": len(model.get_ordered_ops()), "feeds": {"x": [1, 64]}}


def make_weights_ir(path: Path, n_matmuls: int) -> dict:
    import numpy as np
    import openvino as ov
    from openvino import opset1, opset8

    rng = np.random.default_rng(1)
    x = opset8.parameter([1, 1024], np.float32, name="x")
    x.output(0).get_tensor().set_names({"x"})
    y = x
    for _ in range(n_matmuls):
        w = (rng.standard_normal((1024, 1024), dtype=np.float32) * (1 / 32)).astype(np.float32)
        y = opset1.matmul(y, opset1.constant(w), False, False)
    y.output(0).get_tensor().set_names({"y"})
    model = ov.Model([y], [x], "weights")
    ov.save_model(model, str(path), compress_to_fp16=False)
    return {"layers": len(model.get_ordered_ops()), "feeds": {"x": [1, 1024]}}


# --- measurement (child process) -------------------------------------------------------------


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


class AnonPeak:
    """Peak RssAnon, sampled in a thread."""

    def __init__(self):
        self.peak = _status("RssAnon")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, _status("RssAnon"))
            time.sleep(0.005)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _status("RssAnon"))


def child(mode: str, xml: str, out: str) -> dict:
    sys.path.insert(0, str(ROOT))
    import onnx  # noqa: F401

    from converters.ir_reader import read_ir
    from converters.ir_to_onnx import convert_ir_file, ir_to_onnx

    base_rss, base_anon = _status("VmRSS"), _status("RssAnon")
    # VmHWM cannot be reset from Python: report the peak above the baseline
    times = {}
    with AnonPeak() as anon:
        t0 = time.perf_counter()
        if mode in ("file", "file-unchecked"):
            if mode == "file-unchecked":  # the baseline of the session check's cost (docs/loading.md)
                import importlib

                importlib.import_module("converters.ir_to_onnx.assemble").check_session = lambda *args: None
            convert_ir_file(xml, out)
            times["convert_ir_file_s"] = time.perf_counter() - t0
        else:
            ir = read_ir(xml)
            times["read_ir_s"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            model = ir_to_onnx(ir)
            times["ir_to_onnx_s"] = time.perf_counter() - t1
            times["total_s"] = time.perf_counter() - t0
            times["initializers"] = len(model.graph.initializer)  # (ByteSize() would serialise it)
    return {"mode": mode, **times, "peak_rss_above_baseline": _status("VmHWM") - base_rss,
            "peak_anon_above_baseline": anon.peak - base_anon, "baseline_rss": base_rss}


def verify(xml: str, onnx_path: str, feeds_shapes: dict) -> dict:
    import numpy as np
    import onnx
    import onnxruntime as ort
    import openvino as ov

    rng = np.random.default_rng(2)
    feeds = {k: rng.standard_normal(v).astype(np.float32) for k, v in feeds_shapes.items()}
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    t0 = time.perf_counter()
    sess = ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])
    load_s = time.perf_counter() - t0
    got = sess.run(None, feeds)[0]
    core = ov.Core()
    compiled = core.compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    want = compiled(feeds)[compiled.outputs[0]]
    model = onnx.load(onnx_path, load_external_data=False)
    external = [t.name for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    files = sorted(p.name for p in Path(onnx_path).parent.iterdir() if p.name.startswith(Path(onnx_path).name))
    return {"ort_load_s": load_s, "max_abs_diff": float(np.max(np.abs(got - want))),
            "close": bool(np.allclose(got, want, rtol=1e-3, atol=1e-3)), "external_initializers": len(external),
            "files": files, "onnx_file_bytes": sum((Path(onnx_path).parent / f).stat().st_size for f in files)}


# --- driver ----------------------------------------------------------------------------------


def run_child(mode: str, xml: Path, out: Path) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, str(xml), str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--with-2g", action="store_true", help="also the 2.26 GB model (external data)")
    p.add_argument("--only", default="", help="substring filter on scenario names")
    p.add_argument("--workdir", default=None, help="where the IRs are generated (default: a temp dir)")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0

    scenarios = [("layers-10k", lambda x: make_layers_ir(x, 10_000)),
                 ("weights-500M", lambda x: make_weights_ir(x, 125))]
    if args.with_2g:
        scenarios.append(("weights-2G", lambda x: make_weights_ir(x, 540)))
    scenarios = [s for s in scenarios if args.only in s[0]]
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from harness import machine_info

    info = machine_info()
    results = []
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        for name, make in scenarios:
            d = Path(tmp) / name
            d.mkdir()
            xml = d / "model.xml"
            t0 = time.perf_counter()
            meta = make(xml)
            gen_s = time.perf_counter() - t0
            bin_bytes = xml.with_suffix(".bin").stat().st_size
            row = {"name": name, "layers": meta["layers"], "bin_bytes": bin_bytes, "generate_s": gen_s}
            row["file"] = run_child("file", xml, d / "model.onnx")
            row["unchecked"] = run_child("file-unchecked", xml, d / "unchecked.onnx")
            row["verify"] = verify(str(xml), str(d / "model.onnx"), meta["feeds"])
            if bin_bytes < 2**31:  # an in-memory ModelProto past 2 GB cannot be serialised
                row["memory"] = run_child("memory", xml, d / "unused.onnx")
            results.append(row)
            f, v = row["file"], row["verify"]
            print(f"{name}: {row['layers']} layers, .bin {mb(bin_bytes)}; "
                  f"convert_ir_file {f['convert_ir_file_s']:.2f} s, "
                  f"peak RSS +{mb(f['peak_rss_above_baseline'])}, peak anon +{mb(f['peak_anon_above_baseline'])} "
                  f"({f['peak_anon_above_baseline'] / max(bin_bytes, 1):.2f}x .bin); files {v['files']} "
                  f"({mb(v['onnx_file_bytes'])}, {v['external_initializers']} external); onnxruntime matches "
                  f"OpenVINO: {v['close']} (max diff {v['max_abs_diff']:.2g})", flush=True)
            u = row["unchecked"]
            print(f"{'':{len(name)}}  without the onnxruntime session check: {u['convert_ir_file_s']:.2f} s "
                  f"(the check: x{f['convert_ir_file_s'] / u['convert_ir_file_s']:.2f}), peak RSS "
                  f"+{mb(u['peak_rss_above_baseline'])}, peak anon +{mb(u['peak_anon_above_baseline'])}", flush=True)
            if "memory" in row:
                m = row["memory"]
                print(f"{'':{len(name)}}  read_ir {m['read_ir_s']:.2f} s + ir_to_onnx {m['ir_to_onnx_s']:.2f} s, "
                      f"peak RSS "
                      f"+{mb(m['peak_rss_above_baseline'])}, peak anon +{mb(m['peak_anon_above_baseline'])} "
                      f"({m['peak_anon_above_baseline'] / max(bin_bytes, 1):.2f}x .bin)", flush=True)
    info["load_avg_end"] = list(os.getloadavg())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_convert.json").write_text(json.dumps({"machine": info, "results": results}, indent=1))
    (out / "bench_convert.md").write_text(markdown(info, results))
    print(f"wrote {out}/bench_convert.{{json,md}}")
    return 0


def markdown(info: dict, results: list[dict]) -> str:
    """The results table; the load average says how shared the machine was (a run is one sample per stage)."""
    load = f"load average {info['load_avg'][0]:.1f} at the start"
    if "load_avg_end" in info:
        load += f", {info['load_avg_end'][0]:.1f} at the end"
    lines = ["# IR -> ONNX conversion at scale", "",
             f"{info['cpu']}, {info['cores']} cores, Python {info['python']}, onnx {info['onnx']}, "
             f"onnxruntime {info['onnxruntime']}, OpenVINO {info.get('openvino')}; {info['date']}; {load}.", "",
             "Peak memory is above the process's baseline after imports; anonymous memory excludes the "
             "memory-mapped .bin (file-backed pages). Without the session check: the same conversion with "
             "`assemble.check_session` off (docs/loading.md).", "",
             "| IR | layers | .bin | convert_ir_file | peak RSS | peak anon (x .bin) | without the session check | "
             "ONNX written | read_ir + ir_to_onnx (in memory) | peak anon (x .bin) | ORT = OpenVINO |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]

    def times(n, r):
        return f" ({n / r['bin_bytes']:.2f}x)" if r["bin_bytes"] >= 2**20 else ""

    for r in results:
        f, v, m, u = r["file"], r["verify"], r.get("memory"), r.get("unchecked")
        mem = (f"{m['read_ir_s']:.2f} + {m['ir_to_onnx_s']:.2f} s", f"+{mb(m['peak_anon_above_baseline'])}"
               f"{times(m['peak_anon_above_baseline'], r)}") if m else ("-", "-")
        unchecked = (f"{u['convert_ir_file_s']:.2f} s, +{mb(u['peak_anon_above_baseline'])} anon "
                     f"(the check: x{f['convert_ir_file_s'] / u['convert_ir_file_s']:.2f})") if u else "-"
        lines.append(f"| {r['name']} | {r['layers']:,} | {mb(r['bin_bytes'])} | {f['convert_ir_file_s']:.2f} s | "
                     f"+{mb(f['peak_rss_above_baseline'])} | +{mb(f['peak_anon_above_baseline'])}"
                     f"{times(f['peak_anon_above_baseline'], r)} | {unchecked} | {', '.join(v['files'])} "
                     f"({mb(v['onnx_file_bytes'])}{', external data' if v['external_initializers'] else ''}) | "
                     f"{mem[0]} | {mem[1]} | {'yes' if v['close'] else 'NO'} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
