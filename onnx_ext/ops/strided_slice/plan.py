"""StridedSlice-1: function bodies, slice plan, numpy reference and checks.

OpenVINO: StridedSlice-1(data, begin, end, optional stride; begin_mask, end_mask,
new_axis_mask, shrink_axis_mask, ellipsis_mask). Numpy/TensorFlow strided
slicing, as OpenVINO's reference implementation (``make_slice_plan`` in
src/core/src/op/util/slice_plan.cpp, and its shape inference) does it:

- Entry i of begin/end/stride is, by priority, the ellipsis (ellipsis_mask), a
  new axis (new_axis_mask: a dim of 1, consumes no input dim), a shrink
  (shrink_axis_mask: takes the element at begin, which must be within
  [-dim, dim), and drops the dim; masks and stride are ignored) or a slice. The
  ellipsis covers rank - (entries that are neither ellipsis nor new axis) dims;
  with no ellipsis bit an implicit one sits after the last entry.
- Slices: negative begin/end count from the end; then a forward stride clamps
  begin and end to [0, dim], a backward one begin to [0, dim-1] and end to
  [-1, dim]. A masked begin is 0 (backward: dim-1), a masked end is dim
  (backward: before index 0). ONNX Slice clamps the same way.
- Masks shorter than begin are zero-extended, longer ones cut.

Corrections to the specification text (checked against the reference):
- begin == end on a slice gives an empty dim (the text says one element).
- The basic 6-D example lists [3, 2, 1, 0] (4 elements) for ``3:0:-1``; the end is
  exclusive: [3, 2, 1], so the output is [4, 3, 2, 2, 3, 2].
- ``x[::-1]`` includes index 0 (the text's ``[1:, :, ::-1]`` example gives
  [3, 2, 1]; the result is [3, 2, 1, 0]); the clamping example (begin
  [1234, 2], end [1234, 4321], stride [1, -1] on 2x2) gives an empty [0, 0].
- A backward begin below -dim clamps to 0, so ``x[-10:-20:-1]`` on 4 elements
  is [x[0]] (numpy gives an empty result there; the reference and ONNX Slice
  give one element).
- The 12-D ellipsis example says 10-D and lists 11 output dims; the result is
  [8, 10 x 10, 1, 5] (13 dims). Its masks have different lengths (4, 4, 3, 1,
  2): accepted here, as the text says (OpenVINO itself rejects masks of
  different non-empty lengths).
- The stride must not be 0 on slice entries; a stride on an ellipsis, new-axis
  or shrink entry is ignored, 0 included (the text forbids 0 everywhere; the
  reference accepts it where it is ignored, and so does this package).
- An ellipsis bit at the index of a new-axis or shrink bit: the ellipsis wins
  (shape inference does this; the reference's evaluate returns a wrong shape).

Deliberate differences from the reference's evaluate (both are its bugs; its
shape inference and CPU plugin agree with this package):
- 0-d data: evaluate leaves the output uninitialised; here the value is kept.
- A backward slice over a dim of size 0 whose end clamps to -1 gives a dim of
  1 holding bytes read out of bounds; here the dim is 0.

Bodies (all run one Slice on the data; everything else works on vectors of the
M entries):
- ``general`` (the public ``StridedSlice``): runtime begin/end/stride of runtime
  length M, data of unknown rank. Per entry: the kind, the data axis (CumSum),
  Slice's start/end/step; one Slice on the consumed axes of data seen with a
  trailing 1, one Reshape (allowzero=1) that drops shrunk dims and inserts new
  ones. ~100 small nodes.
- ``rank{r}_{code}`` (data rank r and M known, ``code`` = SlicePlan.code), built
  on demand node by node: the axes and masks are constants and only what the
  plan needs is emitted. Data path: Unsqueeze of the input (new axes: on the
  input side it is free, on the output side onnxruntime copies a graph output),
  one Slice with constant axes, Squeeze (shrunk axes). With a constant stride
  and no masks/shrinks onnxruntime keeps Cast, Shape, Gather, Min, Slice.
- ``general_nostride`` / ``rank{r}_{code}_nostride``: the same for nodes without
  a stride input (an ONNX function cannot test whether an optional input is
  present, so ``select_body`` picks these; in onnxscript pass the stride).

An unmasked end is capped at the dim before Slice: onnxruntime reads an end of
exactly INT32_MAX or INT64_MAX as "to the far end" even for a backward step,
where the reference clamps it to dim (empty result). (Not exact for a dim of
exactly 2**31 - 1 with a backward step.)

Errors at runtime (onnxruntime's message quotes the node named after the
check): ``begin_end_stride_1d_same_length``, ``sliced_axes_within_data_rank``,
``stride_nonzero_on_slice_entries``, ``shrink_index_within_dim``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import re

import numpy as np
import onnx
import onnx.numpy_helper
from onnxscript import BOOL, INT64, script

from ..domain import op, ov_ext
from ..errors import OpAttributeError, OpInputError
from .base import Attr, BodyBuilder, Operand, OpSpec, built_function, int_token, parse_int_token

MASKS = ("begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask")
INT64_MIN = -9223372036854775808
INT64_MAX = 9223372036854775807


# --- slice plan (plain Python: shared by the reference, the checks, the overloads and converters) ---


@dataclass(frozen=True)
class Entry:
    """One entry of begin/end/stride after the mask priorities."""

    kind: str  # "slice", "shrink", "new" or "ellipsis"
    begin_masked: bool = False  # slices only
    end_masked: bool = False  # slices only


@dataclass(frozen=True)
class SlicePlan:
    """Where each entry acts on data of a given rank, and where each output dim comes from."""

    rank: int
    entries: tuple[Entry, ...]
    axes: tuple[int | None, ...]  # per entry: data axis (slice, shrink), first covered axis (ellipsis), None (new)
    ellipsis_size: int  # input dims covered by the ellipsis (explicit, or implicit after the last entry)
    out_src: tuple[int, ...]  # per output dim: data axis whose sliced size it has, or -1 for a new axis

    @property
    def code(self) -> str:
        """The entries as a string: n new, e ellipsis, x shrink; slices 0, b (begin masked), f (end masked), a (both)."""
        return "".join(_CODE[(e.kind, e.begin_masked, e.end_masked)] for e in self.entries)

    def output_dims(self, data_shape: Sequence, begin=None, end=None, stride=None) -> tuple:
        """The output shape as far as it is known (data dims may be symbolic or None): 1 for a
        new axis, the data dim where it passes through (ellipsis), None where it is sliced,
        unless begin/end/stride are given and the dim is an int, or the slice takes it whole."""
        sliced = {a: i for i, (e, a) in enumerate(zip(self.entries, self.axes)) if e.kind == "slice"}
        vectors = None if begin is None or end is None else _index_vectors(begin, end, stride)

        def sliced_dim(axis: int):
            if vectors is None:
                return None
            i, dim = sliced[axis], data_shape[axis]
            entry, (b, e, s) = self.entries[i], (v[i] for v in vectors)
            if isinstance(dim, int):
                return len(slice_range(dim, b, e, s, entry.begin_masked, entry.end_masked))
            if s == 0:
                raise OpInputError("StridedSlice", "stride must be non-zero on slice entries")
            whole = ((s == 1 and (entry.begin_masked or b == 0) and (entry.end_masked or e == INT64_MAX))
                     or (s == -1 and entry.begin_masked and entry.end_masked))
            return dim if whole else None

        return tuple(1 if s < 0 else sliced_dim(s) if s in sliced else data_shape[s] for s in self.out_src)

    def output_shape(self, data_shape: Sequence[int], begin, end, stride=None) -> tuple[int, ...]:
        """The output shape for concrete begin/end/stride (raises OpInputError like the op)."""
        sizes = _sliced_sizes(self, tuple(data_shape), *_index_vectors(begin, end, stride))
        return tuple(1 if s < 0 else sizes[s] for s in self.out_src)


_CODE = {
    ("new", False, False): "n",
    ("ellipsis", False, False): "e",
    ("shrink", False, False): "x",
    ("slice", False, False): "0",
    ("slice", True, False): "b",
    ("slice", False, True): "f",
    ("slice", True, True): "a",
}
_DECODE = {v: Entry(*k) for k, v in _CODE.items()}


def extended_masks(attrs: dict, num_entries: int) -> dict[str, tuple[bool, ...]]:
    """Each mask zero-extended or cut to the number of entries."""
    return {k: tuple(bool(v) for v in (list(attrs.get(k) or [])[:num_entries] + [0] * num_entries)[:num_entries])
            for k in MASKS}


def entries_of(attrs: dict, num_entries: int) -> tuple[Entry, ...]:
    """The entries' kinds (priority ellipsis > new axis > shrink > slice): independent of the data rank."""
    m = extended_masks(attrs, num_entries)
    out = []
    for i in range(num_entries):
        if m["ellipsis_mask"][i]:
            out.append(Entry("ellipsis"))
        elif m["new_axis_mask"][i]:
            out.append(Entry("new"))
        elif m["shrink_axis_mask"][i]:
            out.append(Entry("shrink"))
        else:
            out.append(Entry("slice", m["begin_mask"][i], m["end_mask"][i]))
    return tuple(out)


