"""Decoding speed of a converted LLM (issue 17): our ONNX of optimum-intel's IR vs the ONNX that
onnxruntime-genai's model builder makes of the same checkpoint, both run by onnxruntime-genai, and
OpenVINO's own stateful run of the IR, with f32 and int4 weights, at 1 and 2 threads.

The checkpoint is a Llama-shaped model with random weights made from a config (8 layers, hidden 512,
8 heads, 4 KV heads, MLP 1408, vocabulary 32000: 58M parameters; nothing downloaded). int4: NNCF's
INT4_SYM, group 128 (embedding and lm_head int8, as NNCF keeps them) for the IR; the builder's ``-p int4``
(MatMulNBits, its own defaults) for its ONNX.

Each run is a fresh process (its peak resident memory is the run's): batch 1, a prompt of 16 tokens, 64
tokens generated greedily; "prompt" is the time of the first step (prefill), "decode" the median time per
token of tokens 8..64 (wall time), and the process's CPU time per token over those tokens (their total over
their count: see ``decode_cpu``; a loaded machine moves it less). Each
configuration runs ``--repeats`` times, interleaved; the medians are reported with the ratio of ours to the
builder's (<= 1: ours as fast or faster).

    python benchmarks/bench_llm.py                       # build (once, in --work), run, write the results
    python benchmarks/bench_llm.py --render results.json # redraw the table
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

PROMPT, NEW_TOKENS, SKIP = 16, 64, 8
CONFIG = dict(num_hidden_layers=8, hidden_size=512, intermediate_size=1408, num_attention_heads=8,
              num_key_value_heads=4, vocab_size=32000, max_position_embeddings=1024)
RUNTIMES = ("ours", "ours-rope", "ours-int8act", "ours-requant", "ours-requant-rope", "builder", "openvino")
#: Our conversions: exact (the default), with ``int8_activations``, and with ``requantize_int4`` too (the 8-bit
#: lm_head in 4 bits, as the builder makes it); the last two for compressed weights only (int4); "-rope": with
#: ``rope_in_attention`` (RoPE inside GroupQueryAttention, not exact for padded batches).
OURS = ("ours", "ours-rope", "ours-int8act", "ours-requant", "ours-requant-rope")
PRECISIONS = ("fp32", "int4")
THREADS = (1, 2)


# --- building -------------------------------------------------------------------------------------------


def build(work: Path) -> dict[str, Path]:
    """The checkpoint, optimum-intel's IR folders (fp32, int4), our conversions and the builder's ONNX."""
    from real_models import llm_models as lm

    from converters.model_folder import convert_folder

    paths = {}
    ckpt = work / "checkpoint"
    if not (ckpt / "config.json").exists():
        lm.save_checkpoint(ckpt, "llama", **CONFIG)
    for precision in PRECISIONS:
        ov_dir = work / f"openvino-{precision}"
        if not (ov_dir / "openvino_model.xml").exists():
            if precision == "fp32":
                lm.export(ckpt, ov_dir)
            else:
                _compress_int4(work / "openvino-fp32", ov_dir)
        for form in OURS:
            ours = work / f"{form}-{precision}"
            if _applies(form, precision) and not (ours / "model.onnx").exists():
                convert_folder(ov_dir, ours, int8_activations=form not in ("ours", "ours-rope"),
                               requantize_int4=form.startswith("ours-requant"),
                               rope_in_attention=form.endswith("-rope"))
            paths[f"{form}-{precision}"] = ours
        builder = work / f"builder-{precision}"
        if not (builder / "model.onnx").exists():
            subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(ckpt), "-o",
                            str(builder), "-p", precision, "-e", "cpu"], check=True, stdout=subprocess.DEVNULL)
        paths.update({f"openvino-{precision}": ov_dir, f"builder-{precision}": builder})
    return paths


def _applies(runtime: str, precision: str) -> bool:
    if runtime == "ours-rope":
        return precision == "fp32"  # int4: "ours-requant-rope", the form the builder's compares with
    return runtime in ("ours", "builder", "openvino") or precision != "fp32"  # int8 activations: compressed weights


def _compress_int4(fp32: Path, out: Path) -> None:
    import shutil

    from optimum.intel import OVModelForCausalLM, OVWeightQuantizationConfig

    q = OVWeightQuantizationConfig(bits=4, sym=True, group_size=128, ratio=1.0)
    OVModelForCausalLM.from_pretrained(fp32, quantization_config=q, compile=False).save_pretrained(out)
    for path in fp32.iterdir():
        if not (out / path.name).exists():
            shutil.copyfile(path, out / path.name)


# --- one run (a child process) --------------------------------------------------------------------------


def _prompt_ids() -> list[int]:
    return [3 + (i * 7919) % 300 for i in range(PROMPT)]


def run_genai(folder: Path, threads: int) -> list[float]:
    """Seconds per step of onnxruntime-genai's greedy search (step 0: the prompt)."""
    import onnxruntime_genai as og

    config = og.Config(str(folder))
    config.clear_providers()
    model = og.Model(config)
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=PROMPT + NEW_TOKENS, min_length=PROMPT + NEW_TOKENS)
    generator = og.Generator(model, params)
    times = []
    start = _clocks()
    generator.append_tokens(_prompt_ids())  # runs the prompt
    times.append(_since(start))
    while len(times) < NEW_TOKENS and not generator.is_done():
        start = _clocks()
        generator.generate_next_token()
        times.append(_since(start))
    return times


