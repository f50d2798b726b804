"""Robustness fuzzing of ``onnx-ext convert`` (in-process through ``converters.cli.main``).

Random byte and structure mutations (hypothesis) of valid IR (.xml + .bin) and ONNX files:
truncation, flipped and inserted bytes, attribute values, dims, Const offsets/sizes, element
types, edges, huge declared shapes, deep nesting. The property, for every case:

- exit 0, and what was written loads (onnxruntime for .onnx, OpenVINO for .xml), its files
  with the mode the umask gives; for IR -> ONNX also OpenVINO's own reader accepts the input
  (we do not convert an IR that OpenVINO rejects);
- or exit 2 with exactly one line on stderr and no file left behind;
- never a traceback, a hang (per-case timeout) or a crash (cases run in a worker process).

CI runs a few thousand cases in about a minute; ``-m slow`` (or ONNX_EXT_SLOW=1) runs ten times
as many.
"""

from __future__ import annotations

import concurrent.futures as cf
import copy
import multiprocessing as mp
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

import fuzz_worker

ROOT = Path(__file__).resolve().parents[1]
CASE_TIMEOUT_S = 60  # generous: the machine is shared; a hang is minutes, not seconds
CI_EXAMPLES = {"ir_bytes": 1000, "ir_structure": 400, "onnx_bytes": 300, "onnx_structure": 300}
#: Where OpenVINO's reader rejects what this package accepts on purpose (README: "Spec corrections").
DELIBERATE = {
    "are_attr_sizes_eq": "StridedSlice masks of different lengths (the spec allows them)",
    "dimension (?) in node dim": "a port dim written ? (port dims are hints; ? means dynamic, as in <data> shapes)",
}
#: OpenVINO's shape inference on values (a constant target shape that cannot broadcast, a negative
#: size): the reader has no shape inference, so such an IR converts to a model that fails at run
#: time, in onnxruntime as in OpenVINO. A known gap, not hidden: type checks are not in this list.
VALUE_SHAPE_CHECKS = ("shape_inference/include/", "validation_util.cpp")
SLOW_FACTOR = 10


# --- the worker ---------------------------------------------------------------------------------


class Worker:
    """A pool of one process, replaced after a hang or a crash."""

    def __init__(self):
        self.pool = None
        self._start()

    def _start(self):
        self.pool = cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn"))
        self.pool.submit(fuzz_worker.warm_up).result(timeout=300)

    def call(self, fn, *args):
        future = self.pool.submit(fn, *args)
        try:
            return future.result(timeout=CASE_TIMEOUT_S)
        except cf.TimeoutError:
            self._restart()
            raise AssertionError(f"hang: no answer within {CASE_TIMEOUT_S} s") from None
        except cf.process.BrokenProcessPool:
            self._restart()
            raise AssertionError("crash: the worker process died") from None

    def _restart(self):
        for p in list(getattr(self.pool, "_processes", {}).values()):
            p.kill()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self._start()

    def close(self):
        self.pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def worker():
    w = Worker()
    yield w
    w.close()


# --- valid inputs -------------------------------------------------------------------------------


def _small_ir(folder: Path) -> tuple[bytes, bytes]:
    """A small IR holding the four ops and a few others, written by OpenVINO itself."""
    import openvino as ov
    import openvino.opset1 as o1
    import openvino.opset3 as o3
    import openvino.opset4 as o4
    import openvino.opset8 as o8

    data = o8.parameter([2, -1, 4], ov.Type.f32, name="data")
    ids = o8.parameter([3], ov.Type.i32, name="ids")
    table = o8.constant(np.arange(24, dtype=np.float32).reshape(6, 4))
    rows = o8.gather(table, ids, o8.constant(np.int64(0)), batch_dims=0)  # [3, 4]
    sliced = o1.strided_slice(data, o1.constant(np.array([0, 1], np.int64)), o1.constant(np.array([0, 0], np.int64)),
                              o1.constant(np.array([1, 1], np.int64)), begin_mask=[1, 0], end_mask=[1, 1])
    pos = o4.range(o4.constant(np.float32(0)), o4.constant(np.float32(4)), o4.constant(np.float32(1)), "f32")
    wide = o3.broadcast(o1.add(rows, pos), o3.constant(np.array([2, 3, 4], np.int64)))
    out = o1.multiply(o1.reduce_sum(sliced, o1.constant(np.array([1], np.int64)), keep_dims=True), wide)
    model = ov.Model([out], [data, ids], "small")
    ov.save_model(model, folder / "small.xml", compress_to_fp16=False)
    return (folder / "small.xml").read_bytes(), (folder / "small.bin").read_bytes()