def plan_from_entries(rank: int, entries: Sequence[Entry]) -> SlicePlan:
    entries = tuple(entries)
    num_real = sum(e.kind in ("slice", "shrink") for e in entries)
    if num_real > rank:
        raise OpInputError("StridedSlice", f"{num_real} entries slice or shrink data axes but data has rank {rank}")
    ellipsis_size = rank - num_real
    axes, out_src, axis = [], [], 0
    for e in entries:
        if e.kind == "new":
            axes.append(None)
            out_src.append(-1)
        elif e.kind == "ellipsis":
            axes.append(axis)
            out_src += range(axis, axis + ellipsis_size)
            axis += ellipsis_size
        else:
            axes.append(axis)
            if e.kind == "slice":
                out_src.append(axis)
            axis += 1
    out_src += range(axis, rank)  # the implicit ellipsis (nothing left when there was an explicit one)
    return SlicePlan(rank, entries, tuple(axes), ellipsis_size, tuple(out_src))


def make_slice_plan(rank: int, num_entries: int, attrs: dict) -> SlicePlan:
    """The plan for data of rank ``rank`` and begin/end/stride of ``num_entries`` values.

    ``attrs``: the five masks (missing ones empty). Raises OpInputError when more
    entries slice or shrink than the data has axes.
    """
    return plan_from_entries(rank, entries_of(attrs, num_entries))


