"""Time onnxruntime on the converter's lowering of each op against the nearest native ONNX op.

For every scenario (an op at a realistic size, with its bounds / target shape /
indices either constant when converting or runtime inputs) this builds, in one
process:

  (a) ours:     an OpenVINO model holding the op, saved as IR, converted by
                ``converters.ir_to_onnx`` (domain node + function bodies), run in onnxruntime;
  (b) native:   a hand-built ONNX model doing the same job with the nearest native
                op(s) (Slice, Gather, GatherND with batch_dims, Expand, Range), in onnxruntime;
  (c) openvino: the same IR on OpenVINO's CPU plugin (f32 inference precision), when installed;
  (d) range11:  for Range, ONNX Range-11's function body (its Loop), in onnxruntime.

The outputs of (a), (b) and (c) are compared first. Timing interleaves the variants
(rounds of a few calls each, in a shuffled order per round), so machine load hits all
of them alike; the ratio to (b) is the median over rounds of the per-round ratio of
medians. Node counts are those of the model onnxruntime runs after its graph
optimisations (``SessionOptions.optimized_model_filepath``), If/Loop branches included
(for OpenVINO: the compiled model's runtime graph without Parameter/Result/Constant).

Not part of the test suite: nothing here asserts a timing.

    python benchmarks/bench_ops.py                      # every scenario, 1 thread and all threads
    python benchmarks/bench_ops.py --threads 1 --ops gather,strided_slice --rounds 10
    python benchmarks/bench_ops.py --list               # the scenarios

Writes ``benchmarks/results/bench_ops.{json,md,png}`` (``--out`` to change).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import count_nodes, machine_info, optimized_model, time_interleaved

import onnx_ext
from converters.ir_reader import read_ir
from converters.ir_to_onnx import ir_to_onnx

try:
    import openvino as ov
except ImportError:
    sys.exit("bench_ops.py needs openvino to build the IRs: pip install 'onnx-ext[openvino]'")
from op_scenarios import SCENARIOS, Scenario  # noqa: E402
from op_scenarios_seq import SCENARIOS as SEQ_SCENARIOS  # noqa: E402
from op_scenarios_nms import SCENARIOS as NMS_SCENARIOS  # noqa: E402
from op_scenarios_det import SCENARIOS as DET_SCENARIOS  # noqa: E402

SCENARIOS.update(SEQ_SCENARIOS)  # issue 18: sequences, sampling, run-time forms
SCENARIOS.update(NMS_SCENARIOS)  # issue 18: detection heads and NMS ops
SCENARIOS.update(DET_SCENARIOS)  # issue 18: prior boxes, RegionYolo, ROI poolings, ExperimentalDetectron
from ops_report import fmt_time, markdown, plot, render, target_met, target_of  # noqa: E402

# --- running --------------------------------------------------------------------------------


def ort_session(model: onnx.ModelProto, threads: int, tmpdir: str, tag: str):
    sess, optimized = optimized_model(model.SerializeToString(), threads, Path(tmpdir) / f"{tag}.optimized.onnx")
    graph = optimized.graph
    return sess, (len(graph.node), count_nodes(graph)), sorted(n.op_type for n in graph.node)


def _contiguous(a):
    a = np.asarray(a)
    return a if a.flags.c_contiguous else a.copy(order="C")  # (np.ascontiguousarray makes 0-d arrays 1-d)


class OrtRunner:
    def __init__(self, sess, feeds):
        self.sess = sess
        self.binding = sess.io_binding()
        names = {i.name for i in sess.get_inputs()}
        missing = names - set(feeds)
        if missing:
            raise KeyError(f"no feed for {sorted(missing)}")
        for name in names:
            self.binding.bind_cpu_input(name, _contiguous(feeds[name]))
        self.out = sess.get_outputs()[0].name
        self.binding.bind_output(self.out, "cpu")

    def __call__(self):
        self.sess.run_with_iobinding(self.binding)

    def result(self):
        self()
        value = self.binding.get_outputs()[0]
        if value.data_type() == "tensor(bfloat16)":
            return None
        return value.numpy()


class OvRunner:
    def __init__(self, xml: str, feeds, threads: int):
        core = ov.Core()
        cfg = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1,
               "PERFORMANCE_HINT": "LATENCY"}
        self.compiled = core.compile_model(xml, "CPU", cfg)
        self.req = self.compiled.create_infer_request()
        self.inputs = {}
        for port in self.compiled.inputs:
            name = port.get_any_name()
            self.inputs[name] = _contiguous(feeds[name])
        runtime = self.compiled.get_runtime_model()
        self.nodes = sum(1 for n in runtime.get_ordered_ops()
                         if n.get_type_name() not in ("Parameter", "Result", "Constant"))

    def __call__(self):
        self.req.infer(self.inputs, share_inputs=True, share_outputs=True)

    def result(self):
        self()
        return np.array(self.req.get_output_tensor(0).data)


def _same(a, b, of_largest: float | None = None) -> bool:
    if a is None or b is None:
        return True
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "f" and of_largest is not None:
        return bool(np.abs(a.astype(np.float64) - b).max(initial=0) <= of_largest * np.abs(b).max(initial=1))
    if a.dtype.kind == "f":
        return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-3, atol=1e-3, equal_nan=True))
    return bool(np.array_equal(a, b))


def _same_up_to_ties(a, b, within: float) -> bool:
    """[R, 6] rows (class, score, box): equal, or the same rows where every row out of place has a score within
    ``within`` of the one at its place in ``b`` (a sort that takes close scores as equal put them so)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.ndim != 2:
        return False
    moved = (a != b).any(1)
    rows = (lambda x: x[np.lexsort(x.T[::-1])])
    return bool(np.array_equal(rows(a[moved]), rows(b[moved]))
                and (np.abs(a[moved, 1].astype(np.float64) - b[moved, 1]) < within).all())


