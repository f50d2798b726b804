"""ExperimentalDetectronGenerateProposalsSingleImage-6's body in onnxscript, every attribute read at run time:
GenerateProposals's decode (+1 widths), boxes under min_size scoring 0 (they stay candidates), a stable TopK for
pre_nms_count, the exact greedy NMS with no +1 (as the reference's NMS), rows padded with zeros to
post_nms_count."""

from __future__ import annotations

from onnxscript import FLOAT, INT64, script

from ...domain import op, ov_ext
from ..generate_proposals.bodies import HELPERS as GENERATE_PROPOSALS
from ..generate_proposals.bodies import _gp_refine
from ..greedy_nms import _greedy_nms
from ..proposal.bodies import NMS_BLOCK


@script(ov_ext, default_opset=op)
def ExperimentalDetectronGenerateProposalsSingleImage(im_info, anchors, deltas, scores, min_size: float,
                                                      nms_threshold: float, post_nms_count: int, pre_nms_count: int):
    # (im_info [3], anchors [H*W*A, 4], deltas [4A, H, W], scores [A, H, W]) -> rois [post_nms_count, 4], scores
    # [post_nms_count].
    info = op.Reshape(op.Cast(im_info, to=FLOAT.dtype), op.Constant(value_ints=[-1]))
    a = op.Cast(anchors, to=FLOAT.dtype)
    s = op.Cast(scores, to=FLOAT.dtype)
    ok = op.Equal(op.Size(a), op.Mul(op.Size(s), op.Constant(value_int=4)))
    ok = op.And(ok, op.GreaterOrEqual(op.Size(info), op.Constant(value_int=2)))
    anchors_fit_the_map_and_im_info_has_the_image_size = op.Gather(
        op.Constant(value_ints=[0]), op.Cast(op.Not(op.Reshape(ok, op.Constant(value_ints=[1]))), to=INT64.dtype))
    a = op.Add(a, op.Cast(anchors_fit_the_map_and_im_info_has_the_image_size, to=FLOAT.dtype))
    size = op.Constant(value_float=min_size)
    boxes, score, big = _gp_refine(a, op.Cast(deltas, to=FLOAT.dtype), s, op.Gather(info, op.Constant(value_int=0)),
                                   op.Gather(info, op.Constant(value_int=1)), size, size,
                                   op.Constant(value_float=1.0))
    score = op.Mul(op.Cast(big, to=FLOAT.dtype), score)  # boxes under min_size score 0 and stay candidates
    pre = op.Reshape(op.Constant(value_int=pre_nms_count), op.Constant(value_ints=[1]))
    _, order = op.TopK(score, op.Min(op.Shape(score), pre), axis=0, largest=1, sorted=1)
    post = op.Constant(value_int=post_nms_count)
    kept = op.Gather(order, _greedy_nms(op.Gather(boxes, order, axis=0), op.Constant(value_float=nms_threshold),
                                        op.Constant(value_float=0.0), post, op.Constant(value_int=NMS_BLOCK)))
    post1 = op.Reshape(post, op.Constant(value_ints=[1]))
    rois = op.Concat(op.Gather(boxes, kept, axis=0),
                     op.Expand(op.Constant(value_float=0.0), op.Concat(post1, op.Constant(value_ints=[4]), axis=0)),
                     axis=0)
    probs = op.Concat(op.Gather(score, kept), op.Expand(op.Constant(value_float=0.0), post1), axis=0)
    first = op.Constant(value_ints=[0])
    return (op.CastLike(op.Slice(rois, first, post1, first), scores),
            op.CastLike(op.Slice(probs, first, post1, first), scores))


#: Functions of the domain the body calls.
HELPERS = GENERATE_PROPOSALS