def plan_from_code(rank: int, code: str) -> SlicePlan:
    return plan_from_entries(rank, [_DECODE[c] for c in code])


def slice_range(dim: int, begin: int, end: int, stride: int, begin_masked: bool, end_masked: bool) -> range:
    """The indices one slice entry takes from a dim of size ``dim``."""
    if stride == 0:
        raise OpInputError("StridedSlice", "stride must be non-zero on slice entries")
    reverse = stride < 0
    if dim == 0:  # the reference gives a phantom element for reverse slices here
        return range(0)
    if begin_masked:
        begin = dim - 1 if reverse else 0
    elif begin < 0:
        begin += dim
    begin = max(0, min(dim - 1 if reverse else dim, begin))
    if end_masked:
        end = -1 if reverse else dim
    elif end < 0:
        end += dim
    end = max(-1 if reverse else 0, min(dim, end))
    return range(begin, end, stride)


def shrink_index(dim: int, begin: int) -> int:
    if not -dim <= begin < dim:
        raise OpInputError("StridedSlice", f"shrink index {begin} is outside [-{dim}, {dim}) for a dim of size {dim}")
    return begin + dim if begin < 0 else begin


def _index_vectors(begin, end, stride):
    vectors = []
    for name, v in (("begin", begin), ("end", end), ("stride", stride)):
        if v is None:
            vectors.append(None)
            continue
        a = np.asarray(v)
        if a.dtype.kind not in "iu":
            raise OpInputError("StridedSlice", f"{name} must hold integers, got {a.dtype}")
        if a.ndim != 1:
            raise OpInputError("StridedSlice", f"{name} must be 1-D, got shape {list(a.shape)}")
        vectors.append([int(x) for x in a.astype(np.int64)])
    b, e, s = vectors
    if s is None:
        s = [1] * len(b)
    if not len(b) == len(e) == len(s):
        raise OpInputError("StridedSlice", f"begin, end and stride have different lengths {len(b)}, {len(e)}, {len(s)}")
    return b, e, s


def _per_axis_indices(plan: SlicePlan, shape: tuple[int, ...], b, e, s) -> dict[int, object]:
    """Data axis -> the indices taken there (a range) or the shrink index (an int)."""
    taken = {}
    for i, (entry, axis) in enumerate(zip(plan.entries, plan.axes)):
        if entry.kind == "slice":
            taken[axis] = slice_range(shape[axis], b[i], e[i], s[i], entry.begin_masked, entry.end_masked)
        elif entry.kind == "shrink":
            taken[axis] = shrink_index(shape[axis], b[i])
    return taken


def _sliced_sizes(plan: SlicePlan, shape: tuple[int, ...], b, e, s) -> list[int]:
    taken = _per_axis_indices(plan, shape, b, e, s)
    return [len(taken[a]) if isinstance(taken.get(a), range) else (1 if a in taken else shape[a]) for a in range(len(shape))]


# --- numpy reference ----------------------------------------------------------------


def strided_slice_reference(data: np.ndarray, begin, end, stride=None, *, begin_mask, end_mask,
                            new_axis_mask=(), shrink_axis_mask=(), ellipsis_mask=()) -> np.ndarray:
    """StridedSlice-1 in numpy (the reference's semantics, with the corrections listed above)."""
    attrs = SPEC.normalize({"begin_mask": begin_mask, "end_mask": end_mask, "new_axis_mask": new_axis_mask,
                            "shrink_axis_mask": shrink_axis_mask, "ellipsis_mask": ellipsis_mask})
    data = np.asarray(data)
    b, e, s = _index_vectors(begin, end, stride)
    plan = make_slice_plan(data.ndim, len(b), attrs)
    out = data
    for axis, taken in _per_axis_indices(plan, data.shape, b, e, s).items():
        idx = [taken] if isinstance(taken, int) else list(taken)
        out = np.take(out, np.array(idx, dtype=np.int64), axis=axis)
    shape = tuple(1 if src < 0 else out.shape[src] for src in plan.out_src)
    return out.reshape(shape).copy()


# --- function bodies -------------------------------------------------------------


