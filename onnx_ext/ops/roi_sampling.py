"""What the ROI poolings of the domain share (PSROIPooling, DeformablePSROIPooling, ROIAlignRotated): C++'s
``std::round`` and the bilinear sampling of feature maps at points given in pixels.

Sampling goes through one ONNX GridSample over every image at once: the images are stacked along the height
([N, C, H, W] -> [C, N * H, W]), a point (x, y) of image b is read at (x, b * H + y) of the stack, and the
coordinates, clamped into the image first, are normalised in f64 (GridSample's own de-normalisation then gives
them back to within 1e-15 px; in f32 it would move them by up to W * 1e-7 px). With border padding and
align_corners 0, a point in [0, W - 1] x [0, H - 1] gets the bilinear interpolation of its four neighbours,
as OpenVINO computes it (the neighbour beyond the last row or column, in the next image, has weight 0).
"""

from __future__ import annotations

from onnxscript import DOUBLE, FLOAT, INT64, script

from ..domain import op, ov_ext


@script(ov_ext, default_opset=op)
def round_half_away(x):
    # std::round: halves away from zero (ONNX Round rounds them to even); exact for every float.
    a = op.Abs(x)
    whole = op.Floor(a)
    up = op.Cast(op.GreaterOrEqual(op.Sub(a, whole), op.CastLike(op.Constant(value_float=0.5), x)), to=FLOAT.dtype)
    return op.Mul(op.Sign(x), op.Add(whole, op.CastLike(up, x)))


@script(ov_ext, default_opset=op)
def stacked_images(images):
    # [G, C, N, H, W] (G groups of C channels of N images) -> [G, C, N * H, W] f64: the images one above the
    # other, for GridSample.
    shape = op.Shape(images)
    g_c = op.Slice(shape, op.Constant(value_ints=[0]), op.Constant(value_ints=[2]))
    nh = op.ReduceProd(op.Slice(shape, op.Constant(value_ints=[2]), op.Constant(value_ints=[4])), keepdims=1)
    w = op.Slice(shape, op.Constant(value_ints=[4]), op.Constant(value_ints=[5]))
    return op.Reshape(op.Cast(images, to=DOUBLE.dtype), op.Concat(g_c, nh, w, axis=0), allowzero=1)


@script(ov_ext, default_opset=op)
def sample_stacked(stack, x, y, batch, height, width):
    # Bilinear samples of ``stack`` [G, C, N * H, W] (``stacked_images``) at the f32 points (x, y) of shape
    # [G, P, Q] in image ``batch`` ([G, P, Q] int64), each clamped into [0, W - 1] x [0, H - 1] (the callers mask
    # the points outside) -> [G, C, P, Q] f64. ``height``, ``width``: H and W (int64 scalars).
    hf = op.Cast(height, to=DOUBLE.dtype)
    wf = op.Cast(width, to=DOUBLE.dtype)
    zero = op.Cast(op.Constant(value_float=0.0), to=DOUBLE.dtype)
    one = op.Cast(op.Constant(value_float=1.0), to=DOUBLE.dtype)
    two = op.Cast(op.Constant(value_float=2.0), to=DOUBLE.dtype)
    xd = op.Max(op.Min(op.Cast(x, to=DOUBLE.dtype), op.Sub(wf, one)), zero)
    yd = op.Max(op.Min(op.Cast(y, to=DOUBLE.dtype), op.Sub(hf, one)), zero)
    yd = op.Add(yd, op.Mul(op.Cast(batch, to=DOUBLE.dtype), hf))
    rows = op.Cast(op.Gather(op.Shape(stack), op.Constant(value_int=2)), to=DOUBLE.dtype)
    gx = op.Sub(op.Div(op.Add(op.Mul(two, xd), one), wf), one)
    gy = op.Sub(op.Div(op.Add(op.Mul(two, yd), one), rows), one)
    grid = op.Concat(op.Unsqueeze(gx, op.Constant(value_ints=[-1])), op.Unsqueeze(gy, op.Constant(value_ints=[-1])),
                     axis=-1)
    return op.GridSample(stack, grid, mode="linear", padding_mode="border", align_corners=0)


@script(ov_ext, default_opset=op)
def checked_batch(rois_batch, n):
    # ROI batch indices (f32, truncated toward zero as C++ casts them) -> (int64 indices, alive). A batch index of
    # -1 ends the list, as Proposal writes it and OpenVINO's CPU plugin reads it: that ROI and the ones after it
    # are not alive (index 0 here; the callers give them zeros). The others are checked to be within [0, N).
    b = op.Cast(rois_batch, to=INT64.dtype)
    ended = op.CumSum(op.Cast(op.Equal(b, op.Constant(value_int=-1)), to=INT64.dtype), op.Constant(value_int=0))
    alive = op.Equal(ended, op.Constant(value_int=0))
    b = op.Where(alive, b, op.Constant(value_int=0))
    ok = op.And(op.GreaterOrEqual(b, op.Constant(value_int=0)), op.Less(b, n))
    all_ok = op.Equal(op.ReduceMin(op.Concat(op.Cast(ok, to=INT64.dtype), op.Constant(value_ints=[1]), axis=0),
                                   keepdims=0), op.Constant(value_int=1))
    bad = op.Cast(op.Not(all_ok), to=INT64.dtype)
    roi_batch_indices_in_range = op.Gather(op.Constant(value_ints=[0]), op.Reshape(bad, op.Constant(value_ints=[1])))
    return op.Add(b, roi_batch_indices_in_range), alive


HELPERS = (round_half_away, stacked_images, sample_stacked, checked_batch)
