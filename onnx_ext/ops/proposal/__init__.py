"""Proposal-1/-4 (Faster R-CNN's region proposals): the op's record (attributes and their checks, body selection,
output shapes) and its numpy reference (``reference.py``); bodies in ``bodies.py``; semantics and the corners
decided in docs/ops/proposal.md.

OpenVINO: Proposal(class_probs [N, 2A, H, W], bbox_deltas [N, 4A, H, W], image_shape [3 or 4]) -> rois
[N * post_nms_topn, 5] (image, x0, y0, x1, y1; after the kept boxes a row starting with -1, zeros after), and for
version 4 probs [N * post_nms_topn]. A = len(ratio) * len(scale) anchors. Booleans are INT 0/1 attributes; a
Proposal-1 node has one output (``rois``).
"""

from __future__ import annotations

from typing import Sequence

from ...errors import OpAttributeError, OpInputError
from ..base import (Attr, Bodies, OpSpec, Operand, require_bool, require_non_negative, require_one_of,
                    require_positive, require_version)
from .bodies import HELPERS, Proposal, proposal_boxes
from .reference import TENSORFLOW, proposal_reference

__all__ = ["SPEC", "VERSIONS", "BOOLEANS", "proposal_reference"]

VERSIONS = (1, 4)
BOOLEANS = ("clip_before_nms", "clip_after_nms", "normalize")
FRAMEWORKS = ("", TENSORFLOW)

ATTRIBUTES = {
    "base_size": Attr("int"),
    "pre_nms_topn": Attr("int"),
    "post_nms_topn": Attr("int"),
    "nms_thresh": Attr("float"),
    "feat_stride": Attr("int"),
    "min_size": Attr("int"),
    "ratio": Attr("floats"),
    "scale": Attr("floats"),
    "clip_before_nms": Attr("int", 1),
    "clip_after_nms": Attr("int", 0),
    "normalize": Attr("int", 0),
    "box_size_scale": Attr("float", 1.0),
    "box_coordinate_scale": Attr("float", 1.0),
    "framework": Attr("string", ""),
    "version": Attr("int", 4),
}


def check_attributes(attrs: dict) -> dict:
    require_version("Proposal", attrs, VERSIONS)
    require_bool("Proposal", attrs, *BOOLEANS)
    require_positive("Proposal", attrs, "base_size", "pre_nms_topn", "post_nms_topn", "feat_stride", "ratio", "scale",
                     "box_size_scale", "box_coordinate_scale")
    for name in ("ratio", "scale"):
        if not attrs[name]:
            raise OpAttributeError("Proposal", name, "must hold at least one value")
    require_non_negative("Proposal", attrs, "min_size", "nms_thresh")
    require_one_of("Proposal", attrs, "framework", FRAMEWORKS)  # '' is Caffe
    return attrs


def anchor_count(attrs: dict) -> int:
    return len(attrs["ratio"]) * len(attrs["scale"])


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    probs, deltas, image = operands
    for name, operand in zip(("class_probs", "bbox_deltas", "image_shape"), operands):
        if operand.type is not None and not operand.type.is_float:
            raise OpInputError("Proposal", f"{name} must be floating-point, got {operand.type.ov}")
    for name, operand, rank in (("class_probs", probs, 4), ("bbox_deltas", deltas, 4), ("image_shape", image, 1)):
        if operand.rank is not None and operand.rank != rank:
            raise OpInputError("Proposal", f"{name} must have rank {rank}, got shape {list(operand.shape)}")
    if image.shape is not None and isinstance(image.shape[0], int) and image.shape[0] not in (3, 4):
        raise OpInputError("Proposal", f"image_shape must hold 3 or 4 values, got {image.shape[0]}")
    a = anchor_count(attrs)
    for name, operand, per in (("class_probs", probs, 2), ("bbox_deltas", deltas, 4)):
        if operand.rank == 4 and isinstance(operand.shape[1], int) and operand.shape[1] != per * a:
            raise OpInputError("Proposal", f"{name}' second dim must be {per} x {a} anchors (ratio x scale), "
                                           f"got {operand.shape[1]}")
    if probs.rank == 4 and deltas.rank == 4:
        for i, what in ((0, "batch"), (2, "height"), (3, "width")):
            p, d = probs.shape[i], deltas.shape[i]
            if isinstance(p, int) and isinstance(d, int) and p != d:
                raise OpInputError("Proposal", f"class_probs and bbox_deltas differ in {what}: {p} and {d}")


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    probs, deltas = operands[0], operands[1]
    n = next((s.shape[0] for s in (probs, deltas) if s.rank == 4 and isinstance(s.shape[0], int)), None)
    rows = None if n is None else n * attrs["post_nms_topn"]
    return (rows, 5), (rows,)


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    return "boxes" if attrs["version"] == 1 else "boxes_and_scores"


def openvino_node(attrs: dict, inputs: list):
    """The native Proposal-1/-4 (booleans as booleans)."""
    from openvino.utils.node_factory import NodeFactory

    native = {k: bool(v) if k in BOOLEANS else v for k, v in attrs.items() if k != "version"}
    return NodeFactory(f"opset{attrs['version']}").create("Proposal", inputs, native)


def reference(class_probs, bbox_deltas, image_shape, **attrs):
    result = proposal_reference(class_probs, bbox_deltas, image_shape, **attrs)
    return result if attrs["version"] == 4 else (result,)


SPEC = OpSpec(
    name="Proposal",
    inputs=("class_probs", "bbox_deltas", "image_shape"),
    min_inputs=3,
    attributes=ATTRIBUTES,
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: (operands[0].type, operands[0].type),
    output_shape=output_shape,
    bodies=Bodies(Proposal, {"boxes": proposal_boxes, "boxes_and_scores": Proposal}),
    helpers=HELPERS,
    public=Proposal,
    reference=reference,
    openvino=openvino_node,
    outputs=("rois", "probs"),
    min_outputs=1,
)
