"""DetectionOutput-1/-8's bodies in onnxscript: ``DetectionOutput`` (five inputs, the public general body) and
``detection_output_plain`` (three), both on the helpers below, every attribute read at run time.

The pipeline, in f32: priors and variances from ``proposals``; boxes decoded per location class; scores
[N, C, P] in which every prior that is not a candidate of its class is -inf (Caffe: above the threshold, not the
background, within the class's ``top_k``; MXNet: the prior's best class, within the image's ``top_k``); one ONNX
NonMaxSuppression over every image and class (its order is the reference's: score descending, prior ascending;
it suppresses at IoU > nms_threshold, as the reference, and computes IoU with the same f32 operations); the
image's ``keep_top_k`` best by (score, prior, class); the rows, padded to OpenVINO's output shape.
"""

from __future__ import annotations

from typing import Sequence

from onnxscript import BOOL, FLOAT, INT64, script

from ...domain import op, ov_ext
from .reference import CENTER_SIZE

_NEG_INF = float("-inf")


@script(ov_ext, default_opset=op)
def _do_vector(x):
    # a scalar as a vector of one element
    return op.Reshape(x, op.Constant(value_ints=[1]))


@script(ov_ext, default_opset=op)
def _do_priors(proposals, normalized, variance_encoded, input_width, input_height):
    # proposals [B, 1 or 2, P * prior_size] -> priors [B, 1, P, 4] in image units (divided by the input size
    # unless normalized), variances [B, 1, P, 4] (ones when encoded in the target), P [1].
    zero1 = op.Constant(value_ints=[0])
    one1 = op.Constant(value_ints=[1])
    shape = op.Shape(proposals)
    b = op.Slice(shape, zero1, one1)
    rows = op.Slice(shape, one1, op.Constant(value_ints=[2]))
    width = op.Slice(shape, op.Constant(value_ints=[2]), op.Constant(value_ints=[3]))
    prior_size = op.Where(normalized, op.Constant(value_ints=[4]), op.Constant(value_ints=[5]))
    offset = op.Where(normalized, zero1, one1)
    p = op.Div(width, prior_size)
    ok = op.And(op.Equal(op.Mod(width, prior_size), zero1), op.Greater(p, zero1))
    proposals_hold_whole_priors = op.Gather(zero1, op.Cast(op.Not(ok), to=INT64.dtype))
    p = op.Add(p, proposals_hold_whole_priors)
    rows_ok = op.Equal(rows, op.Where(variance_encoded, one1, op.Constant(value_ints=[2])))
    proposals_rows_match_variance_encoded_in_target = op.Gather(zero1, op.Cast(op.Not(rows_ok), to=INT64.dtype))
    last = op.Add(op.Sub(rows, one1), proposals_rows_match_variance_encoded_in_target)

    axes = op.Constant(value_ints=[1, 2])
    flat = op.Slice(proposals, op.Constant(value_ints=[0, 0]), op.Concat(one1, op.Mul(p, prior_size), axis=0), axes)
    boxes = op.Reshape(flat, op.Concat(b, one1, p, prior_size, axis=0))
    boxes = op.Slice(boxes, offset, op.Add(offset, op.Constant(value_ints=[4])), op.Constant(value_ints=[3]))
    wh = op.Concat(input_width, input_height, axis=0)
    scale = op.Where(normalized, op.Constant(value_floats=[1.0, 1.0, 1.0, 1.0]), op.Concat(wh, wh, axis=0))
    priors = op.Div(boxes, scale)  # (x / 1 is x)
    var_flat = op.Slice(proposals, op.Concat(last, zero1, axis=0),
                        op.Concat(op.Add(last, one1), op.Mul(p, op.Constant(value_ints=[4])), axis=0), axes)
    variances = op.Reshape(var_flat, op.Concat(b, one1, p, op.Constant(value_ints=[4]), axis=0))
    variances = op.Where(variance_encoded, op.Constant(value_float=1.0), variances)
    return priors, variances, p


