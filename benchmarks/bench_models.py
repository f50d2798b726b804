"""Whole models in onnxruntime: our conversion of OpenVINO's IR vs the framework's own ONNX export.

For each model (random weights, nothing downloaded: transformers configs, torchvision
``weights=None``; every parameter perturbed so that no bias is zero and no norm is the
identity, which OpenVINO's frontend would drop while the export keeps them) this builds:

  (a) ours:  ``openvino.convert_model(module, example_input=...)`` with the benchmark's
             static input shapes -> ``openvino.save_model(..., compress_to_fp16=False)``
             -> ``converters.ir_to_onnx`` (the converter's defaults) -> onnxruntime;
  (b) torch: ``torch.onnx.export(module, args, dynamo=True, optimize=True)`` (torch's
             default exporter and opset; the opset it wrote is recorded) -> onnxruntime;
             ``--exporter torchscript``: the TorchScript-based exporter (``dynamo=False``).

Both run on the same inputs; each output of (a) and (b) is compared with the module run
eagerly in torch (largest absolute error over max|torch|; above ``TOLERANCE`` the run is
marked). Both use onnxruntime's default graph optimisation level (ORT_ENABLE_ALL: what a
user gets), intra_op_num_threads 1 and 2, inter_op 1. Timing interleaves (a) and (b) round by
round in one process (a shuffled order per round, a few calls each, their median), so the
machine's load hits both alike; a/b is the median of the per-round ratios (<= 1: ours is as
fast or faster), "best" the ratio of the two best rounds, "CPU" the median of the per-round
ratios of the process's CPU time (at 1 thread onnxruntime runs in the calling thread, so time
spent waiting for a core on a shared machine is left out). Node counts and op types are those
of the graph onnxruntime runs after its optimisations (``SessionOptions.optimized_model_filepath``,
written by a separate session so that the timed ones are plain): the op types whose counts
differ show which fusions onnxruntime applied to one model and not the other.

Not part of the test suite: nothing here asserts a timing. One file of about 600 lines, as the
other benchmarks are: a script that runs on its own (model builders, conversions, timing, report).

    python benchmarks/bench_models.py                       # every model, 1 and 2 threads
    python benchmarks/bench_models.py --models bert,resnet50 --rounds 3 --seq 64 --image 160   # quick
    python benchmarks/bench_models.py --models bert --exporter torchscript
    python benchmarks/bench_models.py --list
    python benchmarks/bench_models.py --render benchmarks/results/bench_models.json

Writes ``benchmarks/results/bench_models.{json,md}`` (``--out`` to change).
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import count_nodes, machine_info, optimized_model, session, time_interleaved
from whole_models import MODELS, Built, ModelSpec

from tests.real_models.torchvision_cpu import import_torch

#: largest |output - torch eager| / max|torch eager| accepted for either side
TOLERANCE = 1e-4
#: torch.onnx.export's options per --exporter: torch's default (the dynamo-based exporter) or the
#: TorchScript-based one it replaced
EXPORTERS = {"dynamo": {"dynamo": True, "optimize": True},
             "torchscript": {"dynamo": False, "do_constant_folding": True}}
#: ops whose counts tell which fusions onnxruntime applied (shown first in the op-type table)
FUSED_OPS = ("Attention", "MultiHeadAttention", "SkipLayerNormalization", "LayerNormalization", "Gelu", "FastGelu",
             "BiasGelu", "Gemm", "FusedGemm", "FusedMatMul", "MatMul", "FusedConv", "Conv", "NchwcConv")


# --- conversions ------------------------------------------------------------------------------


def convert_ours(built: Built, folder: Path):
    """(a): OpenVINO's frontend, the IR saved uncompressed, our converter. Returns (model, seconds per stage)."""
    import openvino as ov

    import converters

    torch = import_torch()
    example = tuple(torch.from_numpy(v) for v in built.feeds.values())
    types = {np.dtype(np.int64): ov.Type.i64, np.dtype(np.float32): ov.Type.f32}
    spec = [(name, list(v.shape), types[v.dtype]) for name, v in built.feeds.items()]
    start = time.perf_counter()
    with torch.no_grad():
        ov_model = ov.convert_model(built.module, example_input=example, input=spec)
    for port, name in zip(ov_model.inputs, built.feeds):  # a float input can come out named after a traced value
        port.get_tensor().set_names({name})
    xml = folder / "model.xml"
    ov.save_model(ov_model, str(xml), compress_to_fp16=False)
    middle = time.perf_counter()
    model = converters.ir_to_onnx(xml)
    return model, {"openvino_s": middle - start, "ir_to_onnx_s": time.perf_counter() - middle}


