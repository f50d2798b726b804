"""CTCGreedyDecoder-1 and CTCGreedyDecoderSeqLen-6 in onnxscript: per step the class of the largest logit
(ArgMax: the first of equal ones, as std::max_element), kept where the sequence goes on, the class is not the
blank and (merging repeats) not the previous step's; the kept classes compacted to the front of each row by one
ScatterElements at their running count (CumSum), the rest -1."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from onnxscript import BOOL, DOUBLE, INT64, script

from ...domain import op, ov_ext
from ..base import Overload, words
from ..builder import BodyBuilder, Ref


@script(ov_ext, default_opset=op)
def _decode(classes, keep):
    # classes, keep: [N, T] (INT64, bool) -> the kept classes moved to the front of each row, -1 after them
    # ([N, T] INT64), and their count per row ([N] INT64).
    kept = op.Cast(keep, to=INT64.dtype)
    count = op.ReduceSum(kept, op.Constant(value_ints=[1]), keepdims=0)
    shape = op.Shape(classes)
    t_len = op.Slice(shape, op.Constant(value_ints=[1]), op.Constant(value_ints=[2]))
    # each kept class goes to its running count; the others to a spare column T, cut off after
    target = op.Where(keep, op.CumSum(kept, op.Constant(value_int=1), exclusive=1), t_len)
    wide = op.Concat(op.Slice(shape, op.Constant(value_ints=[0]), op.Constant(value_ints=[1])),
                     op.Add(t_len, op.Constant(value_ints=[1])), axis=0)
    filled = op.Sub(op.Cast(op.ConstantOfShape(wide), to=INT64.dtype), op.Constant(value_int=1))
    decoded = op.Slice(op.ScatterElements(filled, target, classes, axis=1), op.Constant(value_ints=[0]), t_len,
                       op.Constant(value_ints=[1]))
    return decoded, count


@script(ov_ext, default_opset=op)
def _repeated(classes, merge):
    # Where a step's class is the previous step's ([N, T] bool), when merging (`merge`: bool scalar).
    column = op.Concat(op.Shape(classes, start=0, end=1), op.Constant(value_ints=[1]), axis=0)
    before = op.Sub(op.Cast(op.ConstantOfShape(column), to=INT64.dtype), op.Constant(value_int=1))  # -1
    previous = op.Concat(before, op.Slice(classes, op.Constant(value_ints=[0]), op.Constant(value_ints=[-1]),
                                          op.Constant(value_ints=[1])), axis=1)
    return op.And(op.Equal(classes, previous), merge)


@script(ov_ext, default_opset=op)
def _seq_len_valid(seq_len, t_len):
    # Steps within each sequence ([N, T] bool), after checking 0 <= sequence_length <= T.
    lengths = op.Cast(seq_len, to=INT64.dtype)
    ok = op.And(op.GreaterOrEqual(lengths, op.Constant(value_int=0)), op.LessOrEqual(lengths, t_len))
    bad = op.ReduceSum(op.Cast(op.Not(ok), to=INT64.dtype), keepdims=0)
    sequence_length_within_time = op.Gather(op.Constant(value_ints=[0]), op.Reshape(
        op.Min(bad, op.Constant(value_int=1)), op.Constant(value_ints=[1])))
    lengths = op.Add(lengths, sequence_length_within_time)
    steps = op.Range(op.Constant(value_int=0), op.ReduceSum(t_len, keepdims=0), op.Constant(value_int=1))
    return op.Less(op.Unsqueeze(steps, op.Constant(value_ints=[0])), op.Unsqueeze(lengths, op.Constant(value_ints=[1])))


@script(ov_ext, default_opset=op)
def _masked(classes, data, sequence_mask, merge):
    # CTCGreedyDecoder-1: the classes [T, N] as [N, T], and which to keep: steps before the first whose mask
    # is 0, classes below the blank C - 1, not a repeat when merging.
    blank = op.Sub(op.Shape(data, start=2, end=3), op.Constant(value_ints=[1]))
    mask = op.Cast(sequence_mask, to=DOUBLE.dtype)  # (lossless; Equal has no bf16 kernel)
    stopped = op.Cast(op.Equal(mask, op.CastLike(op.Constant(value_int=0), mask)), to=INT64.dtype)
    valid = op.Transpose(op.Equal(op.CumSum(stopped, op.Constant(value_int=0)), op.Constant(value_int=0)),
                         perm=[1, 0])
    rows = op.Transpose(classes, perm=[1, 0])
    keep = op.And(op.And(valid, op.Less(rows, blank)), op.Not(_repeated(rows, merge)))
    return rows, keep


@script(ov_ext, default_opset=op)
def _lengths_keep(classes, sequence_length, blank, merge):
    # CTCGreedyDecoderSeqLen-6: which classes [N, T] to keep: steps within sequence_length (checked within
    # [0, T]), classes other than the blank, not a repeat when merging.
    valid = _seq_len_valid(sequence_length, op.Shape(classes, start=1, end=2))
    return op.And(op.And(valid, op.Not(op.Equal(classes, blank))), op.Not(_repeated(classes, merge)))


@script(ov_ext, default_opset=op)
def _blank_of(blank_index):
    return op.ReduceSum(op.Cast(op.Reshape(blank_index, op.Constant(value_ints=[-1])), to=INT64.dtype), keepdims=0)


HELPERS = (_decode, _repeated, _seq_len_valid, _masked, _lengths_keep, _blank_of)


# --- CTCGreedyDecoder-1 ------------------------------------------------------------------------------------


@script(ov_ext, default_opset=op)
def CTCGreedyDecoder(data, sequence_mask, ctc_merge_repeated: int = 1):
    # CTCGreedyDecoder-1(data: F [T, N, C], sequence_mask: F [T, N]; ctc_merge_repeated) -> F [N, T, 1, 1]
    # General body: ArgMax in f64 (exact for every float type: bf16 has no ArgMax kernel).
    classes = op.ArgMax(op.Cast(data, to=DOUBLE.dtype), axis=2, keepdims=0)
    rows, keep = _masked(classes, data, sequence_mask, op.Cast(op.Constant(value_int=ctc_merge_repeated), to=9))
    decoded, count = _decode(rows, keep)
    return op.Unsqueeze(op.CastLike(decoded, data), op.Constant(value_ints=[2, 3]))


@script(ov_ext, default_opset=op)
def ctc_greedy_decoder_direct(data, sequence_mask, ctc_merge_repeated: int = 1):
    # f16, f32, f64 data: ArgMax on the data itself.
    classes = op.ArgMax(data, axis=2, keepdims=0)
    rows, keep = _masked(classes, data, sequence_mask, op.Cast(op.Constant(value_int=ctc_merge_repeated), to=9))
    decoded, count = _decode(rows, keep)
    return op.Unsqueeze(op.CastLike(decoded, data), op.Constant(value_ints=[2, 3]))


# --- CTCGreedyDecoderSeqLen-6 ----------------------------------------------------------------------------


@script(ov_ext, default_opset=op)
def CTCGreedyDecoderSeqLen(data, sequence_length, blank_index, merge_repeated: int = 1,
                           classes_index_type: int = 6, sequence_length_type: int = 6):
    # CTCGreedyDecoderSeqLen-6(data: F [N, T, C], sequence_length: I [N], blank_index: I scalar or [1];
    #   merge_repeated, classes_index_type, sequence_length_type) -> (decoded [N, T], decoded_length [N])
    # General body: ArgMax in f64.
    classes = op.ArgMax(op.Cast(data, to=DOUBLE.dtype), axis=2, keepdims=0)
    keep = _lengths_keep(classes, sequence_length, _blank_of(blank_index),
                         op.Cast(op.Constant(value_int=merge_repeated), to=9))
    decoded, count = _decode(classes, keep)
    return op.Cast(decoded, to=classes_index_type), op.Cast(count, to=sequence_length_type)


@dataclass(frozen=True)
class Decoded(Overload):
    """CTCGreedyDecoderSeqLen-6 with ArgMax in f64 (``general``: every float type; bf16 has no ArgMax kernel) or on
    the data itself (``direct``: f16, f32, f64), its blank read from blank_index or, with no such input
    (``_noblank``), C - 1: the public body's nodes, built."""

    SPELLING = "{argmax}[_{has_blank}]"
    argmax: Annotated[str, words({"general": "f64", "direct": "data"})]
    has_blank: Annotated[bool, words({"noblank": False})] = True

    def build(self, g: BodyBuilder) -> tuple[str, str]:
        data = g("Cast", "data", to=DOUBLE.dtype) if self.argmax == "f64" else "data"
        classes = g("ArgMax", data, axis=2, keepdims=0)
        if self.has_blank:
            blank = g.call(_blank_of, "blank_index")
        else:
            blank = g("Sub", g("ReduceSum", g("Shape", "data", start=2, end=3), keepdims=0), g("Constant", value_int=1))
        merge = g("Cast", g.attribute("merge_repeated"), to=BOOL.dtype)
        keep = g.call(_lengths_keep, classes, "sequence_length", blank, merge)
        decoded, count = g.call(_decode, classes, keep, outputs=2)
        return g("Cast", decoded, to=Ref("classes_index_type")), g("Cast", count, to=Ref("sequence_length_type"))
