"""ExperimentalDetectronGenerateProposalsSingleImage-6 (Mask R-CNN's RPN, one image): the op's record (attributes
and their checks, output shapes) and its numpy reference (``generate_proposals/reference.py``); body in
``bodies.py``; semantics and corners in docs/ops/generate_proposals.md.

OpenVINO: ExperimentalDetectronGenerateProposalsSingleImage(im_info [3], anchors [H*W*A, 4], deltas [4A, H, W],
scores [A, H, W]) -> rois [post_nms_count, 4], scores [post_nms_count] (zeros after the kept ones).
"""

from __future__ import annotations

from typing import Sequence

from ...errors import OpInputError
from ..base import Attr, Bodies, OpSpec, Operand, require_non_negative
from ..generate_proposals.reference import ed_generate_proposals_reference
from .bodies import HELPERS, ExperimentalDetectronGenerateProposalsSingleImage

__all__ = ["SPEC"]

NAME = "ExperimentalDetectronGenerateProposalsSingleImage"

ATTRIBUTES = {
    "min_size": Attr("float"),
    "nms_threshold": Attr("float"),
    "post_nms_count": Attr("int"),
    "pre_nms_count": Attr("int"),
}


def check_attributes(attrs: dict) -> dict:
    require_non_negative(NAME, attrs, "min_size", "nms_threshold", "pre_nms_count", "post_nms_count")
    return attrs


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    names = ("im_info", "anchors", "deltas", "scores")
    for name, operand, rank in zip(names, operands, (1, 2, 3, 3)):
        if operand.type is not None and not operand.type.is_float:
            raise OpInputError(NAME, f"{name} must be floating-point, got {operand.type.ov}")
        if operand.rank is not None and operand.rank != rank:
            raise OpInputError(NAME, f"{name} must have rank {rank}, got shape {list(operand.shape)}")
    info, anchors, deltas, scores = operands
    if info.rank == 1 and isinstance(info.shape[0], int) and info.shape[0] != 3:
        raise OpInputError(NAME, f"im_info must hold 3 values, got {info.shape[0]}")
    if anchors.rank == 2 and isinstance(anchors.shape[1], int) and anchors.shape[1] != 4:
        raise OpInputError(NAME, f"anchors must be [H * W * A, 4], got {list(anchors.shape)}")
    if deltas.rank == 3 and scores.rank == 3:
        d, s = deltas.shape, scores.shape
        if isinstance(d[0], int) and isinstance(s[0], int) and d[0] != 4 * s[0]:
            raise OpInputError(NAME, f"deltas must have 4 x {s[0]} anchors channels, got {d[0]}")
        for i, what in ((1, "height"), (2, "width")):
            if isinstance(d[i], int) and isinstance(s[i], int) and d[i] != s[i]:
                raise OpInputError(NAME, f"deltas and scores differ in {what}: {d[i]} and {s[i]}")


def openvino_node(attrs: dict, inputs: list):
    """The native ExperimentalDetectronGenerateProposalsSingleImage-6."""
    from openvino.utils.node_factory import NodeFactory

    return NodeFactory("opset6").create(NAME, inputs, dict(attrs))


SPEC = OpSpec(
    name=NAME,
    inputs=("im_info", "anchors", "deltas", "scores"),
    min_inputs=4,
    attributes=ATTRIBUTES,
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=lambda attrs, operands: "general",
    output_type=lambda attrs, operands: (operands[3].type, operands[3].type),
    output_shape=lambda attrs, operands: ((attrs["post_nms_count"], 4), (attrs["post_nms_count"],)),
    bodies=Bodies(ExperimentalDetectronGenerateProposalsSingleImage,
                  {"general": ExperimentalDetectronGenerateProposalsSingleImage}),
    helpers=HELPERS,
    public=ExperimentalDetectronGenerateProposalsSingleImage,
    reference=ed_generate_proposals_reference,
    openvino=openvino_node,
    outputs=("rois", "scores"),
)
