"""StridedSlice-1's overload families, built node by node from the slice plan: ``OnRank`` (data rank and
begin length known) and ``ConstSlice`` (begin, end and stride constants too)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Sequence

import numpy as np
import onnx

from ...errors import OpInputError
from ..base import DIMS, INTS, NAT, Overload, Token, words
from ..builder import BodyBuilder
from .plan import CODE_LETTERS, INT64_MAX, INT64_MIN, Entry, SlicePlan, layout, plan_from_code

#: A plan's entries (SlicePlan.code).
_CODE = Token(f"[{CODE_LETTERS}]*", str)


def _plan(rank: int, code: str) -> SlicePlan | None:
    try:
        return plan_from_code(rank, code)
    except OpInputError:
        return None


@dataclass(frozen=True)
class OnRank(Overload):
    """StridedSlice-1(data: rank ``rank``, begin, end, stride?: runtime vectors of len(code) entries).

    The entries' kinds and the axes they act on are constants (the plan), and only what the plan
    needs is emitted. Data path: Unsqueeze of the input (new axes: on the input side it is free,
    docs/onnxruntime.md#graph-output-copy), one Slice with constant axes, Squeeze (shrunk axes).
    Index path: Gathers of begin/end/stride and a few elementwise ops on vectors of the sliced
    entries. ``has_stride`` False: for nodes without a stride input (an ONNX function cannot test
    whether an optional input is present).
    """

    SPELLING = "rank{rank}_{code}[_{has_stride}]"
    rank: Annotated[int, NAT]
    code: Annotated[str, _CODE]
    has_stride: Annotated[bool, words({"nostride": False})] = True

    def valid(self) -> bool:
        return _plan(self.rank, self.code) is not None

    def build(self, g: BodyBuilder) -> str:
        dims = layout(plan_from_code(self.rank, self.code))
        at = {kind: [p for p, (k, _, _) in enumerate(dims) if k == kind] for kind in ("new", "slice", "shrink")}
        x = "data"
        if at["new"]:
            x = g("Unsqueeze", x, g.const(at["new"]))
        if at["slice"] or at["shrink"]:
            starts, stops, steps = [], [], []
            if at["slice"]:
                self._slices(g, dims, at["slice"], starts, stops, steps)
            if at["shrink"]:
                self._shrinks(g, dims, at["shrink"], starts, stops, steps)
            x = g("Slice", x, _joined(g, starts), _joined(g, stops), g.const(at["slice"] + at["shrink"]),
                  *([_joined(g, steps)] if steps else []))
        if at["shrink"]:
            x = g("Squeeze", x, g.const(at["shrink"]))
        return x

    def _pick(self, g: BodyBuilder, name: str, entries: list[int]) -> str:
        """begin, end or stride (as int64) at these entries."""
        v = g.once(name, lambda: g("Cast", name, to=onnx.TensorProto.INT64))
        return v if entries == list(range(len(self.code))) else g("Gather", v, g.const(entries))

    @staticmethod
    def _dims(g: BodyBuilder, dims, positions: list[int]) -> str:
        """The data dims at these intermediate positions."""
        shape = g.once("shape", lambda: g("Shape", "data"))
        return g("Gather", shape, g.const([dims[p][2] for p in positions]))

    def _slices(self, g: BodyBuilder, dims, positions: list[int], starts, stops, steps) -> None:
        entries = plan_from_code(self.rank, self.code).entries
        idx = [dims[p][1] for p in positions]
        bm = [entries[i].begin_masked for i in idx]
        em = [entries[i].end_masked for i in idx]
        sv = self._pick(g, "stride", idx) if self.has_stride else None
        neg = g("Less", sv, g.const(0)) if sv and (any(bm) or any(em)) else None
        # masked: INT64_MIN/MAX by direction; an unmasked end is capped at dim first
        # (docs/onnxruntime.md#slice-end-sentinels).
        lo, hi = INT64_MIN, INT64_MAX
        if all(bm):
            start = g("Where", neg, _limit(g, hi), _limit(g, lo)) if neg else g.const([lo] * len(idx))
        else:
            start = self._pick(g, "begin", idx)
            if any(bm):
                is_masked = g.const(bm, np.bool_)
                masked = g("Where", neg, _limit(g, hi), _limit(g, lo)) if neg else _limit(g, lo)
                start = g("Where", is_masked, masked, start)
        if all(em):
            stop = g("Where", neg, _limit(g, lo), _limit(g, hi)) if neg else g.const([hi] * len(idx))
        else:
            stop = self._pick(g, "end", idx)
            if sv:
                stop = g("Min", stop, self._dims(g, dims, positions))
            if any(em):
                is_masked = g.const(em, np.bool_)
                masked = g("Where", neg, _limit(g, lo), _limit(g, hi)) if neg else _limit(g, hi)
                stop = g("Where", is_masked, masked, stop)
        starts.append(start)
        stops.append(stop)
        if sv:
            bad = g("Cast", g("Equal", sv, g.const(0)), to=onnx.TensorProto.INT64)
            steps.append(g("Add", sv, g("Gather", g.const([0]), bad, out="stride_nonzero_on_slice_entries")))

    def _shrinks(self, g: BodyBuilder, dims, positions: list[int], starts, stops, steps) -> None:
        """Shrinks take [b, b + 1) after a check of b (normalised) against the dim."""
        bx = self._pick(g, "begin", [dims[p][1] for p in positions])
        dx = self._dims(g, dims, positions)
        zero = g.const(0)
        bn = g("Where", g("Less", bx, zero), g("Add", bx, dx), bx)
        ok = g("And", g("GreaterOrEqual", bn, zero), g("Less", bn, dx))
        bad = g("Cast", g("Not", ok), to=onnx.TensorProto.INT64)
        start = g("Add", bn, g("Gather", g.const([0]), bad, out="shrink_index_within_dim"))
        starts.append(start)
        stops.append(g("Add", start, g.const([1])))
        if steps:
            steps.append(g.const([1] * len(positions)))


def _limit(g: BodyBuilder, value: int) -> str:
    """The constant [INT64_MIN] or [INT64_MAX], emitted once."""
    return g.once(value, lambda: g.const([value]))


def _joined(g: BodyBuilder, parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else g("Concat", *parts, axis=0)


@dataclass(frozen=True)
class ConstSlice(Overload):
    """StridedSlice-1(data: rank ``rank``, begin, end, stride: constants; entries ``code``).

    The body reads none of begin/end/stride: Slice's starts/ends/axes/steps are constants, and the data
    path is at most Unsqueeze (new axes) -> one Slice (slices and shrinks; no-op entries left out) ->
    Squeeze (shrunk axes), or Slice -> one Reshape to ``out`` when there are both new and shrunk axes
    and the data shape is static (so that the model has no more nodes than a native Slice + Reshape).
    ``values``: per slice entry begin, end, stride (a masked begin or end written 0), per shrink entry
    begin. A shrink index is checked when the node is built if its dim is static; otherwise an index
    outside the dim leaves an empty dim, which the Squeeze refuses at run time.
    """

    SPELLING = "rank{rank}_{code}_const{values}[_out{out}]"
    rank: Annotated[int, NAT]
    code: Annotated[str, _CODE]
    values: Annotated[tuple[int, ...], INTS]
    out: Annotated[tuple[int, ...] | None, DIMS] = None

    @classmethod
    def of(cls, plan: SlicePlan, b, e, s, out: Sequence[int] | None = None) -> ConstSlice:
        values = []
        for i, entry in enumerate(plan.entries):
            if entry.kind == "slice":
                values += [0 if entry.begin_masked else b[i], 0 if entry.end_masked else e[i], s[i]]
            elif entry.kind == "shrink":
                values.append(b[i])
        return cls(plan.rank, plan.code, tuple(int(v) for v in values), out)

    def bounds(self) -> tuple[list[int], list[int], list[int]]:
        """begin, end and stride per entry (0, 0, 1 where the entry takes none)."""
        b, e, s = [0] * len(self.code), [0] * len(self.code), [1] * len(self.code)
        values = iter(self.values)
        for i, entry in enumerate(plan_from_code(self.rank, self.code).entries):
            if entry.kind == "slice":
                b[i], e[i], s[i] = next(values), next(values), next(values)
            elif entry.kind == "shrink":
                b[i] = next(values)
        return b, e, s

    def valid(self) -> bool:
        plan = _plan(self.rank, self.code)
        if plan is None or self.out == () or any(not INT64_MIN <= v <= INT64_MAX for v in self.values):
            return False
        kinds = [entry.kind for entry in plan.entries]
        if len(self.values) != 3 * kinds.count("slice") + kinds.count("shrink"):
            return False
        b, e, s = self.bounds()
        return all(s[i] != 0 and (b[i] == 0 or not entry.begin_masked) and (e[i] == 0 or not entry.end_masked)
                   for i, entry in enumerate(plan.entries) if entry.kind == "slice")

    def build(self, g: BodyBuilder) -> str:
        plan, (b, e, s) = plan_from_code(self.rank, self.code), self.bounds()
        dims = layout(plan)
        new_at = [p for p, (k, _, _) in enumerate(dims) if k == "new"]
        shrink_at = [p for p, (k, _, _) in enumerate(dims) if k == "shrink"]
        one_reshape = self.out is not None
        x = "data"
        if new_at and not one_reshape:
            x = g("Unsqueeze", x, g.const(new_at))
        starts, ends, axes, steps = [], [], [], []
        for p, (kind, i, axis) in enumerate(dims):
            params = _slice_params(plan.entries[i], b[i], e[i], s[i]) if kind in ("slice", "shrink") else None
            if params is not None:
                starts.append(params[0])
                ends.append(params[1])
                steps.append(params[2])
                axes.append(axis if one_reshape else p)
        if axes:
            x = g("Slice", x, g.const(starts), g.const(ends), g.const(axes),
                  *([g.const(steps)] if any(v != 1 for v in steps) else []))
        if one_reshape:
            x = g("Reshape", x, g.const(list(self.out)), allowzero=1)
        elif shrink_at:
            x = g("Squeeze", x, g.const(shrink_at))
        return x


def _slice_params(entry: Entry, b: int, e: int, s: int) -> tuple[int, int, int] | None:
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
    # An end of exactly INT32_MAX or INT64_MAX: one less gives the same result
    # (docs/onnxruntime.md#slice-end-sentinels).
    end = INT64_MIN if entry.end_masked else (e - 1 if e in (2**31 - 1, INT64_MAX) else e)
    return start, end, s