def prepare(sc: Scenario, threads: int, tmpdir: str, use_ov: bool):
    """Runners per variant (a)-(d), node counts, and a correctness check."""
    d = tempfile.mkdtemp(dir=tmpdir)
    ov_model = sc.ov_model()
    xml = os.path.join(d, "model.xml")
    ov.save_model(ov_model, xml, compress_to_fp16=False)
    t0 = time.perf_counter()
    ours = ir_to_onnx(read_ir(xml))
    convert_s = time.perf_counter() - t0
    onnx.save(ours, os.path.join(d, "ours.onnx"))
    runners, nodes, ops = {}, {}, {}
    sess, nodes["ours"], ops["ours"] = ort_session(ours, threads, d, "ours")
    runners["ours"] = OrtRunner(sess, sc.feeds)
    if sc.native is not None:
        native = sc.native()
        onnx.save(native, os.path.join(d, "native.onnx"))
        sess, nodes["native"], ops["native"] = ort_session(native, threads, d, "native")
        runners["native"] = OrtRunner(sess, getattr(sc, "native_feeds", sc.feeds))
    if use_ov:
        if sc.ov_baseline is not None:
            xml = os.path.join(d, "baseline.xml")
            ov.save_model(sc.ov_baseline(), xml, compress_to_fp16=False)
        runners["openvino"] = OvRunner(xml, sc.feeds, threads)
        nodes["openvino"] = (runners["openvino"].nodes, runners["openvino"].nodes)
    if sc.range11 is not None:
        sess, nodes["range11"], ops["range11"] = ort_session(sc.range11(), threads, d, "range11")
        runners["range11"] = OrtRunner(sess, getattr(sc, "range11_feeds", {}))
    # correctness: ours against openvino, native against ours (out-of-range cases differ by design)
    got = runners["ours"].result() if sc.compare else None  # (_same takes None as a match)
    checks, notes = {}, []
    if sc.op == "Range":
        # onnxruntime's Range accumulates: compare with Range-4's values (the numpy reference);
        # OpenVINO's CPU plugin accumulates too with runtime inputs (noted, not a failure)
        checks["ours=reference"] = _same(got, sc.reference) if got is not None else True
        if "openvino" in runners and not _same(sc.reference, runners["openvino"].result()):
            notes.append("OpenVINO CPU differs from Range-4's reference (accumulates)")
    elif "openvino" in runners:
        want = runners["openvino"].result()
        checks["ours=openvino"] = (_same_up_to_ties(got, want, sc.ties_within) if sc.ties_within and got is not None
                                   else _same(got, want, sc.of_largest))
    if "native" not in runners:  # OpenVINO is the baseline
        runners["native"], nodes["native"], ops["native"] = runners["openvino"], nodes["openvino"], []
    elif sc.op != "Range" and (not hasattr(sc, "native_feeds") or getattr(sc, "compare_native", False)):
        checks["ours~native"] = _same(got, runners["native"].result(), sc.of_largest)
    overloads = sorted({n.overload for n in ours.graph.node if n.domain == onnx_ext.DOMAIN})
    same_graph = ops["ours"] == ops["native"]
    return runners, nodes, ops, checks, overloads, convert_s, same_graph, notes


