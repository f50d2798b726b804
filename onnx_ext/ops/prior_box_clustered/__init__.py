"""PriorBoxClustered-1: the op's record, numpy reference and body.

OpenVINO: PriorBoxClustered(layer_shape [H, W], image_shape [IH, IW]: integer vectors) -> [2, 4 * H * W * P] f32,
P = len(width): row 0 the boxes of the cells in row-major order, prior s of cell (h, w) centred at
cx = (w + offset) * step_w, cy = (h + offset) * step_h with the box width[s] x height[s], corners divided by IW and
IH (a division, not a multiplication by the inverse), clipped to [0, 1] with ``clip``; row 1 the variances.
step_w is ``step_w`` or, when that is 0, ``step``; likewise step_h; when both are then 0 they are IW / W and
IH / H. Everything in float32 in the reference's order: bit for bit OpenVINO's reference (``node.evaluate``).
docs/ops/prior_box_clustered.md has the corners. One body, the general one: the attributes are read at run time
as constants, which onnxruntime folds.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from onnxscript import BOOL, FLOAT, script

from ...domain import op, ov_ext
from ...errors import OpAttributeError, OpInputError
from ...types import from_ov
from ..base import Attr, Bodies, OpSpec, Operand, require_bool, require_finite
from ..native import booleans, factory
from ..prior_box import check_operands as _check_shape_inputs
from ..prior_box.bodies import _sizes, _variances
from ..prior_box.template import shape_values

__all__ = ["SPEC", "prior_box_clustered_reference"]

F32 = np.float32
INPUTS = ("layer_shape", "image_shape")


@script(ov_ext, default_opset=op)
def PriorBoxClustered(layer_shape, image_shape, offset: float, width: Sequence[float] = (),
                      height: Sequence[float] = (), clip: int = 1, step: float = 0.0, step_w: float = 0.0,
                      step_h: float = 0.0, variance: Sequence[float] = ()):
    # PriorBoxClustered-1(layer_shape [H, W], image_shape [IH, IW]) -> [2, 4 * H * W * len(width)] f32
    size, image = _sizes(layer_shape, image_shape)
    zero = op.Constant(value_float=0.0)
    h = op.Gather(size, op.Constant(value_int=0))
    w = op.Gather(size, op.Constant(value_int=1))
    ihf = op.Cast(op.Gather(image, op.Constant(value_int=0)), to=FLOAT.dtype)
    iwf = op.Cast(op.Gather(image, op.Constant(value_int=1)), to=FLOAT.dtype)
    any_step = op.Constant(value_float=step)
    sw = op.Constant(value_float=step_w)
    sh = op.Constant(value_float=step_h)
    sw = op.Where(op.Equal(sw, zero), any_step, sw)
    sh = op.Where(op.Equal(sh, zero), any_step, sh)
    from_image = op.And(op.Equal(sw, zero), op.Equal(sh, zero))
    sw = op.Where(from_image, op.Div(iwf, op.Cast(w, to=FLOAT.dtype)), sw)
    sh = op.Where(from_image, op.Div(ihf, op.Cast(h, to=FLOAT.dtype)), sh)
    start = op.Constant(value_float=offset)
    first = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    cx = op.Mul(op.Add(op.Cast(op.Range(first, w, one), to=FLOAT.dtype), start), sw)
    cy = op.Mul(op.Add(op.Cast(op.Range(first, h, one), to=FLOAT.dtype), start), sh)
    cx = op.Reshape(cx, op.Constant(value_ints=[1, -1, 1]))
    cy = op.Reshape(cy, op.Constant(value_ints=[-1, 1, 1]))
    two = op.Constant(value_float=2.0)
    half_w = op.Div(op.Constant(value_floats=width), two)
    half_h = op.Div(op.Constant(value_floats=height), two)
    shape = op.Concat(op.Reshape(h, op.Constant(value_ints=[1])), op.Reshape(w, op.Constant(value_ints=[1])),
                      op.Shape(half_w), axis=0)
    last = op.Constant(value_ints=[-1])
    x0 = op.Unsqueeze(op.Expand(op.Div(op.Sub(cx, half_w), iwf), shape), last)
    y0 = op.Unsqueeze(op.Expand(op.Div(op.Sub(cy, half_h), ihf), shape), last)
    x1 = op.Unsqueeze(op.Expand(op.Div(op.Add(cx, half_w), iwf), shape), last)
    y1 = op.Unsqueeze(op.Expand(op.Div(op.Add(cy, half_h), ihf), shape), last)
    boxes = op.Reshape(op.Concat(x0, y0, x1, y1, axis=-1), op.Constant(value_ints=[1, -1]))
    boxes = op.Where(op.Cast(op.Constant(value_int=clip), to=BOOL.dtype),
                     op.Clip(boxes, zero, op.Constant(value_float=1.0)), boxes)
    return op.Concat(boxes, _variances(op.Constant(value_floats=variance), op.Size(boxes)), axis=0)


def check_attributes(attrs: dict) -> dict:
    require_bool("PriorBoxClustered", attrs, "clip")
    if len(attrs["width"]) != len(attrs["height"]):
        raise OpAttributeError("PriorBoxClustered", "height", f"has {len(attrs['height'])} values: one per width "
                               f"({len(attrs['width'])})")
    if len(attrs["variance"]) not in (0, 1, 4):
        raise OpAttributeError("PriorBoxClustered", "variance",
                               f"has {len(attrs['variance'])} values: must have 0, 1 or 4")
    require_finite("PriorBoxClustered", attrs, "width", "height", "variance", "step", "step_w", "step_h", "offset")
    return attrs


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    try:
        _check_shape_inputs(attrs, operands)
    except OpInputError as e:
        raise OpInputError("PriorBoxClustered", e.problem) from None


def _steps(attrs: dict, h: int, w: int, ih: int, iw: int) -> tuple[np.float32, np.float32]:
    sw = F32(attrs["step_w"]) if attrs["step_w"] != 0 else F32(attrs["step"])
    sh = F32(attrs["step_h"]) if attrs["step_h"] != 0 else F32(attrs["step"])
    if sw == 0 and sh == 0:
        with np.errstate(all="ignore"):
            sw, sh = F32(F32(iw) / F32(w)), F32(F32(ih) / F32(h))
    return sw, sh


def prior_box_clustered_reference(layer_shape, image_shape, **attrs) -> np.ndarray:
    try:
        H, W = shape_values("layer_shape", layer_shape)
        IH, IW = shape_values("image_shape", image_shape)
    except OpInputError as e:
        raise OpInputError("PriorBoxClustered", e.problem) from None
    if H < 0 or W < 0:
        raise OpInputError("PriorBoxClustered", f"layer_shape is {[H, W]}: must not be negative")
    sw, sh = _steps(attrs, H, W, IH, IW)
    offset = F32(attrs["offset"])
    half_w, half_h = np.array(attrs["width"], F32) / F32(2.0), np.array(attrs["height"], F32) / F32(2.0)
    with np.errstate(all="ignore"):
        cx = ((np.arange(W, dtype=np.int64).astype(F32) + offset) * sw)[None, :, None]
        cy = ((np.arange(H, dtype=np.int64).astype(F32) + offset) * sh)[:, None, None]
        iw, ih = F32(IW), F32(IH)
        corners = [(cx - half_w) / iw, (cy - half_h) / ih, (cx + half_w) / iw, (cy + half_h) / ih]
    boxes = np.stack([np.broadcast_to(c, (H, W, len(half_w))) for c in corners], axis=-1).reshape(-1).astype(F32)
    if attrs["clip"]:
        boxes = np.minimum(np.maximum(boxes, F32(0.0)), F32(1.0))
    variance = np.array(attrs["variance"] or [0.1], F32)
    variances = np.broadcast_to(variance if len(variance) == 4 else variance[:1], (boxes.size // 4, 4)).reshape(-1)
    return np.stack([boxes, variances])


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    layer = operands[0]
    if layer.value is None:
        return (2, None)
    h, w = shape_values("layer_shape", layer.value)
    return (2, 4 * h * w * len(attrs["width"]))


def openvino_node(attrs: dict, inputs: list):
    # OpenVINO's IR and node attributes: width, height, clip, step, step_w, step_h, offset, variance
    return factory(1, "PriorBoxClustered", inputs, booleans(attrs, ("clip",)))


SPEC = OpSpec(
    name="PriorBoxClustered",
    inputs=INPUTS,
    min_inputs=2,
    attributes={"width": Attr("floats", []), "height": Attr("floats", []), "clip": Attr("int", 1),
                "step": Attr("float", 0.0), "step_w": Attr("float", 0.0), "step_h": Attr("float", 0.0),
                "offset": Attr("float"), "variance": Attr("floats", [])},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=lambda attrs, operands: "general",
    output_type=lambda attrs, operands: from_ov("f32"),
    output_shape=output_shape,
    bodies=Bodies(PriorBoxClustered, {"general": PriorBoxClustered}),
    helpers=(_sizes, _variances),
    public=PriorBoxClustered,
    reference=prior_box_clustered_reference,
    openvino=openvino_node,
)
