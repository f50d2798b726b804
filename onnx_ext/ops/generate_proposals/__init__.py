"""GenerateProposals-9 (batched RPN proposals): the op's record (attributes and their checks, output shapes) and
its numpy reference (``reference.py``); body in ``bodies.py``; semantics and corners in docs/ops/generate_proposals.md.

OpenVINO: GenerateProposals(im_info [N, 3 or 4], anchors [H, W, A, 4], deltas [N, 4A, H, W], scores [N, A, H, W])
-> rois [R, 4], scores [R] of the scores' type, roi_num [N] of ``roi_num_type`` (an ONNX element type here: INT64
or INT32).
"""

from __future__ import annotations

from typing import Sequence

import onnx

from ...errors import OpAttributeError, OpInputError
from ...types import from_onnx
from ..base import Attr, Bodies, OpSpec, Operand, require_bool, require_index_type, require_non_negative
from ..multiclass_nms import INDEX_TYPES
from .bodies import HELPERS, GenerateProposals
from .reference import generate_proposals_reference

__all__ = ["SPEC", "generate_proposals_reference"]

ATTRIBUTES = {
    "min_size": Attr("float"),
    "nms_threshold": Attr("float"),
    "pre_nms_count": Attr("int"),
    "post_nms_count": Attr("int"),
    "normalized": Attr("int", 1),
    "nms_eta": Attr("float", 1.0),
    "roi_num_type": Attr("int", onnx.TensorProto.INT64),
}


def check_attributes(attrs: dict) -> dict:
    require_non_negative("GenerateProposals", attrs, "min_size", "nms_threshold", "pre_nms_count", "post_nms_count")
    require_bool("GenerateProposals", attrs, "normalized")
    if attrs["nms_eta"] != 1.0:
        raise OpAttributeError("GenerateProposals", "nms_eta", f"is {attrs['nms_eta']}: OpenVINO's reference and "
                               "CPU plugin implement nms_eta 1 only")
    require_index_type("GenerateProposals", attrs, "roi_num_type")
    return attrs


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    names = ("im_info", "anchors", "deltas", "scores")
    for name, operand, rank in zip(names, operands, (2, 4, 4, 4)):
        if operand.type is not None and not operand.type.is_float:
            raise OpInputError("GenerateProposals", f"{name} must be floating-point, got {operand.type.ov}")
        if operand.rank is not None and operand.rank != rank:
            raise OpInputError("GenerateProposals", f"{name} must have rank {rank}, got shape {list(operand.shape)}")
    info, anchors, deltas, scores = operands
    if info.rank == 2 and isinstance(info.shape[1], int) and info.shape[1] not in (3, 4):
        raise OpInputError("GenerateProposals", f"im_info must be [N, 3] or [N, 4], got {list(info.shape)}")
    if anchors.rank == 4 and isinstance(anchors.shape[3], int) and anchors.shape[3] != 4:
        raise OpInputError("GenerateProposals", f"anchors must be [H, W, A, 4], got {list(anchors.shape)}")
    if None not in (anchors.rank, deltas.rank, scores.rank, info.rank):
        a, d, s = anchors.shape, deltas.shape, scores.shape
        pairs = [(s[0], d[0], "batch"), (s[0], info.shape[0], "batch"), (s[1], a[2], "anchors"),
                 (s[2], d[2], "height"), (s[3], d[3], "width"), (s[2], a[0], "height"), (s[3], a[1], "width")]
        if isinstance(s[1], int) and isinstance(d[1], int) and d[1] != 4 * s[1]:
            raise OpInputError("GenerateProposals", f"deltas must have 4 x {s[1]} anchors channels, got {d[1]}")
        for x, y, what in pairs:
            if isinstance(x, int) and isinstance(y, int) and x != y:
                raise OpInputError("GenerateProposals", f"the inputs differ in {what}: {x} and {y}")


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    scores = operands[3]
    n = scores.shape[0] if scores.rank == 4 and isinstance(scores.shape[0], int) else None
    return (None, 4), (None,), (n,)


def openvino_node(attrs: dict, inputs: list):
    """The native GenerateProposals-9."""
    from openvino.utils.node_factory import NodeFactory

    native = dict(attrs, normalized=bool(attrs["normalized"]), roi_num_type=INDEX_TYPES[attrs["roi_num_type"]])
    return NodeFactory("opset9").create("GenerateProposals", inputs, native)


def reference(im_info, anchors, deltas, scores, **attrs):
    return generate_proposals_reference(im_info, anchors, deltas, scores,
                                        **(attrs | {"roi_num_type": INDEX_TYPES[attrs["roi_num_type"]]}))


SPEC = OpSpec(
    name="GenerateProposals",
    inputs=("im_info", "anchors", "deltas", "scores"),
    min_inputs=4,
    attributes=ATTRIBUTES,
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=lambda attrs, operands: "general",
    output_type=lambda attrs, operands: (operands[3].type, operands[3].type, from_onnx(attrs["roi_num_type"])),
    output_shape=output_shape,
    bodies=Bodies(GenerateProposals, {"general": GenerateProposals}),
    helpers=HELPERS,
    public=GenerateProposals,
    reference=reference,
    openvino=openvino_node,
    outputs=("rois", "scores", "roi_num"),
)