@script(ov_ext, default_opset=op)
def _strided_slice_general(data, begin, end, stride, begin_mask, end_mask, new_axis_mask, shrink_axis_mask,
                           ellipsis_mask):
    # begin/end/stride: integer vectors of one runtime length M; the masks: int64
    # vectors of any length (zero-extended or cut to M here). Data of any rank.
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    zero1 = op.Constant(value_ints=[0])
    one1 = op.Constant(value_ints=[1])
    minus1 = op.Constant(value_ints=[-1])
    imin = op.Constant(value_ints=[-9223372036854775808])
    imax = op.Constant(value_ints=[9223372036854775807])
    shape = op.Shape(data)
    rank = op.Size(shape)

    b = op.Cast(op.Reshape(begin, minus1), to=INT64.dtype)
    e = op.Cast(op.Reshape(end, minus1), to=INT64.dtype)
    s = op.Cast(op.Reshape(stride, minus1), to=INT64.dtype)
    m = op.Size(b)
    mv = op.Reshape(m, one1)
    ok = op.And(op.Equal(op.Size(op.Shape(begin)), one), op.Equal(op.Size(op.Shape(end)), one))
    ok = op.And(ok, op.Equal(op.Size(op.Shape(stride)), one))
    ok = op.And(ok, op.And(op.Equal(op.Size(e), m), op.Equal(op.Size(s), m)))
    begin_end_stride_1d_same_length = op.Gather(zero1, op.Cast(op.Not(ok), to=INT64.dtype))
    b = op.Add(b, begin_end_stride_1d_same_length)

    # Masks zero-extended / cut to M; kinds by priority ellipsis > new axis > shrink > slice.
    zeros_m = op.Expand(zero1, mv)
    is_ell = op.Cast(op.Slice(op.Concat(ellipsis_mask, zeros_m, axis=0), zero1, mv), to=BOOL.dtype)
    is_new = op.And(op.Cast(op.Slice(op.Concat(new_axis_mask, zeros_m, axis=0), zero1, mv), to=BOOL.dtype),
                    op.Not(is_ell))
    consumes = op.Not(op.Or(is_ell, is_new))
    is_shr = op.And(op.Cast(op.Slice(op.Concat(shrink_axis_mask, zeros_m, axis=0), zero1, mv), to=BOOL.dtype),
                    consumes)
    is_slice = op.And(consumes, op.Not(is_shr))
    bm = op.Cast(op.Slice(op.Concat(begin_mask, zeros_m, axis=0), zero1, mv), to=BOOL.dtype)
    em = op.Cast(op.Slice(op.Concat(end_mask, zeros_m, axis=0), zero1, mv), to=BOOL.dtype)

    # Data axis of each entry: entries consuming a dim count up from 0; those after
    # the ellipsis are shifted by its size. A virtual entry M is the implicit
    # ellipsis (size 0 when there is an explicit one).
    consumes_i = op.Cast(consumes, to=INT64.dtype)
    ell_i = op.Cast(is_ell, to=INT64.dtype)
    num_real = op.ReduceSum(consumes_i, keepdims=0)
    has_ell = op.ReduceSum(ell_i, keepdims=0)
    ell_size = op.Sub(rank, num_real)
    sliced_axes_within_data_rank = op.Gather(zero1, op.Cast(op.Less(ell_size, zero), to=INT64.dtype))
    ell_size = op.Add(ell_size, op.ReduceSum(sliced_axes_within_data_rank, keepdims=0))
    ell_x = op.Concat(ell_i, op.Reshape(op.Sub(one, has_ell), one1), axis=0)
    axis_x = op.Add(op.CumSum(op.Concat(consumes_i, zero1, axis=0), zero, exclusive=1),
                    op.Mul(ell_size, op.CumSum(ell_x, zero, exclusive=1)))
    axis = op.Slice(axis_x, zero1, mv)
    dims = op.Gather(op.Concat(shape, one1, axis=0), axis)

    # Slice parameters. Masked begin/end become INT64_MIN/MAX by direction; an end
    # is first capped at dim (onnxruntime reads an end of INT32_MAX or INT64_MAX as
    # "to the far end" even for backward steps). Shrinks take [b, b + 1).
    neg = op.Less(s, zero)
    start = op.Where(bm, op.Where(neg, imax, imin), b)
    stop = op.Where(em, op.Where(neg, imin, imax), op.Min(e, dims))
    bn = op.Where(op.Less(b, zero), op.Add(b, dims), b)
    shrink_ok = op.Or(op.Not(is_shr), op.And(op.GreaterOrEqual(bn, zero), op.Less(bn, dims)))
    shrink_index_within_dim = op.Gather(zero1, op.Cast(op.Not(shrink_ok), to=INT64.dtype))
    stride_ok = op.Or(op.Not(is_slice), op.Not(op.Equal(s, zero)))
    stride_nonzero_on_slice_entries = op.Gather(zero1, op.Cast(op.Not(stride_ok), to=INT64.dtype))
    start = op.Add(op.Where(is_shr, bn, start), shrink_index_within_dim)
    stop = op.Where(is_shr, op.Add(bn, one), stop)
    step = op.Add(op.Where(is_shr, one, s), stride_nonzero_on_slice_entries)

    # One Slice on the consumed axes (data seen with a trailing 1: Slice refuses 0-d
    # tensors, and that 1 is the size of every new axis).
    data1 = op.Reshape(data, op.Concat(shape, one1, axis=0), allowzero=1)
    sliced = op.Slice(data1, op.Compress(start, consumes), op.Compress(stop, consumes),
                      op.Compress(axis, consumes), op.Compress(step, consumes))
    sliced_shape = op.Shape(sliced)

    # Output dim p comes from entry k(p) (count of entries whose inclusive cumsum of
    # output dims is <= p): a new axis (the trailing 1) or data axis axis[k] + offset.
    new_x = op.Concat(op.Cast(is_new, to=INT64.dtype), zero1, axis=0)
    count_x = op.Add(op.Add(new_x, op.Concat(op.Cast(is_slice, to=INT64.dtype), zero1, axis=0)),
                     op.Mul(ell_x, ell_size))
    incl = op.CumSum(count_x, zero)
    pos = op.Range(zero, op.ReduceSum(count_x, keepdims=0), one)
    k = op.ReduceSum(op.Cast(op.LessOrEqual(op.Unsqueeze(incl, zero1), op.Unsqueeze(pos, one1)), to=INT64.dtype),
                     one1, keepdims=0)
    offset = op.Sub(pos, op.Gather(op.Sub(incl, count_x), k))
    src = op.Where(op.Cast(op.Gather(new_x, k), to=BOOL.dtype), rank, op.Add(op.Gather(axis_x, k), offset))
    return op.Reshape(sliced, op.Gather(sliced_shape, src), allowzero=1)


