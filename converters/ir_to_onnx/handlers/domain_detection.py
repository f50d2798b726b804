"""Issue 18's detection ops as nodes of the onnx-ext domain: PriorBox-1/-8, PriorBoxClustered-1,
RegionYolo-1, PSROIPooling-1, DeformablePSROIPooling-1,
ROIAlignRotated-15, the ExperimentalDetectron
PriorGridGenerator-6, TopKROIs-6, ROIFeatureExtractor-6 and DetectionOutput-6 (one translator each).

Each becomes one node built with ``onnx_ext.model.ir_node`` from what is known of its inputs (types, shapes,
constants), which picks its overload. Where the inputs decide the output (a PriorBox over static shapes), the
output is the constant the op's numpy reference computes: constant inputs, or inputs that a few nodes compute from
constants (the ShapeOf -> StridedSlice chain that feeds PriorBox in SSD IRs).
"""

from __future__ import annotations

import math

import numpy as np
import onnx_ir as ir

from onnx_ext.ops import SPECS, Operand
from onnx_ext.ops import prior_box as prior_box_op
from onnx_ext.ops import psroi_pooling as psroi_op

from .. import attributes as attr
from ..context import Context, Value
from ..fold import evaluate
from ..registry import op_version, translator
from .domain import domain_node

#: Nodes a constant input may be computed through (ShapeOf -> StridedSlice / Gather / Concat...).
_FOLD_DEPTH = 16
#: Folded outputs up to this many elements become initializers (a PriorBox of SSD300: 2 x 34,928).
_FOLD_ELEMENTS = 1 << 22


def constant_value(ctx: Context, v: Value) -> np.ndarray | None:
    """The value of ``v`` when it is a constant, or computed by at most _FOLD_DEPTH nodes (standard or of the
    domain) from constants; None otherwise."""
    if v.const is not None:
        return np.asarray(v.const)
    producers = {o.name: n for n in ctx.nodes for o in n.outputs}
    needed, pending = set(), [v.name]
    while pending:
        name = pending.pop()
        if name in ctx.constants:
            continue
        node = producers.get(name)
        if node is None or any(a.type == ir.AttributeType.GRAPH for a in node.attributes.values()):
            return None
        if id(node) not in needed:
            needed.add(id(node))
            if len(needed) > _FOLD_DEPTH:
                return None
            pending += [i.name for i in node.inputs if i is not None]
    value = evaluate(ctx, [n for n in ctx.nodes if id(n) in needed], [v.name])
    return None if value is None else value[0]


def domain_node_or_constant(ctx: Context, op_type: str, values: list[Value], **attrs) -> None:
    """The node of the domain, or its output as a constant when the inputs' values are known."""
    known = [constant_value(ctx, v) for v in values]
    spec = SPECS[op_type]
    if all(k is not None for k in known):
        normalized = spec.normalize(attrs, ctx.layer.name)
        operands = [Operand(v.type, np.shape(k), k) for v, k in zip(values, known)]
        spec.check_inputs(normalized, operands, ctx.layer.name)
        shapes = spec.output_shapes(normalized, operands)
        if all(s is not None and all(isinstance(d, int) for d in s) and math.prod(s) <= _FOLD_ELEMENTS
               for s in shapes):
            for i, r in enumerate(spec.run_reference(*known, **normalized)):
                ctx.set_const(i, np.asarray(r))
            return
    domain_node(ctx, op_type, values, [ctx.out(i) for i in range(len(spec.outputs))], **attrs)


# --- PriorBox-1/-8 -------------------------------------------------------------------------------------------


@translator("PriorBox", since=1, emits=("onnx_ext.PriorBox",))
def prior_box(ctx: Context, layer) -> None:
    version = op_version(layer)
    attrs = {name: attr.numbers(ctx, layer, name, []) for name in prior_box_op.FLOAT_LISTS}
    attrs |= {"offset": attr.number(ctx, layer, "offset", 0.0), "step": attr.number(ctx, layer, "step", 0.0),
              "clip": int(attr.boolean(layer, "clip", False)), "flip": int(attr.boolean(layer, "flip", False)),
              "scale_all_sizes": int(attr.boolean(layer, "scale_all_sizes", True)), "version": version}
    if version >= 8:
        attrs["min_max_aspect_ratios_order"] = int(attr.boolean(layer, "min_max_aspect_ratios_order", True))
    domain_node_or_constant(ctx, "PriorBox", [ctx.input(0), ctx.input(1)], **attrs)


@translator("PriorBoxClustered", since=1, emits=("onnx_ext.PriorBoxClustered",))
def prior_box_clustered(ctx: Context, layer) -> None:
    attrs = {name: attr.numbers(ctx, layer, name, []) for name in ("width", "height", "variance")}
    attrs |= {name: attr.number(ctx, layer, name, 0.0) for name in ("step", "step_w", "step_h", "offset")}
    attrs["clip"] = int(attr.boolean(layer, "clip", True))
    domain_node_or_constant(ctx, "PriorBoxClustered", [ctx.input(0), ctx.input(1)], **attrs)


@translator("RegionYolo", since=1, emits=("onnx_ext.RegionYolo",))
def region_yolo(ctx: Context, layer) -> None:
    attrs = {name: attr.integer(ctx, layer, name) for name in ("coords", "classes", "num", "axis", "end_axis")}
    # absent, do_softmax is what OpenVINO's reader leaves it: false (the spec's default is true)
    attrs |= {"do_softmax": int(attr.boolean(layer, "do_softmax", False)),
              "mask": attr.integers(ctx, layer, "mask", []), "anchors": attr.numbers(ctx, layer, "anchors", [])}
    domain_node(ctx, "RegionYolo", [ctx.input(0)], [ctx.out(0)], **attrs)


