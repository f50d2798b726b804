"""Regenerate the bundled example IR (needs `openvino`): python examples/make_example.py

A small embedding block in the style of what OpenVINO writes for transformers:
position ids from Range-4 over the runtime sequence length, Gather-8 lookups,
a Broadcast-3 of a bias, and a TensorFlow-style StridedSlice-1 with ellipsis and
new-axis masks. Weights are saved with f16 compression (OpenVINO's default), so
the file also exercises the Convert "decompression" pattern.
"""

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset8 as ops
from openvino.utils.node_factory import NodeFactory


def build() -> ov.Model:
    rng = np.random.default_rng(0)
    tokens = ops.parameter([-1, -1], ov.Type.i64, name="input_ids")  # [batch, seq]
    tokens.output(0).get_tensor().set_names({"input_ids"})
    table = ops.constant(rng.standard_normal((64, 16)).astype(np.float32))
    pos_table = ops.constant(rng.standard_normal((32, 16)).astype(np.float32))

    shape = ops.shape_of(tokens, output_type="i64")
    seq = ops.gather(shape, ops.constant(np.array(1, np.int64)), ops.constant(np.array(0, np.int64)))
    positions = NodeFactory("opset4").create(
        "Range", [ops.constant(np.array(0, np.int64)).output(0), seq.output(0), ops.constant(np.array(1, np.int64)).output(0)],
        {"output_type": "i64"})
    words = ops.gather(table, tokens, ops.constant(np.array(0, np.int64)))  # [b, s, 16]
    where = ops.gather(pos_table, positions, ops.constant(np.array(0, np.int64)))  # [s, 16]
    target = ops.concat([shape, ops.constant(np.array([16], np.int64))], 0)
    bias = ops.constant(rng.standard_normal((16,)).astype(np.float32))
    bias_b = ops.broadcast(bias, target, broadcast_spec="numpy")  # Broadcast-3
    x = ops.add(ops.add(words, where), bias_b)
    # x[..., None, ::2]: ellipsis, a new axis, every other feature.
    sliced = ops.strided_slice(
        x, ops.constant(np.array([0, 0, 0], np.int64)), ops.constant(np.array([0, 0, 0], np.int64)),
        ops.constant(np.array([1, 1, 2], np.int64)), begin_mask=[0, 0, 1], end_mask=[0, 0, 1],
        new_axis_mask=[0, 1, 0], shrink_axis_mask=[0, 0, 0], ellipsis_mask=[1, 0, 0])
    sliced.output(0).get_tensor().set_names({"features"})
    last = ops.gather(x, ops.constant(np.array(-1, np.int64)), ops.constant(np.array(1, np.int64)))
    last.output(0).get_tensor().set_names({"last_token"})
    return ov.Model([sliced, last], [tokens], "embedding_block")


if __name__ == "__main__":
    out = Path(__file__).with_name("embedding_block.xml")
    ov.save_model(build(), out)  # compress_to_fp16 defaults to True
    print(f"wrote {out} and {out.with_suffix('.bin')}")
