"""The scenarios of bench_ops.py: each op at a realistic size, its bounds / target shape / indices constant
when converting or runtime inputs, as (a) an OpenVINO model holding the op, (b) the nearest native ONNX model
and, for Range, (d) ONNX Range-11's function body. Needs openvino."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper, numpy_helper
from openvino import opset1, opset3, opset4, opset8

OPSET = 21
ORT_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
             np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.int64): TensorProto.INT64,
             np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int16): TensorProto.INT16,
             np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8,
             np.dtype(np.uint16): TensorProto.UINT16, np.dtype(np.uint32): TensorProto.UINT32,
             np.dtype(np.uint64): TensorProto.UINT64, np.dtype(np.bool_): TensorProto.BOOL}


# --- scenarios ------------------------------------------------------------------------------


@dataclass
class Scenario:
    op: str
    name: str  # short id, unique with `const`
    what: str  # shapes, for the table
    const: bool  # bounds / target shape / indices constant when converting
    ov_model: Callable[[], ov.Model]  # holds the op; runtime inputs are Parameters named as in `feeds`
    native: Callable[[], onnx.ModelProto] | None  # the nearest native ONNX model, same input names (None: no
    # ONNX op does the job: OpenVINO's CPU plugin on its own op is the baseline)
    feeds: dict[str, np.ndarray]
    range11: Callable[[], onnx.ModelProto] | None = None  # Range-11's function body (Loop)
    out_elements: int = 0
    note: str = ""
    #: Output dtype not returned by onnxruntime's Python API (bf16): compare as raw bits.
    raw_output: bool = False
    tags: tuple[str, ...] = field(default_factory=tuple)
    #: (max ratio, text) when the issue sets one other than target_of's; ``vs``: what the ratio is taken
    #: against, "native" or "openvino" (issue 18: each new op against OpenVINO's CPU plugin on its own op).
    target: tuple[float, str] | None = None
    vs: str = "native"
    #: The model OpenVINO's CPU plugin runs for (c) when not ``ov_model`` (the op with its run-time inputs
    #: as constants, where the plugin cannot run the run-time form).
    ov_baseline: Callable[[], ov.Model] | None = None
    #: Float outputs agree within this fraction of their largest magnitude (transforms sum many terms: their
    #: rounding errors scale with it), instead of rtol = atol = 1e-3.
    of_largest: float | None = None
    #: Compare (a) with (b) and (c) (False: they draw other random numbers by design).
    compare: bool = True
    #: Rows of (a)'s and (c)'s [R, 6] outputs (class, score, box) whose scores are closer than this may come in
    #: either order: OpenVINO's MulticlassNms sorts take such scores as equal, which orders nothing (the CPU
    #: plugin's order of two scores 1.2e-7 apart changes with the thread count; docs/spec-corrections.md).
    ties_within: float | None = None

    @property
    def key(self) -> str:
        return f"{self.op}/{self.name}/{'const' if self.const else 'runtime'}"


def _param(name, shape, dtype):
    p = opset8.parameter(shape, dtype, name=name)
    p.output(0).get_tensor().set_names({name})
    return p


def _model(node, params, out="y"):
    node.output(0).get_tensor().set_names({out})
    return ov.Model([node], params, "bench")


def _vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, ORT_TYPES[np.dtype(dtype)] if dtype is not None else 0, shape)


def _onnx_model(nodes, inputs, inits=(), out_type=TensorProto.FLOAT):
    graph = helper.make_graph(nodes, "native", inputs, [helper.make_tensor_value_info("y", out_type, None)],
                              initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=10)


def _i64(name, values):
    return numpy_helper.from_array(np.asarray(values, np.int64), name)


def _dims(shape, dynamic):
    """ONNX dims of an input: the first `dynamic` ones symbolic (a batch dim, ...)."""
    return [f"d{i}" if i < dynamic else d for i, d in enumerate(shape)]


def _ov_shape(shape, dynamic):
    return [-1 if i < dynamic else d for i, d in enumerate(shape)]


RNG = np.random.default_rng(0)


def gather_scenarios():
    out = []

    def add(name, what, data_shape, idx_shape, axis, batch_dims=0, dynamic=0, oor=False, consts=(True, False),
            const_static=False, zero_row0=False, const_data=False):
        data = RNG.standard_normal(data_shape).astype(np.float32)
        if zero_row0:  # a padding row of zeros at index 0, as nn.Embedding(padding_idx=0) keeps it
            data[(slice(None),) * axis + (0,)] = 0
        n = data_shape[axis]
        idx = RNG.integers(-n, n, idx_shape).astype(np.int64)
        if oor:
            flat = idx.reshape(-1)
            flat[::10] = n + 7  # 10% out of range
            flat[5::20] = -n - 3
        safe = np.where((idx >= -n) & (idx < n), idx, 0)
        out_elems = int(np.prod(data_shape[:axis]) * idx.size / max(1, np.prod(idx_shape[:batch_dims])) *
                        np.prod(data_shape[axis + 1:]))
        for const in consts:
            dyn = 0 if (const and const_static) else dynamic

            def ov_model(const=const, idx=idx, dynamic=dyn, data=data):
                d = opset8.constant(data) if const_data else _param("data", _ov_shape(data_shape, dynamic), np.float32)
                params = [] if const_data else [d]
                if const:
                    i = opset8.constant(idx)
                else:
                    i = _param("indices", _ov_shape(idx_shape, dynamic and batch_dims), np.int64)
                    params.append(i)
                return _model(opset8.gather(d, i, opset8.constant(np.int64(axis)), batch_dims), params)

            def native(const=const, idx=idx, safe=safe, dynamic=dyn, data=data):
                ins = [] if const_data else [_vi("data", np.float32, _dims(data_shape, dynamic))]
                inits = [numpy_helper.from_array(data, "data")] if const_data else []
                iname = "indices"
                if const:
                    inits.append(numpy_helper.from_array(safe if oor else idx, "indices"))
                else:
                    ins.append(_vi("indices", np.int64, _dims(idx_shape, dynamic and batch_dims)))
                if batch_dims == 0:
                    nodes = [helper.make_node("Gather", ["data", iname], ["y"], axis=axis)]
                else:
                    assert axis == batch_dims
                    inits.append(_i64("minus1", [-1]))
                    nodes = [helper.make_node("Unsqueeze", [iname, "minus1"], ["idx1"]),
                             helper.make_node("GatherND", ["data", "idx1"], ["y"], batch_dims=batch_dims)]
                return _onnx_model(nodes, ins, inits)

            feeds = {} if const_data else {"data": data}
            if not const:
                feeds["indices"] = idx
            note = "native runs the same shape with in-range indices (ONNX Gather raises out of range)" if oor else ""
            sc = Scenario("Gather", name, what, const, ov_model, native, feeds, out_elements=out_elems, note=note)
            if oor:
                sc.native_feeds = {**feeds, "indices": safe} if not const else feeds
            out.append(sc)

    add("embedding", "table [32000,768] f32, ids [?,512]=[8,512], axis 0", [32000, 768], [8, 512], 0)
    add("embedding-oor", "as embedding, 10% of ids out of range", [32000, 768], [8, 512], 0, oor=True,
        consts=(False,))
    add("embedding-oor-pad0", "as embedding-oor, row 0 a zero padding row (out-of-range rows zeroed by a Mul)",
        [32000, 768], [8, 512], 0, oor=True, consts=(False,), zero_row0=True)
    add("embedding-table", "as embedding, the table a constant (an LLM's: no check, no If)", [32000, 768], [8, 512], 0,
        consts=(False,), const_data=True)
    add("embedding-table-step", "a constant table [32000,768] f32, one id (a decoding step)", [32000, 768], [1, 1], 0,
        consts=(False,), const_data=True)
    add("channels", "[16,256,28,28] f32, 128 indices, axis 1", [16, 256, 28, 28], [128], 1)
    add("batched", "[?,512,768]=[16,..] f32 (const: [16,512,768]), ids [16,128], axis 1, batch_dims 1",
        [16, 512, 768], [16, 128], 1, batch_dims=1, dynamic=1, const_static=True)
    add("small", "[1000,16] f32, ids [64], axis 0", [1000, 16], [64], 0)
    return out


def strided_slice_scenarios():
    out = []
    big, small_ = 2**63 - 1, -(2**63)

    def add(name, what, data_shape, begin, end, stride, masks, native_slice, reshape=None, unsqueeze=None, dynamic=0,
            consts=(True, False)):
        """native_slice: (axes, starts, ends, steps) of the equivalent ONNX Slice; reshape: its output
        reshaped to this (0 copies a dim) for shrunk axes; unsqueeze: new axes inserted in the
        data first (then the Slice's axes count them)."""
        data = RNG.standard_normal(data_shape).astype(np.float32)
        begin, end, stride = (np.array(v, np.int64) for v in (begin, end, stride))
        from onnx_ext.ops.strided_slice import strided_slice_reference
        ref = strided_slice_reference(data, begin, end, stride, **masks)
        axes, starts, ends, steps = (np.array(v, np.int64) for v in native_slice)
        for const in consts:
            def ov_model(const=const):
                d = _param("data", _ov_shape(data_shape, dynamic), np.float32)
                params = [d]
                vals = []
                for nm, v in (("begin", begin), ("end", end), ("stride", stride)):
                    if const:
                        vals.append(opset1.constant(v))
                    else:
                        p = _param(nm, [len(v)], np.int64)
                        params.append(p)
                        vals.append(p)
                m = {k: list(v) for k, v in masks.items()}
                node = opset1.strided_slice(d, *vals, m["begin_mask"], m["end_mask"], m.get("new_axis_mask", []),
                                            m.get("shrink_axis_mask", []), m.get("ellipsis_mask", []))
                return _model(node, params)

            def native(const=const):
                ins = [_vi("data", np.float32, _dims(data_shape, dynamic))]
                inits = [_i64("axes", axes)]
                if const:
                    inits += [_i64("starts", starts), _i64("ends", ends), _i64("steps", steps)]
                else:
                    ins += [_vi(n, np.int64, [len(axes)]) for n in ("starts", "ends", "steps")]
                target = "y" if reshape is None else "sliced"
                nodes, src = [], "data"
                if unsqueeze is not None:
                    inits.append(_i64("new_axes", unsqueeze))
                    nodes.append(helper.make_node("Unsqueeze", ["data", "new_axes"], ["data_u"]))
                    src = "data_u"
                nodes.append(helper.make_node("Slice", [src, "starts", "ends", "axes", "steps"], [target]))
                if reshape is not None:
                    inits.append(_i64("shape", reshape))
                    nodes.append(helper.make_node("Reshape", ["sliced", "shape"], ["y"]))
                return _onnx_model(nodes, ins, inits)

            feeds = {"data": data}
            native_feeds = {"data": data}
            if not const:
                feeds.update(begin=begin, end=end, stride=stride)
                native_feeds.update(starts=starts, ends=ends, steps=steps)
            sc = Scenario("StridedSlice", name, what, const, ov_model, native, feeds, out_elements=ref.size)
            sc.native_feeds = native_feeds
            sc.compare_native = True
            out.append(sc)

    add("crop", "[8,64,112,112] f32 -> [:, :, 8:-8, 8:-8]", [8, 64, 112, 112], [0, 0, 8, 8], [0, 0, -8, -8],
        [1, 1, 1, 1], dict(begin_mask=[1, 1, 0, 0], end_mask=[1, 1, 0, 0]), ([2, 3], [8, 8], [-8, -8], [1, 1]))
    add("every-2nd-token", "[?,512,768]=[8,..] f32 -> [:, ::2]", [8, 512, 768], [0, 0], [0, 0], [1, 2],
        dict(begin_mask=[1, 1], end_mask=[1, 1]), ([1], [0], [big], [2]), dynamic=1)
    add("reverse-newaxis", "[8,512,768] f32 -> [:, None, ::-1]", [8, 512, 768], [0, 0, 0], [0, 0, 0], [1, 1, -1],
        dict(begin_mask=[1, 0, 1], end_mask=[1, 0, 1], new_axis_mask=[0, 1, 0]), ([2], [-1], [small_], [-1]),
        unsqueeze=[1])
    add("last-token", "[?,512,768]=[32,..] f32 -> [:, -1] (shrink)", [32, 512, 768], [0, -1], [0, 0], [1, 1],
        dict(begin_mask=[1, 0], end_mask=[1, 1], shrink_axis_mask=[0, 1]), ([1], [-1], [big], [1]),
        reshape=[0, 768], dynamic=1)
    add("small", "[32,64] f32 -> [1:, ::2]", [32, 64], [1, 0], [0, 0], [1, 2], dict(begin_mask=[0, 1], end_mask=[1, 1]),
        ([0, 1], [1, 0], [big, big], [1, 2]))
    return out


def broadcast_scenarios():
    out = []

    def add(name, what, data_shape, target, mode="numpy", axes=None, version=3, consts=(True, False), dynamic=0):
        data = RNG.standard_normal(data_shape).astype(np.float32)
        target = np.array(target, np.int64)
        for const in consts:
            def ov_model(const=const):
                d = _param("data", _ov_shape(data_shape, dynamic), np.float32)
                params = [d]
                if const:
                    t = opset3.constant(target)
                else:
                    t = _param("target_shape", [len(target)], np.int64)
                    params.append(t)
                args = [d, t] + ([opset3.constant(np.array(axes, np.int64))] if axes is not None else [])
                spec = mode.upper() if mode != "none" else "EXPLICIT"
                node = (opset3 if version == 3 else opset1).broadcast(*args, broadcast_spec=spec)
                return _model(node, params)

            def native(const=const):
                ins = [_vi("data", np.float32, _dims(data_shape, dynamic))]
                inits, nodes = [], []
                if const:
                    inits.append(_i64("target_shape", target))
                else:
                    ins.append(_vi("target_shape", np.int64, [len(target)]))
                src = "data"
                if axes is not None:  # explicit: data dims moved to their axes, then Expand
                    shape = [1] * len(target)
                    for i, a in enumerate(axes):
                        shape[a] = data_shape[i]
                    inits.append(_i64("dshape", shape))
                    nodes.append(helper.make_node("Reshape", ["data", "dshape"], ["data_r"]))
                    src = "data_r"
                nodes.append(helper.make_node("Expand", [src, "target_shape"], ["y"]))
                return _onnx_model(nodes, ins, inits)

            feeds = {"data": data}
            if not const:
                feeds["target_shape"] = target
            out.append(Scenario("Broadcast", name, what, const, ov_model, native, feeds,
                                out_elements=int(np.prod(target))))

    add("attention-mask", "[?,1,1,256]=[4,..] -> [4,12,256,256] numpy", [4, 1, 1, 256], [4, 12, 256, 256], dynamic=1)
    add("bias", "[1,64,1,1] -> [8,64,56,56] numpy", [1, 64, 1, 1], [8, 64, 56, 56])
    add("explicit", "[64] -> [8,64,56,56] explicit axes [1]", [64], [8, 64, 56, 56], mode="explicit", axes=[1])
    add("small", "[1,32] -> [32,32] numpy", [1, 32], [32, 32])
    return out


def _range11_model(out_dtype, runtime: bool, start, stop, step):
    """Range-11's function body (a Loop) as a graph: inputs start/limit/delta."""
    body = onnx.defs.get_schema("Range", 11).function_body
    t = ORT_TYPES[np.dtype(out_dtype)]
    scal = [np.asarray(v, out_dtype) for v in (start, stop, step)]
    names = ["start", "limit", "delta"]
    if runtime:
        ins = [helper.make_tensor_value_info(n, t, []) for n in names]
        inits = []
    else:
        ins = []
        inits = [numpy_helper.from_array(v, n) for n, v in zip(names, scal)]
    nodes = list(body.node)
    graph = helper.make_graph(nodes, "range11", ins, [helper.make_tensor_value_info("output", t, None)],
                              initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=7)
    # rename output to y
    for node in m.graph.node:
        for i, o in enumerate(node.output):
            if o == "output":
                node.output[i] = "y"
    m.graph.output[0].name = "y"
    return m


RANGE_TYPES = {  # output type -> (start, stop, step) at the largest size that type holds, up to 1M
    "f32": (np.float32, 0.0, 100000.0, 0.1),
    "f64": (np.float64, 0.0, 100000.0, 0.1),
    "f16": (np.float16, 0.0, 1000.0, 0.001),  # values past 2048 lose integers, still 1M elements
    "i64": (np.int64, 0, 1_000_000, 1),
    "i32": (np.int32, -500_000, 1_500_000, 2),
    "i16": (np.int16, -32768, 32767, 1),
    "u8": (np.uint8, 0, 255, 1),
}


def range_scenarios(types=None):
    out = []
    ort_native = {"f32", "f64", "i64", "i32", "i16"}  # onnxruntime's Range kernels

    def add(name, what, ot, start, stop, step, consts=(True, False), with_range11=False):
        dtype = RANGE_TYPES[ot][0] if ot in RANGE_TYPES else None
        in_dtype = np.float32 if np.dtype(dtype).kind == "f" else np.int64
        vals = [np.array(v, in_dtype) for v in (start, stop, step)]
        from onnx_ext.ops.range import range_reference
        from onnx_ext.types import from_numpy
        ref = range_reference(*vals, output_type=from_numpy(np.dtype(dtype)).onnx)
        for const in consts:
            # const: all inputs constant (True), none (False), or per input (start, stop, step)
            per = (const,) * 3 if isinstance(const, bool) else const
            const = all(per)

            def ov_model(per=per):
                params, args = [], []
                for nm, v, c in zip(("start", "stop", "step"), vals, per):
                    if c:
                        args.append(opset4.constant(v))
                    else:
                        p = _param(nm, [], in_dtype)
                        params.append(p)
                        args.append(p)
                from openvino.utils.node_factory import NodeFactory

                node = NodeFactory("opset4").create("Range", [a.output(0) if hasattr(a, "output") else a for a in args],
                                                    {"output_type": ot})
                return _model(node, params)

            def native(per=per):
                # onnxruntime's Range in the output type (accumulates), or in the nearest type it
                # has a kernel for and a Cast.
                run_t = dtype if ot in ort_native else (np.float32 if np.dtype(dtype).kind == "f" else np.int32)
                ins, inits, nodes = [], [], []
                for nm, v, c in zip(("start", "stop", "step"), vals, per):
                    if c:
                        inits.append(numpy_helper.from_array(np.array(v, in_dtype), nm))
                    else:
                        ins.append(_vi(nm, in_dtype, []))
                    nodes.append(helper.make_node("Cast", [nm], [nm + "_t"], to=ORT_TYPES[np.dtype(run_t)]))
                r = "y" if run_t == dtype else "r"
                nodes.append(helper.make_node("Range", ["start_t", "stop_t", "step_t"], [r]))
                if r != "y":
                    nodes.append(helper.make_node("Cast", ["r"], ["y"], to=ORT_TYPES[np.dtype(dtype)]))
                return _onnx_model(nodes, ins, inits, out_type=ORT_TYPES[np.dtype(dtype)])

            feeds = {nm: v for nm, v, c in zip(("start", "stop", "step"), vals, per) if not c}
            r11 = None
            if with_range11:
                r11 = functools.partial(_range11_model, dtype, not const, *[v.astype(dtype) for v in vals])
            sc = Scenario("Range", name, what, const, ov_model, native, feeds, range11=r11, out_elements=ref.size)
            sc.reference = ref
            if not const and with_range11:
                sc.range11_feeds = {"start": vals[0].astype(dtype), "limit": vals[1].astype(dtype),
                                    "delta": vals[2].astype(dtype)}
            out.append(sc)

    for ot, (dt, s, e, st) in RANGE_TYPES.items():
        if types and ot not in types:
            continue
        n = len(np.arange(s, e, st)) if np.dtype(dt).kind != "f" else int(np.ceil((e - s) / st))
        add(f"{ot}", f"{ot}, {n} elements ({s}, {e}, {st})", ot, s, e, st, with_range11=ot in ("f32", "i64"))
    add("position-ids", "i64 (0, 512, 1): position ids", "i64", 0, 512, 1)
    add("small-f32", "f32 (0, 100, 0.1): 1k elements", "f32", 0.0, 100.0, 0.1)
    add("small-f32-offset", "f32 (5, 105, 0.1): 1k elements, start not 0", "f32", 5.0, 105.0, 0.1, consts=(False,))
    # constant start 0 and step, runtime stop (arange(n) as exporters write it)
    for ot in ("f32", "f64"):
        if not types or ot in types:
            add(f"{ot}-arange", f"{ot} (0, n, 1.0), n = 1M at run time; start and step constant", ot, 0.0,
                1_000_000.0, 1.0, consts=((True, False, True),))
    # int64 arange(n) (position ids): constant start and step, runtime stop: the If-free SmallStepRange
    if not types or "i64" in types:
        add("position-ids-arange", "i64 (0, n, 1), n = 512 at run time; start and step constant", "i64", 0, 512, 1,
            consts=((True, False, True),))
        add("i64-arange", "i64 (0, n, 1), n = 1M at run time; start and step constant", "i64", 0, 1_000_000, 1,
            consts=((True, False, True),))
    # start not 0: the general float path (i * step + start, one pass more than from 0)
    for ot in ("f32", "f64"):
        if not types or ot in types:
            add(f"{ot}-offset", f"{ot}, 1M elements (-50000, 50000, 0.1): start not 0", ot, -50000.0, 50000.0, 0.1,
                consts=(False,))
    return out


SCENARIOS = {"gather": gather_scenarios, "strided_slice": strided_slice_scenarios, "broadcast": broadcast_scenarios,
             "range": range_scenarios}