def summarize(samples: dict[str, dict[str, list[float]]]) -> dict:
    """Wall-time medians and ratios to (b): median of the per-round ratios, their range, best round over best."""
    samples = {k: v["wall"] for k, v in samples.items()}
    med = {k: statistics.median(v) for k, v in samples.items()}
    ratios = {}
    for k, v in samples.items():
        if k == "native":
            continue
        per_round = [a / b for a, b in zip(v, samples["native"])]
        ratios[k] = statistics.median(per_round)
        ratios[k + "_spread"] = (min(per_round), max(per_round))
    if "range11" in samples:
        per_round = [a / b for a, b in zip(samples["range11"], samples["ours"])]
        ratios["range11_over_ours"] = statistics.median(per_round)
    if "openvino" in samples:
        per_round = [a / c for a, c in zip(samples["ours"], samples["openvino"])]
        ratios["ours_over_openvino"] = statistics.median(per_round)
    # best round against best round: what the machine's load least disturbs
    ratios["ours_min"] = min(samples["ours"]) / min(samples["native"])
    return {"median_s": med, "ratio": ratios}


def merged(path: Path, results: list[dict], info: dict, by_row: bool = False) -> tuple[list[dict], dict]:
    """The rows of ``path`` with those of the ops in ``results`` replaced (in the old rows' place), and its
    machine record noting the re-measurement. ``by_row`` (``--only``): only the rows of the scenarios and thread
    counts measured, each in its old place (new ones after)."""
    old = json.loads(path.read_text())
    ops = {r["op"] for r in results}
    key = (lambda r: (r["op"], r["name"], r["const"], r["threads"]))
    rows, placed = [], False
    if by_row:
        new = {key(r): r for r in results}
        rows = [new.pop(key(r), r) for r in old["results"]]
        rows.extend(r for r in results if key(r) in new)
    else:
        for r in old["results"]:
            if r["op"] not in ops:
                rows.append(r)
            elif not placed:
                rows.extend(results)
                placed = True
        if not placed:
            rows.extend(results)
    what = ", ".join(sorted({f"{r['op']} {r['name']}" for r in results})) if by_row else ", ".join(sorted(ops))
    machine = old["machine"]
    machine.setdefault("remeasured", []).append(
        f"{what} on {info['date']}, load average {info['load_avg'][0]:.1f} at start, "
        f"{info['load_avg_end'][0]:.1f} at the end")
    return rows, machine


