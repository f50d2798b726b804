"""NMSRotated-13 (greedy NMS of rotated boxes, as detectron2's ``nms_rotated``): the op's record (attributes and
their checks, output types and shapes) and its numpy reference (``reference.py``); body in ``bodies.py``;
semantics and the corners decided in docs/ops/nms_rotated.md.

OpenVINO: NMSRotated(boxes [N, M, 5] (x_ctr, y_ctr, w, h, angle in radians), scores [N, C, M],
max_output_boxes_per_class, iou_threshold, score_threshold) -> selected_indices [R, 3] (batch, class, box) and
valid_outputs [1] of ``output_type`` (an ONNX element type here: INT64 or INT32), selected_scores [R, 3]
(batch, class, score) f32 whatever the inputs' type (OpenVINO's op; the spec says the thresholds' type).
"""

from __future__ import annotations

from typing import Sequence

import onnx

from ..base import Attr, Bodies, OpSpec, Operand, require_bool, require_index_type
from ..multiclass_nms import INDEX_TYPES
from ..nms_operands import check_nms_operands, nms_output_shape, nms_output_types
from .bodies import HELPERS, NMSRotated
from .reference import nms_rotated_reference

__all__ = ["SPEC", "nms_rotated_reference"]

ATTRIBUTES = {
    "sort_result_descending": Attr("int", 1),
    "output_type": Attr("int", onnx.TensorProto.INT64),
    "clockwise": Attr("int", 1),
}
_SCALARS = ("max_output_boxes_per_class", "iou_threshold", "score_threshold")


def check_attributes(attrs: dict) -> dict:
    require_bool("NMSRotated", attrs, "sort_result_descending", "clockwise")
    require_index_type("NMSRotated", attrs, "output_type")
    return attrs


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    check_nms_operands("NMSRotated", operands, _SCALARS, 5, " (x_ctr, y_ctr, w, h, angle)")


output_shape = nms_output_shape


def openvino_node(attrs: dict, inputs: list):
    """The native NMSRotated-13."""
    from openvino.utils.node_factory import NodeFactory

    native = dict(sort_result_descending=bool(attrs["sort_result_descending"]), clockwise=bool(attrs["clockwise"]),
                  output_type=INDEX_TYPES[attrs["output_type"]])
    return NodeFactory("opset13").create("NMSRotated", inputs, native)


def reference(boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold, **attrs):
    return nms_rotated_reference(boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold,
                                 sort_result_descending=bool(attrs["sort_result_descending"]),
                                 output_type=INDEX_TYPES[attrs["output_type"]], clockwise=bool(attrs["clockwise"]))


SPEC = OpSpec(
    name="NMSRotated",
    inputs=("boxes", "scores", *_SCALARS),
    min_inputs=5,
    attributes=ATTRIBUTES,
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=lambda attrs, operands: "general",
    output_type=nms_output_types,
    output_shape=output_shape,
    bodies=Bodies(NMSRotated, {"general": NMSRotated}),
    helpers=HELPERS,
    public=NMSRotated,
    reference=reference,
    openvino=openvino_node,
    outputs=("selected_indices", "selected_scores", "valid_outputs"),
    min_opset=16,  # ScatterND's reduction
)
