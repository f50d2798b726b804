"""NonMaxSuppression-1/3/4/5/9 as ONNX NonMaxSuppression.

ONNX lists the selected boxes per batch, per class, by descending score, which is
OpenVINO's order with ``sort_result_descending`` false; true sorts them all by
score (a stable TopK over the gathered scores). OpenVINO's CPU plugin returns
exactly the selected rows for every version (not the -1 padding NMS-1..4's spec
describes), so the outputs have a dynamic first dim. NMS-5/9 add
``selected_scores`` ([batch, class, score] in the scores' type) and
``valid_outputs``. Soft-NMS (``soft_nms_sigma`` not a constant 0), which ONNX's op
cannot do, becomes the domain's NonMaxSuppression (onnx_ext/ops/non_max_suppression).

OpenVINO suppresses a box whose IoU with a selected one is >= ``iou_threshold`` and
keeps scores > ``score_threshold`` (default 0: a score of 0 goes too), as its
reference and CPU plugin do; onnxruntime compares both strictly. The IoU threshold
becomes the f32 just below it (exactly, when constant; by a factor of 1 - 2^-24 when
computed), and an IoU threshold of 0 (also the default), which suppresses every box
after the first even where they do not overlap, becomes a limit of one box per class;
the score threshold passes as it is.
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..registry import op_version, translator
from .domain import domain_node
from .layout import i64_vector

_I64 = from_ov("i64")
_F32 = from_ov("f32")


def _f32(ctx: Context, v: Value, flat: bool = False) -> str:
    if v.type is None or not v.type.is_float:
        raise ctx.error(f"needs floating-point boxes, scores and thresholds, got {v.type.ov if v.type else None}")
    name = ctx.cast(v.name, v.type, _F32)
    return ctx.one("Reshape", [name, ctx.i64([1])]) if flat and v.rank != 1 else name


def _below(threshold) -> np.ndarray:
    """The f32 just below ``threshold``: onnxruntime's strict ``>`` against it is OpenVINO's ``>=``."""
    t = np.asarray(threshold, dtype=np.float32).reshape(1)
    return np.nextafter(t, np.float32(-np.inf))


def _zero(ctx: Context) -> str:
    return ctx.const(np.zeros(1, np.float32))


def _selected(ctx: Context, layer, version: int) -> tuple[str, str]:
    """The ONNX NonMaxSuppression's [M, 3] int64 rows in OpenVINO's order, and the scores tensor (f32)."""
    boxes, scores = ctx.input(0), ctx.input(1)
    n = ctx.n_inputs()
    encoding = attr.choice(ctx, layer, "box_encoding", ("corner", "center"), "corner")
    scores_f = _f32(ctx, scores)
    max_out = i64_vector(ctx, ctx.input(2)) if n > 2 else ctx.i64([0])
    iou = ctx.input(3) if n > 3 else None
    if iou is None or (iou.const is not None and np.all(np.asarray(iou.const) == 0)):
        iou_name, max_out = ctx.const(np.zeros(1, np.float32)), ctx.one("Min", [max_out, ctx.i64([1])])
    elif iou.const is not None:
        iou_name = ctx.const(_below(iou.const))
    else:
        t = _f32(ctx, iou, flat=True)
        max_out = ctx.one("Where", [ctx.one("Equal", [t, _zero(ctx)]), ctx.one("Min", [max_out, ctx.i64([1])]),
                                    max_out])
        iou_name = ctx.one("Mul", [t, ctx.const(np.array([1 - 2.0**-24], np.float32))])
    inputs = [_f32(ctx, boxes), scores_f, max_out, iou_name]
    # OpenVINO keeps scores > score_threshold (default 0), as onnxruntime does
    inputs.append(_f32(ctx, ctx.input(4), flat=True) if n > 4 else _zero(ctx))
    rows = ctx.one("NonMaxSuppression", inputs, center_point_box=int(encoding == "center"))
    if attr.boolean(layer, "sort_result_descending", True):
        picked = ctx.one("GatherND", [scores_f, rows])
        count = ctx.one("Shape", [picked])
        _, order = ctx.node("TopK", [picked, count], 2, axis=0, largest=1, sorted=1)
        rows = ctx.one("Gather", [rows, order], axis=0)
    return rows, scores_f


def _dynamic_rows(ctx: Context, i: int, et) -> None:
    """Output ``i`` is [selected, 3], whatever dims the IR wrote for it."""
    port = ctx.layer.outputs[i]
    ctx.values[(ctx.layer.id, port.id)] = Value(ctx.out(i), et, (None, 3))


def _soft(ctx: Context, version: int) -> bool:
    if version < 5 or ctx.n_inputs() < 6:
        return False
    sigma = ctx.input(5)
    return sigma.const is None or bool(np.any(np.asarray(sigma.const) != 0))


def _soft_nms(ctx: Context, layer, version: int, out_type) -> None:
    """Soft-NMS as the domain's NonMaxSuppression; selected_scores (f32 there) cast to the IR's type."""
    encoding = attr.choice(ctx, layer, "box_encoding", ("corner", "center"), "corner")
    score_type = ctx.out_type(1)
    scores_out = ctx.out(1) if score_type == _F32 else ctx.tmp("soft_nms_scores")
    domain_node(ctx, "NonMaxSuppression", [ctx.input(i) for i in range(6)], [ctx.out(0), scores_out, ctx.out(2)],
                version=version, center_point_box=int(encoding == "center"), output_type=out_type.onnx,
                sort_result_descending=int(attr.boolean(layer, "sort_result_descending", True)))
    if scores_out != ctx.out(1):
        ctx.cast(scores_out, _F32, score_type, ctx.out(1))
    _dynamic_rows(ctx, 0, out_type)
    _dynamic_rows(ctx, 1, score_type)


@translator("NonMaxSuppression", since=1,
            emits=("onnx_ext.NonMaxSuppression", "Cast", "Concat", "Equal", "Gather", "GatherND", "Identity", "Min",
                   "Mul", "NonMaxSuppression", "Reshape", "Shape", "Slice", "TopK", "Unsqueeze", "Where"))
def non_max_suppression(ctx: Context, layer) -> None:
    version = op_version(layer)
    out_type = _I64 if version == 1 else attr.element(ctx, layer, "output_type", "i64") or _I64
    if _soft(ctx, version):
        return _soft_nms(ctx, layer, version, out_type)
    rows, scores_f = _selected(ctx, layer, version)
    ctx.cast(rows, _I64, out_type, ctx.out(0))
    _dynamic_rows(ctx, 0, out_type)
    if version < 5:
        return
    score_type = ctx.out_type(1)
    picked = ctx.one("Unsqueeze", [ctx.one("GatherND", [scores_f, rows]), ctx.i64([1])])
    batch_class = ctx.cast(ctx.one("Slice", [rows, ctx.i64([0]), ctx.i64([2]), ctx.i64([1])]), _I64, _F32)
    triples = ctx.one("Concat", [batch_class, picked], axis=1)
    ctx.cast(triples, _F32, score_type, ctx.out(1))
    _dynamic_rows(ctx, 1, score_type)
    ctx.cast(ctx.one("Shape", [rows], start=0, end=1), _I64, out_type, ctx.out(2))
