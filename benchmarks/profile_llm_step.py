"""One decode step of LLM ONNX folders under onnxruntime's profiler: kernel time per node kind (issue 17).

Each model runs one token after a past of ``--past`` tokens (batch 1), at ``--threads`` threads, ``--runs`` times,
the models interleaved (the load of a shared machine moves them alike); per node the median kernel time over the
runs, summed by kind (op type, and the overload of a domain function's nodes, which onnxruntime inlines: their
nodes are named after the function's). Kinds that one model runs and the first does not are marked.

    python benchmarks/profile_llm_step.py /tmp/onnx-ext-bench-llm/ours-requant-int4 /tmp/.../builder-int4
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np


def feeds(session, folder: Path, past: int) -> dict[str, np.ndarray]:
    """One token after ``past`` tokens: the inputs an LLM folder's model takes (ids, mask, positions, cache)."""
    decoder = json.loads((folder / "genai_config.json").read_text())["model"]["decoder"]
    out = {}
    for value in session.get_inputs():
        name = value.name
        if name == "input_ids":
            out[name] = np.array([[7]], np.int64)
        elif name == "attention_mask":
            out[name] = np.ones((1, past + 1), np.int64)
        elif name == "position_ids":
            out[name] = np.array([[past]], np.int64)
        elif name.startswith("past_key_values"):
            shape = [1, decoder["num_key_value_heads"], past, decoder["head_size"]]
            out[name] = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        else:
            raise SystemExit(f"profile_llm_step: unexpected input {name!r}")
    return out


def kernel_times(profile: Path) -> list[dict[str, tuple[str, float]]]:
    """Per run (a model's ``run`` event), node name -> (kind, kernel microseconds)."""
    events = json.loads(profile.read_text())
    runs, current = [], None
    for e in events:
        if e.get("cat") == "Session" and e["name"] == "model_run":
            continue
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        node = e["name"].removesuffix("_kernel_time")
        args = e.get("args", {})
        kind = args.get("op_name", "?")
        if current is None or node in current:
            current = {}
            runs.append(current)
        current[node] = (kind, e["dur"])
    return runs


def profile(folders: list[Path], threads: int, past: int, runs: int, warmup: int, out_dir: Path):
    import onnxruntime as ort

    sessions = []
    for folder in folders:
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.enable_profiling = True
        options.profile_file_prefix = str(out_dir / folder.name)
        session = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
        sessions.append((session, feeds(session, folder, past)))
        saved = ort.SessionOptions()
        saved.intra_op_num_threads = 1
        saved.optimized_model_filepath = str(out_dir / f"{folder.name}.optimized.onnx")
        saved.add_session_config_entry("session.optimized_model_external_initializers_file_name",
                                       f"{folder.name}.optimized.onnx.data")
        ort.InferenceSession(str(folder / "model.onnx"), saved, providers=["CPUExecutionProvider"])
    for _ in range(warmup):
        for session, inputs in sessions:
            session.run(None, inputs)
    for _ in range(runs):
        for session, inputs in sessions:
            session.run(None, inputs)
    return [Path(session.end_profiling()) for session, _ in sessions]


def if_bodies(optimized: Path) -> dict[str, str]:
    """Node name -> the name of the top-level If whose branch holds it, in the graph onnxruntime runs (saved
    after its optimisations: the domain's functions inlined)."""
    import onnx

    owner = {}

    def walk(nodes, top):
        for node in nodes:
            if top is not None:
                owner[node.name] = top
            for attr in node.attribute:
                for graph in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                    walk(graph.node, top or node.name)

    walk(onnx.load(str(optimized), load_external_data=False).graph.node, None)
    return owner


def by_kind(profile_path: Path, owner: dict[str, str], skip: int) -> tuple[dict[str, float], int]:
    """Kind -> summed median kernel ms of one run (the first ``skip`` runs dropped), and the top-level nodes
    run. An If's time is its own (its branch's nodes are listed as ``If body: kind``: onnxruntime times both)."""
    per_run = kernel_times(profile_path)[skip:]
    samples = defaultdict(list)
    kinds = {}
    for run in per_run:
        inner = defaultdict(float)
        for node, (kind, us) in run.items():
            if node in owner:
                inner[owner[node]] += us
        for node, (kind, us) in run.items():
            samples[node].append(us - inner.get(node, 0.0))
            kinds[node] = f"If body: {kind}" if node in owner else kind
    totals = defaultdict(float)
    for node, values in samples.items():
        totals[kinds[node]] += statistics.median(values) / 1e3
    return dict(totals), statistics.median(sum(n not in owner for n in run) for run in per_run)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--past", type=int, default=24)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--out", type=Path, default=Path("/tmp/profile_llm_step"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    paths = profile(args.folders, args.threads, args.past, args.runs, args.warmup, args.out)
    tables = [by_kind(p, if_bodies(args.out / f"{f.name}.optimized.onnx"), args.warmup)
              for p, f in zip(paths, args.folders)]
    names = [f.name for f in args.folders]
    kinds = sorted({k for t, _ in tables for k in t}, key=lambda k: -max(t.get(k, 0) for t, _ in tables))
    print(f"one decode step, past {args.past}, {args.threads} thread(s), median of {args.runs} runs per node; "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} before, "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} after")
    print("| node kind | " + " | ".join(f"{n} ms" for n in names) + " |")
    print("|---|" + "---|" * len(names))
    for kind in kinds:
        marks = [" (only here)" if all(kind not in t for j, (t, _) in enumerate(tables) if j != i) else ""
                 for i in range(len(tables))]
        cells = [f"{t.get(kind, 0):.3f}{m}" if kind in t else "-" for (t, _), m in zip(tables, marks)]
        print(f"| {kind} | " + " | ".join(cells) + " |")
    print("| all | " + " | ".join(f"{sum(t.values()):.3f} ({n} nodes at the top level)" for t, n in tables) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