def _plain_onnx() -> bytes:
    h = helper
    graph = h.make_graph(
        [h.make_node("MatMul", ["x", "w"], ["y"]), h.make_node("Add", ["y", "b"], ["z"]),
         h.make_node("Relu", ["z"], ["r"]), h.make_node("Gather", ["r", "idx"], ["out"], axis=1)],
        "plain",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [h.make_tensor_value_info("out", TensorProto.FLOAT, ["N", 2])],
        [h.make_tensor("w", TensorProto.FLOAT, [4, 3], np.arange(12, dtype=np.float32)),
         h.make_tensor("b", TensorProto.FLOAT, [3], np.ones(3, np.float32)),
         h.make_tensor("idx", TensorProto.INT64, [2], np.array([0, 2]))])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> dict:
    """Valid inputs: IR (xml, bin) pairs and ONNX files, each checked to convert (exit 0)."""
    from converters.ir_to_onnx import convert_ir_file

    folder = tmp_path_factory.mktemp("fuzz-bases")
    example = ROOT / "examples" / "embedding_block"
    irs = {"embedding_block": (example.with_suffix(".xml").read_bytes(), example.with_suffix(".bin").read_bytes()),
           "small": _small_ir(folder)}
    onnxs = {"plain": _plain_onnx()}
    for name, (xml, weights) in irs.items():
        (folder / f"{name}.xml").write_bytes(xml)
        (folder / f"{name}.bin").write_bytes(weights)
        onnxs[name] = convert_ir_file(folder / f"{name}.xml", folder / f"{name}.onnx").read_bytes()
    return {"ir": irs, "onnx": onnxs}


# --- mutations ----------------------------------------------------------------------------------

NASTY_TEXT = ["", " ", "-1", "0", "1", "2", "-5", "3.5", "1e100", "nan", "abc", "1,2", ", ,", "0,", "-1..5", "?",
              "2147483648", "4294967296", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
              "99999999999999999999999", "f17", "f32", "f16", "bf16", "i64", "i32", "u8", "u1", "i4", "nf4",
              "f8e4m3", "string", "dynamic", "boolean", "FP32", "I64", "opset1", "opset999", "extension", "numpy",
              "explicit", "bidirectional", "pdpd", "none", "1, 0, 1", "1,1,1,1,1,1,1,1", "x\u00e9\u0000"]
ELEMENT_TYPES = ["f32", "f16", "bf16", "f64", "i64", "i32", "i8", "u8", "u64", "boolean", "f17", "u1", "i4", "u4",
                 "nf4", "f8e4m3", "f8e5m2", "string", "dynamic", "undefined", "FP32", "I64", "Q78", "", "f 32"]
DIM_TEXT = ["-1", "?", "0", "1", "3", "-2", "-5", "", "1..", "..3", "2..1", "1.5", "2147483648", "4294967297",
            "9223372036854775807", "99999999999999999999", "1e9", "abc"]
HUGE = [2**31, 2**32 + 1, 2**40, 2**62, 2**63 - 1]
ATTR_NAMES = ["element_type", "shape", "offset", "size", "precision", "id", "version", "type", "axis", "batch_dims",
              "begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask", "mode",
              "destination_type", "output_type", "from-layer", "to-layer", "from-port", "to-port", "names",
              "keep_dims", "special_zero"]