@script(ov_ext, default_opset=op)
def _do_decode(priors, variances, loc, center, clip):
    # Boxes from priors and offsets as the reference decodes them: corner (prior + variance * offset) or
    # center-size; clipped to [0, 1] when ``clip``. Coordinates (x0, y0) and (x1, y1) as pairs on the last axis.
    two = op.Constant(value_ints=[2])
    last = op.Constant(value_ints=[-1])
    if center:
        p0 = op.Slice(priors, op.Constant(value_ints=[0]), two, last)
        p1 = op.Slice(priors, two, op.Constant(value_ints=[4]), last)
        v0 = op.Slice(variances, op.Constant(value_ints=[0]), two, last)
        v1 = op.Slice(variances, two, op.Constant(value_ints=[4]), last)
        l0 = op.Slice(loc, op.Constant(value_ints=[0]), two, last)
        l1 = op.Slice(loc, two, op.Constant(value_ints=[4]), last)
        half = op.Constant(value_float=2.0)
        size = op.Sub(p1, p0)
        mid = op.Div(op.Add(p0, p1), half)
        new_mid = op.Add(op.Mul(op.Mul(v0, l0), size), mid)
        new_size = op.Mul(op.Exp(op.Mul(v1, l1)), size)
        decoded = op.Concat(op.Sub(new_mid, op.Div(new_size, half)), op.Add(new_mid, op.Div(new_size, half)),
                            axis=-1)
    else:
        decoded = op.Add(priors, op.Mul(variances, loc))
    if clip:
        boxes = op.Clip(decoded, op.Constant(value_float=0.0), op.Constant(value_float=1.0))
    else:
        boxes = op.Identity(decoded)
    return boxes


@script(ov_ext, default_opset=op)
def _do_top_k_only(scores, k):
    # scores [..., P] with all but the k best of each row (ties: the lower index) set to -inf; k <= P.
    values, indices = op.TopK(scores, k, axis=-1, largest=1, sorted=1)
    return op.ScatterElements(op.Expand(op.Constant(value_float=_NEG_INF), op.Shape(scores)), indices, values,
                              axis=-1)


@script(ov_ext, default_opset=op)
def _do_candidates(conf, p, background, threshold, mxnet, top_k):
    # conf [N, P * C] -> scores [N, C, P]: a class's score for a prior that is one of its NMS candidates,
    # else -inf; and C [1]. NaN scores are never candidates.
    zero1 = op.Constant(value_ints=[0])
    neg_inf = op.Constant(value_float=_NEG_INF)
    shape = op.Shape(conf)
    n = op.Slice(shape, zero1, op.Constant(value_ints=[1]))
    c = op.Div(op.Slice(shape, op.Constant(value_ints=[1]), op.Constant(value_ints=[2])), p)
    s = op.Transpose(op.Reshape(conf, op.Concat(n, p, c, axis=0)), perm=[0, 2, 1])
    s = op.Where(op.IsNaN(s), neg_inf, s)
    classes = op.Reshape(op.Range(op.Constant(value_int=0), op.ReduceSum(c, keepdims=0), op.Constant(value_int=1)),
                         op.Constant(value_ints=[1, -1, 1]))
    not_background = op.Not(op.Equal(classes, background))
    cut = op.And(op.GreaterOrEqual(top_k, op.Constant(value_int=0)), op.Less(top_k, op.ReduceSum(p, keepdims=0)))
    k = op.Reshape(top_k, op.Constant(value_ints=[1]))
    if mxnet:
        # each prior's best class from class 1, the background excluded (the first of equal bests), if above -1
        # and the threshold; then the image's top_k priors
        eligible = op.Where(op.And(op.GreaterOrEqual(classes, op.Constant(value_int=1)), not_background), s, neg_inf)
        best = op.ReduceMax(eligible, op.Constant(value_ints=[1]), keepdims=1)
        label = op.ArgMax(eligible, axis=1, keepdims=1)
        valid = op.And(op.Greater(best, op.Constant(value_float=-1.0)), op.GreaterOrEqual(best, threshold))
        key = op.Where(valid, best, neg_inf)
        if cut:
            key_k = _do_top_k_only(key, k)
        else:
            key_k = op.Identity(key)
        candidates = op.Where(op.Equal(classes, label), key_k, neg_inf)
    else:
        above = op.Where(op.And(not_background, op.Greater(s, threshold)), s, neg_inf)
        if cut:
            candidates_k = _do_top_k_only(above, k)
        else:
            candidates_k = op.Identity(above)
        candidates = op.Identity(candidates_k)
    return candidates, c


