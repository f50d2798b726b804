"""The inlined models load in OpenVINO's ONNX reader and give the same results.

Every shared vector of every op: one-node model -> onnx_ext.inline -> OpenVINO's
ONNX frontend -> OpenVINO's CPU plugin at f32, compared with the vector's
expected output. Runs in a worker process (OpenVINO can crash).
"""

import multiprocessing as mp

import numpy as np
import pytest

import onnx_ext
from converters.openvino_tensors import from_ov_tensor, to_ov_tensor
from helpers import assert_same, one_node_model
from vectors import INPUT_NAMES, SHAPE_LIKE, load_vectors, vector_expected, vector_inputs


def _cases():
    for op, names in INPUT_NAMES.items():
        for v in load_vectors(op):
            yield pytest.param(op, names, v, id=f"{op}-{v['test_name']}")


def _attrs(op, vector):
    attrs = dict(vector["attrs"])
    if op == "Range":
        attrs["output_type"] = onnx_ext.types.from_ov(attrs["output_type"]).onnx
    if op == "Broadcast":
        attrs["version"] = vector["version"]
    return attrs


def _evaluate_in_openvino(path: str, feeds: list) -> list:
    # OpenVINO's reference cannot evaluate If with data-dependent shapes
    # ("Evaluation failed on opset8::If"), so the model runs on the CPU plugin at f32.
    import openvino as ov

    core = ov.Core()
    model = core.read_model(path)
    model.reshape({port: ov.PartialShape(list(v.shape)) for port, v in zip(model.inputs, feeds)})
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    request.infer([to_ov_tensor(v) for v in feeds])
    return [from_ov_tensor(request.get_output_tensor(i)) for i in range(len(compiled.outputs))]


@pytest.fixture(scope="module")
def worker():
    ctx = mp.get_context("spawn")
    pool = ctx.Pool(1)
    yield pool
    pool.terminate()


@pytest.mark.parametrize("op, names, vector", list(_cases()))
def test_openvino_reads_inlined_model(worker, tmp_path, op, names, vector):
    inputs = vector_inputs(vector, names)
    expected = vector_expected(vector)
    attrs = _attrs(op, vector)
    # Shape-like inputs are constants, as in real models: OpenVINO's CPU plugin
    # needs static ranks, which a runtime axis or begin vector hides from it.
    const = [name in SHAPE_LIKE for name in names[: len(inputs)]]
    model = one_node_model(op, inputs, attrs, const=const, out_type=expected.dtype, out_rank=expected.ndim)
    path = tmp_path / "inlined.onnx"
    path.write_bytes(onnx_ext.inline(model).SerializeToString())
    feeds = [np.asarray(v) for v, c in zip(inputs, const) if v is not None and not c]
    (got,) = worker.apply(_evaluate_in_openvino, (str(path), feeds))
    ulps = 1 if expected.dtype.name == "bfloat16" else 0
    if vector["values_source"] == "transcribed" and expected.dtype.kind == "f":
        ulps = 4  # transcribed decimals (0.2, 0.4, ...) are a few ulps from the exact start + i*step
    assert_same(got, expected, "OpenVINO on the inlined model", ulps=ulps)


def _run_dynamic_in_openvino(path: str, feeds: dict) -> list:
    # As a user would: the model's own (dynamic) input shapes, the CPU plugin at f32.
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled(feeds)
    return [result[out] for out in compiled.outputs]


def _gather_runtime_axis_model(rank: int, index_rank: int, batch_dims: int):
    """README's example 1, generalised: data of a known rank with symbolic dims, runtime axis."""
    from onnx import TensorProto, helper

    node = onnx_ext.make_node("Gather", ["data", "indices", "axis"], ["out"], batch_dims=batch_dims)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [f"D{i}" for i in range(rank)]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [f"I{i}" for i in range(index_rank)]),
         helper.make_tensor_value_info("axis", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)])
    return onnx_ext.attach_functions(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))