def convert_torch(built: Built, folder: Path, exporter: str):
    """(b): torch.onnx.export with the options of ``EXPORTERS[exporter]``, its default opset. Returns
    (model, seconds, opset)."""
    import onnx

    torch = import_torch()
    example = tuple(torch.from_numpy(v) for v in built.feeds.values())
    path = folder / "torch.onnx"
    start = time.perf_counter()
    with torch.no_grad():
        torch.onnx.export(built.module, example, str(path), input_names=list(built.feeds), output_names=built.outputs,
                          external_data=False, **EXPORTERS[exporter])
    seconds = time.perf_counter() - start
    model = onnx.load(str(path))
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    return model, {"export_s": seconds}, opset


def reference(built: Built) -> list[np.ndarray]:
    torch = import_torch()
    with torch.no_grad():
        out = built.module(*(torch.from_numpy(v) for v in built.feeds.values()))
    return [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]


# --- onnxruntime ------------------------------------------------------------------------------


def optimized_graph(model_bytes: bytes, folder: Path, tag: str) -> dict:
    """Node counts and op types of the graph onnxruntime runs (its optimisations applied)."""
    path = folder / f"{tag}.optimized.onnx"
    graph = optimized_model(model_bytes, 1, path)[1].graph
    ops = collections.Counter((f"{n.domain}:" if n.domain not in ("", "ai.onnx") else "") + n.op_type
                              for n in graph.node)
    path.unlink()
    for extra in folder.glob(f"{tag}.optimized.onnx*"):
        extra.unlink()
    return {"nodes": len(graph.node), "nodes_all": count_nodes(graph), "ops": dict(sorted(ops.items()))}


