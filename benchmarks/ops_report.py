"""bench_ops.py's targets and report: the target ratio of each scenario, the markdown table and the plot, also
re-rendered from a results .json (``--render``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from op_scenarios import Scenario

# --- targets ----------------------------------------------------------------------------------


def target_of(sc: Scenario) -> tuple[float, str]:
    """(max ratio ours/native, or ours/OpenVINO for ``sc.vs == "openvino"``, text) for the scenario, from the
    issues' targets."""
    if sc.target is not None:
        return sc.target
    if sc.vs == "openvino":
        return 3.0, "<=3x OpenVINO CPU on its own op"
    if sc.const:
        return 1.05, "<=1.05x, nodes <= native"
    if sc.out_elements <= 4096:
        return 3.0, "<=3x (small)"
    if sc.op == "Range":
        return 2.0, "<=2x native Range; >=100x faster than Range-11"
    if sc.op == "Gather" and "oor" in sc.name:
        return 3.0, "<=3x (out-of-range indices)"
    if sc.out_elements >= 1_000_000:
        return 1.3, "<=1.3x"
    return 3.0, "<=3x (between 1k and 1M: the small-tensor bound)"


def target_met(const: bool, op: str, ratio: dict, target: float, nodes: dict, vs: str = "native") -> bool:
    """The median ratio within the target (for constant inputs also no more nodes than the native
    model); for Range, Range-11's Loop at least 100x slower. ``vs`` "openvino": the ratio to OpenVINO's
    CPU plugin."""
    if vs == "openvino":
        return bool(ratio.get("ours_over_openvino", np.inf) <= target)
    ok = ratio["ours"] <= target
    if const:
        ok = ok and nodes["ours"][1] <= nodes["native"][1]
    if op == "Range" and "range11_over_ours" in ratio:
        ok = ok and ratio["range11_over_ours"] >= 100
    return bool(ok)


def render(json_path: Path) -> None:
    """Rewrite the markdown and the plot from a results file (targets re-evaluated)."""
    data = json.loads(json_path.read_text())
    for r in data["results"]:
        r["met"] = target_met(r["const"], r["op"], r["ratio"], r["target_ratio"], r["nodes"], r.get("vs", "native"))
    json_path.write_text(json.dumps(data, indent=1, default=float))
    json_path.with_suffix(".md").write_text(markdown(data["results"], data["machine"]))
    plot(data["results"], json_path.with_suffix(".png"))


# --- report -----------------------------------------------------------------------------------


def fmt_time(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.0f} us"