@script(ov_ext, default_opset=op)
def _do_nms(boxes, scores, p, c, loc_classes, nms_threshold):
    # boxes [N, L, P, 4], scores [N, C, P] (-inf: not a candidate) -> the kept (batch b of N * L, n, c, prior),
    # in the output's order: image, class, score descending, prior ascending.
    # A box with x1 < x0 or y1 < y0 overlaps nothing in the reference: a point here (onnxruntime would
    # reorder its corners).
    last = op.Constant(value_ints=[-1])
    two = op.Constant(value_ints=[2])
    b0 = op.Slice(boxes, op.Constant(value_ints=[0]), two, last)
    b1 = op.Slice(boxes, two, op.Constant(value_ints=[4]), last)
    # (axis 3, not -1: onnxruntime reduces nothing over a negative axis of an empty input)
    inverted = op.Cast(op.ReduceMax(op.Cast(op.Less(b1, b0), to=INT64.dtype), op.Constant(value_ints=[3]),
                                    keepdims=1), to=BOOL.dtype)
    nms_boxes = op.Where(inverted, op.Concat(b0, b0, axis=-1), boxes)
    per_batch = op.Div(c, loc_classes)
    nms_boxes = op.Reshape(nms_boxes, op.Concat(last, p, op.Constant(value_ints=[4]), axis=0))
    nms_scores = op.Reshape(scores, op.Concat(last, per_batch, p, axis=0))
    threshold = op.Reshape(nms_threshold, op.Constant(value_ints=[1]))
    selected = op.NonMaxSuppression(nms_boxes, nms_scores, p, threshold,
                                    op.Constant(value_floats=[_NEG_INF]))
    batch = op.Reshape(op.Slice(selected, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]),
                                op.Constant(value_ints=[1])), last)
    in_batch = op.Reshape(op.Slice(selected, op.Constant(value_ints=[1]), two, op.Constant(value_ints=[1])), last)
    prior = op.Reshape(op.Slice(selected, two, op.Constant(value_ints=[3]), op.Constant(value_ints=[1])), last)
    nc = op.Add(op.Mul(batch, per_batch), in_batch)
    image = op.Div(nc, c)
    label = op.Mod(nc, c)
    return batch, image, label, prior


@script(ov_ext, default_opset=op)
def _do_keep_top_k(image, label, prior, score, keep, num_images):
    # Which rows stay when each image keeps its ``keep`` best by (score descending, prior ascending, label
    # ascending): three stable sorts (onnxruntime's TopK puts the lower index first among equals), then the
    # rank of each row within its image.
    m = op.Shape(score)
    _, by_prior = op.TopK(prior, m, axis=0, largest=0, sorted=1)
    _, by_score = op.TopK(op.Gather(score, by_prior), m, axis=0, largest=1, sorted=1)
    order = op.Gather(by_prior, by_score)
    _, by_image = op.TopK(op.Gather(image, order), m, axis=0, largest=0, sorted=1)
    order = op.Gather(order, by_image)
    sorted_image = op.Gather(image, order)
    images = op.Range(op.Constant(value_int=0), num_images, op.Constant(value_int=1))
    counts = op.ReduceSum(op.Cast(op.Equal(op.Unsqueeze(sorted_image, op.Constant(value_ints=[1])), images),
                                  to=INT64.dtype), op.Constant(value_ints=[0]), keepdims=0)
    starts = op.CumSum(counts, op.Constant(value_int=0), exclusive=1)
    rank = op.Sub(op.Range(op.Constant(value_int=0), op.ReduceSum(m, keepdims=0), op.Constant(value_int=1)),
                  op.Gather(starts, sorted_image))
    kept = op.Cast(op.Less(rank, keep), to=INT64.dtype)
    return op.Cast(op.ScatterElements(op.Expand(op.Constant(value_int=0), m), order, kept, axis=0), to=BOOL.dtype)