def _clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process: all its threads) since ``start``."""
    return tuple(now - then for now, then in zip(_clocks(), start))


def run_openvino(folder: Path, threads: int) -> list[float]:
    import numpy as np
    import openvino as ov

    compiled = ov.Core().compile_model(str(folder / "openvino_model.xml"), "CPU", {
        "INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32", "INFERENCE_NUM_THREADS": threads,
        "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"})
    request = compiled.create_infer_request()
    ids = np.array([_prompt_ids()], np.int64)
    mask = np.ones_like(ids)
    pos = np.arange(PROMPT, dtype=np.int64)[None]
    beam = np.zeros(1, np.int32)
    times = []
    for _ in range(NEW_TOKENS):
        start = _clocks()
        request.infer({"input_ids": ids, "attention_mask": mask, "position_ids": pos, "beam_idx": beam})
        token = int(np.argmax(request.get_tensor("logits").data[0, -1]))
        times.append(_since(start))
        ids = np.array([[token]], np.int64)
        mask = np.ones((1, mask.shape[1] + 1), np.int64)
        pos = pos[:, -1:] + 1
    return times


def child(runtime: str, folder: Path, threads: int) -> dict:
    if runtime != "openvino":  # the session's threads come from genai_config.json
        _set_threads(folder, threads)
    times = (run_openvino if runtime == "openvino" else run_genai)(folder, threads)
    return {"prompt_s": times[0][0], "decode_s": statistics.median(t[0] for t in times[SKIP:]),
            "decode_cpu_s": decode_cpu(times[SKIP:]), "tokens": len(times),
            "peak_mib": _peak_mib()}


def decode_cpu(times: list[tuple[float, float]]) -> float:
    """CPU seconds per token: the total over the tokens over their count, not the median of the per-token
    figures. Linux's process CPU clock adds the time of the process's *other* running threads only at a
    scheduler tick (4 ms at HZ=250) or when they block: a step of 2 ms with onnxruntime's second intra-op
    thread spinning reads either the calling thread's time alone or that plus a whole tick, so a median of
    steps flips between the two (the builder's int4 model at 2 threads read 1.96 ms of CPU for 1.69 of wall,
    ours 5.97 for 2.12). Over 56 tokens the total is off by at most two ticks."""
    return sum(cpu for _, cpu in times) / len(times)


def _peak_mib() -> float:
    """This process's peak resident memory: VmHWM, which exec resets (getrusage's ru_maxrss keeps the peak of
    the process it was forked from: the parent's, when that was larger)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _set_threads(folder: Path, threads: int) -> None:
    path = folder / "genai_config.json"
    config = json.loads(path.read_text())
    options = config["model"]["decoder"]["session_options"]
    options["intra_op_num_threads"], options["inter_op_num_threads"] = threads, 1
    path.write_text(json.dumps(config, indent=4))


# --- the whole benchmark ---------------------------------------------------------------------------------


def measure(paths: dict[str, Path], repeats: int) -> list[dict]:
    runs = {}
    for _ in range(repeats):  # interleaved: each round runs every configuration once
        for precision in PRECISIONS:
            for threads in THREADS:
                for runtime in (r for r in RUNTIMES if _applies(r, precision)):
                    out = subprocess.run([sys.executable, __file__, "--child", runtime,
                                          str(paths[f"{runtime}-{precision}"]), str(threads)],
                                         check=True, capture_output=True, text=True,
                                         env={**os.environ, "OMP_NUM_THREADS": str(threads)})
                    result = json.loads(out.stdout.strip().splitlines()[-1])
                    runs.setdefault((runtime, precision, threads), []).append(result)
    rows = []
    for (runtime, precision, threads), results in runs.items():
        rows.append({"runtime": runtime, "precision": precision, "threads": threads,
                     **{k: statistics.median(r[k] for r in results)
                        for k in ("prompt_s", "decode_s", "decode_cpu_s", "peak_mib")},
                     "decode_rounds_s": [r["decode_s"] for r in results]})
    return rows


