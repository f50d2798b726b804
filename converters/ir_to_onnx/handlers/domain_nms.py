"""Issue 18's detection heads and NMS ops as nodes of the onnx-ext domain: DetectionOutput-1/-8, ... (one
translator each). Each becomes one node built with ``onnx_ext.model.ir_node`` from what is known of its inputs,
which picks its overload; attributes are read as OpenVINO's IR reader reads them, with the op's defaults."""

from __future__ import annotations

from onnx_ext.ops.detection_output.reference import CODE_TYPES, CORNER

from .. import attributes as attr
from ..context import Context
from ..registry import op_version, translator
from .domain import domain_node


def _booleans(ctx: Context, layer, defaults: dict) -> dict:
    return {name: int(attr.boolean(layer, name, default)) for name, default in defaults.items()}


@translator("DetectionOutput", since=1, until=8, emits=("onnx_ext.DetectionOutput",))
def detection_output(ctx: Context, layer) -> None:
    version = op_version(layer)
    if ctx.n_inputs() not in (3, 5):
        raise ctx.error(f"takes 3 or 5 inputs, the layer has {ctx.n_inputs()}")
    attrs = _booleans(ctx, layer, {"variance_encoded_in_target": False, "share_location": True,
                                   "clip_after_nms": False, "clip_before_nms": False, "decrease_label_id": False,
                                   "normalized": False})
    attrs.update(
        keep_top_k=attr.integers(ctx, layer, "keep_top_k"),
        nms_threshold=attr.number(ctx, layer, "nms_threshold"),
        background_label_id=attr.integer(ctx, layer, "background_label_id", 0),
        top_k=attr.integer(ctx, layer, "top_k", -1),
        code_type=attr.string(ctx, layer, "code_type", CORNER, CODE_TYPES),  # (the op's check is exact)
        confidence_threshold=attr.number(ctx, layer, "confidence_threshold", 0.0),
        input_height=attr.integer(ctx, layer, "input_height", 1),
        input_width=attr.integer(ctx, layer, "input_width", 1),
        objectness_score=attr.number(ctx, layer, "objectness_score", 0.0),
        version=version,
    )
    if version == 1:
        attrs["num_classes"] = attr.integer(ctx, layer, "num_classes")
    values = [ctx.input(i) for i in range(ctx.n_inputs())]
    domain_node(ctx, "DetectionOutput", values, [ctx.out(0)], **attrs)



@translator("Proposal", since=1, until=4, emits=("onnx_ext.Proposal",))
def proposal(ctx: Context, layer) -> None:
    version = op_version(layer)
    attrs = _booleans(ctx, layer, {"clip_before_nms": True, "clip_after_nms": False, "normalize": False})
    attrs.update(
        base_size=attr.integer(ctx, layer, "base_size"),
        pre_nms_topn=attr.integer(ctx, layer, "pre_nms_topn"),
        post_nms_topn=attr.integer(ctx, layer, "post_nms_topn"),
        nms_thresh=attr.number(ctx, layer, "nms_thresh"),
        feat_stride=attr.integer(ctx, layer, "feat_stride"),
        min_size=attr.integer(ctx, layer, "min_size"),
        ratio=attr.numbers(ctx, layer, "ratio"),
        scale=attr.numbers(ctx, layer, "scale"),
        box_size_scale=attr.number(ctx, layer, "box_size_scale", 1.0),
        box_coordinate_scale=attr.number(ctx, layer, "box_coordinate_scale", 1.0),
        framework=attr.string(ctx, layer, "framework", ""),
        version=version,
    )
    values = [ctx.input(i) for i in range(3)]
    domain_node(ctx, "Proposal", values, [ctx.out(i) for i in range(1 if version == 1 else 2)], **attrs)


def _nms_attributes(ctx: Context, layer) -> dict:
    """The attributes MulticlassNms and MatrixNms share, with their IR defaults."""
    index_type = attr.element(ctx, layer, "output_type", "i64")
    if index_type is None or index_type.ov not in ("i32", "i64"):
        raise ctx.error(f"output_type must be i32 or i64, got {index_type.ov if index_type else 'dynamic'}")
    attrs = _booleans(ctx, layer, {"sort_result_across_batch": False, "normalized": True})
    attrs.update(
        sort_result_type=attr.choice(ctx, layer, "sort_result_type", ("classid", "score", "none"), "none"),
        output_type=index_type.onnx,
        score_threshold=attr.number(ctx, layer, "score_threshold", 0.0),
        nms_top_k=attr.integer(ctx, layer, "nms_top_k", -1),
        keep_top_k=attr.integer(ctx, layer, "keep_top_k", -1),
        background_class=attr.integer(ctx, layer, "background_class", -1),
    )
    return attrs