@translator("PSROIPooling", since=1, emits=("onnx_ext.PSROIPooling",))
def psroi_pooling(ctx: Context, layer) -> None:
    attrs = {name: attr.integer(ctx, layer, name, 1) for name in ("group_size", "spatial_bins_x", "spatial_bins_y")}
    attrs |= {"output_dim": attr.integer(ctx, layer, "output_dim"), "spatial_scale": attr.number(ctx, layer,
                                                                                                  "spatial_scale"),
              "mode": attr.choice(ctx, layer, "mode", psroi_op.MODES, "average")}
    domain_node(ctx, "PSROIPooling", [ctx.input(0), ctx.input(1)], [ctx.out(0)], **attrs)


@translator("DeformablePSROIPooling", since=1, emits=("onnx_ext.DeformablePSROIPooling",))
def deformable_psroi_pooling(ctx: Context, layer) -> None:
    ints = ("group_size", "spatial_bins_x", "spatial_bins_y", "part_size")
    attrs = {name: attr.integer(ctx, layer, name, 1) for name in ints}
    attrs |= {"output_dim": attr.integer(ctx, layer, "output_dim"),
              "spatial_scale": attr.number(ctx, layer, "spatial_scale"),
              "trans_std": attr.number(ctx, layer, "trans_std", 1.0),
              "mode": attr.choice(ctx, layer, "mode", ("bilinear_deformable",), "bilinear_deformable")}
    values = [ctx.input(i) for i in range(min(ctx.n_inputs(), 3))]
    domain_node(ctx, "DeformablePSROIPooling", values, [ctx.out(0)], **attrs)


@translator("ROIAlignRotated", since=15, emits=("onnx_ext.ROIAlignRotated",))
def roi_align_rotated(ctx: Context, layer) -> None:
    attrs = {name: attr.integer(ctx, layer, name) for name in ("pooled_h", "pooled_w", "sampling_ratio")}
    attrs |= {"spatial_scale": attr.number(ctx, layer, "spatial_scale"),
              "clockwise_mode": int(attr.boolean(layer, "clockwise_mode", False))}
    domain_node(ctx, "ROIAlignRotated", [ctx.input(i) for i in range(3)], [ctx.out(0)], **attrs)


@translator("ExperimentalDetectronPriorGridGenerator", since=6,
            emits=("onnx_ext.ExperimentalDetectronPriorGridGenerator",))
def prior_grid_generator(ctx: Context, layer) -> None:
    attrs = {"flatten": int(attr.boolean(layer, "flatten", True)), "h": attr.integer(ctx, layer, "h", 0),
             "w": attr.integer(ctx, layer, "w", 0), "stride_x": attr.number(ctx, layer, "stride_x", 0.0),
             "stride_y": attr.number(ctx, layer, "stride_y", 0.0)}
    domain_node(ctx, "ExperimentalDetectronPriorGridGenerator", [ctx.input(i) for i in range(3)], [ctx.out(0)],
                **attrs)


@translator("ExperimentalDetectronTopKROIs", since=6, emits=("onnx_ext.ExperimentalDetectronTopKROIs",))
def topk_rois(ctx: Context, layer) -> None:
    domain_node(ctx, "ExperimentalDetectronTopKROIs", [ctx.input(0), ctx.input(1)], [ctx.out(0)],
                max_rois=attr.integer(ctx, layer, "max_rois", 0))


@translator("ExperimentalDetectronROIFeatureExtractor", since=6,
            emits=("onnx_ext.ExperimentalDetectronROIFeatureExtractor",))
def roi_feature_extractor(ctx: Context, layer) -> None:
    attrs = {"output_size": attr.integer(ctx, layer, "output_size"),
             "sampling_ratio": attr.integer(ctx, layer, "sampling_ratio"),
             "pyramid_scales": attr.integers(ctx, layer, "pyramid_scales"),
             "aligned": int(attr.boolean(layer, "aligned", False))}
    outputs = [ctx.out(i) for i in range(len(layer.outputs))]
    if len(outputs) != 2:
        raise ctx.error(f"has {len(outputs)} outputs: ExperimentalDetectronROIFeatureExtractor makes 2")
    domain_node(ctx, "ExperimentalDetectronROIFeatureExtractor", [ctx.input(i) for i in range(ctx.n_inputs())],
                outputs, **attrs)


@translator("ExperimentalDetectronDetectionOutput", since=6, until=6,
            emits=("onnx_ext.ExperimentalDetectronDetectionOutput",))
def detectron_detection_output(ctx: Context, layer) -> None:
    attrs = {name: attr.number(ctx, layer, name) for name in ("score_threshold", "nms_threshold", "max_delta_log_wh")}
    attrs |= {name: attr.integer(ctx, layer, name) for name in ("num_classes", "post_nms_count",
                                                                "max_detections_per_image")}
    attrs |= {"class_agnostic_box_regression": int(attr.boolean(layer, "class_agnostic_box_regression", False)),
              "deltas_weights": attr.numbers(ctx, layer, "deltas_weights")}
    outputs = [ctx.out(i) for i in range(len(layer.outputs))]
    if len(outputs) != 3:
        raise ctx.error(f"has {len(outputs)} outputs: ExperimentalDetectronDetectionOutput makes 3")
    domain_node(ctx, "ExperimentalDetectronDetectionOutput", [ctx.input(i) for i in range(4)], outputs, **attrs)
