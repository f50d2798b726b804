"""GatherTree-1: the op's record (checks, body selection) and numpy reference. Bodies: ``bodies.py``;
semantics: docs/ops/gather_tree.md.

OpenVINO: GatherTree-1(step_ids, parent_ids: T [MAX_TIME, BATCH, BEAM], max_seq_len: T [BATCH], end_token: T
scalar) -> T [MAX_TIME, BATCH, BEAM]: the beams of a beam search back-tracked from each final beam through
the parent ids, as OpenVINO's reference (src/core/reference/src/op/gather_tree.cpp) does it:

- per batch b, L = min(MAX_TIME, max_seq_len[b]) (values truncated to integers; a negative one is read as
  unsigned: MAX_TIME); for beam j, out[L-1] = step_ids[L-1, b, j] and going back, out[t] =
  step_ids[t, b, p], p the parent followed from t + 1 (parent_ids truncated to integers);
- past L, end_token; after the first end_token within L (values compared truncated to integers), end_token.

A followed parent outside [0, BEAM) reads out of bounds in the reference; here it fails at run time
(``parent_ids_in_range``), and so do mismatched shapes (``shapes_agree``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import OpInputError
from ..base import Bodies, OpSpec, Operand
from .bodies import HELPERS, GatherTree, Looped, Unrolled, doubling_steps

__all__ = ["SPEC", "GatherTree", "Unrolled", "gather_tree_reference"]

INPUTS = ("step_ids", "parent_ids", "max_seq_len", "end_token")
#: Types onnxruntime's Where has a kernel for (converters/ir_to_onnx/kernels.py).
_WHERE = ("f16", "f32", "f64", "i8", "i32", "i64", "u8", "u32")


def _index(values) -> np.ndarray:
    """Values as the reference's indices: truncated toward zero, in int64."""
    a = np.asarray(values)
    return np.trunc(a.astype(np.float64)).astype(np.int64) if a.dtype.kind == "f" or a.dtype.name == "bfloat16" \
        else a.astype(np.int64)


def gather_tree_reference(step_ids, parent_ids, max_seq_len, end_token) -> np.ndarray:
    step_ids, parent_ids = np.asarray(step_ids), np.asarray(parent_ids)
    _check_shapes(step_ids.shape, parent_ids.shape, np.shape(max_seq_len), np.shape(end_token))
    t_len, batch, beams = step_ids.shape
    out = np.empty_like(step_ids)
    out[...] = end_token
    parents, end = _index(parent_ids), int(_index(end_token))
    for b, msl in enumerate(_index(max_seq_len)):
        length = t_len if msl < 0 else min(t_len, int(msl))
        for j in range(beams):
            if length == 0:
                continue
            out[length - 1, b, j] = step_ids[length - 1, b, j]
            parent = parents[length - 1, b, j]
            for t in range(length - 2, -1, -1):
                if not 0 <= parent < beams:
                    raise OpInputError("GatherTree", f"parent id {parent} at time {t + 1}, batch {b} is outside "
                                       f"[0, {beams})")
                out[t, b, j] = step_ids[t, b, parent]
                parent = parents[t, b, parent]
            ended = np.cumsum(_index(out[:length, b, j]) == end) > 0
            out[1:length, b, j][ended[:-1]] = end_token
    return out


def _check_shapes(step, parent, msl, end) -> None:
    if step is not None and len(step) != 3:
        raise OpInputError("GatherTree", f"step_ids must have rank 3, got shape {list(step)}")
    if step is not None and parent is not None and len(parent) == 3 and any(
            isinstance(a, int) and isinstance(b, int) and a != b for a, b in zip(step, parent)):
        raise OpInputError("GatherTree", f"parent_ids shape {list(parent)} differs from step_ids shape {list(step)}")
    if parent is not None and len(parent) != 3:
        raise OpInputError("GatherTree", f"parent_ids must have rank 3, got shape {list(parent)}")
    if msl is not None and len(msl) != 1:
        raise OpInputError("GatherTree", f"max_seq_len must be a 1-D vector, got shape {list(msl)}")
    if msl is not None and step is not None and isinstance(msl[0], int) and isinstance(step[1], int) and \
            msl[0] != step[1]:
        raise OpInputError("GatherTree", f"max_seq_len has {msl[0]} entries for a batch of {step[1]}")
    if end is not None and len(end) != 0:
        raise OpInputError("GatherTree", f"end_token must be a scalar, got shape {list(end)}")


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    types = {o.type for o in operands if o.type is not None}
    if len(types) > 1:
        raise OpInputError("GatherTree", f"inputs must have one element type, got {sorted(t.ov for t in types)}")
    if types and next(iter(types)).kind == "bool":
        raise OpInputError("GatherTree", "inputs must be numeric, got boolean")
    _check_shapes(*(o.shape for o in operands))


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    step, et = operands[0].shape, operands[0].type
    if step is not None and len(step) == 3 and isinstance(step[0], int):
        return Unrolled(doubling_steps(step[0]), et is not None and et.ov in _WHERE).name
    return Looped().name if et is not None and et.ov in _WHERE else "general"


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    step, parent = operands[0].shape, operands[1].shape
    if step is None:
        return parent if parent is not None else (None, None, None)
    if parent is None:
        return step
    return tuple(a if isinstance(a, int) else b if isinstance(b, int) else a for a, b in zip(step, parent))


def openvino_node(attrs: dict, inputs: list):
    from openvino import opset1

    return opset1.gather_tree(*inputs)


SPEC = OpSpec(
    name="GatherTree",
    inputs=INPUTS,
    min_inputs=4,
    attributes={},
    check_attributes=lambda attrs: attrs,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=output_shape,
    bodies=Bodies(GatherTree, {"general": GatherTree}, [Unrolled, Looped]),
    helpers=HELPERS,
    public=GatherTree,
    reference=gather_tree_reference,
    openvino=openvino_node,
)
