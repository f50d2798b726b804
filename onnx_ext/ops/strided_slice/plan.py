"""StridedSlice-1's slice plan, in plain Python: where each entry of begin/end/stride acts on data of a
given rank. Shared by the reference, the checks, the overloads and the converters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...errors import OpInputError

MASKS = ("begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask")
INT64_MIN = -9223372036854775808
INT64_MAX = 9223372036854775807


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
        """The entries as a string: n new, e ellipsis, x shrink; slices 0, b (begin masked), f (end masked),
        a (both)."""
        return "".join(_CODE[(e.kind, e.begin_masked, e.end_masked)] for e in self.entries)

    def output_dims(self, data_shape: Sequence, begin=None, end=None, stride=None) -> tuple:
        """The output shape as far as it is known (data dims may be symbolic or None): 1 for a
        new axis, the data dim where it passes through (ellipsis), None where it is sliced,
        unless begin/end/stride are given and the dim is an int, or the slice takes it whole."""
        sliced = {a: i for i, (e, a) in enumerate(zip(self.entries, self.axes)) if e.kind == "slice"}
        vectors = None if begin is None or end is None else index_vectors(begin, end, stride)

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
        sizes = sliced_sizes(self, tuple(data_shape), *index_vectors(begin, end, stride))
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
#: The letters of SlicePlan.code.
CODE_LETTERS = "".join(_CODE.values())


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


def index_vectors(begin, end, stride):
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


def per_axis_indices(plan: SlicePlan, shape: tuple[int, ...], b, e, s) -> dict[int, object]:
    """Data axis -> the indices taken there (a range) or the shrink index (an int)."""
    taken = {}
    for i, (entry, axis) in enumerate(zip(plan.entries, plan.axes)):
        if entry.kind == "slice":
            taken[axis] = slice_range(shape[axis], b[i], e[i], s[i], entry.begin_masked, entry.end_masked)
        elif entry.kind == "shrink":
            taken[axis] = shrink_index(shape[axis], b[i])
    return taken


def sliced_sizes(plan: SlicePlan, shape: tuple[int, ...], b, e, s) -> list[int]:
    taken = per_axis_indices(plan, shape, b, e, s)
    return [len(taken[a]) if isinstance(taken.get(a), range) else (1 if a in taken else shape[a])
            for a in range(len(shape))]


def layout(plan: SlicePlan):
    """The intermediate dims (the output with shrunk dims still there): (kind, entry, data axis) each."""
    dims = []
    for i, (entry, axis) in enumerate(zip(plan.entries, plan.axes)):
        if entry.kind == "ellipsis":
            dims += [("keep", i, a) for a in range(axis, axis + plan.ellipsis_size)]
        else:
            dims.append((entry.kind, i, axis))
    consumed = sum(e.kind in ("slice", "shrink") for e in plan.entries) + (
        plan.ellipsis_size if any(e.kind == "ellipsis" for e in plan.entries) else 0)
    dims += [("keep", None, a) for a in range(consumed, plan.rank)]
    return dims