def _byte_ops(data: bytes, draw, n_max: int = 3) -> bytes:
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, n_max))):
        kind = draw(st.sampled_from(["truncate", "flip", "insert", "delete"]))
        pos = draw(st.integers(0, max(0, len(buf) - 1)))
        if kind == "truncate":
            del buf[pos:]
        elif kind == "flip" and buf:
            buf[pos] = draw(st.integers(0, 255))
        elif kind == "insert":
            buf[pos:pos] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "delete":
            del buf[pos:pos + draw(st.integers(1, 64))]
    return bytes(buf)


@st.composite
def ir_bytes_case(draw, irs):
    name = draw(st.sampled_from(sorted(irs)))
    xml, weights = irs[name]
    what = draw(st.sampled_from(["xml", "bin", "both"]))
    if what in ("xml", "both"):
        xml = _byte_ops(xml, draw)
    if what in ("bin", "both"):
        weights = _byte_ops(weights, draw)
    return {"model.xml": xml, "model.bin": weights}


def _nested_bodies(depth: int) -> bytes:
    """``depth`` levels of If sub-graphs, each inside the previous one's then_body (written as
    text: ElementTree itself recurses on such depths)."""
    head = "".join(f'<then_body><layers><layer id="{i}" name="n{i}" type="If" version="opset8">' for i in range(depth))
    return (head + "</layer></layers></then_body>" * depth).encode()


NEST = re.compile(rb'<fuzz_nest depth="(\d+)" ?/>')


def _mutate_ir_xml(root: ET.Element, draw) -> None:
    kind = draw(st.sampled_from(["attr", "attr", "dim", "element_type", "huge_shape", "const_offset", "edge",
                                 "delete", "duplicate", "nest", "data_attr"]))
    elements = list(root.iter())
    parents = {c: p for p in elements for c in p}
    pick = lambda items: items[draw(st.integers(0, len(items) - 1))] if items else None  # noqa: E731
    if kind == "attr":
        el = pick(elements)
        name = draw(st.sampled_from(sorted(el.attrib) + ATTR_NAMES[:3]) if el.attrib else st.sampled_from(ATTR_NAMES))
        el.set(name, draw(st.sampled_from(NASTY_TEXT) | st.integers(-2**64, 2**64).map(str)))
    elif kind == "data_attr":
        el = pick([e for e in elements if e.tag == "data"])
        if el is not None:
            el.set(draw(st.sampled_from(sorted(el.attrib) or ATTR_NAMES)), draw(st.sampled_from(NASTY_TEXT)))
    elif kind == "dim":
        el = pick([e for e in elements if e.tag == "dim"])
        if el is not None:
            el.text = draw(st.sampled_from(DIM_TEXT))
    elif kind == "element_type":
        el = pick([e for e in elements if "element_type" in e.attrib or "precision" in e.attrib
                   or "destination_type" in e.attrib or "output_type" in e.attrib])
        if el is not None:
            key = next(k for k in ("element_type", "precision", "destination_type", "output_type") if k in el.attrib)
            el.set(key, draw(st.sampled_from(ELEMENT_TYPES)))
    elif kind == "huge_shape":
        layer = pick([e for e in elements if e.tag == "layer"])
        if layer is None:
            return
        huge = draw(st.sampled_from(HUGE))
        for dim in layer.iter("dim"):
            dim.text = str(huge)
        data = layer.find("data")
        if data is not None and "shape" in data.attrib:
            data.set("shape", ",".join([str(huge)] * max(1, len(data.get("shape").split(",")))))
    elif kind == "const_offset":
        el = pick([e for e in elements if e.tag == "data" and "offset" in e.attrib])
        if el is not None:
            key = draw(st.sampled_from(["offset", "size"]))
            el.set(key, str(draw(st.sampled_from([-1, 0, 1, 7, 2**31, 2**63, 2**64 + 3]) | st.integers(0, 5000))))
    elif kind == "edge":
        el = pick([e for e in elements if e.tag == "edge"])
        if el is not None:
            ids = [int(e.get("id", 0)) for e in elements if e.tag in ("layer", "port") and e.get("id", "").isdigit()]
            key = draw(st.sampled_from(["from-layer", "to-layer", "from-port", "to-port"]))
            el.set(key, str(draw(st.sampled_from(ids + [-1, 10**6]))))
    elif kind == "delete":
        el = pick([e for e in elements if e is not root])
        if el is not None:
            parents[el].remove(el)
    elif kind == "duplicate":
        el = pick([e for e in elements if e is not root])
        if el is not None:
            parents[el].append(copy.deepcopy(el))
    elif kind == "nest":
        layer = pick([e for e in elements if e.tag == "layer"])
        if layer is not None:
            layer.append(ET.Element("fuzz_nest", depth=str(draw(st.sampled_from([1, 3, 40, 1200, 5000])))))