@script(ov_ext, default_opset=op)
def StridedSlice(data, begin, end, stride, begin_mask: Sequence[int], end_mask: Sequence[int],
                 new_axis_mask: Sequence[int] = (), shrink_axis_mask: Sequence[int] = (),
                 ellipsis_mask: Sequence[int] = ()):
    # StridedSlice-1(data: T, begin, end, stride: integer 1-D; five INTS masks) -> T.
    # General body: runtime begin/end/stride, data of unknown rank. In onnxscript,
    # pass the stride (ones when absent): a function cannot see a missing input.
    return _strided_slice_general(
        data, begin, end, stride,
        op.Constant(value_ints=begin_mask), op.Constant(value_ints=end_mask),
        op.Constant(value_ints=new_axis_mask), op.Constant(value_ints=shrink_axis_mask),
        op.Constant(value_ints=ellipsis_mask),
    )


@script(ov_ext, default_opset=op)
def strided_slice_nostride(data, begin, end, stride, begin_mask: Sequence[int], end_mask: Sequence[int],
                           new_axis_mask: Sequence[int] = (), shrink_axis_mask: Sequence[int] = (),
                           ellipsis_mask: Sequence[int] = ()):
    # The general body for nodes without a stride input (stride is never read).
    ones = op.Expand(op.Constant(value_ints=[1]), op.Shape(begin))
    return _strided_slice_general(
        data, begin, end, ones,
        op.Constant(value_ints=begin_mask), op.Constant(value_ints=end_mask),
        op.Constant(value_ints=new_axis_mask), op.Constant(value_ints=shrink_axis_mask),
        op.Constant(value_ints=ellipsis_mask),
    )


class _BuiltFunction:
    """A specialised body built node by node (it emits only what its plan needs, which
    onnxscript cannot express without one function per combination); OpSpec uses it
    like an onnxscript function."""

    def __init__(self, proto: onnx.FunctionProto):
        self._proto = proto

    def to_function_proto(self) -> onnx.FunctionProto:
        proto = onnx.FunctionProto()
        proto.CopyFrom(self._proto)
        return proto


