"""StridedSlice-1: the op's record (checks, body selection) and numpy reference. Slice plan: ``plan.py``;
bodies: ``general.py`` (onnxscript) and ``overloads.py`` (``OnRank``, ``ConstSlice``).

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
- ``rank{r}_{code}`` (data rank r and M known, ``code`` = SlicePlan.code: ``OnRank``),
  built on demand node by node: the axes and masks are constants and only what the
  plan needs is emitted: Unsqueeze (new axes), one Slice with constant axes, Squeeze
  (shrunk axes). ``rank{r}_{code}_const...`` (``ConstSlice``): begin, end and stride
  constants too.
- ``general_nostride`` / ``rank{r}_{code}_nostride``: the same for nodes without
  a stride input (an ONNX function cannot test whether an optional input is
  present, so ``select_body`` picks these; in onnxscript pass the stride).

An unmasked end is capped at the dim before Slice, where the reference clamps it to
dim (docs/onnxruntime.md#slice-end-sentinels). (Not exact for a dim of exactly
2**31 - 1 with a backward step.)

Errors at runtime (onnxruntime's message quotes the node named after the
check): ``begin_end_stride_1d_same_length``, ``sliced_axes_within_data_rank``,
``stride_nonzero_on_slice_entries``, ``shrink_index_within_dim``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import OpAttributeError, OpInputError
from ..base import Attr, Bodies, OpSpec, Operand
from .general import HELPERS, StridedSlice, strided_slice_nostride
from .overloads import ConstSlice, OnRank
from .plan import (
    INT64_MAX,
    INT64_MIN,
    MASKS,
    SlicePlan,
    entries_of,
    extended_masks,
    index_vectors,
    make_slice_plan,
    per_axis_indices,
    plan_from_entries,
    shrink_index,
)

__all__ = ["SPEC", "MASKS", "INT64_MIN", "INT64_MAX", "ConstSlice", "OnRank", "StridedSlice", "extended_masks",
           "make_slice_plan", "output_rank", "select_body", "strided_slice_reference"]


def strided_slice_reference(data: np.ndarray, begin, end, stride=None, *, begin_mask, end_mask,
                            new_axis_mask=(), shrink_axis_mask=(), ellipsis_mask=()) -> np.ndarray:
    """StridedSlice-1 in numpy (the reference's semantics, with the corrections listed above)."""
    attrs = SPEC.normalize({"begin_mask": begin_mask, "end_mask": end_mask, "new_axis_mask": new_axis_mask,
                            "shrink_axis_mask": shrink_axis_mask, "ellipsis_mask": ellipsis_mask})
    data = np.asarray(data)
    b, e, s = index_vectors(begin, end, stride)
    plan = make_slice_plan(data.ndim, len(b), attrs)
    out = data
    for axis, taken in per_axis_indices(plan, data.shape, b, e, s).items():
        idx = [taken] if isinstance(taken, int) else list(taken)
        out = np.take(out, np.array(idx, dtype=np.int64), axis=axis)
    shape = tuple(1 if src < 0 else out.shape[src] for src in plan.out_src)
    return out.reshape(shape).copy()


def check_attributes(attrs: dict) -> dict:
    for name in MASKS:
        bad = [v for v in attrs.get(name, []) if v not in (0, 1)]
        if bad:
            raise OpAttributeError("StridedSlice", name, f"must hold only 0 and 1, got {list(attrs[name])}")
    if sum(attrs.get("ellipsis_mask", [])) > 1:
        raise OpAttributeError("StridedSlice", "ellipsis_mask",
                               f"may set one bit at most, got {list(attrs['ellipsis_mask'])}")
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
        zeros = [i for i, (e, v) in enumerate(zip(entries, np.asarray(stride).reshape(-1)))
                 if e.kind == "slice" and v == 0]
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
    return OnRank(rank, plan.code, has_stride).name


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


def _const_overload(plan: SlicePlan, data: Operand, operands: Sequence[Operand]) -> str:
    b, e = (np.asarray(o.value).astype(np.int64).reshape(-1).tolist() for o in operands[1:3])
    s = np.asarray(operands[3].value).astype(np.int64).reshape(-1).tolist() if len(operands) > 3 else [1] * len(b)
    out_shape = None
    kinds = {entry.kind for entry in plan.entries}
    if {"new", "shrink"} <= kinds and data.shape is not None and all(isinstance(d, int) for d in data.shape):
        out_shape = plan.output_shape(data.shape, b, e, s)
    return ConstSlice.of(plan, b, e, s, out_shape).name


def openvino_node(attrs: dict, inputs: list):
    """A StridedSlice without ``stride`` gets ones, as its C++ constructor does."""
    from openvino import opset1

    data, begin, end, *stride = inputs
    stride = stride[0] if stride else _ones_like(begin)
    return opset1.strided_slice(data, begin, end, stride, **native_masks(attrs, _node_length(begin)))


def native_masks(attrs: dict, num_entries: int | None) -> dict[str, list[int]]:
    """StridedSlice-1's masks as OpenVINO's node takes them. Kept as written where the node
    accepts them (begin_mask and end_mask of one length, the other masks empty or of that
    length); else each is zero-extended or cut to ``num_entries`` (len(begin); the longest
    mask when it is unknown: bits beyond begin are ignored). An ellipsis bit clears the
    new-axis and shrink bits at its index (the ellipsis wins, as in OpenVINO's shape
    inference; its ``evaluate`` would otherwise disagree)."""
    masks = {k: [int(b) for b in attrs[k]] for k in MASKS}
    n = len(masks["begin_mask"])
    if len(masks["end_mask"]) != n or any(len(masks[k]) not in (0, n) for k in MASKS[2:]):
        n = num_entries if num_entries is not None else max(len(v) for v in masks.values())
        masks = {k: [int(b) for b in v] for k, v in extended_masks(attrs, n).items()}
    for i, bit in enumerate(masks["ellipsis_mask"]):
        for k in ("new_axis_mask", "shrink_axis_mask"):
            if bit and i < len(masks[k]):
                masks[k][i] = 0
    return masks


def _node_length(vector) -> int | None:
    """The length of an OpenVINO 1-D output, when static."""
    shape = vector.get_partial_shape()
    return shape[0].get_length() if shape.rank.is_static and len(shape) == 1 and shape[0].is_static else None


def _ones_like(begin):
    # What StridedSlice-1's C++ constructor gives a node without strides.
    from openvino import opset1, opset3

    n = _node_length(begin)
    if n is not None:
        return opset1.constant(np.ones(n, np.int64)).output(0)
    return opset3.broadcast(opset1.constant(np.int64(1)), opset3.shape_of(begin)).output(0)


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
    bodies=Bodies(StridedSlice, {"general": StridedSlice, "general_nostride": strided_slice_nostride},
                  [OnRank, ConstSlice]),
    helpers=HELPERS,
    public=StridedSlice,
    reference=strided_slice_reference,
    openvino=openvino_node,
)