@st.composite
def ir_structure_case(draw, irs):
    name = draw(st.sampled_from(sorted(irs)))
    xml, weights = irs[name]
    root = ET.fromstring(xml)
    for _ in range(draw(st.integers(1, 3))):
        _mutate_ir_xml(root, draw)
    xml = NEST.sub(lambda m: _nested_bodies(int(m.group(1))), ET.tostring(root))
    return {"model.xml": xml, "model.bin": weights}


@st.composite
def onnx_bytes_case(draw, onnxs):
    return {"model.onnx": _byte_ops(onnxs[draw(st.sampled_from(sorted(onnxs)))], draw)}


NASTY_INTS = [0, 1, -1, 2, 3, -2**31, 2**31, 2**62, -2**63, 2**63 - 1, 7, 14, 22]


def _all_graph_nodes(graph: onnx.GraphProto):
    for node in graph.node:
        yield node
        for a in node.attribute:
            if a.HasField("g"):
                yield from _all_graph_nodes(a.g)


def _value_infos(model: onnx.ModelProto):
    g = model.graph
    return [*g.input, *g.output, *g.value_info]


def _nest_in_ifs(model: onnx.ModelProto, depth: int) -> None:
    """The graph's nodes moved inside ``depth`` nested If nodes (always the then branch)."""
    g = model.graph
    outs = [o.name for o in g.output]
    original = inner_nodes = list(g.node)
    cond = helper.make_tensor("fuzz_cond", TensorProto.BOOL, [], [True])
    for level in range(depth):
        # The else branch holds the original nodes, not the nested ones: the model grows linearly.
        then_g = helper.make_graph(inner_nodes, f"then{level}", [], [copy.deepcopy(o) for o in g.output])
        else_g = helper.make_graph(original, f"else{level}", [], [copy.deepcopy(o) for o in g.output])
        inner_nodes = [helper.make_node("If", ["fuzz_cond"], outs, then_branch=then_g, else_branch=else_g)]
    del g.node[:]
    g.node.extend(inner_nodes)
    g.initializer.append(cond)