def recount(rows: list[dict], measured: list[dict], scenarios: list[Scenario], tmpdir: str, use_ov: bool) -> int:
    """The node counts (and what follows from them) of ``rows`` not in ``measured`` whose scenario is among
    ``scenarios``, counted again on the models as they convert now (a merge keeps the other rows' timings,
    but their node counts follow the converter: they were stale, quoted from an earlier run). Returns how many
    rows were recounted."""
    by_key = {sc.key: sc for sc in scenarios}
    done = {(r["op"], r["name"], r["const"], r["threads"]) for r in measured}
    n = 0
    for row in rows:
        sc = by_key.get(f"{row['op']}/{row['name']}/{'const' if row['const'] else 'runtime'}")
        if sc is None or (row["op"], row["name"], row["const"], row["threads"]) in done:
            continue
        runners, nodes, ops, _, overloads, _, same_graph, _ = prepare(sc, row["threads"], tmpdir, use_ov)
        if "openvino" not in runners and "openvino" in row["nodes"]:
            nodes["openvino"] = row["nodes"]["openvino"]
        row.update(nodes=nodes, ops=ops, overloads=overloads, same_graph=same_graph,
                   met=bool(target_met(sc.const, sc.op, row["ratio"], row["target_ratio"], nodes, sc.vs)))
        n += 1
    return n


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ops", default="gather,strided_slice,broadcast,range",
                   help="comma-separated: " + ",".join(SCENARIOS))
    p.add_argument("--threads", nargs="+", default=["1", "all"], help="thread counts ('all' = every core)")
    p.add_argument("--rounds", type=int, default=15, help="interleaved rounds per scenario")
    p.add_argument("--budget", type=float, default=2.0, help="seconds of timing per scenario and thread count")
    p.add_argument("--only", default="", help="comma-separated substrings of op/name/const|runtime")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results"), help="output directory")
    p.add_argument("--tag", default="bench_ops", help="output file stem")
    p.add_argument("--no-openvino", action="store_true")
    p.add_argument("--list", action="store_true")
    p.add_argument("--render", metavar="JSON", help="only rewrite the .md and .png from a results .json")
    p.add_argument("--merge", action="store_true", help="replace only the measured ops' rows in an existing "
                   "results file (--out/--tag), noting when and under what load they were re-measured; with --only, "
                   "only the measured scenarios' rows")
    args = p.parse_args(argv)
    if args.render:
        render(Path(args.render))
        return 0

    scenarios = [sc for op in args.ops.split(",") for sc in SCENARIOS[op.strip()]()]
    if args.only:
        scenarios = [sc for sc in scenarios if any(part in sc.key for part in args.only.split(","))]
    if not scenarios:
        print(f"no scenario matches --ops {args.ops} --only {args.only!r} (see --list)", file=sys.stderr)
        return 2
    if args.list:
        for sc in scenarios:
            print(f"{sc.key:45s} {sc.out_elements:>10,}  {sc.what}")
        return 0
    threads = [os.cpu_count() if t == "all" else int(t) for t in args.threads]
    threads = list(dict.fromkeys(threads))
    info = machine_info()
    print(f"# {info['cpu']} x{info['cores']}, load {info.get('load_avg')}; onnxruntime {info['onnxruntime']}, "
          f"openvino {info.get('openvino')}", flush=True)
    results = []
    with tempfile.TemporaryDirectory() as tmpdir:
        for th in threads:
            for sc in scenarios:
                runners, nodes, ops, checks, overloads, convert_s, same_graph, notes = prepare(
                    sc, th, tmpdir, not args.no_openvino)
                samples = time_interleaved(runners, args.rounds, args.budget, calls_between=(3, 50),
                                           at_most={"range11": 3})  # its Loop is slow
                s = summarize(samples)
                s["ratio"].setdefault("openvino", float("nan"))
                tr, ttext = target_of(sc)
                met = target_met(sc.const, sc.op, s["ratio"], tr, nodes, sc.vs)
                row = {"op": sc.op, "name": sc.name, "what": sc.what, "const": sc.const, "threads": th, "vs": sc.vs,
                       "out_elements": sc.out_elements, "nodes": nodes, "ops": ops, "checks": checks,
                       "overloads": overloads, "convert_s": convert_s, "target": ttext, "target_ratio": tr,
                       "met": bool(met), "note": "; ".join(filter(None, [sc.note] + notes)),
                       "same_graph": same_graph, "samples_s": samples, "load_avg": list(os.getloadavg()), **s}
                results.append(row)
                r11 = s["ratio"].get("range11_over_ours")
                r11 = f" range11/ours {r11:.0f}x" if r11 is not None else ""
                bad = [k for k, v in checks.items() if not v]
                print(f"{sc.key:42s} th={th} ours {fmt_time(s['median_s']['ours']):>9} native "
                      f"{fmt_time(s['median_s']['native']):>9} a/b {s['ratio']['ours']:5.2f} "
                      f"[{s['ratio']['ours_spread'][0]:.2f}-{s['ratio']['ours_spread'][1]:.2f}] "
                      f"best {s['ratio']['ours_min']:.2f} "
                      f"c/b {s['ratio']['openvino']:5.2f} a/c {s['ratio'].get('ours_over_openvino', np.nan):5.2f} nodes {nodes['ours'][0]}({nodes['ours'][1]})/"
                      f"{nodes['native'][0]}{' =graph' if same_graph else ''}{r11} "
                      f"{'ok' if met else 'MISSED'}{' CHECK FAILED ' + str(bad) if bad else ''}", flush=True)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        info["load_avg_end"] = os.getloadavg()
        if args.merge and (out / f"{args.tag}.json").exists():
            measured = results
            results, info = merged(out / f"{args.tag}.json", results, info, by_row=bool(args.only))
            every = [sc for op in args.ops.split(",") for sc in SCENARIOS[op.strip()]()]
            n = recount(results, measured, every, tmpdir, not args.no_openvino)
            if n:
                info["remeasured"][-1] += f"; the node counts of {n} other rows of these ops recounted"
    (out / f"{args.tag}.json").write_text(json.dumps({"machine": info, "results": results}, indent=1, default=float))
    (out / f"{args.tag}.md").write_text(markdown(results, info))
    plot(results, out / f"{args.tag}.png")
    print(f"wrote {out / args.tag}.{{json,md,png}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
