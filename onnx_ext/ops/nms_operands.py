"""Operand checks, output shapes and the reference's outputs shared by the greedy NMS ops of the domain (NonMaxSuppression's soft form,
NMSRotated): boxes [N, M, width], scores [N, C, M], scalar limits and thresholds; their outputs are rows of
[batch, class, box] whose count R is known only when nothing can be selected."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import OpInputError
from ..types import from_onnx, from_ov
from .base import Operand


def check_nms_operands(op: str, operands: Sequence[Operand], scalars: Sequence[str], width: int,
                       layout: str = "") -> None:
    """The named checks of ``op``'s operands: ``scalars`` name the inputs after boxes and scores (the first an
    integer limit, the others floats), ``width`` is the boxes' last dim (``layout`` says what it holds)."""
    boxes, scores = operands[0], operands[1]
    for name, operand in zip(("boxes", "scores", *scalars), operands):
        if operand.type is None:
            continue
        integral = name == "max_output_boxes_per_class"
        if integral and not operand.type.is_integer:
            raise OpInputError(op, f"{name} must be an integer, got {operand.type.ov}")
        if not integral and not operand.type.is_float:
            raise OpInputError(op, f"{name} must be floating-point, got {operand.type.ov}")
        if name in scalars and operand.rank is not None and (operand.rank > 1 or operand.rank == 1 and isinstance(
                operand.shape[0], int) and operand.shape[0] != 1):
            raise OpInputError(op, f"{name} must be a scalar or hold one value, got shape {list(operand.shape)}")
    if None not in (boxes.type, scores.type) and boxes.type != scores.type:
        raise OpInputError(op, f"scores must have boxes' type {boxes.type.ov}, got {scores.type.ov}")
    if boxes.rank is not None and (boxes.rank != 3 or isinstance(boxes.shape[2], int) and boxes.shape[2] != width):
        raise OpInputError(op, f"boxes must be [N, M, {width}]{layout}, got shape {list(boxes.shape)}")
    if scores.rank is not None and scores.rank != 3:
        raise OpInputError(op, f"scores must be [N, C, M], got shape {list(scores.shape)}")
    if boxes.rank == 3 and scores.rank == 3:
        for b, s in ((0, 0), (1, 2)):
            bd, sd = boxes.shape[b], scores.shape[s]
            if isinstance(bd, int) and isinstance(sd, int) and bd != sd:
                raise OpInputError(op, f"boxes {list(boxes.shape)} and scores {list(scores.shape)} do not match")


def nms_output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    # R is known when nothing can be selected (an image, a class, a box or the limit is 0)
    boxes, scores, limit = operands[0], operands[1], operands[2]
    dims = [*(scores.shape if scores.rank == 3 else ()), *(boxes.shape[:2] if boxes.rank == 3 else ())]
    empty = 0 in dims or (limit.value is not None and limit.value.size == 1 and int(limit.value.reshape(-1)[0]) == 0)
    return (0 if empty else None, 3), (0 if empty else None, 3), (1,)


def nms_output_types(attrs: dict, operands: Sequence[Operand]) -> tuple:
    # selected_indices and valid_outputs of output_type (an ONNX element type), selected_scores f32
    return from_onnx(attrs["output_type"]), from_ov("f32"), from_onnx(attrs["output_type"])


def nms_outputs(rows: list, sort_result_descending: bool, output_type: str) -> tuple:
    """The three outputs of a reference NMS from its selected ``rows`` of (score, batch, class, box), in selection
    order: sorted by score (then batch, class, box) when asked, the indices and valid count in ``output_type``."""
    if sort_result_descending:
        rows = sorted(rows, key=lambda r: (-r[0], r[1], r[2], r[3]))
    index_type = np.int32 if output_type == "i32" else np.int64
    indices = np.array([r[1:] for r in rows], index_type).reshape(-1, 3)
    selected = np.array([(r[1], r[2], r[0]) for r in rows], np.float32).reshape(-1, 3)
    return indices, selected, np.array([len(rows)], index_type)