def test_openvino_cpu_runs_readme_example_1_inlined(worker, tmp_path):
    model = _gather_runtime_axis_model(2, 1, 0)
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 4  # ["N", 4], as in the README
    path = tmp_path / "readme.onnx"
    path.write_bytes(onnx_ext.inline(model).SerializeToString())
    feeds = {"data": np.arange(12, dtype=np.float32).reshape(3, 4), "indices": np.array([2, -1, 7]),
             "axis": np.array(0)}
    (got,) = worker.apply(_run_dynamic_in_openvino, (str(path), feeds))
    assert_same(got, onnx_ext.run(model, feeds)[0], "OpenVINO CPU on README example 1")
    assert_same(got, np.array([[8, 9, 10, 11], [8, 9, 10, 11], [0, 0, 0, 0]], np.float32), "README's values")


@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_openvino_cpu_runs_inlined_gather_with_runtime_axis(worker, tmp_path, rank):
    # Every axis (negative too), indices in and out of range, batch_dims 0 and 1.
    rng = np.random.default_rng(rank)
    data = rng.standard_normal((2, 3, 4, 3)[:rank]).astype(np.float32)
    for batch_dims in (0, 1) if rank > 1 else (0,):
        indices = rng.integers(-5, 6, (2, 3)[: batch_dims + 1] if batch_dims else (2, 3))
        model = _gather_runtime_axis_model(rank, indices.ndim, batch_dims)
        path = tmp_path / f"gather_{rank}_{batch_dims}.onnx"
        path.write_bytes(onnx_ext.inline(model).SerializeToString())
        for axis in range(batch_dims - rank, rank):
            if axis % rank < batch_dims:
                continue
            if batch_dims:
                indices = rng.integers(-5, 6, (data.shape[0], 3))
            feeds = {"data": data, "indices": indices, "axis": np.array(axis)}
            (got,) = worker.apply(_run_dynamic_in_openvino, (str(path), feeds))
            assert_same(got, onnx_ext.run(model, feeds)[0], f"rank {rank}, batch_dims {batch_dims}, axis {axis}")


# --- inlined bodies on the CPU plugin with dynamic input dims (no reshape to static) ------------------

def _dynamic_cases():
    """(id, op, inputs, attrs, const, expected): representative cases of the seed ops. Shape-like inputs
    are constants (the plugin needs static ranks); the other inputs keep their symbolic dims."""
    from onnx_ext.ops.broadcast import broadcast_reference
    from onnx_ext.ops.gather import gather_reference
    from onnx_ext.ops.range.reference import range_reference
    from onnx_ext.ops.strided_slice import strided_slice_reference

    rng = np.random.default_rng(7)
    f32 = rng.standard_normal((3, 1)).astype(np.float32)
    u8 = rng.integers(0, 255, (3, 1), dtype=np.uint8)
    for name, start, stop, step, et in [("f32", 0.5, 3.1, 0.25, np.float32), ("i64", 10, -7, -3, np.int64),
                                        ("i32_from_f32", -1.5, 7.2, 1.7, np.int32)]:
        args = [np.array(v, np.float32 if name.endswith("f32") else np.int64) for v in (start, stop, step)]
        otype = onnx_ext.types.from_numpy(et).onnx
        yield (f"Range-4-{name}", "Range", args, {"output_type": otype}, [False] * 3,
               range_reference(*args, output_type=otype))
    # a constant small step: SmallStepRange (Clip, Range; with start at run time, Min and Add too)
    for start, stop, step, const_start in [(0, 9, 1, True), (10, -7, -3, True), (5, 12, 2, False), (3, -4, -1, False)]:
        args = [np.array(v, np.int64) for v in (start, stop, step)]
        yield (f"Range-4-i64-constant-step{step}-start-{'const' if const_start else 'runtime'}", "Range", args,
               {"output_type": 7}, [const_start, False, True], range_reference(*args, output_type=7))
    broadcasts = [("numpy", [2, 3, 4], None, -1), ("explicit", [2, 3, 4], [1, 2], -1), ("none", [3, 2], [0, 1], -1),
                  ("bidirectional", [2, 1, 4], None, -1), ("pdpd", [2, 3, 4], None, 1), ("pdpd", [2, 3, 4], None, -1)]
    for version in (1, 3):
        for mode, target, axes, axis in broadcasts:
            if mode == "bidirectional" and version == 1:
                continue
            for data in (f32, u8) if version == 3 else (f32,):  # f32: the Expand bodies; u8: the Gathers (_any)
                ins = [data, np.array(target, np.int64)] + ([np.array(axes, np.int64)] if axes else [])
                attrs = {"mode": mode, "version": version} | ({"axis": axis} if mode == "pdpd" else {})
                yield (f"Broadcast-{version}-{mode}-axis{axis}-{data.dtype}", "Broadcast", ins, attrs,
                       [False] + [True] * (len(ins) - 1), broadcast_reference(*ins, **attrs))
    data = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for batch_dims, axis, indices in [(0, 1, np.array([[2, -1], [0, 5]])), (1, 2, np.array([[3, -4], [0, 1]]))]:
        ins = [data, indices, np.array(axis)]
        yield (f"Gather-8-batch_dims{batch_dims}", "Gather", ins, {"batch_dims": batch_dims}, [False, False, True],
               gather_reference(*ins, batch_dims=batch_dims))
    masks = {"begin_mask": [0, 1, 0], "end_mask": [0, 0, 1], "new_axis_mask": [0, 0, 0],
             "shrink_axis_mask": [1, 0, 0], "ellipsis_mask": [0, 0, 0]}
    ins = [data, np.array([-1, 0, 3]), np.array([2, -1, 0]), np.array([1, 1, -2])]
    yield ("StridedSlice-1", "StridedSlice", ins, masks, [False, True, True, True],
           strided_slice_reference(*ins, **masks))


