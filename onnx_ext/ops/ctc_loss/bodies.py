"""CTCLoss-4 in onnxscript: the target decoded per row (unique / collapsed / as is) and compacted to the front
(CumSum + ScatterElements), the extended sequence blank, l1, blank, l2, ..., blank ([N, 2T + 1]), the
log-softmax of the logits gathered along it ([T, N, 2T + 1]), then the forward algorithm in log space in a Loop
over T: one step is a log-sum-exp (stable: the largest term factored out) of a state's own, previous and
second-previous (skip) values, plus the step's log-probability; rows whose logit_length is over keep their
values. The loss is minus the log-sum-exp of the last label's and the final blank's states; 0 for an empty
decoded target (OpenVINO's reference: no path is searched, the loss is -0)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from onnxscript import BOOL, FLOAT, INT64, script

from ...domain import op, ov_ext
from ..base import Overload, words
from ..builder import BodyBuilder
from ..ctc_greedy_decoder.bodies import _blank_of  # the blank index as an i64 scalar: one function for both ops


@script(ov_ext, default_opset=op)
def _decoded_target(labels, label_length, unique, collapse):
    # The target of each row ([N, T] INT64, compacted to the front, 0 after) and its length ([N] INT64):
    # unique: first occurrences in order; else collapse: repeats merged (labels[0] kept even when
    # label_length is 0, as the reference does); else the first label_length labels.
    lab = op.Cast(labels, to=INT64.dtype)
    zero = op.Constant(value_int=0)
    t_len = op.Shape(lab, start=1, end=2)
    steps = op.Range(zero, op.ReduceSum(t_len, keepdims=0), op.Constant(value_int=1))
    row = op.Unsqueeze(steps, op.Constant(value_ints=[0]))  # [1, T]
    inside = op.Less(row, op.Unsqueeze(op.Cast(label_length, to=INT64.dtype), op.Constant(value_ints=[1])))
    first = op.Equal(row, zero)
    earlier = op.Less(row, op.Unsqueeze(steps, op.Constant(value_ints=[1])))  # [T, T]: s < t
    same = op.Equal(op.Unsqueeze(lab, op.Constant(value_ints=[2])), op.Unsqueeze(lab, op.Constant(value_ints=[1])))
    seen = op.Cast(op.ReduceMax(op.Cast(op.And(same, earlier), to=INT64.dtype), op.Constant(value_ints=[2]),
                                keepdims=0), to=BOOL.dtype)  # labels[t] occurs before t
    previous = op.Pad(lab, op.Constant(value_ints=[0, 1, 0, -1]), op.Constant(value_int=-1))
    changed = op.Or(first, op.Not(op.Equal(lab, previous)))
    only_collapse = op.And(collapse, op.Not(unique))
    keep = op.And(op.Or(inside, op.And(only_collapse, first)),
                  op.And(op.Not(op.And(unique, seen)), op.Or(op.Not(only_collapse), changed)))
    kept = op.Cast(keep, to=INT64.dtype)
    length = op.ReduceSum(kept, op.Constant(value_ints=[1]), keepdims=0)
    target = op.Where(keep, op.CumSum(kept, op.Constant(value_int=1), exclusive=1), t_len)
    wide = op.Concat(op.Shape(lab, start=0, end=1), op.Add(t_len, op.Constant(value_ints=[1])), axis=0)
    filled = op.ScatterElements(op.Cast(op.ConstantOfShape(wide), to=INT64.dtype), target, lab, axis=1)
    return op.Slice(filled, op.Constant(value_ints=[0]), t_len, op.Constant(value_ints=[1])), length


@script(ov_ext, default_opset=op)
def _log_add3(a, b, c):
    # log(exp(a) + exp(b) + exp(c)) elementwise, the largest factored out (-inf when all three are).
    m = op.Max(a, b, c)
    m = op.Where(op.IsInf(m, detect_positive=0), op.CastLike(op.Constant(value_float=0.0), m), m)
    return op.Add(m, op.Log(op.Sum(op.Exp(op.Sub(a, m)), op.Exp(op.Sub(b, m)), op.Exp(op.Sub(c, m)))))


@script(ov_ext, default_opset=op)
def _step(alpha, reads, step):
    # One step of the forward algorithm on state-first alpha [S + 2, N] (the last two states stay -inf: the
    # reads of states 0 and 1 wrap to them): the three terms of each state read from it ([3, S + 2, N]) plus the
    # step's mask, their log-sum-exp with the largest factored out (onnxruntime's ReduceLogSumExp is not stable:
    # it gives -inf for [-inf, -300, -inf]); a floor of -3e38 keeps the largest finite where every term is -inf.
    # (Terms on the first axis: the reductions drop it and the largest broadcasts over it, no Squeeze.)
    x = op.Add(op.Gather(alpha, reads, axis=0), step)
    axis_0 = op.Constant(value_ints=[0])
    top = op.Max(op.ReduceMax(x, axis_0, keepdims=0), op.CastLike(op.Constant(value_float=-3.0e38), alpha))
    return op.Add(op.Log(op.ReduceSum(op.Exp(op.Sub(x, top)), axis_0, keepdims=0)), top)


@script(ov_ext, default_opset=op)
def _ctc_loss(logits, logit_length, labels, label_length, blank, merge, unique, collapse):
    # CTCLoss-4 on logits in their compute type (f32 or f64); ``blank``: INT64 scalar; flags: bool scalars.
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    shape = op.Shape(logits)
    t_len = op.Gather(shape, one)
    classes = op.Gather(shape, op.Constant(value_int=2))
    logit_len = op.Cast(logit_length, to=INT64.dtype)
    label_len = op.Cast(label_length, to=INT64.dtype)
    bad_len = op.Or(op.Or(op.Less(logit_len, zero), op.Greater(logit_len, t_len)),
                    op.Or(op.Less(label_len, zero), op.Greater(label_len, logit_len)))
    # named checks: a Gather out of range when some value is bad, 0 otherwise
    bad = op.ReduceSum(op.Cast(bad_len, to=INT64.dtype), keepdims=0)
    lengths_within_time = op.Gather(op.Constant(value_ints=[0]), op.Reshape(op.Min(bad, one), op.Constant(
        value_ints=[1])))
    target, length = _decoded_target(labels, label_length, unique, collapse)
    used = op.Less(op.Unsqueeze(op.Range(zero, t_len, one), op.Constant(value_ints=[0])),
                   op.Unsqueeze(length, op.Constant(value_ints=[1])))
    outside = op.Or(op.Less(target, zero), op.GreaterOrEqual(target, classes))
    bad = op.ReduceSum(op.Cast(op.And(used, outside), to=INT64.dtype), keepdims=0)
    labels_within_classes = op.Gather(op.Constant(value_ints=[0]), op.Reshape(op.Min(bad, one), op.Constant(
        value_ints=[1])))
    bad = op.Cast(op.Or(op.Less(blank, zero), op.GreaterOrEqual(blank, classes)), to=INT64.dtype)
    blank_index_within_classes = op.Gather(op.Constant(value_ints=[0]), op.Reshape(bad, op.Constant(
        value_ints=[1])))
    checks = op.Add(op.Add(lengths_within_time, labels_within_classes), blank_index_within_classes)
    # extended sequence [N, S]: blank, l1, blank, l2, ..., blank, as long as the longest target needs
    blanks = op.Add(op.Mul(target, zero), op.Add(blank, op.ReduceSum(checks, keepdims=0)))
    pairs = op.Concat(op.Unsqueeze(blanks, op.Constant(value_ints=[2])), op.Unsqueeze(target, op.Constant(
        value_ints=[2])), axis=2)
    # [N, 2T] written out: a -1 beside N == 0 is ambiguous, and onnxruntime refuses the model at load
    n_1 = op.Concat(op.Shape(target, start=0, end=1), op.Mul(op.Shape(target, start=1, end=2),
                                                              op.Constant(value_ints=[2])), axis=0)
    column = op.Concat(op.Shape(target, start=0, end=1), op.Constant(value_ints=[1]), axis=0)
    wide = op.Concat(op.Reshape(pairs, n_1), op.Expand(op.Add(blank, op.ReduceSum(checks, keepdims=0)), column),
                     axis=1)
    longest = op.Add(op.Mul(op.ReduceMax(op.Concat(length, op.Constant(value_ints=[0]), axis=0), keepdims=1),
                            op.Constant(value_int=2)), one)
    ext = op.Slice(wide, op.Constant(value_ints=[0]), longest, op.Constant(value_ints=[1]))
    # log-softmax over the classes, gathered along the extended sequence: [T, N, S]
    top = op.ReduceMax(logits, op.Constant(value_ints=[2]), keepdims=1)
    centred = op.Sub(logits, top)
    log_p = op.Sub(centred, op.Log(op.ReduceSum(op.Exp(centred), op.Constant(value_ints=[2]), keepdims=1)))
    ext_shape = op.Shape(ext)
    # (Tile, not Expand: with T == 0 and constant lengths onnxruntime's Expand to [N, 0, S] left a dim of 1)
    where = op.Tile(op.Unsqueeze(ext, op.Constant(value_ints=[1])), op.Concat(
        op.Constant(value_ints=[1]), op.Reshape(t_len, op.Constant(value_ints=[1])), op.Constant(value_ints=[1]),
        axis=0))
    emit = op.Transpose(op.GatherElements(log_p, where, axis=2), perm=[1, 0, 2])
    # the three terms of a state ([N, 3, S]): its own value (blanks always, labels when merging), the previous
    # state's, the second previous (a label whose previous label differs, or any when not merging), as additive
    # masks (0 or -inf)
    neg_inf = op.CastLike(op.Constant(value_float=float("-inf")), logits)
    nothing = op.CastLike(op.Constant(value_float=0.0), logits)
    states = op.Range(zero, op.Gather(ext_shape, one), one)
    is_label = op.Equal(op.Mod(states, op.Constant(value_int=2)), one)
    stay = op.Expand(op.Where(op.Or(op.Not(is_label), merge), nothing, neg_inf), ext_shape)
    before = op.Pad(ext, op.Constant(value_ints=[0, 2, 0, -2]), op.Constant(value_int=-1))
    skip_ok = op.And(op.And(is_label, op.GreaterOrEqual(states, op.Constant(value_int=3))),
                     op.Or(op.Not(merge), op.Not(op.Equal(ext, before))))
    skip = op.Where(skip_ok, nothing, neg_inf)
    axis_1 = op.Constant(value_ints=[1])
    terms = op.Concat(op.Unsqueeze(stay, axis_1), op.Unsqueeze(op.Expand(nothing, ext_shape), axis_1),
                      op.Unsqueeze(skip, axis_1), axis=1)
    # per step [T, N, 3, S]: the terms plus the step's log-probability; past logit_length, the state's own
    # value as it is (the identity)
    identity = op.CastLike(op.Constant(value_floats=[0.0, float("-inf"), float("-inf")]), logits)
    frames = op.Less(op.Unsqueeze(op.Range(zero, t_len, one), op.Constant(value_ints=[1])),
                     op.Unsqueeze(logit_len, op.Constant(value_ints=[0])))  # [T, N]
    steps = op.Where(op.Unsqueeze(frames, op.Constant(value_ints=[2, 3])),
                     op.Add(op.Unsqueeze(terms, op.Constant(value_ints=[0])), op.Unsqueeze(emit, op.Constant(
                         value_ints=[2]))), op.Reshape(identity, op.Constant(value_ints=[1, 1, 3, 1])))
    # state-first steps [T, 3, S + 2, N] (two -inf states appended: they stay -inf); alpha before the first step:
    # the start state only; a step: the log-sum-exp of the terms read from alpha (states s, s - 1, s - 2)
    steps = op.Pad(op.Transpose(steps, perm=[0, 2, 3, 1]), op.Constant(value_ints=[0, 0, 0, 0, 0, 0, 2, 0]),
                   neg_inf)
    wide_states = op.Range(zero, op.Add(op.Gather(ext_shape, one), op.Constant(value_int=2)), one)
    start = op.Equal(op.Expand(op.Unsqueeze(wide_states, op.Constant(value_ints=[1])), op.Concat(
        op.Shape(wide_states), op.Shape(ext, start=0, end=1), axis=0)), zero)
    alpha = op.Where(start, nothing, neg_inf)
    reads = op.Concat(op.Unsqueeze(wide_states, op.Constant(value_ints=[0])),
                      op.Unsqueeze(op.Sub(wide_states, one), op.Constant(value_ints=[0])),
                      op.Unsqueeze(op.Sub(wide_states, op.Constant(value_int=2)), op.Constant(value_ints=[0])), axis=0)
    # eight steps per Loop iteration (onnxruntime's Loop costs about as much per iteration as the steps), split
    # from one Gather: the steps padded with identities to a multiple of 8
    eight = op.Constant(value_int=8)
    rounds = op.Div(op.Add(t_len, op.Constant(value_int=7)), eight)
    extra = op.Reshape(op.Sub(op.Mul(rounds, eight), t_len), op.Constant(value_ints=[1]))
    # (a Tile: onnxruntime infers an Expand to a 0 dim as 1 when the shape is a constant, T == 0 with constant
    # labels, and refuses the model)
    steps = op.Concat(steps, op.Tile(op.Reshape(identity, op.Constant(value_ints=[1, 3, 1, 1])), op.Concat(
        extra, op.Constant(value_ints=[1]), op.Shape(steps, start=2, end=4), axis=0)), axis=0)
    steps = op.Reshape(steps, op.Concat(op.Reshape(rounds, op.Constant(value_ints=[1])), op.Constant(
        value_ints=[24]), op.Shape(steps, start=2, end=4), axis=0))
    for r in range(rounds):
        s0, s1, s2, s3, s4, s5, s6, s7 = op.Split(op.Gather(steps, r, axis=0), axis=0, num_outputs=8)
        alpha = _step(_step(_step(_step(alpha, reads, s0), reads, s1), reads, s2), reads, s3)
        alpha = _step(_step(_step(_step(alpha, reads, s4), reads, s5), reads, s6), reads, s7)
    alpha = op.Transpose(alpha, perm=[1, 0])
    # the paths ending on the last label or the final blank; an empty target: 0 (the reference's -0)
    last = op.Unsqueeze(op.Mul(length, op.Constant(value_int=2)), op.Constant(value_ints=[1]))
    ends = op.GatherElements(alpha, op.Concat(op.Max(op.Sub(last, one), zero), last, axis=1), axis=1)
    total = _log_add3(op.Gather(ends, zero, axis=1), op.Gather(ends, one, axis=1),
                      op.Expand(neg_inf, op.Shape(length)))
    return op.Neg(op.Where(op.Equal(length, zero), nothing, total))


@script(ov_ext, default_opset=op)
def _last_class(logits):
    return op.Sub(op.ReduceSum(op.Shape(logits, start=2, end=3), keepdims=0), op.Constant(value_int=1))


HELPERS = (_decoded_target, _log_add3, _step, _ctc_loss, _blank_of, _last_class)


@script(ov_ext, default_opset=op)
def CTCLoss(logits, logit_length, labels, label_length, blank_index, preprocess_collapse_repeated: int = 0,
            ctc_merge_repeated: int = 1, unique: int = 0):
    # CTCLoss-4(logits: F [N, T, C], logit_length: I [N], labels: I [N, T], label_length: I [N],
    #           blank_index?: I scalar; preprocess_collapse_repeated, ctc_merge_repeated, unique) -> F [N]
    # General body: computed in f32 (f16, bf16, f32 logits).
    loss = _ctc_loss(op.Cast(logits, to=FLOAT.dtype), logit_length, labels, label_length, _blank_of(blank_index),
                     op.Cast(op.Constant(value_int=ctc_merge_repeated), to=BOOL.dtype),
                     op.Cast(op.Constant(value_int=unique), to=BOOL.dtype),
                     op.Cast(op.Constant(value_int=preprocess_collapse_repeated), to=BOOL.dtype))
    return op.CastLike(loss, logits)


@dataclass(frozen=True)
class Computed(Overload):
    """CTCLoss-4 computed in f32 (``general``: f16, bf16 and f32 logits) or in f64, its blank read from blank_index
    or, with no such input (``_noblank``), C - 1: the public body's nodes, built."""

    SPELLING = "{compute}[_{has_blank}]"
    compute: Annotated[str, words({"general": "f32", "f64": "f64"})]
    has_blank: Annotated[bool, words({"noblank": False})] = True

    def build(self, g: BodyBuilder) -> str:
        cast = self.compute == "f32"
        logits = g("Cast", "logits", to=FLOAT.dtype) if cast else "logits"
        blank = g.call(_blank_of, "blank_index") if self.has_blank else g.call(_last_class, "logits")
        flags = [g("Cast", g.attribute(name), to=BOOL.dtype)
                 for name in ("ctc_merge_repeated", "unique", "preprocess_collapse_repeated")]
        loss = g.call(_ctc_loss, logits, "logit_length", "labels", "label_length", blank, *flags)
        return g("CastLike", loss, "logits") if cast else loss

