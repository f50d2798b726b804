"""converters/ir_to_onnx/fusions.py on a one-layer attention block written as the IR's translation writes it
(q/k/v MatMuls, RoPE after the heads' Transpose, a Concat cache, KV heads repeated by Unsqueeze/Expand/Reshape,
Softmax(Q K^T * scale + mask) V): fused into RotaryEmbedding, GroupQueryAttention and one merged MatMul, and
equal to the unfused graph in onnxruntime (a left-padded prompt, then a step with a past). No LLM export needed:
this runs in the default environment; tests/test_llm.py checks whole models against OpenVINO."""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from converters.ir_to_onnx.fusions import fuse_for_onnxruntime

H, KV, D = 4, 2, 8
HIDDEN = H * D


def _attention_block(d: int = D, cache_axis: int = -2) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = {"wq": rng.standard_normal((HIDDEN, H * d)), "wk": rng.standard_normal((HIDDEN, KV * d)),
             "wv": rng.standard_normal((HIDDEN, KV * d)), "wo": rng.standard_normal((H * d, HIDDEN)),
             "inv_freq": (1e4 ** -(np.arange(d // 2) * 2 / d)).reshape(1, d // 2, 1)}
    inits = [numpy_helper.from_array(v.astype(np.float32) * (0.3 if k.startswith("w") else 1), k)
             for k, v in inits.items()]
    ints = {"q_shape": [0, 0, H, d], "kv_shape": [0, 0, KV, d], "rep": [1, 1, H // KV, 1, 1], "rep_shape": [0, H, -1, d],
            "out_shape": [0, 0, H * d], "one": [1], "two": [2], "half": [d // 2], "zero": [0], "big": [2 ** 62],
            "axis3": [3], "step": [1]}
    inits += [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in ints.items()]
    inits += [numpy_helper.from_array(np.array(-1, np.float32), "minus_one"),
              numpy_helper.from_array(np.array(d ** -0.5, np.float32), "scale")]
    n = helper.make_node
    nodes = [n("MatMul", ["x", "wq"], ["q3"]), n("MatMul", ["x", "wk"], ["k3"]), n("MatMul", ["x", "wv"], ["v3"]),
             n("Cast", ["position_ids"], ["pos_f"], to=TensorProto.FLOAT), n("Unsqueeze", ["pos_f", "one"], ["pos_u"]),
             n("MatMul", ["inv_freq", "pos_u"], ["freqs_t"]), n("Transpose", ["freqs_t"], ["freqs"], perm=[0, 2, 1]),
             n("Concat", ["freqs", "freqs"], ["emb"], axis=-1), n("Cos", ["emb"], ["cos0"]), n("Sin", ["emb"], ["sin0"]),
             n("Unsqueeze", ["cos0", "one"], ["cos"]), n("Unsqueeze", ["sin0", "one"], ["sin"])]
    for name, shape in (("q", "q_shape"), ("k", "kv_shape"), ("v", "kv_shape")):
        nodes += [n("Reshape", [f"{name}3", shape], [f"{name}4"]),
                  n("Transpose", [f"{name}4"], [f"{name}t"], perm=[0, 2, 1, 3])]
    for name in ("q", "k"):  # rotate_half, as OpenVINO writes PyTorch's
        nodes += [n("Slice", [f"{name}t", "half", "big", "axis3", "step"], [f"{name}_hi"]),
                  n("Mul", [f"{name}_hi", "minus_one"], [f"{name}_neg"]),
                  n("Slice", [f"{name}t", "zero", "half", "axis3", "step"], [f"{name}_lo"]),
                  n("Concat", [f"{name}_neg", f"{name}_lo"], [f"{name}_rot"], axis=-1),
                  n("Mul", [f"{name}t", "cos"], [f"{name}_c"]), n("Mul", [f"{name}_rot", "sin"], [f"{name}_s"]),
                  n("Add", [f"{name}_c", f"{name}_s"], [f"{name}_r"])]
    for name, new in (("key", "k_r"), ("value", "vt")):
        nodes += [n("Concat", [f"past_key_values.0.{name}", new], [f"present.0.{name}"], axis=cache_axis),
                  n("Unsqueeze", [f"present.0.{name}", "two"], [f"{name}_u"]),
                  n("Expand", [f"{name}_u", "rep"], [f"{name}_e"]),
                  n("Reshape", [f"{name}_e", "rep_shape"], [f"{name}_all"])]
    nodes += [n("Transpose", ["key_all"], ["key_t"], perm=[0, 1, 3, 2]), n("MatMul", ["q_r", "key_t"], ["qk"]),
              n("Mul", ["qk", "scale"], ["qk_s"]), n("Add", ["qk_s", "bias"], ["scores"]),
              n("Softmax", ["scores"], ["probs"], axis=-1), n("MatMul", ["probs", "value_all"], ["att"]),
              n("Transpose", ["att"], ["att_t"], perm=[0, 2, 1, 3]), n("Reshape", ["att_t", "out_shape"], ["att3"]),
              n("MatMul", ["att3", "wo"], ["y"])]
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    inputs = [helper.make_tensor_value_info("input_ids", i64, ["B", "S"]),
              helper.make_tensor_value_info("attention_mask", i64, ["B", "T"]),
              helper.make_tensor_value_info("position_ids", i64, ["B", "S"]),
              helper.make_tensor_value_info("x", f32, ["B", "S", HIDDEN]),
              helper.make_tensor_value_info("bias", f32, ["B", 1, "S", "T"]),
              helper.make_tensor_value_info("past_key_values.0.key", f32, ["B", KV, "P", d]),
              helper.make_tensor_value_info("past_key_values.0.value", f32, ["B", KV, "P", d])]
    outputs = [helper.make_tensor_value_info("y", f32, None),
               helper.make_tensor_value_info("present.0.key", f32, ["B", KV, "T", d]),
               helper.make_tensor_value_info("present.0.value", f32, ["B", KV, "T", d])]
    graph = helper.make_graph(nodes, "attention", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def _feeds(batch: int, past: int, new: int, pad: int, rng, d: int = D) -> dict:
    total = past + new
    mask = np.ones((batch, total), np.int64)
    mask[0, :pad] = 0  # row 0 left-padded
    positions = np.maximum(np.cumsum(mask, axis=1) - 1, 0)[:, past:]
    allowed = (np.arange(total)[None, :] <= np.arange(past, total)[:, None])[None] & (mask[:, None, :] == 1)
    return {"input_ids": np.zeros((batch, new), np.int64), "attention_mask": mask, "position_ids": positions,
            "x": rng.standard_normal((batch, new, HIDDEN)).astype(np.float32),
            "bias": np.where(allowed, 0, -65504).astype(np.float32)[:, None],
            "past_key_values.0.key": rng.standard_normal((batch, KV, past, d)).astype(np.float32),
            "past_key_values.0.value": rng.standard_normal((batch, KV, past, d)).astype(np.float32)}


@pytest.mark.parametrize("batch, past, new, inferred", [(2, 0, 6, False), (2, 6, 1, True), (1, 4, 3, False)])
def test_fused_attention_equals_the_decomposed_one(batch, past, new, inferred):
    """``inferred``: with the shapes ONNX infers declared or not (the fusion infers them itself), q, k and v
    [B, S, hidden] feed RotaryEmbedding and GroupQueryAttention as they are, with no Reshape."""
    model = onnx.shape_inference.infer_shapes(_attention_block()) if inferred else _attention_block()
    fused, weights, report = fuse_for_onnxruntime(model)
    ops = [node.op_type for node in fused.graph.node]
    producers = {o: node for node in fused.graph.node for o in node.output}
    fed = [producers.get(x) for node in fused.graph.node if node.op_type in ("RotaryEmbedding", "GroupQueryAttention")
           for x in node.input[:1 if node.op_type == "RotaryEmbedding" else 3]]  # the activations
    assert sum(1 for p in fed if p is not None and p.op_type == "Reshape") == 0, ops
    assert (ops.count("GroupQueryAttention"), ops.count("RotaryEmbedding"), "Softmax" in ops) == (1, 2, False), ops
    # q, k, v as one (feeding the attention) and the output; the rotary angles position * inv_freq as a Mul, for all tokens at once
    assert ops.count("MatMul") == 2 and report.counts["linear layers merged"] == 3
    assert "Transpose" not in [n.op_type for n in _upstream(fused, [rotary.input[2] for rotary in fused.graph.node
                                                                      if rotary.op_type == "RotaryEmbedding"])]
    assert report.shared_cache_buffers and weights == []
    gqa = next(node for node in fused.graph.node if node.op_type == "GroupQueryAttention")
    attrs = {a.name: helper.get_attribute_value(a) for a in gqa.attribute}
    assert (attrs["num_heads"], attrs["kv_num_heads"], attrs["causal"]) == (H, KV, 0)
    rng = np.random.default_rng(past)
    feeds = _feeds(batch, past, new, pad=2 if past == 0 else 0, rng=rng)
    run = [ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
           for m in (model, fused)]
    valid = feeds["attention_mask"][:, past:] == 1  # the rows of pad tokens attend to nothing: any output
    np.testing.assert_allclose(run[1][0][valid], run[0][0][valid], rtol=1e-5, atol=1e-5)
    for got, want in zip(run[1][1:], run[0][1:]):  # the caches
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        assert got.shape == (batch, KV, past + new, D)


def test_cache_concatenated_on_axis_2():
    """The cache's Concat along axis 2 (Granite-MoE-hybrid's IR; the others write -2) is fused as well: before, its
    attention stayed decomposed (exact, a Softmax and a Concat cache); the same outputs and caches."""
    model = _attention_block(cache_axis=2)
    fused, _, report = fuse_for_onnxruntime(model)
    ops = [node.op_type for node in fused.graph.node]
    assert ops.count("GroupQueryAttention") == 1 and "Softmax" not in ops and report.shared_cache_buffers, ops
    feeds = _feeds(2, 0, 6, pad=2, rng=np.random.default_rng(1))
    want, got = (_run(m, feeds) for m in (model, fused))
    valid = feeds["attention_mask"] == 1
    np.testing.assert_allclose(got[0][valid], want[0][valid], rtol=1e-5, atol=1e-5)
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


VOCAB = 50


def _with_ir_mask(model: onnx.ModelProto) -> onnx.ModelProto:
    """The attention block with its ``bias`` built from ``attention_mask`` as the IR's translation writes
    transformers' sdpa mask: the domain's Range-4 and Gather-8 (kv and query positions, the padding rows
    gathered from the flattened bool mask at ``kv_idx + batch_idx * width``), LessOrEqual, And, the domain's
    Broadcast to [batch, 1, length, total] and Where; ``x`` the rows of an embedding table gathered by
    ``input_ids`` (the lengths read from its shape, as the IR reads them from the hidden states')."""
    import onnx_ext

    n, ext = helper.make_node, onnx_ext.make_node
    i32 = {k: numpy_helper.from_array(np.array(v, np.int32), k) for k, v in
           (("i32_0", 0), ("i32_1", 1), ("i32_m1", [-1]))}
    i64 = {k: numpy_helper.from_array(np.array(v, np.int64), k) for k, v in
           (("s0", 0), ("s1", 1), ("ax0", [0]), ("ax1", [1]), ("ax2", [2]), ("ax3", [3]), ("m1", [-1]))}
    others = [numpy_helper.from_array(np.array(True), "true"), numpy_helper.from_array(np.array(0, np.float32), "f0"),
              numpy_helper.from_array(np.array(-65504, np.float32), "fmin")]
    nodes = [n("Shape", ["attention_mask"], ["mshape"]), n("Shape", ["input_ids"], ["ishape"]),
             n("Gather", ["mshape", "s1"], ["width"]), n("Gather", ["ishape", "s1"], ["ilen"]),
             n("Sub", ["width", "ilen"], ["past"]), n("Shape", ["x"], ["xshape"]),
             ext("Gather", ["xshape", "s1", "s0"], ["q"]), ext("Gather", ["xshape", "s0", "s0"], ["batch"]),
             n("Add", ["past", "q"], ["total"]),
             ext("Range", ["i32_0", "total", "i32_1"], ["kv"], output_type=TensorProto.INT64),
             n("Unsqueeze", ["kv", "ax0"], ["kv1"]), n("Unsqueeze", ["kv1", "ax1"], ["kv2"]),
             n("Unsqueeze", ["kv2", "ax2"], ["kv4"]),
             ext("Range", ["i32_0", "q", "i32_1"], ["qr"], output_type=TensorProto.INT64),
             ext("Range", ["past", "total", "i32_1"], ["cache_positions"], output_type=TensorProto.INT64),
             ext("Gather", ["cache_positions", "s0", "s0"], ["first"]), n("Add", ["qr", "first"], ["qpos"]),
             n("Unsqueeze", ["qpos", "ax0"], ["qp1"]), n("Unsqueeze", ["qp1", "ax1"], ["qp2"]),
             n("Unsqueeze", ["qp2", "ax3"], ["qpos4"]),
             n("LessOrEqual", ["kv4", "qpos4"], ["causal"]), n("And", ["true", "causal"], ["causal1"]),
             n("Cast", ["attention_mask"], ["mb"], to=TensorProto.BOOL), n("Shape", ["mb"], ["mbs"]),
             n("Cast", ["mbs"], ["mbs32"], to=TensorProto.INT32),
             n("ReduceProd", ["mbs32", "ax0"], ["size"], keepdims=1), n("Concat", ["size", "i32_m1"], ["flat_shape"], axis=0),
             n("Cast", ["flat_shape"], ["flat_shape64"], to=TensorProto.INT64), n("Reshape", ["mb", "flat_shape64"], ["flat"]),
             ext("Range", ["i32_0", "batch", "i32_1"], ["br"], output_type=TensorProto.INT64),
             n("Unsqueeze", ["br", "ax1"], ["b1"]), n("Unsqueeze", ["b1", "ax2"], ["b2"]),
             n("Unsqueeze", ["b2", "ax3"], ["b4"]),
             n("Cast", ["kv4"], ["kv32"], to=TensorProto.INT32), n("Cast", ["b4"], ["b32"], to=TensorProto.INT32),
             n("Split", ["mbs32"], ["rows", "cols"], axis=0, num_outputs=2), n("Mul", ["b32", "cols"], ["offsets"]),
             n("Add", ["kv32", "offsets"], ["index"]), ext("Gather", ["flat", "index", "i32_0"], ["picked"]),
             n("Reshape", ["picked", "m1"], ["picked1"]), n("Shape", ["index"], ["ixs"]),
             n("Cast", ["ixs"], ["ixs32"], to=TensorProto.INT32), n("Cast", ["ixs32"], ["ixs64"], to=TensorProto.INT64),
             n("Reshape", ["picked1", "ixs64"], ["padding"], allowzero=1), n("And", ["causal1", "padding"], ["allowed"]),
             n("Unsqueeze", ["batch", "ax0"], ["batch1"]), n("Unsqueeze", ["q", "ax0"], ["q1"]),
             n("Unsqueeze", ["total", "ax0"], ["total1"]),
             n("Concat", ["batch1", "ax1", "q1", "total1"], ["target"], axis=0),
             ext("Broadcast", ["allowed", "target"], ["allowed_full"], mode="bidirectional"),
             n("Where", ["allowed_full", "f0", "fmin"], ["bias"])]
    embedding = [n("Gather", ["table", "input_ids"], ["x"])]
    table = numpy_helper.from_array(np.random.default_rng(1).standard_normal((VOCAB, HIDDEN)).astype(np.float32), "table")
    graph = model.graph
    inputs = [v for v in graph.input if v.name not in ("bias", "x")]
    out = helper.make_graph(embedding + nodes + list(graph.node), graph.name, inputs, graph.output,
                            [table] + list(graph.initializer) + list(i32.values()) + list(i64.values()) + others)
    return onnx_ext.attach_functions(helper.make_model(out, opset_imports=list(model.opset_import),
                                                       ir_version=model.ir_version))


@pytest.mark.parametrize("batch, past, new, pad", [(2, 0, 6, 2), (3, 6, 1, 3), (1, 4, 3, 0)])
def test_ir_mask_in_fewer_kernels(batch, past, new, pad):
    """The IR's mask once the attention is fused: rebuilt from ``attention_mask`` and ``input_ids`` in 11 kernels
    shared with the attention's ``seqlens_k`` and ``total_sequence_length`` (no domain node, no Broadcast): the
    padding rows as the bias, the causal part the attention's ``causal=1``; the same attention (any padding, a
    hole) for every row that attends to something."""
    model = _with_ir_mask(_attention_block())
    fused, _, report = fuse_for_onnxruntime(model)
    assert report.counts["attention mask"] == 5  # the padding rows, the first position, the 3 Ranges left
    assert report.counts.get("attention mask rebuilt") == 1
    assert not [n.op_type for n in fused.graph.node if n.domain == "org.openvinotoolkit.onnx_ext"]
    gqa = next(node for node in fused.graph.node if node.op_type == "GroupQueryAttention")
    mask_nodes = _upstream(fused, [gqa.input[5], gqa.input[6], gqa.input[10]])
    assert sorted(n.op_type for n in mask_nodes) == sorted(
        ["Shape", "Shape", "Concat", "Cast", "Unsqueeze", "Expand", "Where", "Cast", "Sub", "Shape", "Expand"])
    feeds = _feeds(batch, past, new, pad=pad, rng=np.random.default_rng(past))
    del feeds["bias"], feeds["x"]
    feeds["input_ids"] = np.random.default_rng(past).integers(0, VOCAB, (batch, new))
    mask = feeds["attention_mask"]
    mask[-1, -2] = 0  # a hole: any padding
    total = past + new
    allowed = (np.arange(total)[None, :] <= np.arange(past, total)[:, None])[None] & (mask[:, None, :] != 0)
    want = np.where(allowed, 0, -65504).astype(np.float32)[:, None]
    assert np.array_equal(_value_of(model, "bias", feeds), want)
    padding = np.where(mask[:, None, None, :] != 0, 0, -65504).astype(np.float32)  # the causal part: causal=1
    assert np.array_equal(_value_of(fused, gqa.input[10], feeds), np.broadcast_to(padding, want.shape))
    assert next(a.i for a in gqa.attribute if a.name == "causal") == 1
    sessions = [ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]) for m in (model, fused)]
    (unfused_y,), (fused_y,) = (s.run(["y"], feeds) for s in sessions)
    valid = allowed.any(axis=-1)  # rows that attend to something
    np.testing.assert_allclose(fused_y[valid], unfused_y[valid], rtol=1e-5, atol=1e-5)


def _upstream(model: onnx.ModelProto, names: list[str]) -> list[onnx.NodeProto]:
    """The nodes that compute ``names`` (up to the graph's inputs and initializers)."""
    producers = {o: node for node in model.graph.node for o in node.output}
    seen, todo = {}, list(names)
    while todo:
        node = producers.get(todo.pop())
        if node is not None and id(node) not in seen:
            seen[id(node)] = node
            todo.extend(node.input)
    return list(seen.values())


def _value_of(model: onnx.ModelProto, name: str, feeds: dict) -> np.ndarray:
    """The value of ``name`` in ``model``, as an extra output."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    model.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run([name], feeds)[0]


def _with_ir_embedding(quantized: bool) -> onnx.ModelProto:
    """``_with_ir_mask``'s block with its embedding as the IR writes it: the domain's Gather-8 of the table's rows
    by ``input_ids`` cast to i32; ``quantized``: an 8-bit table as NNCF keeps it, three such Gathers (u8 rows,
    f32 zero points and scales per row) and ``(Cast(rows, f32) - zero points) * scales``."""
    import onnx_ext

    model = _with_ir_mask(_attention_block())
    graph = model.graph
    at = next(i for i, node in enumerate(graph.node) if list(node.output) == ["x"])
    del graph.node[at]
    table = next(t for t in graph.initializer if t.name == "table")
    rng = np.random.default_rng(2)
    n, ext = helper.make_node, onnx_ext.make_node
    nodes = [n("Cast", ["input_ids"], ["ids32"], to=TensorProto.INT32)]
    inits = [numpy_helper.from_array(np.array(0, np.int32), "rows_axis")]
    if quantized:
        graph.initializer.remove(table)
        inits += [numpy_helper.from_array(rng.integers(0, 256, (VOCAB, HIDDEN)).astype(np.uint8), "table"),
                  numpy_helper.from_array(rng.integers(0, 256, (VOCAB, 1)).astype(np.float32), "zero_points"),
                  numpy_helper.from_array((rng.random((VOCAB, 1)) / 64).astype(np.float32), "scales")]
        nodes += [ext("Gather", [name, "ids32", "rows_axis"], [f"{name}_rows"])
                  for name in ("table", "zero_points", "scales")]
        nodes += [n("Cast", ["table_rows"], ["rows_f32"], to=TensorProto.FLOAT),
                  n("Sub", ["rows_f32", "zero_points_rows"], ["centred"]), n("Mul", ["scales_rows", "centred"], ["x"])]
    else:
        nodes.append(ext("Gather", ["table", "ids32", "rows_axis"], ["x"]))
    for i, node in enumerate(nodes):
        graph.node.insert(at + i, node)
    graph.initializer.extend(inits)
    return onnx_ext.attach_functions(model)


@pytest.mark.parametrize("quantized", [False, True])
def test_embedding_rows_in_one_kernel(quantized):
    """The embedding the IR gathers with the domain's Gather-8 (five kernels a step) -> one ONNX Gather, or for an
    8-bit table (three Gather-8s, a Cast, a Sub and a Mul) one GatherBlockQuantized: the same rows, bit for bit
    (negative ids counted from the end; for the 8-bit table ids out of range give zeros, as Gather-8's)."""
    model = _with_ir_embedding(quantized)
    fused, _, report = fuse_for_onnxruntime(model)
    assert report.counts["embedding"] == 1 and report.counts["attention mask rebuilt"] == 1
    assert not [node.op_type for node in fused.graph.node if node.domain == "org.openvinotoolkit.onnx_ext"]
    rows = next(node for node in fused.graph.node if node.op_type == ("GatherBlockQuantized" if quantized else "Gather")
                and node.input[0] == "table")
    cast = next(node for node in fused.graph.node if node.output[0] == rows.input[1])
    assert (cast.op_type, list(cast.input)) == ("Cast", ["input_ids"])  # the IR's indices, as they are
    feeds = _feeds(2, 0, 6, pad=2, rng=np.random.default_rng(0))
    del feeds["bias"], feeds["x"]
    ids = np.array([[0, 1, VOCAB - 1, -1, -VOCAB, 7], [3, 4, 5, 6, 8, 9]])
    if quantized:
        ids[1, :2] = VOCAB, -VOCAB - 1  # out of range: a row of zeros
    feeds["input_ids"] = ids
    want = _value_of(model, "x", feeds)
    assert want.shape == (2, 6, HIDDEN) and want.dtype == np.float32
    if quantized:
        assert not want[1, :2].any() and want[0].any(axis=-1).all()
    np.testing.assert_array_equal(_value_of(fused, rows.output[0], feeds), want)


def test_mask_rebuilt_after_a_translated_quantized_embedding():
    """The translator writes an 8/4-bit embedding as GatherBlockQuantized itself (emb14): the mask's batch and
    length, dims of the embedding's rows, are still traced to ``input_ids`` (the rebuild was lost: 147 -> 183
    nodes a step on bench_llm's int4 model)."""
    model = _with_ir_mask(_attention_block())
    graph = model.graph
    at = next(i for i, node in enumerate(graph.node) if list(node.output) == ["x"])
    del graph.node[at]
    graph.initializer.remove(next(t for t in graph.initializer if t.name == "table"))
    rng = np.random.default_rng(3)
    graph.initializer.extend([
        numpy_helper.from_array(rng.integers(0, 256, (VOCAB, HIDDEN)).astype(np.uint8), "table"),
        numpy_helper.from_array((rng.random((VOCAB, HIDDEN // 16)) / 64).astype(np.float32), "scales")])
    graph.node.insert(at, helper.make_node("GatherBlockQuantized", ["table", "input_ids", "scales"], ["x"],
                                           domain="com.microsoft", bits=8, block_size=16, gather_axis=0,
                                           quantize_axis=1))
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    _, _, report = fuse_for_onnxruntime(model)
    assert report.counts["attention mask rebuilt"] == 1


def test_other_masks_are_kept():
    """A mask with a condition more (a sliding window, ``kv > q - 3``) is not the causal-and-padding one: it
    stays as the IR computes it."""
    model = _with_ir_mask(_attention_block())
    graph = model.graph
    node = next(n for n in graph.node if n.op_type == "And" and list(n.output) == ["allowed"])
    node.output[0] = "allowed0"
    graph.initializer.append(numpy_helper.from_array(np.array([3], np.int64), "window"))
    at = list(graph.node).index(node) + 1
    for i, extra in enumerate([helper.make_node("Sub", ["qpos4", "window"], ["low"]),
                               helper.make_node("Greater", ["kv4", "low"], ["inside"]),
                               helper.make_node("And", ["allowed0", "inside"], ["allowed"])]):
        graph.node.insert(at + i, extra)
    fused, _, report = fuse_for_onnxruntime(model)
    assert report.counts["GroupQueryAttention"] == 1 and report.counts["attention mask rebuilt"] == 0
    feeds = _feeds(2, 0, 6, pad=1, rng=np.random.default_rng(0))
    del feeds["bias"], feeds["x"]
    feeds["input_ids"] = np.random.default_rng(0).integers(0, VOCAB, (2, 6))
    q = np.arange(6)
    allowed = ((q[None, :] <= q[:, None]) & (q[None, :] > q[:, None] - 3))[None] & (feeds["attention_mask"][:, None, :] != 0)
    gqa = next(n for n in fused.graph.node if n.op_type == "GroupQueryAttention")
    assert np.array_equal(_value_of(fused, gqa.input[10], feeds), np.where(allowed, 0, -65504).astype(np.float32)[:, None])


def test_norm_axis_counted_from_the_front_needs_the_rank_of_its_input():
    """An RMSNorm's ReduceMean over axis 2 (the Reduce translators write known axes non-negative) is over the last
    axis only if its input has rank 3: that rank is computed through the producers where onnx's shape inference
    did not run (GLM-4: the MLP's Split); a rank it cannot tell (a Reshape) fuses nothing."""
    import onnx_ir as ir

    from converters.ir_to_onnx.fusions import _is_last_axis

    def const(name, array):
        return ir.Value(name=name, const_value=ir.tensor(np.asarray(array)))

    x = ir.Value(name="x", shape=ir.Shape([2, 3, 8]), type=ir.TensorType(ir.DataType.FLOAT))
    up = ir.node("MatMul", [x, const("w_up", np.ones((8, 16), np.float32))])
    split = ir.node("Split", [up.outputs[0]], num_outputs=2, attributes={"axis": -1})
    gated = ir.node("Mul", [split.outputs[0], split.outputs[1]])
    down = ir.node("MatMul", [gated.outputs[0], const("w_down", np.ones((8, 8), np.float32))])
    reshaped = ir.node("Reshape", [down.outputs[0], const("shape", np.array([6, 8]))])
    axis2, last = const("axis2", np.array([2])), const("last", np.array([-1]))
    assert down.outputs[0].shape is None
    assert _is_last_axis(axis2, down.outputs[0]) and _is_last_axis(last, down.outputs[0])
    assert not _is_last_axis(const("axis1", np.array([1])), down.outputs[0])
    assert not _is_last_axis(axis2, reshaped.outputs[0]) and _is_last_axis(last, reshaped.outputs[0])


@pytest.mark.parametrize("sum_read", [True, False])
def test_residual_norm_leaves_out_its_statistics(sum_read):
    """The residual Add and the RMSNorm after it -> SkipSimplifiedLayerNormalization with its outputs 1 and 2 (mean
    and inverse standard deviation, read by nothing) left out, which onnxruntime would otherwise compute and
    allocate: the normalised sum and the sum as before; output 3 (the sum) too where nothing reads it (the last
    layer's final norm)."""
    n = helper.make_node
    f32 = TensorProto.FLOAT
    inits = [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in
             (("two", 2.0), ("eps", 1e-6), ("one", 1.0), ("w", np.linspace(0.5, 1.5, HIDDEN).reshape(1, 1, HIDDEN)))]
    inits.append(numpy_helper.from_array(np.array([-1], np.int64), "axes"))
    nodes = [n("Add", ["a", "b"], ["total"]), n("Pow", ["total", "two"], ["squared"]),
             n("ReduceMean", ["squared", "axes"], ["mean"], keepdims=1), n("Add", ["mean", "eps"], ["var"]),
             n("Sqrt", ["var"], ["std"]), n("Div", ["one", "std"], ["inverse"]), n("Mul", ["total", "inverse"], ["x"]),
             n("Mul", ["w", "x"], ["y"]), n("Add", ["total", "y"], ["z"])]
    if not sum_read:
        nodes[-1] = n("Mul", ["y", "two"], ["z"])
    graph = helper.make_graph(nodes, "norm", [helper.make_tensor_value_info(k, f32, [2, 3, HIDDEN]) for k in "ab"],
                              [helper.make_tensor_value_info(k, f32, None) for k in "yz"], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    fused, _, report = fuse_for_onnxruntime(model)
    assert report.counts["SkipSimplifiedLayerNormalization"] == 1
    (norm,) = [node for node in fused.graph.node if node.op_type == "SkipSimplifiedLayerNormalization"]
    if sum_read:
        assert norm.output[0] and list(norm.output[1:3]) == ["", ""] and norm.output[3]
    else:
        assert list(norm.output) == ["y"]
    rng = np.random.default_rng(0)
    feeds = {k: rng.standard_normal((2, 3, HIDDEN)).astype(np.float32) for k in "ab"}
    for got, want in zip(_run(fused, feeds), _run(model, feeds)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _run(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _step(feeds: dict, present: list[np.ndarray], rng, d: int) -> dict:
    """One more token after ``feeds`` with the caches ``present``: the mask one wider, the next positions."""
    batch, total = feeds["attention_mask"].shape
    mask = np.concatenate([feeds["attention_mask"], np.ones((batch, 1), np.int64)], axis=1)
    allowed = mask[:, None, None, :] == 1
    return {"input_ids": np.zeros((batch, 1), np.int64), "attention_mask": mask,
            "position_ids": feeds["position_ids"][:, -1:] + 1,
            "x": rng.standard_normal((batch, 1, HIDDEN)).astype(np.float32),
            "bias": np.where(allowed, 0, -65504).astype(np.float32),
            "past_key_values.0.key": present[0], "past_key_values.0.value": present[1]}


def _assert_constant_tables(model: onnx.ModelProto, names: list[str]) -> None:
    """``names`` are Cos and Sin of a Mul of initializers (computed once, at load)."""
    tables = {i.name for i in model.graph.initializer}
    nodes = _upstream(model, names)
    assert sorted(n.op_type for n in nodes) == ["Cos", "Mul", "Sin"], nodes
    assert all(x in tables for n in nodes if n.op_type == "Mul" for x in n.input)


@pytest.mark.parametrize("pad", [0, 2])
def test_rotary_reads_tables_of_positions(pad):
    """``positions`` (a model folder's context length): each RotaryEmbedding takes ``position_ids`` and cos/sin
    tables of that many rows, computed at load, instead of the angles of the step's positions and their row
    indices, computed at each step: bit for bit the same, a left-padded prompt and a step after it; a position
    past the tables is onnxruntime's error (as the model builder's)."""
    model = _with_ir_mask(_attention_block())
    per_step, _, _ = fuse_for_onnxruntime(model)
    fused, _, report = fuse_for_onnxruntime(model, positions=32)
    assert report.counts["rotary position tables"] == 2 and "rotary in attention" not in report.counts
    ops = Counter(n.op_type for n in fused.graph.node)
    # the per-step angles (Reshape, Cast, Mul) with their Cos and Sin, the rows' indices (Shape, ReduceProd,
    # Range, Reshape); the tables' Mul, Cos and Sin (run at load) come instead
    assert Counter(n.op_type for n in per_step.graph.node) - ops == Counter(
        {"Reshape": 3, "Constant": 4, "Shape": 1, "Cast": 1, "ReduceProd": 1, "Range": 1}), ops
    assert not ops - Counter(n.op_type for n in per_step.graph.node)
    ropes = [n for n in fused.graph.node if n.op_type == "RotaryEmbedding"]
    assert len(ropes) == 2 and {r.input[1] for r in ropes} == {"position_ids"}
    _assert_constant_tables(fused, [x for r in ropes for x in r.input[2:4]])
    rng = np.random.default_rng(pad)
    feeds = {k: v for k, v in _feeds(2, 0, 6, pad, rng).items() if k not in ("x", "bias")}
    want, got = _run(per_step, feeds), _run(fused, feeds)
    step = {k: v for k, v in _step({**feeds, "x": None}, want[1:], rng, D).items() if k not in ("x", "bias")}
    step["input_ids"] = np.array([[3], [7]], np.int64)
    for a, b in zip(want + _run(per_step, step), got + _run(fused, step)):
        np.testing.assert_array_equal(b, a)
    step["position_ids"] = np.array([[31], [32]], np.int64)
    with pytest.raises(Exception, match="position_ids value 32 .* out of range"):
        _run(fused, step)


@pytest.mark.parametrize("k_first", [False, True])
def test_rope_in_attention(k_first):
    """``positions`` (opt-in): q/k/v packed into GroupQueryAttention with do_rotary and cos/sin caches of
    ``positions`` rows (no Split, no RotaryEmbedding, no per-step Cos/Sin). Bit for bit the exact form's for
    unpadded rows, prompt and steps (``k_first``: k's MatMul first in the graph, so merged as k, q, v and
    reordered); a left-padded row within f32 rounding (its cache rotated at the padded buffer's positions, which
    RoPE's scores do not see); a sequence longer than the caches raises in onnxruntime."""
    d = 16  # the kernel's caches need a head size that is a multiple of 16
    model = _attention_block(d)
    if k_first:
        nodes = list(model.graph.node)
        nodes[0], nodes[1] = nodes[1], nodes[0]
        del model.graph.node[:]
        model.graph.node.extend(nodes)
    exact, _, _ = fuse_for_onnxruntime(model)
    fused, weights, report = fuse_for_onnxruntime(model, positions=32, rope_in_attention=True)
    ops = [node.op_type for node in fused.graph.node]
    assert report.counts["rotary in attention"] == 1 and report.shared_cache_buffers and weights == []
    assert (ops.count("GroupQueryAttention"), ops.count("RotaryEmbedding"), ops.count("Split"), ops.count("MatMul")) \
        == (1, 0, 0, 2), ops
    # the layer's Split and RotaryEmbeddings go, and the per-step angles with their index arithmetic; the caches'
    # Cos and Sin read a product of constants (folded at load)
    gone = Counter(n.op_type for n in exact.graph.node) - Counter(ops)
    assert gone == Counter({"Split": 1, "RotaryEmbedding": 2, "Reshape": 3, "Constant": 4, "Shape": 1, "Cast": 1,
                            "ReduceProd": 1, "Range": 1}), gone
    assert not Counter(ops) - Counter(n.op_type for n in exact.graph.node)
    caches = [x for n in fused.graph.node if n.op_type == "GroupQueryAttention" for x in n.input[7:9]]
    _assert_constant_tables(fused, caches)
    gqa = next(node for node in fused.graph.node if node.op_type == "GroupQueryAttention")
    attrs = {a.name: helper.get_attribute_value(a) for a in gqa.attribute}
    assert (attrs["do_rotary"], attrs["num_heads"], attrs["kv_num_heads"], attrs["causal"]) == (1, H, KV, 0)
    assert list(gqa.input[1:3]) == ["", ""] and gqa.input[7] and gqa.input[8] and gqa.input[9] == ""
    rng = np.random.default_rng(3)
    for pad in (0, 2):
        feeds = _feeds(2, 0, 6, pad, rng, d)
        want, got = _run(exact, feeds), _run(fused, feeds)
        after = {name: _step(feeds, run[1:], np.random.default_rng(pad), d) for name, run in (("want", want),
                                                                                              ("got", got))}
        want2, got2 = _run(exact, after["want"]), _run(fused, after["got"])
        valid = feeds["attention_mask"] == 1
        if pad == 0:
            for a, b in zip(want + want2, got + got2):
                np.testing.assert_array_equal(b, a)
        else:
            np.testing.assert_allclose(got[0][valid], want[0][valid], rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(got2[0], want2[0], rtol=1e-5, atol=1e-5)
            assert not np.array_equal(got[1][0], want[1][0])  # row 0's keys at other positions
            np.testing.assert_array_equal(got[1][1], want[1][1])
    with pytest.raises(Exception, match="cos_cache dimension 0"):
        _run(fused, _feeds(1, 0, 33, 0, rng, d))


def test_rope_in_attention_needs_a_head_size_of_16s():
    """Head size 8: the kernel's caches do not take it; the exact form stays."""
    fused, _, report = fuse_for_onnxruntime(_attention_block(), positions=32, rope_in_attention=True)
    ops = [node.op_type for node in fused.graph.node]
    assert report.counts["rotary in attention"] == 0 and ops.count("RotaryEmbedding") == 2, ops


def _residual_rms_norm(shape: list[int]) -> onnx.ModelProto:
    """``RMSNorm(a + b)`` over the last axis as the IR's translation writes it, a and b inputs of ``shape``."""
    f32 = TensorProto.FLOAT
    consts = [numpy_helper.from_array(np.asarray(v, np.float32), n) for n, v in
              (("two", 2.0), ("one", 1.0), ("eps", 1e-6), ("w", np.linspace(0.5, 1.5, shape[-1])))]
    consts.append(numpy_helper.from_array(np.array([-1], np.int64), "axes"))
    nodes = [helper.make_node("Add", ["a", "b"], ["sum"]),
             helper.make_node("Pow", ["sum", "two"], ["sq"]),
             helper.make_node("ReduceMean", ["sq", "axes"], ["mean"], keepdims=1),
             helper.make_node("Add", ["mean", "eps"], ["var"]),
             helper.make_node("Sqrt", ["var"], ["root"]),
             helper.make_node("Div", ["one", "root"], ["inv"]),
             helper.make_node("Mul", ["sum", "inv"], ["normed"]),
             helper.make_node("Mul", ["w", "normed"], ["y"])]
    graph = helper.make_graph(nodes, "residual_norm", [helper.make_tensor_value_info(n, f32, shape) for n in "ab"],
                              [helper.make_tensor_value_info("y", f32, shape)], consts)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)


@pytest.mark.parametrize("shape, skip", [([2, 5, 8], True), ([5, 8], True), ([2, 4, 5, 8], False)])
def test_skip_norm_only_on_its_ranks(shape, skip):
    """The residual Add before an RMSNorm becomes SkipSimplifiedLayerNormalization only on [B, S, H] or [T, H], the
    inputs its kernel takes. HunYuan's q/k norm follows the RoPE's Add on [batch, heads, length, size]: fused
    there, onnxruntime raised at the first run ("input is expected to have 3 or 2 dimensions, got 4"); now the
    norm alone is fused. The result equals the unfused graph's either way."""
    model = _residual_rms_norm(shape)
    rng = np.random.default_rng(0)
    feeds = {n: rng.standard_normal(shape).astype(np.float32) for n in "ab"}
    want = _run(model, feeds)[0]
    fused, _, _ = fuse_for_onnxruntime(model)
    ops = [n.op_type for n in fused.graph.node]
    assert ("SkipSimplifiedLayerNormalization" in ops) == skip and ("SimplifiedLayerNormalization" in ops) != skip, ops
    np.testing.assert_allclose(_run(fused, feeds)[0], want, rtol=1e-5, atol=1e-6)


def test_transposed_weights_stored_as_matmul_reads_them():
    """The IR's linear layers, MatMul(x, Transpose(W [N, K])) with W a weight written later (a stand-in input, as
    ``convert_model`` hands them over): W stored transposed, [K, N], with no Transpose left for onnxruntime to fold
    at load (folded there, 26 MB more stayed in the session's memory on the 225 MB benchmark model). q and k (one
    input, no attention) stay apart, each transposed; a weight another node also reads is kept for it. The outputs
    are bit for bit the unfused graph's."""
    rng = np.random.default_rng(0)
    f32 = TensorProto.FLOAT
    w = {"wq": rng.standard_normal((12, 8)), "wk": rng.standard_normal((4, 8)), "wo": rng.standard_normal((8, 12))}
    w = {k: v.astype(np.float32) for k, v in w.items()}
    nodes = [helper.make_node("Transpose", [k], [f"{k}_t"], perm=[1, 0]) for k in w]
    nodes += [helper.make_node("MatMul", ["x", "wq_t"], ["q"]), helper.make_node("MatMul", ["x", "wk_t"], ["k"]),
              helper.make_node("MatMul", ["q", "wo_t"], ["o"]), helper.make_node("ReduceSum", ["wo"], ["wo_sum"])]
    outputs = [helper.make_tensor_value_info(n, f32, None) for n in ("q", "k", "o", "wo_sum")]
    graph = helper.make_graph(nodes, "linear", [helper.make_tensor_value_info("x", f32, [2, 3, 8])], outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)
    import onnx_ir as ir

    fused, weights, report = fuse_for_onnxruntime(model, [ir.tensor(v, name=k) for k, v in w.items()])
    assert report.counts["linear layers merged"] == 0 and report.counts["weights transposed"] == 3
    assert [n.op_type for n in fused.graph.node] == ["MatMul", "MatMul", "MatMul", "ReduceSum"]
    stored = {t.name: t.numpy() for t in weights}
    assert {name: a.shape for name, a in stored.items()} == \
        {"wq/transposed": (8, 12), "wk/transposed": (8, 4), "wo/transposed": (12, 8), "wo": (8, 12)}
    for name in ("wq", "wk", "wo"):
        np.testing.assert_array_equal(stored[f"{name}/transposed"], w[name].T)
    feeds = {"x": rng.standard_normal((2, 3, 8)).astype(np.float32)}
    for m, tensors in ((model, w), (fused, stored)):
        m.graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in tensors.items())
    for got, want in zip(_run(fused, feeds), _run(model, feeds)):
        np.testing.assert_array_equal(got, want)


def test_weight_read_in_a_branch_is_kept():
    """A weight read only inside an If branch (the IR's MatMul with an empty-input case, as in optimum-intel's Mamba
    IR: the linear layer's Transpose of its weight in both branches) stays among the weights and the graph's names:
    it was dropped with the stand-in inputs, and onnxruntime refused the model ("input 'x_proj.weight' of node
    Transpose is not output of any previous nodes"). The outputs are the unfused graph's."""
    import onnx_ir as ir

    rng = np.random.default_rng(0)
    f32 = TensorProto.FLOAT
    w = {"w": rng.standard_normal((6, 8)).astype(np.float32), "v": rng.standard_normal((6, 8)).astype(np.float32)}

    def branch(name, scale):
        nodes = [helper.make_node("Transpose", ["v"], [f"{name}_vt"], perm=[1, 0]),
                 helper.make_node("MatMul", ["x", f"{name}_vt"], [f"{name}_y"]),
                 helper.make_node("Mul", [f"{name}_y", f"{name}_s"], [f"{name}_out"])]
        scale = helper.make_tensor(f"{name}_s", f32, [], [scale])
        return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(f"{name}_out", f32, None)], [scale])

    nodes = [helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),  # a top-level weight: the fusion runs
             helper.make_node("MatMul", ["x", "wt"], ["y"]),
             helper.make_node("If", ["flag"], ["z"], then_branch=branch("then", 1.0), else_branch=branch("else", 2.0))]
    inputs = [helper.make_tensor_value_info("x", f32, [2, 8]), helper.make_tensor_value_info("flag", TensorProto.BOOL, [])]
    outputs = [helper.make_tensor_value_info(n, f32, None) for n in ("y", "z")]
    model = helper.make_model(helper.make_graph(nodes, "branch", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", 18)], ir_version=9)
    fused, weights, report = fuse_for_onnxruntime(model, [ir.tensor(a, name=k) for k, a in w.items()])
    assert report.counts["weights transposed"] == 1
    stored = {t.name: t.numpy() for t in weights}
    assert sorted(stored) == ["v", "w/transposed"]
    for m, tensors in ((model, w), (fused, stored)):
        m.graph.initializer.extend(numpy_helper.from_array(a, k) for k, a in tensors.items())
    x = rng.standard_normal((2, 8)).astype(np.float32)
    for flag in (True, False):
        feeds = {"x": x, "flag": np.array(flag)}
        for got, want in zip(_run(fused, feeds), _run(model, feeds)):
            np.testing.assert_array_equal(got, want)
