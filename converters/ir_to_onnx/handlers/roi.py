"""ROIAlign-3 and ROIAlign-9 -> ONNX RoiAlign (opset 16).

OpenVINO maps a box coordinate x to (x + a) * spatial_scale + b, with (a, b) = (0, 0)
for ``asymmetric`` (ROIAlign-3's only mode), (0, -0.5) for ``half_pixel_for_nn`` and
(0.5, -0.5) for ``half_pixel``. ONNX's ``coordinate_transformation_mode`` is
``output_half_pixel`` (0, 0) or ``half_pixel`` (0, -0.5): OpenVINO's ``half_pixel``
is ONNX's on boxes moved by +0.5. Max pooling is refused: onnxruntime's RoiAlign
takes the max of the weighted corner values, not of the interpolated samples, and
differs from OpenVINO's.
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context
from ..registry import op_version, translator

_I64 = from_ov("i64")

_MODES = {"asymmetric": "output_half_pixel", "half_pixel": "half_pixel", "half_pixel_for_nn": "half_pixel"}


@translator("ROIAlign", since=3, emits=("Add", "Cast", "Identity", "RoiAlign"))
def roi_align(ctx: Context, layer) -> None:
    aligned = attr.choice(ctx, layer, "aligned_mode", tuple(_MODES), "asymmetric") \
        if op_version(layer) >= 9 else "asymmetric"  # ROIAlign-3's only mode
    data, rois, batch = ctx.input(0), ctx.input(1), ctx.input(2)
    if attr.choice(ctx, layer, "mode", ("avg", "max"), "avg") == "max":
        raise ctx.error("ROIAlign with max pooling is not translated: onnxruntime's RoiAlign max differs from "
                        "OpenVINO's")
    et = data.type
    ct = from_ov("f32") if et.ov in ("f16", "bf16") else et
    boxes = ctx.cast(rois.name, rois.type, ct)
    if aligned == "half_pixel":
        boxes = ctx.one("Add", [boxes, ctx.const(np.asarray(0.5, dtype=ct.numpy))])
    ctx.cast(ctx.one("RoiAlign", [ctx.cast(data.name, et, ct), boxes, ctx.as_i64(batch)], mode="avg",
                     output_height=attr.integer(ctx, layer, "pooled_h"),
                     output_width=attr.integer(ctx, layer, "pooled_w"),
                     sampling_ratio=attr.integer(ctx, layer, "sampling_ratio", 0),
                     spatial_scale=attr.number(ctx, layer, "spatial_scale", 0.0),
                     coordinate_transformation_mode=_MODES[aligned]), ct, et, ctx.out(0))
