"""DetectionOutput-1/-8 (SSD's head): the op's record (attributes and their checks, body selection, output
shape) and its numpy reference (``reference.py``); bodies in ``bodies.py``; semantics and the corners decided in
docs/ops/detection_output.md.

OpenVINO: DetectionOutput(box_logits [N, P*L*4], class_preds [N, P*C], proposals [1 or N, 1 or 2, P*(4|5)],
optional aux_class_preds [N, P*2] and aux_box_preds [N, P*L*4]) -> [1, 1, rows, 7] rows of (image, label, score,
x0, y0, x1, y1), a row with image -1 after the last detection, zeros after it. Version 1 has ``num_classes``;
version 8 reads C from the shapes. Booleans are INT 0/1 attributes.
"""

from __future__ import annotations

from typing import Sequence

from ...errors import OpAttributeError, OpInputError
from ..base import Attr, Bodies, OpSpec, Operand, require_bool, require_one_of, require_positive, require_version
from .bodies import HELPERS, DetectionOutput, detection_output_plain
from .reference import CODE_TYPES, CORNER, detection_output_reference, output_rows

__all__ = ["SPEC", "VERSIONS", "BOOLEANS", "detection_output_reference"]

VERSIONS = (1, 8)
BOOLEANS = ("variance_encoded_in_target", "share_location", "clip_after_nms", "clip_before_nms", "decrease_label_id",
            "normalized")
_INPUT_RANKS = {"box_logits": 2, "class_preds": 2, "proposals": 3, "aux_class_preds": 2, "aux_box_preds": 2}

ATTRIBUTES = {
    "keep_top_k": Attr("ints"),
    "nms_threshold": Attr("float"),
    "background_label_id": Attr("int", 0),
    "top_k": Attr("int", -1),
    "variance_encoded_in_target": Attr("int", 0),
    "code_type": Attr("string", CORNER),
    "share_location": Attr("int", 1),
    "confidence_threshold": Attr("float", 0.0),
    "clip_after_nms": Attr("int", 0),
    "clip_before_nms": Attr("int", 0),
    "decrease_label_id": Attr("int", 0),
    "normalized": Attr("int", 0),
    "input_height": Attr("int", 1),
    "input_width": Attr("int", 1),
    "objectness_score": Attr("float", 0.0),
    "num_classes": Attr("int", -1),  # DetectionOutput-1 only (-1: absent, version 8)
    "version": Attr("int", 8),
}


def check_attributes(attrs: dict) -> dict:
    def bad(name, problem):
        raise OpAttributeError("DetectionOutput", name, problem)

    require_version("DetectionOutput", attrs, VERSIONS)
    require_bool("DetectionOutput", attrs, *BOOLEANS)
    require_one_of("DetectionOutput", attrs, "code_type", CODE_TYPES)
    if not attrs["keep_top_k"]:
        bad("keep_top_k", "must hold at least one value")
    if attrs["version"] == 1 and attrs["num_classes"] <= 0:
        bad("num_classes", f"is {attrs['num_classes']}: DetectionOutput-1 needs a number of classes above 0")
    if attrs["version"] == 8 and attrs["num_classes"] != -1:
        bad("num_classes", "is not an attribute of DetectionOutput-8 (it reads the classes from class_preds)")
    if not attrs["normalized"]:  # the sizes divide the priors
        require_positive("DetectionOutput", attrs, "input_height", "input_width")
    if attrs["objectness_score"] < 0:  # NaN and infinities pass, as in OpenVINO
        bad("objectness_score", f"is {attrs['objectness_score']}: the spec wants a non-negative number")
    return attrs