@pytest.mark.parametrize("case", list(_dynamic_cases()), ids=lambda c: c[0])
def test_openvino_cpu_runs_inlined_body_with_dynamic_dims(worker, tmp_path, case):
    # The vectors' test above reshapes the inputs to static shapes first; a user's model keeps
    # symbolic dims, under which OpenVINO's shape-subgraph passes rewrite the bodies differently.
    _, op, inputs, attrs, const, expected = case
    model = one_node_model(op, inputs, attrs, const=const, out_type=expected.dtype, out_rank=expected.ndim)
    assert not any(d.HasField("dim_value") for i in model.graph.input for d in i.type.tensor_type.shape.dim)
    path = tmp_path / "inlined.onnx"
    path.write_bytes(onnx_ext.inline(model).SerializeToString())
    feeds = {f"in{i}": v for i, (v, c) in enumerate(zip(inputs, const)) if not c}
    (got,) = worker.apply(_run_dynamic_in_openvino, (str(path), feeds))
    assert_same(got, expected, "OpenVINO CPU on the inlined model, dynamic dims")


# --- the CPU plugin's first inference at a new shape (docs/spec-corrections.md) ------------------------------

def _first_inference_per_shape(path: str, feeds: list) -> list:
    # One compiled model, each feed at a new input shape run once: the inference the plugin got wrong after
    # an If (Range's body had one) followed by Unsqueeze and an Add of an Expand.
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return [[np.array(v, copy=True) for v in compiled(f).values()] for f in feeds]


def test_openvino_cpu_first_inference_of_inlined_embedding_block(worker, tmp_path):
    # examples/embedding_block.xml with --inline: Range(0, seq, 1) -> position ids, Broadcast-3's Expand of a
    # bias. Range's constant start and step choose its If-free body (SmallStepRange).
    from pathlib import Path

    import converters

    model = converters.ir_to_onnx(Path(__file__).resolve().parents[1] / "examples" / "embedding_block.xml",
                                  inline=True)
    assert "Range" in [n.op_type for n in model.graph.node]  # in the graph, not in an If's branch
    path = tmp_path / "embedding_block.onnx"
    path.write_bytes(model.SerializeToString())
    rng = np.random.default_rng(0)
    feeds = [{"input_ids": rng.integers(0, 64, shape)} for shape in [(1, 5), (2, 7), (3, 4), (1, 9)]]
    for feed, got in zip(feeds, worker.apply(_first_inference_per_shape, (str(path), feeds))):
        want = onnx_ext.run(model, feed)
        assert len(got) == len(want) == 2
        for g, w in zip(got, want):
            assert_same(g, w, f"CPU plugin's first inference at input shape {feed['input_ids'].shape}")