@script(ov_ext, default_opset=op)
def _do_detect(boxes, scores, p, c, loc_classes, rows, attrs_f, attrs_i, clip_after, mxnet):
    # The detections of the decoded boxes [N, L, P, 4] and candidates [N, C, P]: [1, 1, rows, 7].
    # attrs_f: nms_threshold [1]; attrs_i: keep_top_k[0] [1].
    batch, image, label, prior = _do_nms(boxes, scores, p, c, loc_classes, attrs_f)
    n = op.Slice(op.Shape(scores), op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    score = op.Gather(op.Reshape(scores, op.Constant(value_ints=[-1])),
                      op.Add(op.Mul(op.Add(op.Mul(image, c), label), p), prior))
    keep = op.ReduceSum(attrs_i, keepdims=0)
    if op.Greater(keep, op.Constant(value_int=-1)):
        kept = _do_keep_top_k(image, label, prior, score, keep, op.ReduceSum(n, keepdims=0))
        k_batch = op.Compress(batch, kept)
        k_image = op.Compress(image, kept)
        k_label = op.Compress(label, kept)
        k_prior = op.Compress(prior, kept)
        k_score = op.Compress(score, kept)
    else:
        k_batch = op.Identity(batch)
        k_image = op.Identity(image)
        k_label = op.Identity(label)
        k_prior = op.Identity(prior)
        k_score = op.Identity(score)
    box = op.Gather(op.Reshape(boxes, op.Constant(value_ints=[-1, 4])), op.Add(op.Mul(k_batch, p), k_prior))
    if clip_after:
        box_out = op.Clip(box, op.Constant(value_float=0.0), op.Constant(value_float=1.0))
    else:
        box_out = op.Identity(box)
    shown = op.Where(mxnet, op.Sub(k_label, op.Constant(value_int=1)), k_label)
    one = op.Constant(value_ints=[1])
    detections = op.Concat(op.Cast(op.Unsqueeze(k_image, one), to=FLOAT.dtype),
                           op.Cast(op.Unsqueeze(shown, one), to=FLOAT.dtype),
                           op.Unsqueeze(k_score, one), box_out, axis=1)
    end = op.Constant(value_floats=[-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    padding = op.ConstantOfShape(op.Concat(rows, op.Constant(value_ints=[7]), axis=0))
    padded = op.Concat(detections, op.Reshape(end, op.Constant(value_ints=[1, 7])), padding, axis=0)
    out = op.Slice(padded, op.Constant(value_ints=[0]), rows, op.Constant(value_ints=[0]))
    # (allowzero: no rows when the batch is empty, which a 0 that copies would not say)
    return op.Reshape(out, op.Concat(op.Constant(value_ints=[1, 1]), rows, op.Constant(value_ints=[7]), axis=0),
                      allowzero=1)


@script(ov_ext, default_opset=op)
def _do_shapes(box_logits, class_preds, p, c, loc_classes, priors_batch, num_classes, keep, top_k):
    # The inputs' runtime shape checks, and the output's number of rows [1].
    zero1 = op.Constant(value_ints=[0])
    one1 = op.Constant(value_ints=[1])
    loc_shape = op.Shape(box_logits)
    conf_shape = op.Shape(class_preds)
    n = op.Slice(loc_shape, zero1, one1)
    ok = op.And(op.Equal(op.Mul(p, c), op.Slice(conf_shape, one1, op.Constant(value_ints=[2]))),
                op.Equal(n, op.Slice(conf_shape, zero1, one1)))
    ok = op.And(ok, op.Or(op.Less(num_classes, one1), op.Equal(c, num_classes)))
    class_preds_are_batch_by_priors_times_classes = op.Gather(zero1, op.Cast(op.Not(ok), to=INT64.dtype))
    ok = op.Equal(op.Mul(op.Mul(p, loc_classes), op.Constant(value_ints=[4])),
                  op.Slice(loc_shape, one1, op.Constant(value_ints=[2])))
    box_logits_are_batch_by_priors_times_loc_classes_times_4 = op.Gather(zero1, op.Cast(op.Not(ok), to=INT64.dtype))
    ok = op.Or(op.Equal(priors_batch, one1), op.Equal(priors_batch, n))
    proposals_batch_is_1_or_batch = op.Gather(zero1, op.Cast(op.Not(ok), to=INT64.dtype))
    checked = op.Add(op.Add(class_preds_are_batch_by_priors_times_classes,
                            box_logits_are_batch_by_priors_times_loc_classes_times_4), proposals_batch_is_1_or_batch)
    per_image = op.Where(op.Greater(keep, zero1), keep,
                         op.Where(op.And(op.Equal(keep, op.Constant(value_ints=[-1])), op.Greater(top_k, zero1)),
                                  op.Mul(top_k, c), op.Mul(p, c)))
    return op.Add(op.Mul(n, per_image), checked)


@script(ov_ext, default_opset=op)
def _do_inputs(box_logits, class_preds, proposals, variance_encoded_in_target: int, share_location: int,
               normalized: int, input_height: int, input_width: int, num_classes: int, keep_top_k: Sequence[int],
               top_k: int):
    # The f32 inputs seen as offsets [N, L, P, 4], priors and variances [B, 1, P, 4]; P, C, L, the output rows.
    priors, variances, p = _do_priors(
        op.Cast(proposals, to=FLOAT.dtype), op.Cast(op.Constant(value_int=normalized), to=BOOL.dtype),
        op.Cast(op.Constant(value_int=variance_encoded_in_target), to=BOOL.dtype),
        _do_vector(op.Cast(op.Constant(value_int=input_width), to=FLOAT.dtype)),
        _do_vector(op.Cast(op.Constant(value_int=input_height), to=FLOAT.dtype)))
    loc_shape = op.Shape(box_logits)
    n = op.Slice(loc_shape, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    c = op.Div(op.Slice(op.Shape(class_preds), op.Constant(value_ints=[1]), op.Constant(value_ints=[2])), p)
    loc_classes = op.Where(op.Cast(op.Constant(value_int=share_location), to=BOOL.dtype),
                           op.Constant(value_ints=[1]), c)
    keep = op.Gather(op.Constant(value_ints=keep_top_k), op.Constant(value_ints=[0]))
    priors_batch = op.Slice(op.Shape(proposals), op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    rows = _do_shapes(box_logits, class_preds, p, c, loc_classes, priors_batch,
                      _do_vector(op.Constant(value_int=num_classes)), keep, _do_vector(op.Constant(value_int=top_k)))
    offsets = op.Transpose(op.Reshape(op.Cast(box_logits, to=FLOAT.dtype),
                                      op.Concat(n, p, loc_classes, op.Constant(value_ints=[4]), axis=0)),
                           perm=[0, 2, 1, 3])
    return offsets, priors, variances, p, c, loc_classes, rows, keep


@script(ov_ext, default_opset=op)
def detection_output_plain(box_logits, class_preds, proposals, aux_class_preds, aux_box_preds,
                           keep_top_k: Sequence[int], nms_threshold: float, background_label_id: int = 0,
                           top_k: int = -1, variance_encoded_in_target: int = 0,
                           code_type: str = "caffe.PriorBoxParameter.CORNER", share_location: int = 1,
                           confidence_threshold: float = 0.0, clip_after_nms: int = 0, clip_before_nms: int = 0,
                           decrease_label_id: int = 0, normalized: int = 0, input_height: int = 1,
                           input_width: int = 1, objectness_score: float = 0.0, num_classes: int = -1,
                           version: int = 8):
    # DetectionOutput(box_logits, class_preds, proposals) without the aux inputs (never read).
    offsets, priors, variances, p, c, loc_classes, rows, keep = _do_inputs(
        box_logits, class_preds, proposals, variance_encoded_in_target=variance_encoded_in_target,
        share_location=share_location, normalized=normalized, input_height=input_height, input_width=input_width,
        num_classes=num_classes, keep_top_k=keep_top_k, top_k=top_k)
    center = op.Equal(op.Constant(value_string=code_type), op.Constant(value_string=CENTER_SIZE))
    boxes = _do_decode(priors, variances, offsets, center, op.Cast(op.Constant(value_int=clip_before_nms),
                                                                    to=BOOL.dtype))
    mxnet = op.Cast(op.Constant(value_int=decrease_label_id), to=BOOL.dtype)
    scores, _ = _do_candidates(op.Cast(class_preds, to=FLOAT.dtype), p, op.Constant(value_int=background_label_id),
                               op.Constant(value_float=confidence_threshold), mxnet, op.Constant(value_int=top_k))
    out = _do_detect(boxes, scores, p, c, loc_classes, rows, _do_vector(op.Constant(value_float=nms_threshold)),
                     op.Reshape(keep, op.Constant(value_ints=[1])),
                     op.Cast(op.Constant(value_int=clip_after_nms), to=BOOL.dtype), mxnet)
    return op.CastLike(out, box_logits)


@script(ov_ext, default_opset=op)
def DetectionOutput(box_logits, class_preds, proposals, aux_class_preds, aux_box_preds,
                    keep_top_k: Sequence[int], nms_threshold: float, background_label_id: int = 0, top_k: int = -1,
                    variance_encoded_in_target: int = 0, code_type: str = "caffe.PriorBoxParameter.CORNER",
                    share_location: int = 1, confidence_threshold: float = 0.0, clip_after_nms: int = 0,
                    clip_before_nms: int = 0, decrease_label_id: int = 0, normalized: int = 0, input_height: int = 1,
                    input_width: int = 1, objectness_score: float = 0.0, num_classes: int = -1, version: int = 8):
    # DetectionOutput-1/-8(box_logits [N, P*L*4], class_preds [N, P*C], proposals [1 or N, 1 or 2, P*(4|5)],
    # aux_class_preds [N, P*2], aux_box_preds [N, P*L*4]) -> [1, 1, rows, 7]. The general body: the five inputs
    # (nodes without the aux ones get detection_output_plain); every attribute read at run time.
    offsets, priors, variances, p, c, loc_classes, rows, keep = _do_inputs(
        box_logits, class_preds, proposals, variance_encoded_in_target=variance_encoded_in_target,
        share_location=share_location, normalized=normalized, input_height=input_height, input_width=input_width,
        num_classes=num_classes, keep_top_k=keep_top_k, top_k=top_k)
    n = op.Slice(op.Shape(box_logits), op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    ok = op.And(op.Equal(op.Shape(aux_class_preds), op.Concat(n, op.Mul(p, op.Constant(value_ints=[2])), axis=0)),
                op.Equal(op.Shape(aux_box_preds), op.Shape(box_logits)))
    aux_inputs_match = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Not(ok), to=INT64.dtype))
    n = op.Add(n, op.ReduceSum(aux_inputs_match, keepdims=1))
    center = op.Equal(op.Constant(value_string=code_type), op.Constant(value_string=CENTER_SIZE))
    clip = op.Cast(op.Constant(value_int=clip_before_nms), to=BOOL.dtype)
    # Priors refined by the aux offsets, then the offsets applied to them (both decodes divide by the input
    # size when not normalized, as the reference does).
    arm = op.Transpose(op.Reshape(op.Cast(aux_box_preds, to=FLOAT.dtype),
                                  op.Concat(n, p, loc_classes, op.Constant(value_ints=[4]), axis=0)), perm=[0, 2, 1, 3])
    refined = _do_decode(priors, variances, arm, center, clip)
    wh = op.Cast(op.Concat(_do_vector(op.Constant(value_int=input_width)),
                           _do_vector(op.Constant(value_int=input_height)), axis=0), to=FLOAT.dtype)
    scale = op.Where(op.Cast(op.Constant(value_int=normalized), to=BOOL.dtype),
                     op.Constant(value_floats=[1.0, 1.0, 1.0, 1.0]), op.Concat(wh, wh, axis=0))
    boxes = _do_decode(op.Div(refined, scale), variances, offsets, center, clip)
    # A prior whose objectness (the aux scores' second column) is below objectness_score: background 1, rest 0.
    objectness = op.Gather(op.Reshape(op.Cast(aux_class_preds, to=FLOAT.dtype),
                                      op.Concat(n, p, op.Constant(value_ints=[2]), axis=0)),
                           op.Constant(value_int=1), axis=2)
    weak = op.Unsqueeze(op.Less(objectness, op.Constant(value_float=objectness_score)), op.Constant(value_ints=[2]))
    classes = op.Range(op.Constant(value_int=0), op.ReduceSum(c, keepdims=0), op.Constant(value_int=1))
    background = op.Cast(op.Equal(classes, op.Constant(value_int=background_label_id)), to=FLOAT.dtype)
    conf = op.Reshape(op.Cast(class_preds, to=FLOAT.dtype), op.Concat(n, p, c, axis=0))
    # (P * C written: onnxruntime cannot resolve a -1 beside an empty batch)
    conf = op.Reshape(op.Where(weak, background, conf), op.Concat(n, op.Mul(p, c), axis=0))
    mxnet = op.Cast(op.Constant(value_int=decrease_label_id), to=BOOL.dtype)
    scores, _ = _do_candidates(conf, p, op.Constant(value_int=background_label_id),
                               op.Constant(value_float=confidence_threshold), mxnet, op.Constant(value_int=top_k))
    out = _do_detect(boxes, scores, p, c, loc_classes, rows, _do_vector(op.Constant(value_float=nms_threshold)),
                     op.Reshape(keep, op.Constant(value_ints=[1])),
                     op.Cast(op.Constant(value_int=clip_after_nms), to=BOOL.dtype), mxnet)
    return op.CastLike(out, box_logits)


#: Functions of the domain the bodies call.
HELPERS = (_do_vector, _do_priors, _do_decode, _do_top_k_only, _do_candidates, _do_nms, _do_keep_top_k, _do_detect, _do_shapes,
           _do_inputs)
