"""One decode step of LLM ONNX folders under onnxruntime's profiler: kernel time per node kind (issue 17).

Each model runs one token after a past of ``--past`` tokens (batch 1), at ``--threads`` threads, ``--runs`` times,
the models interleaved (the load of a shared machine moves them alike); per node the median kernel time over the
runs, summed by kind (op type, and the overload of a domain function's nodes, which onnxruntime inlines: their
nodes are named after the function's). Kinds that one model runs and the first does not are marked.

    python benchmarks/profile_llm_step.py /tmp/onnx-ext-bench-llm/ours-requant-int4 /tmp/.../builder-int4

``--genai``: the decode steps as onnxruntime-genai runs them instead (its session options, its cache buffers of
the maximum length shared by past and present): each folder is copied under ``--out`` (the weights hard-linked)
with ``enable_profiling`` in its ``genai_config.json`` and generates ``--tokens`` tokens greedily in a process of
its own, the folders taking turns ``--rounds`` times; per kind of node the count a step, the median kernel time
of tokens 8.. and how many of those nodes ran a parallel section on the intra-op pool (the profiler's
``thread_scheduling_stats``), and per step the executor's time outside the kernels.
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
    parser.add_argument("--genai", action="store_true", help="profile onnxruntime-genai's own decode steps")
    parser.add_argument("--tokens", type=int, default=64, help="--genai: tokens generated after a 16-token prompt")
    parser.add_argument("--rounds", type=int, default=2, help="--genai: runs of each folder, interleaved")
    parser.add_argument("--genai-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.genai_child:
        genai_child(args.genai_child, args.tokens)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    if args.genai:
        print(genai_report(args.folders, args.threads, args.tokens, args.rounds, args.out, load))
        return 0
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


# --- onnxruntime-genai's own steps ---------------------------------------------------------------------------

SKIP = 8  # tokens before the timed ones (the prompt is step 0)


def genai_copy(folder: Path, threads: int, out: Path) -> Path:
    """``folder`` under ``out`` with the profiler on and ``threads`` intra-op threads (the weights hard-linked:
    genai refuses external data outside the model's folder)."""
    import shutil

    copy = out / f"{folder.name}-genai-t{threads}"
    shutil.rmtree(copy, ignore_errors=True)
    copy.mkdir(parents=True)
    for f in folder.iterdir():
        (os.link if f.name.endswith(".data") else shutil.copy)(f, copy / f.name)
    config = json.loads((copy / "genai_config.json").read_text())
    options = config["model"]["decoder"]["session_options"]
    options.update(intra_op_num_threads=threads, inter_op_num_threads=1, enable_profiling=str(copy / "profile"))
    (copy / "genai_config.json").write_text(json.dumps(config, indent=2))
    return copy


def genai_child(folder: Path, tokens: int) -> None:
    import onnxruntime_genai as og

    config = og.Config(str(folder))
    config.clear_providers()
    model = og.Model(config)
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=16 + tokens, min_length=16 + tokens)
    generator = og.Generator(model, params)
    generator.append_tokens([3 + (i * 7919) % 300 for i in range(16)])
    while not generator.is_done():
        generator.generate_next_token()
    del generator, model  # the profile is written when the session ends


def genai_steps(profile: Path) -> tuple[list[list[dict]], list[float]]:
    """The kernel events of each decode step from token ``SKIP`` on, and each step's executor time outside its
    kernels (microseconds)."""
    events = json.loads(profile.read_text())
    steps = [e for e in events if e.get("cat") == "Session" and e["name"] == "SequentialExecutor::Execute"]
    nodes = sorted((e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")),
                   key=lambda e: e["ts"])
    per_step, i = [], 0
    for step in steps:
        while i < len(nodes) and nodes[i]["ts"] < step["ts"]:
            i += 1
        run = []
        while i < len(nodes) and nodes[i]["ts"] <= step["ts"] + step["dur"]:
            run.append(nodes[i])
            i += 1
        per_step.append(run)
    outside = [s["dur"] - sum(n["dur"] for n in run) for s, run in zip(steps, per_step)]
    return per_step[1 + SKIP:], outside[1 + SKIP:]


def _pooled(event: dict) -> bool:
    stats = event["args"].get("thread_scheduling_stats")
    return isinstance(stats, dict) and bool(stats.get("main_thread", {}).get("block_size"))


def genai_kinds(profile: Path) -> tuple[dict[str, tuple[int, float, int]], int, float]:
    """Kind -> (nodes a step, median kernel microseconds a step, nodes that used the pool); nodes a step; the
    median executor time outside the kernels."""
    per_step, outside = genai_steps(profile)
    kinds = defaultdict(lambda: [0, [], 0])
    for run in per_step:
        step = defaultdict(float)
        for e in run:
            step[e["args"].get("op_name", "?")] += e["dur"]
        for kind, us in step.items():
            kinds[kind][1].append(us)
    for e in per_step[0]:
        k = kinds[e["args"].get("op_name", "?")]
        k[0] += 1
        k[2] += _pooled(e)
    return ({k: (n, statistics.median(us), pool) for k, (n, us, pool) in kinds.items()}, len(per_step[0]),
            statistics.median(outside))


def genai_report(folders: list[Path], threads: int, tokens: int, rounds: int, out: Path, load: tuple) -> str:
    import glob
    import subprocess

    copies = [genai_copy(f, threads, out) for f in folders]
    for _ in range(rounds):
        for copy in copies:
            subprocess.run([sys.executable, __file__, str(copy), "--genai-child", str(copy), "--tokens", str(tokens)],
                           check=True, stderr=subprocess.DEVNULL)
    tables = [[genai_kinds(Path(p)) for p in sorted(glob.glob(str(copy / "profile*.json")))] for copy in copies]
    kinds = sorted({k for runs in tables for t, _, _ in runs for k in t},
                   key=lambda k: -max(t.get(k, (0, 0, 0))[1] for runs in tables for t, _, _ in runs))
    lines = [f"onnxruntime-genai decode steps (tokens {SKIP}..{tokens}, prompt 16), {threads} thread(s), {rounds} "
             f"run(s) each; load average {' '.join(f'{x:.1f}' for x in load)} before, "
             f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} after", "",
             "| node kind | " + " | ".join(f"{f.name}: nodes / µs / on the pool" for f in folders) + " |",
             "|---|" + "---|" * len(folders)]
    for kind in kinds:
        cells = []
        for runs in tables:
            if kind in runs[0][0]:
                n, _, pool = runs[0][0][kind]
                us = statistics.median(t[kind][1] for t, _, _ in runs if kind in t)
                cells.append(f"{n} / {us:.0f} / {pool}")
            else:
                cells.append("-")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    lines.append("| nodes a step; executor µs outside the kernels | " + " | ".join(
        f"{runs[0][1]}; {', '.join(f'{o:.0f}' for _, _, o in runs)}" for runs in tables) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