def run_outputs(sess, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return sess.run(None, {i.name: feeds[i.name] for i in sess.get_inputs()})


def errors(got: list[np.ndarray], want: list[np.ndarray]) -> float:
    """The largest |got - want| / max|want| over the outputs (inf on a shape mismatch)."""
    worst = 0.0
    for g, w in zip(got, want, strict=True):
        if g.shape != w.shape:
            return float("inf")
        worst = max(worst, float(np.abs(g.astype(np.float64) - w).max() / max(np.abs(w).max(), 1e-30)))
    return worst


def summarize(samples: dict[str, dict]) -> dict:
    """Medians and a/b (median of the per-round ratios, their range, best round over best round), of wall
    time; of CPU time, a/b only (at 1 thread it is what a loaded machine disturbs least: time spent
    waiting for a core is not counted; with more threads it counts the pool's spinning too)."""
    ours, torch = samples["ours"], samples["torch"]
    ratios = [a / b for a, b in zip(ours["wall"], torch["wall"])]
    return {"ours_s": statistics.median(ours["wall"]), "torch_s": statistics.median(torch["wall"]),
            "ratio": statistics.median(ratios), "spread": [min(ratios), max(ratios)],
            "best": min(ours["wall"]) / min(torch["wall"]),
            "cpu_ratio": statistics.median([a / b for a, b in zip(ours["cpu"], torch["cpu"])]), "samples_s": samples}


# --- one model --------------------------------------------------------------------------------


def measure(spec: ModelSpec, args, folder: Path) -> dict:
    built = spec.build(args)
    want = reference(built)
    ours, ours_times = convert_ours(built, folder)
    theirs, torch_times, opset = convert_torch(built, folder, args.exporter)
    blobs = {"ours": ours.SerializeToString(), "torch": theirs.SerializeToString()}
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        for tag, blob in blobs.items():
            (args.keep / f"{spec.name}.{tag}.onnx").write_bytes(blob)
    del ours, theirs, built.module
    gc.collect()
    row = {"model": spec.name, "what": spec.what, "inputs": {k: list(v.shape) for k, v in built.feeds.items()},
           "convert": {**ours_times, **torch_times}, "torch_opset": opset,
           "graphs": {k: optimized_graph(b, folder, k) for k, b in blobs.items()}, "threads": {}}
    for threads in args.threads:
        sessions = {k: session(b, threads) for k, b in blobs.items()}
        if "error" not in row:
            row["error"] = {k: errors(run_outputs(s, built.feeds), want) for k, s in sessions.items()}
            row["agree"] = all(e <= TOLERANCE for e in row["error"].values())
        runs = {k: _runner(s, built.feeds) for k, s in sessions.items()}
        row["threads"][str(threads)] = summarize(time_interleaved(runs, args.rounds, args.budget,
                                                                     calls_between=(1, 20)))
        del runs, sessions
        gc.collect()
    return row


def _runner(sess, feeds: dict[str, np.ndarray]) -> Callable[[], object]:
    """One call of the session, inputs and outputs bound once (what is timed is onnxruntime's run)."""
    binding = sess.io_binding()
    for i in sess.get_inputs():
        binding.bind_cpu_input(i.name, np.ascontiguousarray(feeds[i.name]))
    for o in sess.get_outputs():
        binding.bind_output(o.name, "cpu")
    return lambda: sess.run_with_iobinding(binding)


# --- report -----------------------------------------------------------------------------------


def markdown(data: dict) -> str:
    info, rows = data["machine"], data["results"]
    threads = sorted({int(t) for r in rows for t in r["threads"]})
    opsets = sorted({r["torch_opset"] for r in rows})
    lines = [
        "# Whole models: our IR -> ONNX conversion vs torch.onnx.export, in onnxruntime",
        "",
        f"Machine: {info['cpu']}, {info['cores']} cores ({info['platform']}); load average "
        f"{_load(_load_start(info))} at the start, {_load(info.get('load_avg_end', []))} at the end"
        + (f"; {data['note']}." if data.get("note") else "."),
        f"onnxruntime {info['onnxruntime']}, OpenVINO {info['openvino']}, torch {info['torch']}, torchvision "
        f"{info['torchvision']}, transformers {info['transformers']}, onnxscript {info['onnxscript']}, onnx "
        f"{info['onnx']}, Python {info['python']}; {info['date']}; {data['rounds']} rounds.",
        "",
        "(a) ours: `openvino.convert_model` -> `openvino.save_model(compress_to_fp16=False)` -> "
        f"`converters.ir_to_onnx`; (b) torch: `{_export_call(data['exporter'])}`, which wrote opset "
        f"{', '.join(map(str, opsets))}. Random weights (every parameter "
        "perturbed: no zero bias, no identity norm), batch 1, static shapes in both. onnxruntime CPU, default graph "
        "optimisation level (ORT_ENABLE_ALL), inter_op 1. a/b: median of the per-round ratios of interleaved rounds "
        "(<= 1: ours as fast or faster), best: best round over best round, CPU: the same median of CPU-time "
        "ratios (at 1 thread the figure a loaded machine disturbs least); error: largest |output - torch eager| / "
        f"max|torch eager| over the outputs (tolerance {TOLERANCE:g}); nodes after onnxruntime's optimisations, "
        "(a) / (b), If bodies included in parentheses.",
        "",
        "| model | inputs | " + " | ".join(f"a/b {t} thr (best; CPU)" for t in threads) + " | " +
        " | ".join(f"(a) / (b) {t} thr" for t in threads) + " | nodes (a) / (b) | error (a) / (b) |",
        "|---|---|" + "---|" * (2 * len(threads) + 2),
    ]
    for r in rows:
        per = [r["threads"].get(str(t)) for t in threads]
        cells = [f"**{p['ratio']:.2f}** ({p['best']:.2f}; {p['cpu_ratio']:.2f})" if p else "-" for p in per]
        times = [f"{_ms(p['ours_s'])} / {_ms(p['torch_s'])}" if p else "-" for p in per]
        g, err = r["graphs"], r["error"]
        flag = "" if r["agree"] else " **over tolerance**"
        inputs = ", ".join("x".join(map(str, s)) for s in r["inputs"].values())
        lines.append(f"| {r['model']} | {inputs} | " + " | ".join(cells + times) +
                     f" | {_nodes(g['ours'])} / {_nodes(g['torch'])} | {err['ours']:.1e} / {err['torch']:.1e}{flag} |")
    lines += ["", "Op types whose counts differ between the two optimised graphs, (a) / (b) (fused ops first):", ""]
    for r in rows:
        lines.append(f"- {r['model']}: {op_differences(r['graphs']['ours']['ops'], r['graphs']['torch']['ops'])}")
    lines += ["", "Conversion times (s): OpenVINO frontend + save / our ir_to_onnx / torch.onnx.export:", ""]
    for r in rows:
        c = r["convert"]
        lines.append(f"- {r['model']}: {c['openvino_s']:.1f} / {c['ir_to_onnx_s']:.1f} / {c['export_s']:.1f}")
    lines += ["", "Models:", ""] + [f"- {r['model']}: {r['what']}" for r in rows]
    return "\n".join(lines) + "\n"


def _export_call(exporter: str) -> str:
    options = ", ".join(f"{k}={v}" for k, v in EXPORTERS[exporter].items())
    return f"torch.onnx.export({options}, opset_version=None)"


def op_differences(ours: dict[str, int], theirs: dict[str, int]) -> str:
    names = [n for n in sorted(set(ours) | set(theirs)) if ours.get(n, 0) != theirs.get(n, 0)]
    names.sort(key=lambda n: (n.split(":")[-1] not in FUSED_OPS, n))
    return ", ".join(f"{n} {ours.get(n, 0)} / {theirs.get(n, 0)}" for n in names) or "none"


def _nodes(graph: dict) -> str:
    return f"{graph['nodes']}" + (f" ({graph['nodes_all']})" if graph["nodes_all"] != graph["nodes"] else "")


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms"


def _load_start(info: dict) -> list:
    return info.get("load_avg", info.get("load_avg_start"))  # results written before harness.py: load_avg_start


def _load(values) -> str:
    return ", ".join(f"{v:.1f}" for v in values) or "?"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated, of: " + ", ".join(MODELS))
    parser.add_argument("--threads", default="1,2", help="intra_op_num_threads values, comma-separated")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds per model and thread count")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds of timing per model and thread count")
    parser.add_argument("--seq", type=int, default=128, help="tokens of the text models")
    parser.add_argument("--image", type=int, default=224, help="pixels per side of the vision models")
    parser.add_argument("--note", default="", help="a note on the machine (its load, ...), for the table")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--exporter", choices=list(EXPORTERS), default="dynamo",
                        help="(b)'s exporter: torch's default (dynamo) or the TorchScript-based one")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="also write both ONNX models there "
                        "(<model>.ours.onnx, <model>.torch.onnx)")
    parser.add_argument("--list", action="store_true", help="list the models")
    parser.add_argument("--render", type=Path, metavar="JSON", help="only rewrite the .md from a results .json")
    args = parser.parse_args(argv)
    if args.render:
        args.render.with_suffix(".md").write_text(markdown(json.loads(args.render.read_text())))
        return 0
    if args.list:
        for spec in MODELS.values():
            print(f"{spec.name:20s} {spec.what}")
        return 0
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"unknown models {unknown}: see --list", file=sys.stderr)
        return 2
    args.threads = [int(t) for t in args.threads.split(",")]
    import_torch()  # with torchvision's CPU workaround, before machine_info imports torchvision and transformers
    info = machine_info("torch", "torchvision", "transformers")
    print(f"# {info['cpu']} x{info['cores']}, load {_load(_load_start(info))}; onnxruntime {info['onnxruntime']}, "
          f"OpenVINO {info['openvino']}, torch {info['torch']}", flush=True)
    rows = []
    for name in names:
        with tempfile.TemporaryDirectory(prefix="bench_models-") as tmp:
            start = time.perf_counter()
            row = measure(MODELS[name], args, Path(tmp))
        rows.append(row)
        print(_line(row, time.perf_counter() - start), flush=True)
    info["load_avg_end"] = list(os.getloadavg())
    data = {"machine": info, "rounds": args.rounds, "note": args.note, "exporter": args.exporter, "results": rows}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench_models.json").write_text(json.dumps(data, indent=1))
    (args.out / "bench_models.md").write_text(markdown(data))
    print(f"wrote {args.out / 'bench_models'}.{{json,md}}")
    return 0


def _line(row: dict, seconds: float) -> str:
    per_thread = "; ".join(f"{t} thr a/b {s['ratio']:.2f} [{s['spread'][0]:.2f}-{s['spread'][1]:.2f}] best "
                           f"{s['best']:.2f} CPU {s['cpu_ratio']:.2f} ({_ms(s['ours_s'])} / {_ms(s['torch_s'])})"
                           for t, s in row["threads"].items())
    g = row["graphs"]
    return (f"{row['model']:18s} {per_thread}; nodes {_nodes(g['ours'])} / {_nodes(g['torch'])}; error "
            f"{row['error']['ours']:.1e} / {row['error']['torch']:.1e}{'' if row['agree'] else ' OVER TOLERANCE'}; "
            f"{seconds:.0f} s\n    {op_differences(g['ours']['ops'], g['torch']['ops'])}")


if __name__ == "__main__":
    sys.exit(main())