def render(data: dict) -> str:
    rows = {(r["runtime"], r["precision"], r["threads"]): r for r in data["rows"]}
    info = data["machine"]
    lines = [
        "# bench_llm: decoding a converted LLM", "",
        f"Llama-shaped, {CONFIG['num_hidden_layers']} layers, hidden {CONFIG['hidden_size']}, "
        f"{CONFIG['num_attention_heads']} heads / {CONFIG['num_key_value_heads']} KV heads, vocabulary "
        f"{CONFIG['vocab_size']} (random weights); batch 1, prompt {PROMPT}, greedy, decode = median ms per token of "
        f"tokens {SKIP}..{NEW_TOKENS}, prompt = ms of the first step; decode CPU = the CPU time of the process "
        "per token, its total over those tokens (all its threads: at 2 threads it counts the worker's spinning too; "
        "under load it moves less than the wall time); peak = the process's peak RSS. ours and "
        "builder run in onnxruntime-genai; openvino is the stateful IR on the CPU plugin at f32. ours: the exact "
        "conversion (default); int8act: with `--int8-activations` (MatMulNBits at accuracy level 4, int8 activations, "
        "8-bit lm_head as 8-bit MatMulNBits); requant: with `--int8-activations --requantize-int4` (the 8-bit lm_head "
        "requantized to 4 bits, blocks of 32, as the builder does). "
        f"Medians of {data['repeats']} interleaved runs; paired = the median of the rounds' own ratios (ours and the "
        "builder run back to back in each round, so a slow spell of the machine hits both) with their range.", "",
        f"{info['cpu']}, {info['cores']} cores, load average {', '.join(f'{x:.1f}' for x in data['load_before'])} "
        f"before and {', '.join(f'{x:.1f}' for x in info['load_avg'])} after (a shared machine: ratios move); "
        f"onnxruntime {info['onnxruntime']}, onnxruntime-genai {info.get('onnxruntime_genai')}, "
        f"OpenVINO {info['openvino']}.", "",
        "| weights | ours | threads | decode ms/token: ours | builder | OpenVINO | ours/builder | paired (range) | ours/OpenVINO "
        "| decode CPU ms/token: ours | builder | ours/builder "
        "| prompt ms: ours | builder | OpenVINO | peak MiB: ours | builder | OpenVINO |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for precision in PRECISIONS:
        for form in OURS:
            for threads in THREADS:
                if (form, precision, threads) not in rows:
                    continue
                o, b, v = (rows[(r, precision, threads)] for r in (form, "builder", "openvino"))
                lines.append(_row(precision, form, threads, o, b, v))
    return "\n".join(lines) + "\n"


def _row(precision: str, form: str, threads: int, o: dict, b: dict, v: dict) -> str:
    label = "exact" if form == "ours" else form.removeprefix("ours-")
    return (f"| {precision} | {label} | {threads} | {o['decode_s'] * 1e3:.2f} | {b['decode_s'] * 1e3:.2f} | "
            f"{v['decode_s'] * 1e3:.2f} | {o['decode_s'] / b['decode_s']:.2f} | {_paired(o, b)} | "
            f"{o['decode_s'] / v['decode_s']:.2f} | "
            f"{_cpu(o)} | {_cpu(b)} | {_cpu_ratio(o, b)} | "
            f"{o['prompt_s'] * 1e3:.1f} | {b['prompt_s'] * 1e3:.1f} | {v['prompt_s'] * 1e3:.1f} | "
            f"{o['peak_mib']:.0f} | {b['peak_mib']:.0f} | {v['peak_mib']:.0f} |")


def _paired(o: dict, b: dict) -> str:
    """The median and range of ours/builder per round (each round runs both, back to back)."""
    if "decode_rounds_s" not in o or "decode_rounds_s" not in b:
        return "-"
    ratios = [x / y for x, y in zip(o["decode_rounds_s"], b["decode_rounds_s"])]
    return f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"


def _cpu(row: dict) -> str:
    return f"{row['decode_cpu_s'] * 1e3:.2f}" if "decode_cpu_s" in row else "-"


def _cpu_ratio(o: dict, b: dict) -> str:
    return f"{o['decode_cpu_s'] / b['decode_cpu_s']:.2f}" if "decode_cpu_s" in o and "decode_cpu_s" in b else "-"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/onnx-ext-bench-llm"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "bench_llm")
    parser.add_argument("--render", type=Path)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        runtime, folder, threads = args.child
        print(json.dumps(child(runtime, Path(folder), int(threads))))
        return 0
    if args.render:
        print(render(json.loads(args.render.read_text())))
        return 0
    from harness import machine_info

    args.work.mkdir(parents=True, exist_ok=True)
    paths = build(args.work)
    load_before = list(os.getloadavg())
    rows = measure(paths, args.repeats)
    data = {"machine": machine_info("onnxruntime_genai"), "load_before": load_before, "repeats": args.repeats,
            "config": CONFIG, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
    text = render(data)
    args.out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
