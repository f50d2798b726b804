"""ExperimentalDetectronPriorGridGenerator-6 and ExperimentalDetectronTopKROIs-6: records, numpy references, bodies.

PriorGridGenerator(priors [P, 4], feature_map [1, C, FH, FW], im_data [1, C', IH, IW]; flatten, h, w, stride_x,
stride_y) -> [FH * FW * P, 4] (flatten) or [FH, FW, P, 4] of priors' type: only the last two inputs' shapes are
read. The grid has h x w cells (FH x FW when 0), steps stride_x, stride_y (IW / w, IH / h when 0); cell (i, j)
gives priors + (sx (j + 0.5), sy (i + 0.5), sx (j + 0.5), sy (i + 0.5)) in f32, in [i, j, p] order from the first
row of the output; rows beyond h * w * P (a grid smaller than the feature map) are zeros (the spec: undefined).

TopKROIs(rois [N, 4], probs [N]; max_rois) -> [max_rois, 4]: the ROIs of the max_rois largest probabilities,
largest first; equal probabilities in input order; rows beyond N are zeros (the spec leaves them undefined; the
CPU plugin leaves memory as it was). No ``evaluate`` for either op: the oracle is OpenVINO's CPU plugin.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from onnxscript import BOOL, FLOAT, INT64, script

from ...domain import op, ov_ext
from ...errors import OpAttributeError, OpInputError
from ..base import Attr, Bodies, OpSpec, Operand
from ..native import booleans, factory

__all__ = ["GRID", "TOPK", "prior_grid_reference", "topk_rois_reference"]

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
F32 = np.float32
GRID_NAME = "ExperimentalDetectronPriorGridGenerator"
TOPK_NAME = "ExperimentalDetectronTopKROIs"


def _floats(name: str, operands: Sequence[Operand], labels: Sequence[str]) -> None:
    for label, o in zip(labels, operands):
        if o.type is not None and o.type.ov not in FLOAT_TYPES:
            raise OpInputError(name, f"{label} must be floating-point (f16, bf16, f32, f64), got {o.type.ov}")


# --- PriorGridGenerator -------------------------------------------------------------------------------------


def _grid_size(attrs: dict, feature: Sequence) -> tuple:
    return (attrs["h"] or feature[2], attrs["w"] or feature[3])


def prior_grid_reference(priors, feature_map, im_data, **attrs) -> np.ndarray:
    priors = np.asarray(priors)
    fshape, ishape = np.shape(feature_map), np.shape(im_data)
    check_grid_shapes(attrs, priors.shape, fshape, ishape)
    gh, gw = _grid_size(attrs, fshape)
    with np.errstate(all="ignore"):
        sx = F32(attrs["stride_x"]) or F32(F32(ishape[3]) / F32(gw))
        sy = F32(attrs["stride_y"]) or F32(F32(ishape[2]) / F32(gh))
        xs = sx * (np.arange(gw, dtype=np.int64).astype(F32) + F32(0.5))
        ys = sy * (np.arange(gh, dtype=np.int64).astype(F32) + F32(0.5))
    shift = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], xs[None, :], ys[:, None]), -1)  # [gh, gw, 4]
    grid = (priors.astype(F32)[None, None] + shift[:, :, None]).reshape(-1)
    total = fshape[2] * fshape[3] * len(priors) * 4
    out = np.zeros(total, F32)
    out[:grid.size] = grid
    shape = (fshape[2] * fshape[3] * len(priors), 4) if attrs["flatten"] else (fshape[2], fshape[3], len(priors), 4)
    return out.reshape(shape).astype(priors.dtype)


def check_grid_attributes(attrs: dict) -> dict:
    if attrs["flatten"] not in (0, 1):
        raise OpAttributeError(GRID_NAME, "flatten", f"is {attrs['flatten']}: must be 0 or 1 (a boolean)")
    for name in ("h", "w"):
        if attrs[name] < 0:
            raise OpAttributeError(GRID_NAME, name, f"is {attrs[name]}: must not be negative")
    for name in ("stride_x", "stride_y"):
        if not (math.isfinite(attrs[name]) and attrs[name] >= 0):
            raise OpAttributeError(GRID_NAME, name, f"is {attrs[name]}: must be a non-negative number")
    return attrs


def check_grid_shapes(attrs: dict, priors, feature, image) -> None:
    if priors is not None and (len(priors) != 2 or isinstance(priors[1], int) and priors[1] != 4):
        raise OpInputError(GRID_NAME, f"priors must have shape [P, 4], got {list(priors)}")
    for label, shape in (("feature_map", feature), ("im_data", image)):
        if shape is not None and len(shape) != 4:
            raise OpInputError(GRID_NAME, f"{label} must have rank 4, got shape {list(shape)}")
    if feature is not None:
        for name, dim in (("h", feature[2]), ("w", feature[3])):
            if isinstance(dim, int) and attrs[name] > dim:
                raise OpAttributeError(GRID_NAME, name, f"is {attrs[name]}: must not exceed the feature map's {dim}")


def check_grid_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    _floats(GRID_NAME, operands[:1], ("priors",))
    check_grid_shapes(attrs, *(o.shape for o in operands))


def grid_output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple | None:
    priors, feature, _ = operands
    fh, fw = (None, None) if feature.shape is None else (feature.shape[2], feature.shape[3])
    p = None if priors.shape is None else priors.shape[0]
    if not attrs["flatten"]:
        return (fh, fw, p, 4)
    known = all(isinstance(d, int) for d in (fh, fw, p))
    return (fh * fw * p if known else None, 4)


@script(ov_ext, default_opset=op)
def ExperimentalDetectronPriorGridGenerator(priors, feature_map, im_data, flatten: int = 1, h: int = 0, w: int = 0,
                                            stride_x: float = 0.0, stride_y: float = 0.0):
    # PriorGridGenerator-6(priors [P, 4], feature_map, im_data) -> [FH * FW * P, 4] or [FH, FW, P, 4]
    fshape = op.Shape(feature_map)
    ishape = op.Shape(im_data)
    fh = op.Gather(fshape, op.Constant(value_int=2))
    fw = op.Gather(fshape, op.Constant(value_int=3))
    zero = op.Constant(value_int=0)
    gh = op.Where(op.Equal(op.Constant(value_int=h), zero), fh, op.Constant(value_int=h))
    gw = op.Where(op.Equal(op.Constant(value_int=w), zero), fw, op.Constant(value_int=w))
    ok = op.And(op.LessOrEqual(gh, fh), op.LessOrEqual(gw, fw))
    grid_within_feature_map = op.Gather(op.Constant(value_ints=[0]), op.Reshape(op.Cast(op.Not(ok), to=INT64.dtype),
                                                                               op.Constant(value_ints=[1])))
    fzero = op.Constant(value_float=0.0)
    sx = op.Constant(value_float=stride_x)
    sy = op.Constant(value_float=stride_y)
    sx = op.Where(op.Equal(sx, fzero), op.Div(op.Cast(op.Gather(ishape, op.Constant(value_int=3)), to=FLOAT.dtype),
                                              op.Cast(gw, to=FLOAT.dtype)), sx)
    sy = op.Where(op.Equal(sy, fzero), op.Div(op.Cast(op.Gather(ishape, op.Constant(value_int=2)), to=FLOAT.dtype),
                                              op.Cast(gh, to=FLOAT.dtype)), sy)
    half = op.Constant(value_float=0.5)
    one = op.Constant(value_int=1)
    xs = op.Mul(sx, op.Add(op.Cast(op.Range(zero, gw, one), to=FLOAT.dtype), half))
    ys = op.Mul(sy, op.Add(op.Cast(op.Range(zero, gh, one), to=FLOAT.dtype), half))
    xs = op.Reshape(xs, op.Constant(value_ints=[1, -1, 1]))
    ys = op.Reshape(ys, op.Constant(value_ints=[-1, 1, 1]))
    cells = op.Concat(op.Reshape(gh, op.Constant(value_ints=[1])), op.Reshape(gw, op.Constant(value_ints=[1])),
                      op.Constant(value_ints=[1]), axis=0)
    xs = op.Expand(xs, cells)
    ys = op.Expand(ys, cells)
    shift = op.Unsqueeze(op.Concat(xs, ys, xs, ys, axis=-1), op.Constant(value_ints=[2]))  # [gh, gw, 1, 4]
    grid = op.Reshape(op.Add(op.Cast(priors, to=FLOAT.dtype), shift), op.Constant(value_ints=[-1]))
    p = op.Gather(op.Shape(priors), op.Constant(value_int=0))
    total = op.Mul(op.Mul(op.Mul(fh, fw), p), op.Constant(value_int=4))
    rest = op.Reshape(op.Add(op.Sub(total, op.Size(grid)), grid_within_feature_map), op.Constant(value_ints=[1]))
    flat = op.Concat(grid, op.ConstantOfShape(rest), axis=0)
    if op.Cast(op.Constant(value_int=flatten), to=BOOL.dtype):
        shape = op.Concat(op.Reshape(op.Mul(op.Mul(fh, fw), p), op.Constant(value_ints=[1])),
                          op.Constant(value_ints=[4]), axis=0)
    else:
        shape = op.Concat(op.Slice(fshape, op.Constant(value_ints=[2]), op.Constant(value_ints=[4])),
                          op.Reshape(p, op.Constant(value_ints=[1])), op.Constant(value_ints=[4]), axis=0)
    return op.CastLike(op.Reshape(flat, shape, allowzero=1), priors)


def _grid_openvino(attrs: dict, inputs: list):
    return factory(6, "ExperimentalDetectronPriorGridGenerator", inputs, booleans(attrs, ("flatten",)))


GRID = OpSpec(
    name=GRID_NAME,
    inputs=("priors", "feature_map", "im_data"),
    min_inputs=3,
    attributes={"flatten": Attr("int", 1), "h": Attr("int", 0), "w": Attr("int", 0), "stride_x": Attr("float", 0.0),
                "stride_y": Attr("float", 0.0)},
    check_attributes=check_grid_attributes,
    check_operands=check_grid_operands,
    select_body=lambda attrs, operands: "general",
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=grid_output_shape,
    bodies=Bodies(ExperimentalDetectronPriorGridGenerator, {"general": ExperimentalDetectronPriorGridGenerator}),
    public=ExperimentalDetectronPriorGridGenerator,
    reference=prior_grid_reference,
    openvino=_grid_openvino,
)


# --- TopKROIs -----------------------------------------------------------------------------------------------


def topk_rois_reference(rois, probs, **attrs) -> np.ndarray:
    rois, probs = np.asarray(rois), np.asarray(probs)
    check_topk_shapes(rois.shape, probs.shape)
    order = np.argsort(-probs.astype(np.float64), kind="stable")[:attrs["max_rois"]]
    out = np.zeros((attrs["max_rois"], 4), rois.dtype)
    out[:len(order)] = rois[order]
    return out


def check_topk_shapes(rois, probs) -> None:
    if rois is not None and (len(rois) != 2 or isinstance(rois[1], int) and rois[1] != 4):
        raise OpInputError(TOPK_NAME, f"rois must have shape [N, 4], got {list(rois)}")
    if probs is not None and len(probs) != 1:
        raise OpInputError(TOPK_NAME, f"probs must be a vector [N], got shape {list(probs)}")
    if rois is not None and probs is not None and len(rois) == 2 and len(probs) == 1:
        if isinstance(rois[0], int) and isinstance(probs[0], int) and rois[0] != probs[0]:
            raise OpInputError(TOPK_NAME, f"probs has {probs[0]} values for {rois[0]} ROIs")


def check_topk_attributes(attrs: dict) -> dict:
    if attrs["max_rois"] < 0:
        raise OpAttributeError(TOPK_NAME, "max_rois", f"is {attrs['max_rois']}: must not be negative")
    return attrs


def check_topk_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    _floats(TOPK_NAME, operands, ("rois", "probs"))
    check_topk_shapes(operands[0].shape, operands[1].shape)


@script(ov_ext, default_opset=op)
def ExperimentalDetectronTopKROIs(rois, probs, max_rois: int = 0):
    # TopKROIs-6(rois [N, 4], probs [N]) -> [max_rois, 4]: TopK keeps equal values in input order.
    n = op.Gather(op.Shape(rois), op.Constant(value_int=0))
    ok = op.Equal(op.Gather(op.Shape(probs), op.Constant(value_int=0)), n)
    probs_one_per_roi = op.Gather(op.Constant(value_ints=[0]), op.Reshape(op.Cast(op.Not(ok), to=INT64.dtype),
                                                                         op.Constant(value_ints=[1])))
    most = op.Constant(value_int=max_rois)
    k = op.Reshape(op.Min(most, n), op.Constant(value_ints=[1]))
    values, idx = op.TopK(op.Cast(probs, to=FLOAT.dtype), op.Add(k, probs_one_per_roi), largest=1, sorted=1)
    top = op.Gather(rois, idx)
    rest = op.Concat(op.Reshape(op.Sub(most, op.Min(most, n)), op.Constant(value_ints=[1])),
                     op.Constant(value_ints=[4]), axis=0)
    return op.Concat(top, op.CastLike(op.ConstantOfShape(rest), rois), axis=0)


def _topk_openvino(attrs: dict, inputs: list):
    return factory(6, "ExperimentalDetectronTopKROIs", inputs, attrs)


TOPK = OpSpec(
    name=TOPK_NAME,
    inputs=("rois", "probs"),
    min_inputs=2,
    attributes={"max_rois": Attr("int", 0)},
    check_attributes=check_topk_attributes,
    check_operands=check_topk_operands,
    select_body=lambda attrs, operands: "general",
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=lambda attrs, operands: (attrs["max_rois"], 4),
    bodies=Bodies(ExperimentalDetectronTopKROIs, {"general": ExperimentalDetectronTopKROIs}),
    public=ExperimentalDetectronTopKROIs,
    reference=topk_rois_reference,
    openvino=_topk_openvino,
)