def _static_body(rank: int, code: str, has_stride: bool) -> _BuiltFunction:
    """The body for data of rank ``rank`` and entries ``code`` (see SlicePlan.code).

    Data path: Unsqueeze (new axes, on the input, when there are any), one Slice with
    constant axes, Squeeze (shrunk axes, when there are any). Index path: Gathers of
    begin/end/stride and a few elementwise ops on vectors of the sliced entries;
    everything the plan fixes is a constant, and nothing is emitted that it does not need.
    """
    plan = plan_from_code(rank, code)
    nodes: list[onnx.NodeProto] = []
    names = iter(range(1 << 30))

    def emit(op_type, inputs, out=None, **attrs):
        out = out or f"t{next(names)}"
        nodes.append(onnx.helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def const(values, dtype=np.int64):
        return emit("Constant", [], value=onnx.numpy_helper.from_array(np.array(values, dtype=dtype)))

    # Intermediate layout: the output with shrunk dims still there (as 1s).
    layout = []  # (kind, entry index, data axis) per dim
    for i, (entry, axis) in enumerate(zip(plan.entries, plan.axes)):
        if entry.kind == "ellipsis":
            layout += [("keep", i, a) for a in range(axis, axis + plan.ellipsis_size)]
        else:
            layout.append((entry.kind, i, axis))
    consumed = sum(e.kind in ("slice", "shrink") for e in plan.entries) + (
        plan.ellipsis_size if any(e.kind == "ellipsis" for e in plan.entries) else 0)
    layout += [("keep", None, a) for a in range(consumed, rank)]
    at = {kind: [p for p, (k, _, _) in enumerate(layout) if k == kind] for kind in ("new", "slice", "shrink")}
    entry_at = {p: i for p, (_, i, _) in enumerate(layout)}
    axis_at = {p: a for p, (_, _, a) in enumerate(layout)}
    m = len(plan.entries)

    made: dict[str, str] = {}

    def once(key, make):  # emitted on first use only
        if key not in made:
            made[key] = make()
        return made[key]

    def vector(name):  # begin, end or stride as int64
        return once(name, lambda: emit("Cast", [name], to=onnx.TensorProto.INT64))

    def dims(positions):
        shape = once("shape", lambda: emit("Shape", ["data"]))
        return emit("Gather", [shape, const([axis_at[p] for p in positions])])

    def pick(name, entries):
        v = vector(name)
        return v if entries == list(range(m)) else emit("Gather", [v, const(entries)])

    x = "data"
    if at["new"]:
        x = emit("Unsqueeze", [x, const(at["new"])])
    if at["slice"] or at["shrink"]:

        starts, stops, steps = [], [], []
        if at["slice"]:
            idx = [entry_at[p] for p in at["slice"]]
            bm = [plan.entries[i].begin_masked for i in idx]
            em = [plan.entries[i].end_masked for i in idx]
            sv = pick("stride", idx) if has_stride else None
            neg = emit("Less", [sv, const(0)]) if sv and (any(bm) or any(em)) else None
            # masked: INT64_MIN/MAX by direction; an unmasked end is capped at dim first
            # (onnxruntime reads an end of INT32_MAX or INT64_MAX as "to the far end").
            lo = lambda: once("lo", lambda: const([INT64_MIN]))  # noqa: E731
            hi = lambda: once("hi", lambda: const([INT64_MAX]))  # noqa: E731
            if all(bm):
                start = emit("Where", [neg, hi(), lo()]) if neg else const([INT64_MIN] * len(idx))
            else:
                start = pick("begin", idx)
                if any(bm):
                    start = emit("Where", [const(bm, np.bool_), emit("Where", [neg, hi(), lo()]) if neg else lo(), start])
            if all(em):
                stop = emit("Where", [neg, lo(), hi()]) if neg else const([INT64_MAX] * len(idx))
            else:
                stop = pick("end", idx)
                if sv:
                    stop = emit("Min", [stop, dims(at["slice"])])
                if any(em):
                    stop = emit("Where", [const(em, np.bool_), emit("Where", [neg, lo(), hi()]) if neg else hi(), stop])
            starts.append(start)
            stops.append(stop)
            if sv:
                bad = emit("Cast", [emit("Equal", [sv, const(0)])], to=onnx.TensorProto.INT64)
                steps.append(emit("Add", [sv, emit("Gather", [const([0]), bad], "stride_nonzero_on_slice_entries")]))
        if at["shrink"]:
            bx = pick("begin", [entry_at[p] for p in at["shrink"]])
            dx = dims(at["shrink"])
            zero = const(0)
            bn = emit("Where", [emit("Less", [bx, zero]), emit("Add", [bx, dx]), bx])
            ok = emit("And", [emit("GreaterOrEqual", [bn, zero]), emit("Less", [bn, dx])])
            bad = emit("Cast", [emit("Not", [ok])], to=onnx.TensorProto.INT64)
            start = emit("Add", [bn, emit("Gather", [const([0]), bad], "shrink_index_within_dim")])
            starts.append(start)
            stops.append(emit("Add", [start, const([1])]))
            if steps:
                steps.append(const([1] * len(at["shrink"])))

        def joined(parts):
            return parts[0] if len(parts) == 1 else emit("Concat", parts, axis=0)

        inputs = [x, joined(starts), joined(stops), const(at["slice"] + at["shrink"])]
        x = emit("Slice", inputs + ([joined(steps)] if steps else []))
    if at["shrink"]:
        x = emit("Squeeze", [x, const(at["shrink"])])
    if x == "data":
        x = emit("Identity", [x])
    nodes[-1].output[0] = "output"

    general = StridedSlice.to_function_proto()
    proto = onnx.helper.make_function(
        ov_ext.domain, f"strided_slice_{_overload_name(rank, code, has_stride)}", ["data", "begin", "end", "stride"],
        ["output"], nodes, [onnx.helper.make_opsetid("", op.version)], attributes=list(general.attribute))
    proto.attribute_proto.extend(general.attribute_proto)
    return _BuiltFunction(proto)


class _Bodies(Mapping):
    """Overload name -> onnxscript function. Lists the two general bodies; the
    specialised ``rank{r}_{code}[_nostride]`` ones are built on first use."""

    def __init__(self, fixed: dict):
        self._fixed = fixed

    def __getitem__(self, name: str):
        if name in self._fixed:
            return self._fixed[name]
        parsed = _parse_overload(name)
        if parsed is not None:
            return _static_body_cached(*parsed)
        if isinstance(name, str) and _parse_const_overload(name) is not None:
            return _const_body_cached(name)
        raise KeyError(name)

    def __iter__(self):
        return iter(self._fixed)

    def __len__(self):
        return len(self._fixed)

    def __contains__(self, name) -> bool:
        return name in self._fixed or (isinstance(name, str) and (
            _parse_overload(name) is not None or _parse_const_overload(name) is not None))


@lru_cache(maxsize=512)
def _static_body_cached(rank: int, code: str, has_stride: bool):
    return _static_body(rank, code, has_stride)


def _overload_name(rank: int, code: str, has_stride: bool) -> str:
    return f"rank{rank}_{code}" + ("" if has_stride else "_nostride")


def _parse_overload(name: str):
    parts = name.split("_")
    if len(parts) not in (2, 3) or not parts[0].startswith("rank") or not parts[0][4:].isdigit():
        return None
    if len(parts) == 3 and parts[2] != "nostride":
        return None
    rank, code = int(parts[0][4:]), parts[1]
    if any(c not in _DECODE for c in code):
        return None
    try:
        plan_from_code(rank, code)
    except OpInputError:
        return None
    return rank, code, len(parts) == 2


# --- constant begin/end/stride ------------------------------------------------------
#
# With begin, end and stride known when the node is built, the body reads none of them:
# Slice's starts/ends/axes/steps are constants, and the data path is at most
# Unsqueeze (new axes) -> one Slice (slices and shrinks; no-op entries left out) ->
# Squeeze (shrunk axes), or Slice -> one Reshape when there are both new and shrunk
# axes and the data shape is static (so that the model has no more nodes than a
# native Slice + Reshape). Overload: ``rank{r}_{code}_const_{values}[_out{d0}x{d1}...]``,
# with per slice entry ``{begin}_{end}_{stride}`` (a masked begin or end written 0) and
# per shrink entry ``{begin}``, ``m`` for minus. A shrink index is checked when the
# node is built if its dim is static; otherwise an index outside the dim leaves an
# empty dim, which the Squeeze refuses at run time.

_CONST_RE = re.compile(r"^rank(\d+)_([nexbfa0]*)_const((?:_m?\d+)*)(?:_out(\d+(?:x\d+)*))?$")


def _const_overload_name(plan: SlicePlan, b, e, s, out_shape=None) -> str:
    tokens = []
    for i, entry in enumerate(plan.entries):
        if entry.kind == "slice":
            tokens += [0 if entry.begin_masked else b[i], 0 if entry.end_masked else e[i], s[i]]
        elif entry.kind == "shrink":
            tokens.append(b[i])
    name = f"rank{plan.rank}_{plan.code}_const" + "".join(f"_{int_token(int(t))}" for t in tokens)
    if out_shape is not None:
        name += "_out" + "x".join(str(int(d)) for d in out_shape)
    return name


def _parse_const_overload(name: str):
    """(plan, begin, end, stride, out_shape or None) of a const overload name, or None."""
    if not isinstance(name, str):
        return None
    match = _CONST_RE.match(name)
    if match is None:
        return None
    rank, code, values, out = match.groups()
    try:
        plan = plan_from_code(int(rank), code)
    except OpInputError:
        return None
    tokens = [parse_int_token(t) for t in values.split("_")[1:]]
    b, e, st = [0] * len(code), [0] * len(code), [1] * len(code)
    for i, entry in enumerate(plan.entries):
        if entry.kind == "slice":
            if len(tokens) < 3:
                return None
            b[i], e[i], st[i] = tokens[:3]
            tokens = tokens[3:]
            if st[i] == 0:
                return None
        elif entry.kind == "shrink":
            if not tokens:
                return None
            b[i] = tokens.pop(0)
    if tokens or any(not INT64_MIN <= v <= INT64_MAX for v in b + e + st):
        return None
    out_shape = None if out is None else tuple(int(d) for d in out.split("x"))
    if _const_overload_name(plan, b, e, st, out_shape) != name:  # one spelling per body
        return None
    return plan, b, e, st, out_shape


def _const_slice_params(entry: Entry, b: int, e: int, s: int) -> tuple[int, int, int] | None:
    """ONNX Slice's start, end, step for one entry (None: the entry takes the whole dim)."""
    if entry.kind == "shrink":
        return b, (INT64_MAX if b in (-1, INT64_MAX) else b + 1), 1
    if s > 0:
        start = INT64_MIN if entry.begin_masked else b
        end = INT64_MAX if entry.end_masked else e
        if s == 1 and (entry.begin_masked or b == 0) and end == INT64_MAX:
            return None
        return start, end, s
    start = INT64_MAX if entry.begin_masked else b
    # onnxruntime reads an end of exactly INT32_MAX or INT64_MAX as "to the far end" even
    # for a backward step; the reference clamps it to dim: one less gives the same result.
    end = INT64_MIN if entry.end_masked else (e - 1 if e in (2**31 - 1, INT64_MAX) else e)
    return start, end, s


def _layout(plan: SlicePlan):
    """The intermediate dims (the output with shrunk dims still there): (kind, entry, data axis) each."""
    layout = []
    for i, (entry, axis) in enumerate(zip(plan.entries, plan.axes)):
        if entry.kind == "ellipsis":
            layout += [("keep", i, a) for a in range(axis, axis + plan.ellipsis_size)]
        else:
            layout.append((entry.kind, i, axis))
    consumed = sum(e.kind in ("slice", "shrink") for e in plan.entries) + (
        plan.ellipsis_size if any(e.kind == "ellipsis" for e in plan.entries) else 0)
    layout += [("keep", None, a) for a in range(consumed, plan.rank)]
    return layout


def _const_body(name: str):
    plan, b, e, s, out_shape = _parse_const_overload(name)
    layout = _layout(plan)
    new_at = [p for p, (k, _, _) in enumerate(layout) if k == "new"]
    shrink_at = [p for p, (k, _, _) in enumerate(layout) if k == "shrink"]
    one_reshape = out_shape is not None
    g = BodyBuilder()
    x = "data"
    if new_at and not one_reshape:
        x = g("Unsqueeze", x, g.const(new_at))
    starts, ends, axes, steps = [], [], [], []
    for p, (kind, i, axis) in enumerate(layout):
        if kind not in ("slice", "shrink"):
            continue
        params = _const_slice_params(plan.entries[i], b[i], e[i], s[i])
        if params is None:
            continue
        starts.append(params[0])
        ends.append(params[1])
        steps.append(params[2])
        axes.append(axis if one_reshape else p)
    if axes:
        inputs = [x, g.const(starts), g.const(ends), g.const(axes)]
        x = g("Slice", *inputs, *([g.const(steps)] if any(v != 1 for v in steps) else []))
    if one_reshape:
        x = g("Reshape", x, g.const(list(out_shape)), allowzero=1)
    elif shrink_at:
        x = g("Squeeze", x, g.const(shrink_at))
    return built_function(ov_ext.domain, "StridedSlice", name, ["data", "begin", "end", "stride"], g, x, op.version,
                          StridedSlice.to_function_proto())


@lru_cache(maxsize=512)
def _const_body_cached(name: str):
    return _const_body(name)


def _const_overload(plan: SlicePlan, data: Operand, operands: Sequence[Operand]) -> str:
    b, e = (np.asarray(o.value).astype(np.int64).reshape(-1).tolist() for o in operands[1:3])
    s = np.asarray(operands[3].value).astype(np.int64).reshape(-1).tolist() if len(operands) > 3 else [1] * len(b)
    out_shape = None
    kinds = {entry.kind for entry in plan.entries}
    if {"new", "shrink"} <= kinds and data.shape is not None and all(isinstance(d, int) for d in data.shape):
        out_shape = plan.output_shape(data.shape, b, e, s)
    return _const_overload_name(plan, b, e, s, out_shape)


# --- attribute and input checks --------------------------------------------------


def check_attributes(attrs: dict) -> dict:
    for name in MASKS:
        bad = [v for v in attrs.get(name, []) if v not in (0, 1)]
        if bad:
            raise OpAttributeError("StridedSlice", name, f"must hold only 0 and 1, got {list(attrs[name])}")
    if sum(attrs.get("ellipsis_mask", [])) > 1:
        raise OpAttributeError("StridedSlice", "ellipsis_mask", f"may set one bit at most, got {list(attrs['ellipsis_mask'])}")
    return attrs


def _length(operand: Operand) -> int | None:
    if operand.value is not None:
        return int(np.size(operand.value))
    if operand.shape is not None and len(operand.shape) == 1 and isinstance(operand.shape[0], int):
        return operand.shape[0]
    return None


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    data, index_ops = operands[0], list(zip(("begin", "end", "stride"), operands[1:]))
    lengths = {}
    for name, o in index_ops:
        if o.type is not None and not o.type.is_integer:
            raise OpInputError("StridedSlice", f"{name} must hold integers, got {o.type.ov}")
        rank = o.rank if o.value is None else np.ndim(o.value)
        if rank is not None and rank != 1:
            raise OpInputError("StridedSlice", f"{name} must be 1-D, got rank {rank}")
        if _length(o) is not None:
            lengths[name] = _length(o)
    if len(set(lengths.values())) > 1:
        raise OpInputError("StridedSlice", f"begin, end and stride have different lengths {lengths}")
    if not lengths:
        return
    m = next(iter(lengths.values()))
    entries = entries_of(attrs, m)
    stride = operands[3].value if len(operands) > 3 else None
    if stride is not None:
        zeros = [i for i, (e, v) in enumerate(zip(entries, np.asarray(stride).reshape(-1))) if e.kind == "slice" and v == 0]
        if zeros:
            raise OpInputError("StridedSlice", f"stride must be non-zero on slice entries, is 0 at {zeros}")
    if data.rank is None:
        return
    plan = plan_from_entries(data.rank, entries)
    begin = operands[1].value
    if begin is not None:
        for entry, axis, b in zip(plan.entries, plan.axes, np.asarray(begin).astype(np.int64).reshape(-1)):
            if entry.kind == "shrink" and isinstance(data.shape[axis], int):
                shrink_index(data.shape[axis], int(b))


def _num_entries(operands: Sequence[Operand]) -> int | None:
    for o in operands[1:]:
        if _length(o) is not None:
            return _length(o)
    return None


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    has_stride = len(operands) > 3
    m = _num_entries(operands)
    rank = operands[0].rank
    if m is None or rank is None:
        return "general" if has_stride else "general_nostride"
    plan = make_slice_plan(rank, m, attrs)
    if all(o.value is not None for o in operands[1:]):
        return _const_overload(plan, operands[0], operands)
    return _overload_name(rank, plan.code, has_stride)


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple | None:
    """Known data rank and begin length: the plan's dims; constant begin/end/stride size the sliced ones."""
    m, data = _num_entries(operands), operands[0]
    if m is None or data.shape is None:
        return None
    plan = make_slice_plan(len(data.shape), m, attrs)
    if any(o.value is None for o in operands[1:]):
        return plan.output_dims(data.shape)
    return plan.output_dims(data.shape, *(o.value for o in operands[1:]))  # shrinks: checked by check_operands


def output_rank(attrs: dict, data_rank: int, num_entries: int) -> int:
    """The output rank (no values needed)."""
    return len(make_slice_plan(data_rank, num_entries, attrs).out_src)


SPEC = OpSpec(
    name="StridedSlice",
    inputs=("data", "begin", "end", "stride"),
    min_inputs=3,
    attributes={
        "begin_mask": Attr("ints"),
        "end_mask": Attr("ints"),
        "new_axis_mask": Attr("ints", []),
        "shrink_axis_mask": Attr("ints", []),
        "ellipsis_mask": Attr("ints", []),
    },
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=output_shape,
    bodies=_Bodies({"general": StridedSlice, "general_nostride": strided_slice_nostride}),
    helpers=(_strided_slice_general,),
    public=StridedSlice,
    reference=strided_slice_reference,
)