def _mutate_onnx(model: onnx.ModelProto, draw) -> None:
    kind = draw(st.sampled_from(["attr", "dims", "elem_type", "initializer", "edge", "opset", "nest", "delete",
                                 "duplicate", "functions"]))
    g = model.graph
    pick = lambda items: items[draw(st.integers(0, len(items) - 1))] if items else None  # noqa: E731
    nodes = list(_all_graph_nodes(g)) + [n for f in model.functions for n in f.node]
    if kind == "attr":
        node = pick([n for n in nodes if n.attribute])
        if node is not None:
            a = pick(list(node.attribute))
            if a.type == onnx.AttributeProto.INT:
                a.i = draw(st.sampled_from(NASTY_INTS))
            elif a.type == onnx.AttributeProto.INTS:
                del a.ints[:]
                a.ints.extend(draw(st.lists(st.sampled_from(NASTY_INTS), max_size=6)))
            elif a.type == onnx.AttributeProto.FLOAT:
                a.f = draw(st.sampled_from([float("nan"), float("inf"), -1.0, 0.0, 1e30]))
            elif a.type == onnx.AttributeProto.STRING:
                a.s = draw(st.sampled_from([b"", b"numpy", b"explicit", b"none", b"bogus", b"\xff\xfe"]))
            else:
                a.type = draw(st.sampled_from([onnx.AttributeProto.INT, onnx.AttributeProto.STRING, 0]))
    elif kind == "dims":
        vi = pick([v for v in _value_infos(model) if v.type.tensor_type.shape.dim])
        if vi is not None:
            d = pick(list(vi.type.tensor_type.shape.dim))
            choice = draw(st.sampled_from(["value", "param", "huge"]))
            if choice == "param":
                d.dim_param = draw(st.sampled_from(["", "N", "?", "-1"]))
            else:
                d.dim_value = draw(st.sampled_from(HUGE if choice == "huge" else [0, 1, -1, -7, 5]))
    elif kind == "elem_type":
        target = draw(st.sampled_from(["value_info", "initializer"]))
        code = draw(st.integers(0, 30))
        if target == "value_info" and _value_infos(model):
            pick(_value_infos(model)).type.tensor_type.elem_type = code
        elif g.initializer:
            pick(list(g.initializer)).data_type = code
    elif kind == "initializer" and g.initializer:
        t = pick(list(g.initializer))
        choice = draw(st.sampled_from(["truncate", "dims", "huge_dims", "external"]))
        if choice == "truncate" and t.raw_data:
            t.raw_data = t.raw_data[:draw(st.integers(0, len(t.raw_data) - 1))]
        elif choice == "dims" and t.dims:
            t.dims[draw(st.integers(0, len(t.dims) - 1))] = draw(st.sampled_from([0, 2, 3, 1000, -1]))
        elif choice == "huge_dims":
            del t.dims[:]
            t.dims.extend([draw(st.sampled_from(HUGE))] * draw(st.integers(1, 3)))
        elif choice == "external":
            t.data_location = TensorProto.EXTERNAL
            for key, value in (("location", draw(st.sampled_from(["missing.data", "../../etc/passwd", "/dev/zero"]))),
                               ("offset", "0"), ("length", str(draw(st.sampled_from([4, 2**40]))))):
                e = t.external_data.add()
                e.key, e.value = key, value
    elif kind == "edge":
        node = pick([n for n in nodes if n.input])
        if node is not None:
            names = [o for n in nodes for o in n.output] + [i.name for i in g.input] + ["nowhere", ""]
            node.input[draw(st.integers(0, len(node.input) - 1))] = draw(st.sampled_from(names))
    elif kind == "opset":
        o = pick(list(model.opset_import))
        o.version = draw(st.sampled_from([1, 6, 12, 15, 21, 26, 27, 99, -1]))
    elif kind == "nest":
        _nest_in_ifs(model, draw(st.sampled_from([1, 2, 8])))  # three times 8 deep: within protobuf's limit
    elif kind == "delete" and g.node:
        del g.node[draw(st.integers(0, len(g.node) - 1))]
    elif kind == "duplicate" and g.node:
        g.node.append(copy.deepcopy(pick(list(g.node))))
    elif kind == "functions":
        if model.functions and draw(st.booleans()):
            del model.functions[draw(st.integers(0, len(model.functions) - 1))]
        else:
            node = pick([n for n in g.node if n.domain])
            if node is not None:
                node.overload = draw(st.sampled_from(["", "nonexistent", "general"]))


@st.composite
def onnx_structure_case(draw, onnxs):
    model = onnx.ModelProto.FromString(onnxs[draw(st.sampled_from(sorted(onnxs)))])
    for _ in range(draw(st.integers(1, 3))):
        _mutate_onnx(model, draw)
    return {"model.onnx": model.SerializeToString()}


# --- the property -------------------------------------------------------------------------------