def _static(dim) -> int | None:
    return dim if isinstance(dim, int) else None


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    if len(operands) == 4:
        raise OpInputError("DetectionOutput", "takes 3 or 5 inputs (both aux inputs or none), got 4")
    names = list(_INPUT_RANKS)
    first = operands[0].type
    for name, operand in zip(names, operands):
        if operand.type is not None and not operand.type.is_float:
            raise OpInputError("DetectionOutput", f"{name} must be floating-point, got {operand.type.ov}")
        if operand.rank is not None and operand.rank != _INPUT_RANKS[name]:
            raise OpInputError("DetectionOutput", f"{name} must have rank {_INPUT_RANKS[name]}, got shape "
                                                  f"{list(operand.shape)}")
        if name in ("class_preds", "aux_class_preds", "aux_box_preds") and None not in (operand.type, first) \
                and operand.type != first:
            raise OpInputError("DetectionOutput", f"{name} must have box_logits' type {first.ov}, got "
                                                  f"{operand.type.ov}")
    p, c, n, loc = _sizes(attrs, operands)
    proposals = operands[2]
    if proposals.shape is not None:
        rows = _static(proposals.shape[1])
        want = 1 if attrs["variance_encoded_in_target"] else 2
        if rows is not None and rows != want:
            raise OpInputError("DetectionOutput", f"proposals' second dim must be {want} with "
                                                  f"variance_encoded_in_target={attrs['variance_encoded_in_target']}, "
                                                  f"got {rows}")
        width, prior_size = _static(proposals.shape[2]), 4 if attrs["normalized"] else 5
        if width is not None and (width % prior_size or width == 0):
            raise OpInputError("DetectionOutput", f"proposals' third dim {width} must be a positive multiple of "
                                                  f"prior_size {prior_size}")
        batch = _static(proposals.shape[0])
        if batch is not None and n is not None and batch not in (1, n):
            raise OpInputError("DetectionOutput", f"proposals' first dim must be 1 or the batch {n}, got {batch}")
    if p is None:
        return
    conf = operands[1]
    width = _static(conf.shape[1]) if conf.shape is not None else None
    if width is not None and (width % p or (attrs["version"] == 1 and width != p * attrs["num_classes"])):
        want = f"{p} x num_classes {attrs['num_classes']}" if attrs["version"] == 1 else f"a multiple of {p} priors"
        raise OpInputError("DetectionOutput", f"class_preds' second dim must be {want}, got {width}")
    if c is not None and loc is not None and operands[0].shape is not None:
        width = _static(operands[0].shape[1])
        if width is not None and width != p * loc * 4:
            raise OpInputError("DetectionOutput", f"box_logits' second dim must be {p} priors x {loc} location "
                                                  f"classes x 4 = {p * loc * 4}, got {width}")
    if len(operands) == 5:
        aux = operands[3].shape
        if aux is not None and _static(aux[1]) is not None and aux[1] != 2 * p:
            raise OpInputError("DetectionOutput", f"aux_class_preds' second dim must be 2 x {p} priors, got {aux[1]}")
        a, b = operands[4].shape, operands[0].shape
        if a is not None and b is not None and all(isinstance(d, int) for d in (*a, *b)) and a != b:
            raise OpInputError("DetectionOutput", f"aux_box_preds' shape {list(a)} must be box_logits' {list(b)}")


def _sizes(attrs: dict, operands: Sequence[Operand]) -> tuple[int | None, ...]:
    """(priors, classes, images, location classes) as far as the shapes tell."""
    proposals, conf, loc = operands[2].shape, operands[1].shape, operands[0].shape
    prior_size = 4 if attrs["normalized"] else 5
    width = _static(proposals[2]) if proposals is not None and len(proposals) == 3 else None
    p = width // prior_size if width else None
    c = attrs["num_classes"] if attrs["version"] == 1 else None
    if c is None and p and conf is not None and len(conf) == 2 and _static(conf[1]) is not None:
        c = conf[1] // p
    n = next((_static(s[0]) for s in (loc, conf) if s is not None and s and _static(s[0]) is not None), None)
    return p, c, n, (1 if attrs["share_location"] else c)


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    p, c, n, _ = _sizes(attrs, operands)
    keep, top_k = attrs["keep_top_k"][0], attrs["top_k"]
    needs = (n,) if keep > 0 else (n, c) if keep == -1 and top_k > 0 else (n, c, p)
    rows = output_rows(attrs, n, p, c) if None not in needs else None
    return (1, 1, rows, 7)


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    return "aux" if len(operands) == 5 else "plain"


def openvino_node(attrs: dict, inputs: list):
    """The native DetectionOutput-1/-8 (booleans as booleans; no num_classes in version 8)."""
    from openvino.utils.node_factory import NodeFactory

    native = {k: bool(v) if k in BOOLEANS else v for k, v in attrs.items() if k != "version"}
    if attrs["version"] == 8:
        del native["num_classes"]
    return NodeFactory(f"opset{attrs['version']}").create("DetectionOutput", inputs, native)


SPEC = OpSpec(
    name="DetectionOutput",
    inputs=tuple(_INPUT_RANKS),
    min_inputs=3,
    attributes=ATTRIBUTES,
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=output_shape,
    bodies=Bodies(DetectionOutput, {"plain": detection_output_plain, "aux": DetectionOutput}),
    helpers=HELPERS,
    public=DetectionOutput,
    reference=detection_output_reference,
    openvino=openvino_node,
)
