"""NonMaxSuppression-5/-9 with soft-NMS (``soft_nms_sigma`` > 0, TensorFlow's non_max_suppression_v5 /
``tf.image.non_max_suppression_with_scores``), which ONNX's NonMaxSuppression cannot do: the op's record
(attributes and their checks, output types and shapes) and its numpy reference (``reference.py``); body in
``bodies.py``; semantics and the corners decided in docs/ops/non_max_suppression.md. The IR -> ONNX translator
keeps hard NMS (a constant sigma of 0) on ONNX's NonMaxSuppression.

OpenVINO: NonMaxSuppression(boxes [N, M, 4], scores [N, C, M], max_output_boxes_per_class, iou_threshold,
score_threshold, soft_nms_sigma) -> selected_indices [R, 3] (batch, class, box) and valid_outputs [1] of
``output_type`` (an ONNX element type here: INT64 or INT32), selected_scores [R, 3] (batch, class, decayed score)
f32; ``version`` 5 or 9 (NMS-5 also suppresses at IoU >= iou_threshold in soft mode, NMS-9 does not),
``center_point_box`` 1 for OpenVINO's box_encoding "center".
"""

from __future__ import annotations

from typing import Sequence

import onnx

from ...errors import OpInputError
from ...types import from_onnx, from_ov
from ..base import Attr, Bodies, OpSpec, Operand, require_bool, require_index_type, require_version
from ..multiclass_nms import INDEX_TYPES
from .bodies import HELPERS, NonMaxSuppression
from .reference import non_max_suppression_reference

__all__ = ["SPEC", "non_max_suppression_reference"]

VERSIONS = (5, 9)
ATTRIBUTES = {
    "version": Attr("int", 9),
    "center_point_box": Attr("int", 0),
    "sort_result_descending": Attr("int", 1),
    "output_type": Attr("int", onnx.TensorProto.INT64),
}
_SCALARS = ("max_output_boxes_per_class", "iou_threshold", "score_threshold", "soft_nms_sigma")


def check_attributes(attrs: dict) -> dict:
    require_version("NonMaxSuppression", attrs, VERSIONS)
    require_bool("NonMaxSuppression", attrs, "sort_result_descending", "center_point_box")
    require_index_type("NonMaxSuppression", attrs, "output_type")
    return attrs


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    boxes, scores = operands[0], operands[1]
    for name, operand in zip(("boxes", "scores", *_SCALARS), operands):
        if operand.type is None:
            continue
        integral = name == "max_output_boxes_per_class"
        if integral and not operand.type.is_integer:
            raise OpInputError("NonMaxSuppression", f"{name} must be an integer, got {operand.type.ov}")
        if not integral and not operand.type.is_float:
            raise OpInputError("NonMaxSuppression", f"{name} must be floating-point, got {operand.type.ov}")
        if name in _SCALARS and operand.rank is not None and (operand.rank > 1 or operand.rank == 1 and isinstance(
                operand.shape[0], int) and operand.shape[0] != 1):
            raise OpInputError("NonMaxSuppression", f"{name} must be a scalar or hold one value, got shape "
                                                    f"{list(operand.shape)}")
    if None not in (boxes.type, scores.type) and boxes.type != scores.type:
        raise OpInputError("NonMaxSuppression", f"scores must have boxes' type {boxes.type.ov}, got {scores.type.ov}")
    if boxes.rank is not None and (boxes.rank != 3 or isinstance(boxes.shape[2], int) and boxes.shape[2] != 4):
        raise OpInputError("NonMaxSuppression", f"boxes must be [N, M, 4], got shape {list(boxes.shape)}")
    if scores.rank is not None and scores.rank != 3:
        raise OpInputError("NonMaxSuppression", f"scores must be [N, C, M], got shape {list(scores.shape)}")
    if boxes.rank == 3 and scores.rank == 3:
        for b, s in ((0, 0), (1, 2)):
            bd, sd = boxes.shape[b], scores.shape[s]
            if isinstance(bd, int) and isinstance(sd, int) and bd != sd:
                raise OpInputError("NonMaxSuppression", f"boxes {list(boxes.shape)} and scores "
                                                        f"{list(scores.shape)} do not match")


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    # R is known when nothing can be selected (an image, a class, a box or the limit is 0)
    boxes, scores, limit = operands[0], operands[1], operands[2]
    dims = [*(scores.shape if scores.rank == 3 else ()), *(boxes.shape[:2] if boxes.rank == 3 else ())]
    empty = 0 in dims or (limit.value is not None and limit.value.size == 1 and int(limit.value.reshape(-1)[0]) == 0)
    return (0 if empty else None, 3), (0 if empty else None, 3), (1,)


def openvino_node(attrs: dict, inputs: list):
    """The native NonMaxSuppression-5/-9."""
    from openvino.utils.node_factory import NodeFactory

    native = dict(box_encoding="center" if attrs["center_point_box"] else "corner",
                  sort_result_descending=bool(attrs["sort_result_descending"]),
                  output_type=INDEX_TYPES[attrs["output_type"]])
    return NodeFactory(f"opset{attrs['version']}").create("NonMaxSuppression", inputs, native)


def reference(boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold, soft_nms_sigma, **attrs):
    return non_max_suppression_reference(boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold,
                                         soft_nms_sigma, version=attrs["version"],
                                         center_point_box=bool(attrs["center_point_box"]),
                                         sort_result_descending=bool(attrs["sort_result_descending"]),
                                         output_type=INDEX_TYPES[attrs["output_type"]])


SPEC = OpSpec(
    name="NonMaxSuppression",
    inputs=("boxes", "scores", *_SCALARS),
    min_inputs=6,
    attributes=ATTRIBUTES,
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=lambda attrs, operands: "general",
    output_type=lambda attrs, operands: (from_onnx(attrs["output_type"]), from_ov("f32"),
                                         from_onnx(attrs["output_type"])),
    output_shape=output_shape,
    bodies=Bodies(NonMaxSuppression, {"general": NonMaxSuppression}),
    helpers=HELPERS,
    public=NonMaxSuppression,
    reference=reference,
    openvino=openvino_node,
    outputs=("selected_indices", "selected_scores", "valid_outputs"),
    min_opset=16,  # (as NMSRotated: the domain's NMS bodies share _nms_boxes_checked)
)
