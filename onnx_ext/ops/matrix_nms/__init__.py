"""MatrixNms-8 (SOLOv2's / PaddleDetection's matrix NMS): the op's record (attributes and their checks, output
shapes) and its numpy reference (``reference.py``); body in ``bodies.py``; semantics and the corners decided in
docs/ops/matrix_nms.md.

OpenVINO: MatrixNms(boxes [N, M, 4], scores [N, C, M]) -> selected_outputs [R, 6] (class, decayed score, x1, y1,
x2, y2) of the boxes' type, selected_indices [R, 1] and selected_num [N] of ``output_type`` (an ONNX element type
here: INT64 or INT32).
"""

from __future__ import annotations

from typing import Sequence

import onnx

from ...errors import OpInputError
from ...types import from_onnx
from ..base import (Attr, Bodies, OpSpec, Operand, require_bool, require_finite, require_index_type,
                    require_one_of)
from ..multiclass_nms import INDEX_TYPES
from .bodies import HELPERS, MatrixNms
from .reference import DECAY_FUNCTIONS, SORT_TYPES, matrix_nms_reference

__all__ = ["SPEC", "matrix_nms_reference"]

ATTRIBUTES = {
    "sort_result_type": Attr("string", "none"),
    "sort_result_across_batch": Attr("int", 0),
    "output_type": Attr("int", onnx.TensorProto.INT64),
    "score_threshold": Attr("float", 0.0),
    "nms_top_k": Attr("int", -1),
    "keep_top_k": Attr("int", -1),
    "background_class": Attr("int", -1),
    "normalized": Attr("int", 1),
    "decay_function": Attr("string", "linear"),
    "gaussian_sigma": Attr("float", 2.0),
    "post_threshold": Attr("float", 0.0),
}


def check_attributes(attrs: dict) -> dict:
    require_one_of("MatrixNms", attrs, "sort_result_type", SORT_TYPES)
    require_one_of("MatrixNms", attrs, "decay_function", DECAY_FUNCTIONS)
    require_bool("MatrixNms", attrs, "sort_result_across_batch", "normalized")
    require_index_type("MatrixNms", attrs, "output_type")
    require_finite("MatrixNms", attrs, "score_threshold", "post_threshold", "gaussian_sigma")
    return attrs


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    boxes, scores = operands
    for name, operand in (("boxes", boxes), ("scores", scores)):
        if operand.type is not None and not operand.type.is_float:
            raise OpInputError("MatrixNms", f"{name} must be floating-point, got {operand.type.ov}")
    if None not in (boxes.type, scores.type) and boxes.type != scores.type:
        raise OpInputError("MatrixNms", f"scores must have boxes' type {boxes.type.ov}, got {scores.type.ov}")
    if boxes.rank is not None and (boxes.rank != 3 or isinstance(boxes.shape[2], int) and boxes.shape[2] != 4):
        raise OpInputError("MatrixNms", f"boxes must be [N, M, 4], got shape {list(boxes.shape)}")
    if scores.rank is not None and scores.rank != 3:
        raise OpInputError("MatrixNms", f"scores must be [N, C, M], got shape {list(scores.shape)}")
    if boxes.rank == 3 and scores.rank == 3:
        for b, s in ((0, 0), (1, 2)):
            bd, sd = boxes.shape[b], scores.shape[s]
            if isinstance(bd, int) and isinstance(sd, int) and bd != sd:
                raise OpInputError("MatrixNms", f"boxes {list(boxes.shape)} and scores {list(scores.shape)} do not "
                                                f"match")


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    boxes = operands[0]
    n = boxes.shape[0] if boxes.rank == 3 and isinstance(boxes.shape[0], int) else None
    return (None, 6), (None, 1), (n,)


def openvino_node(attrs: dict, inputs: list):
    """The native MatrixNms-8."""
    from openvino.utils.node_factory import NodeFactory

    native = dict(attrs, output_type=INDEX_TYPES[attrs["output_type"]], normalized=bool(attrs["normalized"]),
                  sort_result_across_batch=bool(attrs["sort_result_across_batch"]))
    return NodeFactory("opset8").create("MatrixNms", inputs, native)


def reference(boxes, scores, **attrs):
    return matrix_nms_reference(boxes, scores, **(attrs | {"output_type": INDEX_TYPES[attrs["output_type"]]}))


SPEC = OpSpec(
    name="MatrixNms",
    inputs=("boxes", "scores"),
    min_inputs=2,
    attributes=ATTRIBUTES,
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=lambda attrs, operands: "general",
    output_type=lambda attrs, operands: (operands[0].type, from_onnx(attrs["output_type"]),
                                         from_onnx(attrs["output_type"])),
    output_shape=output_shape,
    bodies=Bodies(MatrixNms, {"general": MatrixNms}),
    helpers=HELPERS,
    public=MatrixNms,
    reference=reference,
    openvino=openvino_node,
    outputs=("selected_outputs", "selected_indices", "selected_num"),
)