def markdown(results: list[dict], info: dict) -> str:
    lines = [
        "# onnx-ext lowerings vs native ONNX ops in onnxruntime",
        "",
        f"Machine: {info['cpu']}, {info['cores']} cores ({info['platform']}); load average at start "
        f"{', '.join(f'{x:.1f}' for x in info.get('load_avg', ()))}. ",
        f"onnxruntime {info['onnxruntime']}, onnx {info['onnx']}, onnxscript {info.get('onnxscript', '?')}, "
        f"OpenVINO {info.get('openvino', 'not installed')}, numpy {info['numpy']}, Python {info['python']}; "
        f"{info['date']}.",
        *([""] + [f"Re-measured: {note}" for note in info["remeasured"]] if info.get("remeasured") else []),
        "",
        "(a) ours = converter output (domain node + function body) in onnxruntime; (b) native = nearest native "
        "ONNX op(s) in onnxruntime; (c) OpenVINO CPU plugin on the IR; (d) ONNX Range-11 function body (Loop). "
        "Times are medians; a/b is the median of per-round ratios to (b) (rounds interleave the variants), "
        "a/b best the ratio of the best rounds (least disturbed by other load on the machine); "
        "nodes are counted after onnxruntime's graph optimisations: top level (with If/Loop branches in "
        "parentheses: a fast path's fallback branch is counted though not run); `=`: (a) and (b) optimise to "
        "the same ops.",
        "",
        *summary(results),
        "",
        "All measurements:",
        "",
        "| op | scenario | inputs | threads | out elems | (a) ours | (b) native | (c) OpenVINO | (d) Range-11 | "
        "a/b | a/b best | c/b | nodes a / b | target | met |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        m, q = r["median_s"], r["ratio"]
        r11 = fmt_time(m["range11"]) + f" ({q['range11_over_ours']:.0f}x a)" if "range11" in m else ""
        lines.append(
            f"| {r['op']} | {r['name']} | {'const' if r['const'] else 'runtime'} | {r['threads']} | "
            f"{r['out_elements']:,} | "
            f"{fmt_time(m['ours'])} | {fmt_time(m['native'])} | "
            f"{fmt_time(m['openvino']) if 'openvino' in m else '-'} | "
            f"{r11} | **{q['ours']:.2f}** | {q['ours_min']:.2f} | {q['openvino']:.2f} | {_nodes_text(r)} | "
            f"{r['target']} | {'yes' if r['met'] else 'NO'} |".replace("| nan |", "| - |")
        )
    lines += ["", "Scenarios:", ""]
    seen = set()
    for r in results:
        if (r["op"], r["name"]) in seen:
            continue
        seen.add((r["op"], r["name"]))
        note = f" ({r['note']})" if r.get("note") else ""
        lines.append(f"- {r['op']} {r['name']}: {r['what']}{note}; overloads {', '.join(r['overloads']) or '-'}")
    return "\n".join(lines) + "\n"


def summary(results: list[dict]) -> list[str]:
    """One row per scenario: a/b (median, best) per thread count, nodes, target, met."""
    threads = sorted({r["threads"] for r in results})
    rows = {}
    for r in results:
        rows.setdefault((r["op"], r["name"], r["const"]), {})[r["threads"]] = r
    head = "| op | scenario | inputs | out elems | " + " | ".join(f"a/b {t} thr (best)" for t in threads) + \
        " | nodes a / b | target | met |"
    lines = ["Summary (a/b: time of the converter's model over the native op's; a/c: over OpenVINO's CPU plugin, "
             "for ops ONNX has no op for, where (b) is OpenVINO when no native model is given; `=`: same optimised "
             "graph):", "",
             head, "|" + "---|" * (7 + len(threads))]
    for (op, name, const), by_th in rows.items():
        first = next(iter(by_th.values()))
        cells = [_cell(by_th[t]) if t in by_th else "-" for t in threads]
        met = all(r["met"] for r in by_th.values())
        extra = ""
        if "range11_over_ours" in first["ratio"]:
            extra = f"; Range-11 Loop {first['ratio']['range11_over_ours']:,.0f}x slower"
        lines.append(f"| {op} | {name} | {'const' if const else 'runtime'} | {first['out_elements']:,} | "
                     + " | ".join(cells) + f" | {_nodes_text(first)} | {first['target']}{extra} | "
                     f"{'yes' if met else 'NO'} |")
    return lines


def _cell(r) -> str:
    """a/b (best); for a row judged against OpenVINO's CPU plugin, a/c too."""
    text = f"{r['ratio']['ours']:.2f} ({r['ratio']['ours_min']:.2f})"
    if r.get("vs") == "openvino":
        text += f"; a/c **{r['ratio']['ours_over_openvino']:.2f}**"
    return text


def _nodes_text(r) -> str:
    (a_top, a_all), (b_top, _) = r["nodes"]["ours"], r["nodes"]["native"]
    text = f"{a_top}" + (f" ({a_all})" if a_all != a_top else "") + f" / {b_top}"
    return text + (" =" if r.get("same_graph") else "")


def plot(results: list[dict], path: Path) -> None:
    """One panel per thread count, one horizontal bar pair per scenario: a label of one line per row
    (op, scenario, inputs) stays readable however many scenarios there are."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    threads = sorted({r["threads"] for r in results})
    n = len(results) // len(threads)
    fig, axes = plt.subplots(1, len(threads), figsize=(7 * len(threads), 0.26 * n + 1.6), squeeze=False, sharey=True)
    for ax, th in zip(axes[0], threads):
        rows = [r for r in results if r["threads"] == th]
        labels = [f"{r['op']} {r['name']} ({'const' if r['const'] else 'runtime'})" for r in rows]
        y = np.arange(len(rows))
        a = [r["ratio"]["ours"] for r in rows]
        c = [r["ratio"].get("openvino", np.nan) for r in rows]
        tgt = [r["target_ratio"] for r in rows]
        ax.barh(y - 0.2, a, 0.4, label="(a) ours / native", color=["tab:blue" if r["met"] else "tab:red" for r in rows])
        ax.barh(y + 0.2, c, 0.4, label="(c) OpenVINO CPU / native", color="tab:gray", alpha=0.6)
        ax.scatter(tgt, y - 0.2, marker="|", s=120, color="black", label="target", zorder=3)
        ax.axvline(1.0, color="black", lw=0.6)
        ax.set_xscale("log")
        ax.set_yticks(y)
        ax.set_yticklabels(labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("time / native ONNX op (log)")
        ax.set_title(f"onnxruntime, {th} thread{'s' if th > 1 else ''} (red: target missed)", fontsize=10)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
