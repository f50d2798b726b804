"""What the benchmarks share: the machine they ran on, onnxruntime sessions and the graph onnxruntime runs,
and interleaved timing (variants timed in a shuffled order each round, so that the machine's load hits all of
them alike)."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import onnx
import onnxruntime as ort


def machine_info(*modules: str) -> dict:
    """CPU, cores, platform, date, load average and the versions of onnx, onnxruntime, onnxscript, numpy,
    openvino and ``modules``."""
    cpu = platform.processor()
    cpuinfo = Path("/proc/cpuinfo")
    for line in cpuinfo.read_text().splitlines() if cpuinfo.exists() else []:
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    info = {"cpu": cpu, "cores": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
            "date": datetime.datetime.now().isoformat(timespec="seconds"), "load_avg": list(os.getloadavg())}
    for module in ("onnx", "onnxruntime", "onnxscript", "numpy", "openvino", *modules):
        info[module] = version(module)
    return info


def version(module: str) -> str:
    try:
        return __import__(module).__version__.split("-")[0]  # openvino: 2026.4.1-22982-...
    except ImportError:
        return "not installed"


def session(model_bytes: bytes, threads: int, optimized_path: Path | None = None) -> ort.InferenceSession:
    """onnxruntime on the CPU at its default graph optimisation level (ORT_ENABLE_ALL), sequential, quiet."""
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if optimized_path is not None:
        opts.optimized_model_filepath = str(optimized_path)
    return ort.InferenceSession(model_bytes, opts, providers=["CPUExecutionProvider"])


def optimized_model(model_bytes: bytes, threads: int, path: Path) -> tuple[ort.InferenceSession, onnx.ModelProto]:
    """A session and the graph it runs after onnxruntime's optimisations (written to ``path``)."""
    sess = session(model_bytes, threads, path)
    return sess, onnx.load(str(path), load_external_data=False)


def count_nodes(graph: onnx.GraphProto) -> int:
    """Nodes of the graph, those of If / Loop bodies included."""
    n = 0
    for node in graph.node:
        n += 1
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                n += count_nodes(a.g)
            for g in a.graphs:
                n += count_nodes(g)
    return n


def time_interleaved(runs: dict[str, Callable[[], object]], rounds: int, budget_s: float, *, calls_between: tuple,
                     at_most: dict[str, int] | None = None) -> dict[str, dict[str, list[float]]]:
    """Per variant, per round: the median wall time of `k` calls and the process's CPU time per call (their total
    over `k`: with more than one thread a per-call reading counts the other threads' time only at a scheduler
    tick, see bench_llm.decode_cpu), seconds, after one warm-up call (another variant ran in between). Variants
    are interleaved in a shuffled order each round; `k` (within ``calls_between``, and ``at_most[name]`` for a
    slow variant) makes the whole take about budget_s."""
    per_call = {}
    for name, run in runs.items():
        run()
        start = time.perf_counter()
        run()
        per_call[name] = max(time.perf_counter() - start, 1e-6)
    low, high = calls_between
    calls = {name: int(min(high, max(low, budget_s / rounds / len(runs) / per_call[name] - 1))) for name in runs}
    for name, most in (at_most or {}).items():
        if name in calls:
            calls[name] = max(1, min(calls[name], most))
    samples = {name: {"wall": [], "cpu": []} for name in runs}
    order = list(runs)
    for _ in range(rounds):
        random.shuffle(order)
        for name in order:
            runs[name]()
            wall = []
            first_cpu = time.process_time()
            for _ in range(calls[name]):
                start = time.perf_counter()
                runs[name]()
                wall.append(time.perf_counter() - start)
            samples[name]["wall"].append(statistics.median(wall))
            samples[name]["cpu"].append((time.process_time() - first_cpu) / calls[name])
    return samples


def write_results(out: Path, name: str, rows: list[dict], header: list[str], cells: Callable[[dict], list[str]]) -> None:
    """``out/name.json`` (the rows) and ``out/name.md`` (a table: ``header``, then ``cells(row)`` per row)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(rows, indent=1))
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells(r)) + " |" for r in rows]
    (out / f"{name}.md").write_text("\n".join(lines) + "\n")


def rounds_threads_args(doc: str, out: Path, argv=None) -> argparse.Namespace:
    """``--rounds``, ``--threads`` (a comma list, parsed into ints) and ``--out``, the options of the kernel
    benchmarks; the description is ``doc``'s first paragraph."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--out", type=Path, default=out)
    args = parser.parse_args(argv)
    args.threads = [int(t) for t in args.threads.split(",")]
    return args