@translator("MulticlassNms", since=8, until=9, emits=("onnx_ext.MulticlassNms",))
def multiclass_nms(ctx: Context, layer) -> None:
    version = op_version(layer)
    if ctx.n_inputs() not in (2, 3) or (version == 8 and ctx.n_inputs() != 2):
        raise ctx.error(f"takes {'2' if version == 8 else '2 or 3'} inputs, the layer has {ctx.n_inputs()}")
    attrs = _nms_attributes(ctx, layer)
    attrs.update(
        iou_threshold=attr.number(ctx, layer, "iou_threshold", 0.0),
        nms_eta=attr.number(ctx, layer, "nms_eta", 1.0),
        version=version,
    )
    values = [ctx.input(i) for i in range(ctx.n_inputs())]
    domain_node(ctx, "MulticlassNms", values, [ctx.out(i) for i in range(3)], **attrs)


@translator("MatrixNms", since=8, until=8, emits=("onnx_ext.MatrixNms",))
def matrix_nms(ctx: Context, layer) -> None:
    attrs = _nms_attributes(ctx, layer)
    attrs.update(
        decay_function=attr.choice(ctx, layer, "decay_function", ("gaussian", "linear"), "linear"),
        gaussian_sigma=attr.number(ctx, layer, "gaussian_sigma", 2.0),
        post_threshold=attr.number(ctx, layer, "post_threshold", 0.0),
    )
    values = [ctx.input(i) for i in range(2)]
    domain_node(ctx, "MatrixNms", values, [ctx.out(i) for i in range(3)], **attrs)


@translator("GenerateProposals", since=9, until=9, emits=("onnx_ext.GenerateProposals",))
def generate_proposals(ctx: Context, layer) -> None:
    index_type = attr.element(ctx, layer, "roi_num_type", "i64")
    if index_type is None or index_type.ov not in ("i32", "i64"):
        raise ctx.error(f"roi_num_type must be i32 or i64, got {index_type.ov if index_type else 'dynamic'}")
    attrs = _booleans(ctx, layer, {"normalized": True})
    attrs.update(
        min_size=attr.number(ctx, layer, "min_size"),
        nms_threshold=attr.number(ctx, layer, "nms_threshold"),
        pre_nms_count=attr.integer(ctx, layer, "pre_nms_count"),
        post_nms_count=attr.integer(ctx, layer, "post_nms_count"),
        nms_eta=attr.number(ctx, layer, "nms_eta", 1.0),
        roi_num_type=index_type.onnx,
    )
    values = [ctx.input(i) for i in range(4)]
    domain_node(ctx, "GenerateProposals", values, [ctx.out(i) for i in range(3)], **attrs)


@translator("ExperimentalDetectronGenerateProposalsSingleImage", since=6, until=6,
            emits=("onnx_ext.ExperimentalDetectronGenerateProposalsSingleImage",))
def experimental_detectron_generate_proposals_single_image(ctx: Context, layer) -> None:
    attrs = dict(min_size=attr.number(ctx, layer, "min_size"), nms_threshold=attr.number(ctx, layer, "nms_threshold"),
                 post_nms_count=attr.integer(ctx, layer, "post_nms_count"),
                 pre_nms_count=attr.integer(ctx, layer, "pre_nms_count"))
    values = [ctx.input(i) for i in range(4)]
    domain_node(ctx, "ExperimentalDetectronGenerateProposalsSingleImage", values, [ctx.out(i) for i in range(2)],
                **attrs)


@translator("NMSRotated", since=13, until=13, emits=("onnx_ext.NMSRotated",))
def nms_rotated(ctx: Context, layer) -> None:
    if ctx.n_inputs() != 5:
        raise ctx.error(f"takes 5 inputs, the layer has {ctx.n_inputs()}")
    index_type = attr.element(ctx, layer, "output_type", "i64")
    if index_type is None or index_type.ov not in ("i32", "i64"):
        raise ctx.error(f"output_type must be i32 or i64, got {index_type.ov if index_type else 'dynamic'}")
    attrs = _booleans(ctx, layer, {"sort_result_descending": True, "clockwise": True})
    attrs["output_type"] = index_type.onnx
    values = [ctx.input(i) for i in range(5)]
    domain_node(ctx, "NMSRotated", values, [ctx.out(i) for i in range(3)], **attrs)
