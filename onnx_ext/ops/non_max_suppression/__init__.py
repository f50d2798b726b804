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

from ..base import Attr, Bodies, OpSpec, Operand, require_bool, require_index_type, require_version
from ..multiclass_nms import INDEX_TYPES
from ..nms_operands import check_nms_operands, nms_output_shape, nms_output_types
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
    check_nms_operands("NonMaxSuppression", operands, _SCALARS, 4)


output_shape = nms_output_shape


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
    output_type=nms_output_types,
    output_shape=output_shape,
    bodies=Bodies(NonMaxSuppression, {"general": NonMaxSuppression}),
    helpers=HELPERS,
    public=NonMaxSuppression,
    reference=reference,
    openvino=openvino_node,
    outputs=("selected_indices", "selected_scores", "valid_outputs"),
    min_opset=16,  # (as NMSRotated: the domain's NMS bodies share _nms_boxes_checked)
)
