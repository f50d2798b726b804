"""The Caffe/Detectron box decode that Proposal, GenerateProposals, ExperimentalDetectronGenerateProposalsSingleImage
and ExperimentalDetectronDetectionOutput share, as an onnxscript helper of the domain: ``_box_decode``.

Their references move a box (x0, y0, x1, y1) by deltas (dx, dy, log dw, log dh) in f32 in one order of operations:
widths and heights with a +``offset`` (1 in Caffe's pixel convention, 0 normalized), the centre moved by dx, dy
times them, the sizes scaled by exp of the log deltas (scaled or capped by the caller, each op its own way)
computed in f64 and rounded to f32, as std::exp of a float (onnxruntime's f32 Exp is an ulp or two off, which the
cancellation in cy - h / 2 makes many); the new corners before any clipping (which differs per op).
"""

from __future__ import annotations

from onnxscript import DOUBLE, FLOAT, script

from ..domain import op, ov_ext


@script(ov_ext, default_opset=op)
def _box_decode(x0, y0, x1, y1, dx, dy, log_w, log_h, offset):
    # corners, deltas and log sizes (f32, one shape) and offset (f32 scalar) -> the moved box's x0, y0 and x1 + offset,
    # y1 + offset (centre + half the size: Proposal keeps that, the others take the offset off), unclipped
    half = op.Constant(value_float=0.5)
    ww = op.Add(op.Sub(x1, x0), offset)
    hh = op.Add(op.Sub(y1, y0), offset)
    cx = op.Add(x0, op.Mul(half, ww))
    cy = op.Add(y0, op.Mul(half, hh))
    pcx = op.Add(op.Mul(dx, ww), cx)
    pcy = op.Add(op.Mul(dy, hh), cy)
    pw = op.Mul(op.Cast(op.Exp(op.Cast(log_w, to=DOUBLE.dtype)), to=FLOAT.dtype), ww)
    ph = op.Mul(op.Cast(op.Exp(op.Cast(log_h, to=DOUBLE.dtype)), to=FLOAT.dtype), hh)
    return op.Sub(pcx, op.Mul(half, pw)), op.Sub(pcy, op.Mul(half, ph)), op.Add(pcx, op.Mul(half, pw)), op.Add(
        pcy, op.Mul(half, ph))


#: The helpers the bodies that decode boxes attach.
HELPERS = (_box_decode,)