def _check(worker: Worker, files: dict[str, bytes], src: str, dst: str, umask: int) -> None:
    report = worker.call(fuzz_worker.run_case, files, src, dst, umask)
    assert report["error"] is None, f"traceback out of cli.main:\n{report['error']}"
    rc, lines = report["rc"], report["stderr"].strip().splitlines()
    if rc == 0:
        rejected = None
        if src.endswith(".xml"):
            rejected = worker.call(fuzz_worker.openvino_reads, files["model.xml"], files["model.bin"])
            if rejected and any(key in rejected for key in DELIBERATE):
                rejected = None
            if rejected and report["load_error"] is None and any(key in rejected for key in VALUE_SHAPE_CHECKS):
                rejected = None
        if report["load_error"] is not None and not rejected:
            raise AssertionError(f"exit 0 but the output does not load: {report['load_error']}")
        # Known gap: an IR whose shapes contradict each other (OpenVINO rejects it at shape
        # inference) can convert to an ONNX model onnxruntime rejects; the reader has no shape inference.
        if report["load_error"] is None:
            assert rejected is None, f"converted an IR that OpenVINO rejects: {rejected}"
        assert report["written"], "exit 0 but nothing written"
        modes = set(report["written"].values())
        assert modes == {0o666 & ~umask}, f"modes {sorted(map(oct, modes))} under umask {umask:o}"
    else:
        assert rc == 2, f"exit {rc}, stderr: {report['stderr'][-2000:]}"
        one_line = len(lines) == 1 and lines[0].startswith("onnx-ext: error: ")
        assert one_line, f"stderr is not one line:\n{report['stderr'][-3000:]}"
        assert report["written"] == {}, f"exit 2 left {sorted(report['written'])}"


def _fuzz(strategy, examples: int, run, factor: int) -> None:
    # No shrinking: a failure is reported as found (its message says what is wrong), in bounded time.
    # The CI run draws the same cases every time (a red CI is a regression, not a new find); the
    # large run (-m slow) draws new ones.
    @settings(max_examples=examples * factor, deadline=None, database=None, suppress_health_check=list(HealthCheck),
              print_blob=True, phases=[Phase.explicit, Phase.generate], derandomize=factor == 1)
    @given(case=strategy, umask=st.sampled_from([0o022, 0o077, 0o002]))
    def inner(case, umask):
        run(case, umask)

    inner()


SIZES = [pytest.param(1, id="ci"), pytest.param(SLOW_FACTOR, id="large", marks=pytest.mark.slow)]


@pytest.fixture(params=SIZES)
def factor(request):
    return request.param


def test_bases_convert(worker, bases):
    """The fuzzed inputs start valid: each converts (exit 0) and passes the property."""
    for xml, weights in bases["ir"].values():
        files = {"model.xml": xml, "model.bin": weights}
        report = worker.call(fuzz_worker.run_case, files, "model.xml", "out.onnx", 0o022)
        assert report["rc"] == 0 and report["load_error"] is None, report
    for data in bases["onnx"].values():
        report = worker.call(fuzz_worker.run_case, {"model.onnx": data}, "model.onnx", "out.xml", 0o022)
        assert report["rc"] == 0 and report["load_error"] is None, report


def test_fuzz_ir_bytes(worker, bases, factor):
    _fuzz(ir_bytes_case(bases["ir"]), CI_EXAMPLES["ir_bytes"],
          lambda files, umask: _check(worker, files, "model.xml", "out.onnx", umask), factor)


def test_fuzz_ir_structure(worker, bases, factor):
    _fuzz(ir_structure_case(bases["ir"]), CI_EXAMPLES["ir_structure"],
          lambda files, umask: _check(worker, files, "model.xml", "out.onnx", umask), factor)


def test_fuzz_onnx_bytes(worker, bases, factor):
    _fuzz(onnx_bytes_case(bases["onnx"]), CI_EXAMPLES["onnx_bytes"],
          lambda files, umask: _check(worker, files, "model.onnx", "out.xml", umask), factor)


def test_fuzz_onnx_structure(worker, bases, factor):
    _fuzz(onnx_structure_case(bases["onnx"]), CI_EXAMPLES["onnx_structure"],
          lambda files, umask: _check(worker, files, "model.onnx", "out.xml", umask), factor)
