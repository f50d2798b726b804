"""MulticlassNms-8/-9 (PaddlePaddle's multiclass NMS): the op's record (attributes and their checks, body selection,
output shapes) and its numpy reference (``reference.py``); bodies in ``bodies.py``; semantics and the corners
decided in docs/ops/multiclass_nms.md.

OpenVINO: MulticlassNms(boxes [N, M, 4], scores [N, C, M]) or, version 9, (boxes [C, T, 4], scores [C, T], roisnum
[N]) -> selected_outputs [R, 6] (class, score, x1, y1, x2, y2) of the boxes' type, selected_indices [R, 1] and
selected_num [N] of ``output_type`` (an ONNX element type here: INT64 or INT32, as Range's output_type).
"""

from __future__ import annotations

from typing import Sequence

import onnx

from ...errors import OpAttributeError, OpInputError
from ...types import from_onnx
from ..base import (Attr, Bodies, OpSpec, Operand, require_bool, require_finite, require_index_type,
                    require_one_of, require_version)
from .bodies import HELPERS, MulticlassNms, multiclass_nms_per_class, multiclass_nms_shared
from .reference import SORT_TYPES, multiclass_nms_reference

__all__ = ["SPEC", "VERSIONS", "multiclass_nms_reference"]

VERSIONS = (8, 9)
INDEX_TYPES = {onnx.TensorProto.INT64: "i64", onnx.TensorProto.INT32: "i32"}

ATTRIBUTES = {
    "sort_result_type": Attr("string", "none"),
    "sort_result_across_batch": Attr("int", 0),
    "output_type": Attr("int", onnx.TensorProto.INT64),
    "iou_threshold": Attr("float", 0.0),
    "score_threshold": Attr("float", 0.0),
    "nms_top_k": Attr("int", -1),
    "keep_top_k": Attr("int", -1),
    "background_class": Attr("int", -1),
    "normalized": Attr("int", 1),
    "nms_eta": Attr("float", 1.0),
    "version": Attr("int", 9),
}


def check_attributes(attrs: dict) -> dict:
    require_version("MulticlassNms", attrs, VERSIONS)
    require_one_of("MulticlassNms", attrs, "sort_result_type", SORT_TYPES)
    require_bool("MulticlassNms", attrs, "sort_result_across_batch", "normalized")
    require_index_type("MulticlassNms", attrs, "output_type")
    if not 0 <= attrs["nms_eta"] <= 1:
        raise OpAttributeError("MulticlassNms", "nms_eta", f"is {attrs['nms_eta']}: must be within [0, 1]")
    require_finite("MulticlassNms", attrs, "iou_threshold", "score_threshold")
    return attrs


def _shared(operands: Sequence[Operand]) -> bool | None:
    scores = operands[1]
    return None if scores.rank is None else scores.rank == 3


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    boxes, scores = operands[0], operands[1]
    for name, operand in (("boxes", boxes), ("scores", scores)):
        if operand.type is not None and not operand.type.is_float:
            raise OpInputError("MulticlassNms", f"{name} must be floating-point, got {operand.type.ov}")
    if None not in (boxes.type, scores.type) and boxes.type != scores.type:
        raise OpInputError("MulticlassNms", f"scores must have boxes' type {boxes.type.ov}, got {scores.type.ov}")
    if len(operands) == 3 and operands[2].type is not None and operands[2].type.ov not in ("i32", "i64"):
        raise OpInputError("MulticlassNms", f"roisnum must be i32 or i64, got {operands[2].type.ov}")
    if boxes.rank is not None and (boxes.rank != 3 or isinstance(boxes.shape[2], int) and boxes.shape[2] != 4):
        raise OpInputError("MulticlassNms", f"boxes must be [N or C, M, 4], got shape {list(boxes.shape)}")
    shared = _shared(operands)
    if scores.rank is not None and scores.rank not in (2, 3):
        raise OpInputError("MulticlassNms", f"scores must have rank 3 (or 2 with roisnum), got {list(scores.shape)}")
    if shared is False and (attrs["version"] == 8 or len(operands) < 3):
        raise OpInputError("MulticlassNms", "scores of rank 2 need roisnum (MulticlassNms-9)")
    if shared is not None and boxes.rank == 3:
        pairs = ((0, 0), (1, 2)) if shared else ((0, 0), (1, 1))
        for b, s in pairs:
            bd, sd = boxes.shape[b], scores.shape[s]
            if isinstance(bd, int) and isinstance(sd, int) and bd != sd:
                raise OpInputError("MulticlassNms", f"boxes {list(boxes.shape)} and scores {list(scores.shape)} "
                                                    f"do not match")
    if len(operands) == 3 and operands[2].rank not in (None, 1):
        raise OpInputError("MulticlassNms", f"roisnum must be a vector, got shape {list(operands[2].shape)}")


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    shared = _shared(operands)
    n = None
    if shared and operands[0].rank == 3:
        n = operands[0].shape[0]
    elif shared is False and operands[2].rank == 1:
        n = operands[2].shape[0]
    return (None, 6), (None, 1), (n if isinstance(n, int) else None,)


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    shared = len(operands) == 2 or _shared(operands)
    return "shared" if shared else "per_class" if shared is False else "general"


def openvino_node(attrs: dict, inputs: list):
    """The native MulticlassNms-8/-9."""
    from openvino.utils.node_factory import NodeFactory

    native = {k: v for k, v in attrs.items() if k != "version"}
    native["output_type"] = INDEX_TYPES[attrs["output_type"]]
    for name in ("sort_result_across_batch", "normalized"):
        native[name] = bool(native[name])
    return NodeFactory(f"opset{attrs['version']}").create("MulticlassNms", inputs, native)


def reference(boxes, scores, roisnum=None, **attrs):
    return multiclass_nms_reference(boxes, scores, roisnum,
                                    **(attrs | {"output_type": INDEX_TYPES[attrs["output_type"]]}))


SPEC = OpSpec(
    name="MulticlassNms",
    inputs=("boxes", "scores", "roisnum"),
    min_inputs=2,
    attributes=ATTRIBUTES,
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: (operands[0].type, from_onnx(attrs["output_type"]),
                                         from_onnx(attrs["output_type"])),
    output_shape=output_shape,
    bodies=Bodies(MulticlassNms, {"general": MulticlassNms, "shared": multiclass_nms_shared,
                                  "per_class": multiclass_nms_per_class}),
    helpers=HELPERS,
    public=MulticlassNms,
    reference=reference,
    openvino=openvino_node,
    outputs=("selected_outputs", "selected_indices", "selected_num"),
)
