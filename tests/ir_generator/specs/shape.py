"""Reductions, shape and layout ops, indexing, gathers and scatters, conversions, sorting and
searching. Axes, shapes and indices are Constants of the index type ``I`` unless the spec says."""

from __future__ import annotations

import numpy as np

from ..spec import ALL, AXES_AT, FLOATS, FP8, INDEX, INTEGERS, NARROW, NUMERIC, ROWS_OF_NOTHING, spec
from ..spec import INDICES_AT, dtype

X3 = (2, 3, 4)
#: Data of other ranks (``$rank``, tried once each: ``cover``): a scalar, a vector, a matrix, ranks 5 and 6.
RANKS = {3: X3, 0: (), 1: (5,), 2: (3, 4), 5: (2, 1, 3, 2, 2), 6: (1, 2, 1, 3, 2, 2)}
AXES = {"one": [1], "two": [0, 2], "last": [-1], "all": [0, 1, 2], "none": []}
#: Reductions of other ranks (``$axes`` values): a vector over its axis, a scalar over no axes
_REDUCE_OTHER = {"vector": ((5,), [0]), "scalar": ((), [])}


# --- reductions --------------------------------------------------------------------------------

def _reduce(op: str, lo=-4, hi=4, types=None):
    def inputs(c):
        shape, axes = _REDUCE_OTHER.get(c.attrs["$axes"], (X3, AXES.get(c.attrs["$axes"])))
        return [c.data(shape, lo=lo, hi=hi), c.axes(axes)]
    spec(op, grid={"keep_dims": [False, True], "$axes": list(AXES) + list(_REDUCE_OTHER), "$axes_at": AXES_AT},
         types={"T": types or ALL, "I": INDEX + ("u8",)}, rtol=4)(inputs)


for _op in ("ReduceMax", "ReduceMin", "ReduceSum", "ReduceMean", "ReduceL1", "ReduceL2"):
    _reduce(_op)
_reduce("ReduceProd", -2, 2)
_reduce("ReduceLogicalAnd")
_reduce("ReduceLogicalOr")


# --- shapes --------------------------------------------------------------------------------------

_TARGETS = {"flat": [-1], "two": [6, 4], "zero": [0, -1], "four": [2, 3, 2, 2], "zero_keep": [0, 3, 4]}


@spec("Reshape", grid={"special_zero": [False, True], "$target": list(_TARGETS)},
      where=lambda a, v: a["special_zero"] or not a["$target"].startswith("zero"), types={"T": ALL, "I": INDEX})
def reshape(c):
    return [c.data(X3), c.index(_TARGETS[c.attrs["$target"]])]


_SQUEEZE = {"absent": None, "one": [1], "neg": [-1], "both": [1, 3], "not_one": [0], "empty": []}


@spec("Squeeze", grid={"$axes": list(_SQUEEZE), "allow_axis_skip": [False, True], "$axes_at": AXES_AT},
      where=lambda a, v: a["$axes"] != "absent" or a["$axes_at"] == "const", types={"T": ALL, "I": INDEX})
def squeeze(c):
    axes = _SQUEEZE[c.attrs["$axes"]]
    return [c.data((2, 1, 3, 1))] + ([c.axes(axes)] if axes is not None else [])


@spec("Unsqueeze", grid={"$axes": ["first", "last", "two", "scalar"], "$axes_at": AXES_AT},
      types={"T": ALL, "I": INDEX})
def unsqueeze(c):
    axes = {"first": [0], "last": [-1], "two": [1, 3], "scalar": 0}[c.attrs["$axes"]]
    return [c.data(X3), c.axes(axes)]


#: Transpose orders: ``random`` a permutation drawn by the case's seed (``$axes_at=runtime``: the order a
#: Parameter, as a model that computes it gives the layer; the domain's Transpose picks the permutation at run time)
_ORDERS = ["rotate", "empty", "same", "swap", "random"]


#: Transpose's data per rank: ``RANKS`` and a rank 4 (the ranks crossed with the orders and where the order comes
#: from: a run-time order at every rank, a scalar's and a vector's included)
_TRANSPOSE_DATA = {**RANKS, 4: (2, 3, 1, 4)}


@spec("Transpose", grid={"$order": _ORDERS, "$rank": list(_TRANSPOSE_DATA), "$axes_at": AXES_AT},
      where=lambda a, v: a["$rank"] >= 2 or a["$order"] in ("rotate", "empty"), types={"T": ALL, "I": INDEX})
def transpose(c):
    r = c.attrs["$rank"]
    same = list(range(r))
    order = {"rotate": same[-1:] + same[:-1], "empty": [], "same": same, "random": list(c.rng.permutation(r)),
             "swap": same[:-2] + same[-1:] + same[-2:-1]}[c.attrs["$order"]]
    shape = _TRANSPOSE_DATA[r] if r != 3 else (2, 3, 4) if c.attrs["$order"] != "random" else (3, 1, 2)
    return [c.data(shape), c.axes(order)]


@spec("Concat", grid={"axis": [0, 1, -1], "$n": [2, 3], "$sizes": ["same", "differ"], "$rank": [3, 1, 5, 6]},
      cover=("$rank",), where=lambda a, v: -a["$rank"] <= a["axis"] < a["$rank"])
def concat(c):
    shape = RANKS[c.attrs["$rank"]]
    if c.attrs["$sizes"] == "same":
        return [c.data(shape) for _ in range(c.attrs["$n"])]
    axis = c.attrs["axis"] % len(shape)  # the inputs 1, 2, 3 long on the axis (the offsets of the later ones differ)
    return [c.data(shape[:axis] + (i + 1,) + shape[axis + 1:]) for i in range(c.attrs["$n"])]


@spec("Split", grid={"num_splits": [1, 2], "$axis": [0, 2, -1]}, types={"T": ALL, "I": INDEX})
def split(c):
    return [c.data((4, 3, 6)), c.index(c.attrs["$axis"])]


@spec("VariadicSplit", grid={"$axis": [0, 2, -1], "$lengths": ["fixed", "inferred", "zero"]},
      types={"T": ALL, "I": INDEX})
def variadic_split(c):
    lengths = {"fixed": [1, 3], "inferred": [1, -1], "zero": [0, 4]}[c.attrs["$lengths"]]
    return [c.data((4, 3, 4)), c.index(c.attrs["$axis"]), c.index(lengths)]


@spec("Tile", grid={"$repeats": ["same_rank", "shorter", "longer", "ones", "zero"]}, types={"T": ALL, "I": INDEX})
def tile(c):
    repeats = {"same_rank": [2, 1, 3], "shorter": [2], "longer": [2, 1, 1, 2], "ones": [1, 1, 1],
               "zero": [2, 0, 1]}[c.attrs["$repeats"]]
    return [c.data(X3), c.index(repeats)]


_BROADCASTS = {  # mode -> (data shape, target shape, axes_mapping or None)
    "numpy": ((3, 1), [2, 3, 4], None), "explicit": ((3,), [2, 3, 4], [1]),
    "none": ((3,), [2, 3, 4], [1]), "bidirectional": ((3, 1), [2, 1, 4], None), "pdpd": ((3, 1), [2, 3, 4], None),
}
#: Other data and targets per mode (``$form``): ``scalar`` data (explicit: axes_mapping empty), ``two`` a mapping
#: of two axes / a target of lower rank than the data (bidirectional) / the same rank
_BROADCAST_FORMS = {
    "scalar": {"numpy": ((), [2, 3], None), "explicit": ((), [2, 3], []), "none": ((), [2, 3], []),
               "bidirectional": ((), [2, 3], None), "pdpd": ((), [2, 3], None)},
    "two": {"numpy": ((2, 1, 4), [3, 2, 5, 4], None), "explicit": ((3, 4), [2, 3, 1, 4], [1, 3]),
            "none": ((3, 4), [2, 3, 1, 4], [1, 3]), "bidirectional": ((2, 1, 4), [3, 1], None),
            "pdpd": ((2, 1, 4), [2, 5, 4], None)},
}


def _operand(c, values):
    """A shape, begin/end/stride or axis operand: a Constant, or a Parameter fed it when ``$operands_at`` is
    ``runtime`` (as a graph that computes it gives the layer)."""
    if c.attrs.get("$operands_at") == "runtime":
        return c.feed(values, c.types.get("I", "i64"))
    return c.index(values)


@spec("Broadcast", grid={"mode": list(_BROADCASTS), "$form": ["base"] + list(_BROADCAST_FORMS),
                         "$operands_at": AXES_AT},
      where=lambda a, v: (a["mode"] in ("numpy", "none", "pdpd", "explicit")) if v == 1 else a["mode"] != "none",
      types={"T": ALL, "I": INDEX})
def broadcast(c):
    data, target, axes = {"base": _BROADCASTS, **_BROADCAST_FORMS}[c.attrs["$form"]][c.attrs["mode"]]
    if axes is None and c.version == 1:  # Broadcast-1 reads a third input in every mode (and ignores it)
        axes = 0
    return [c.data(data), _operand(c, target)] + ([_operand(c, axes)] if axes is not None else [])


@spec("ShapeOf", grid={"output_type": ["i64", "i32"], "$rank": list(RANKS)}, cover=("$rank",))
def shape_of(c):
    return [c.data(RANKS[c.attrs["$rank"]])]


@spec("Identity", grid={"$rank": list(RANKS)}, cover=("$rank",))
def identity(c):
    return [c.data(RANKS[c.attrs["$rank"]])]


#: Types OpenVINO converts to that ONNX's opset 21 lacks (FLOAT4E2M1 is opset 23's, FLOAT8E8M0 opset 24's): the
#: converter refuses them in one line. (Not u1: OpenVINO's reference corrupts its heap converting to u1; nor nf4,
#: which it does not convert to.)
_NO_ONNX_TYPE = ("f4e2m1", "f8e8m0")


def _convert(args: list, attrs: dict):
    """The Convert, then, to a 4-bit or sub-byte type, a Convert back to f32 (no Python API reads such an output)."""
    import openvino.opset1 as o1

    node = o1.convert(args[0], attrs["destination_type"])
    return o1.convert(node, "f32") if attrs["destination_type"] in ("i4", "u4") + _NO_ONNX_TYPE else node


def _narrow_source(c):
    """Data of the narrow type ``c.t``: f8 a Parameter (subnormals, the f8 types' limits, and to a float type
    infinities and NaN: to integers they are undefined, OpenVINO's NaN to u32 is 0 from f8 and f16, 2^31 from f32),
    i4/u4 a Constant of the type's range."""
    if c.t in FP8:
        x = np.concatenate([c.rng.uniform(-440, 440, 12), np.exp2(c.rng.uniform(-18, -6, 4)),
                            [448, -448, 240, 57344, -57344, 61440, np.inf, np.nan]])
        if c.attrs["destination_type"] not in FLOATS + FP8:
            x = np.clip(np.nan_to_num(x), -448, 448)
        return c.feed(x.astype(np.float32).astype(c.dtype).reshape(X3))
    return c.const(X3, lo=-8, hi=15)


@spec("Convert", grid={"destination_type": list(ALL) + list(NARROW) + list(_NO_ONNX_TYPE)},
      types={"T": ALL + NARROW}, make=_convert)
def convert(c):
    if c.t in NARROW:
        return [_narrow_source(c)]
    if c.attrs["destination_type"] in FP8 and c.t in FLOATS:  # the f8 types' ranges, ties and non-finite values
        x = np.concatenate([c.rng.uniform(-600, 600, 8), c.rng.uniform(-1, 1, 4), np.exp2(c.rng.uniform(-18, -6, 4)),
                            [448, 464, -470, 495, 57344, -61440, 1e6, 0.75 * 2 ** -9]])
        if c.t != "f16":
            x = np.concatenate([x[:-4], [np.inf, -np.inf, np.nan, 70000]])
        return [c.feed(x.astype(c.dtype).reshape(X3))]
    # fractions, negatives and values past the small integer types' ranges
    return [c.data(X3, lo=-300, hi=300)]


@spec("ConvertLike", grid={"$like": list(ALL) + list(FP8)})
def convert_like(c):
    return [c.data(X3, lo=-300, hi=300), c.const(np.zeros(1), et=c.attrs["$like"])]


@spec("ConvertPromoteTypes", grid={"promote_unsafe": [False, True], "pytorch_scalar_promotion": [False, True],
                                   "u64_integer_promotion_target": ["f32", "i64"], "$other": list(ALL)},
      where=lambda a, v: a["u64_integer_promotion_target"] == "f32" or a["promote_unsafe"])
def convert_promote_types(c):
    other = c.attrs["$other"]
    b = c.data((3, 4), et=other, lo=-100, hi=100) if not c.attrs["pytorch_scalar_promotion"] else \
        c.data((), et=other, lo=-100, hi=100)
    return [c.data(X3, lo=-100, hi=100), b]


# --- indexing ---------------------------------------------------------------------------------------

#: Gather's indices: Constants in range, counting from the end, out of range; ``fed`` a Parameter (from the end
#: too), ``table`` a Parameter into a Constant table (an embedding's lookup), ``scalar`` one index (x[:, -1]: the
#: axis goes)
_GATHER_INDICES = ["in_range", "negative", "out", "fed", "table", "scalar"]


#: Gather's data per rank (``$rank``): the first two dims as batch_dims and the indices need them, the last
#: at least 3 long (the in-range indices go up to 2).
_GATHER_DATA = {3: (3, 3, 4), 1: (4,), 2: (3, 4), 5: (3, 3, 2, 1, 4), 6: (3, 3, 1, 2, 1, 4)}


def _gather_ok(attrs, version):
    if attrs["$indices"] == "scalar" and attrs["batch_dims"]:
        return False
    if attrs["$axes_at"] == "runtime":
        # a run-time axis with batch_dims past it: OpenVINO's reference aborts the process (SEMANTICS.md); batch_dims
        # 1 or -1 (of 2-D indices: 1) up to the axis runs (axis 0 with batch_dims is invalid whatever its form)
        if attrs["$rank"] != 3 or (attrs.get("batch_dims") and attrs["$axis"] % 3 < 1):
            return False
    return attrs["$rank"] > 1 or (not attrs["batch_dims"] and attrs["$axis"] != 1)


@spec("Gather", grid={"batch_dims": [0, 1, -1], "$axis": [0, 1, -1], "$indices": _GATHER_INDICES,
                      "$rank": list(_GATHER_DATA), "$axes_at": AXES_AT},
      cover=("$rank",), where=_gather_ok, types={"T": ALL, "I": INDEX})
def gather(c):
    form = c.attrs["$indices"]
    if c.version == 1:
        c.attrs.pop("batch_dims", None)
    axis = c.axes(c.attrs["$axis"])
    data = _GATHER_DATA[c.attrs["$rank"]]
    if form == "scalar":
        return [c.data(data), c.index(-1), axis]
    lo, hi = {"in_range": (0, 2), "negative": (-2, 2), "out": (-5, 5), "fed": (-3, 2), "table": (0, 2)}[form]
    indices = c.rng.integers(lo, hi, (3, 2), endpoint=True)
    if form == "fed":
        return [c.data(data), c.feed(indices, c.types["I"]), axis]
    if form == "table":
        return [c.const(data), c.feed(indices, c.types["I"]), axis]
    return [c.data(data), c.index(indices), axis]


@spec("GatherElements", empty_invalid=ROWS_OF_NOTHING,
      grid={"axis": [0, 1, -1], "$indices_at": INDICES_AT}, cover=("$indices_at",), types={"T": ALL, "I": INDEX})
def gather_elements(c):
    axis = c.attrs["axis"] % 3
    idx_shape = list(X3)
    idx_shape[axis] = 2
    return [c.data(X3), c.indices(c.rng.integers(-X3[axis], X3[axis] - 1, idx_shape, endpoint=True))]


@spec("GatherND", empty_invalid=ROWS_OF_NOTHING,
      grid={"batch_dims": [0, 1], "$depth": [1, 2], "$indices": ["in_range", "negative", "fed"]},
      types={"T": ALL, "I": INDEX})
def gather_nd(c):
    b, k = c.attrs["batch_dims"], c.attrs["$depth"]
    dims = X3[b:b + k]
    lo = {"in_range": lambda d: 0, "negative": lambda d: -d, "fed": lambda d: -d}[c.attrs["$indices"]]  # from the end
    idx = np.stack([c.rng.integers(lo(d), d, (2,) * (1 + b) if b == 0 else (X3[0], 2)) for d in dims], -1)
    return [c.data(X3), c.feed(idx, c.types["I"]) if c.attrs["$indices"] == "fed" else c.index(idx)]


_STRIDED = {  # begin, end, stride, begin_mask, end_mask, new_axis, shrink, ellipsis
    "plain": ([0, 1, 0], [2, 3, 4], [1, 1, 2], [0, 0, 0], [0, 0, 0], [], [], []),
    "masks": ([1, 0, 3], [0, 2, 0], [1, 1, -1], [1, 0, 0], [0, 0, 1], [], [], []),
    "negative": ([-1, -1, -1], [-3, 0, -5], [-1, -1, -2], [0, 0, 0], [0, 1, 0], [], [], []),
    "new_shrink": ([0, 0, 1, 0], [1, 0, 2, 4], [1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, 0],
                   [1, 0, 1, 0], []),
    "ellipsis": ([0, 1], [0, 3], [1, 1], [0, 0], [0, 0], [], [], [1, 0]),
    # begin/end past the dims both ways (clamped; a negative stride from past the end starts at the last row)
    "clamped": ([-100, 0, 9], [100, 10, -100], [1, 2, -1], [0, 0, 0], [0, 0, 0], [], [], []),
    # x[1:, ::2]: fewer entries than the rank (the rest taken whole)
    "short": ([1, 0], [0, 0], [1, 2], [0, 1], [1, 1], [], [], []),
    # x[-1, :, ::-1]: a shrink at a negative index, a masked negative stride
    "shrink_negative": ([-1, 0, 0], [0, 0, 0], [1, 1, -1], [0, 1, 1], [0, 1, 1], [], [1, 0, 0], []),
    # x[0:1, ..., 1:3]: the ellipsis between slices
    "ellipsis_middle": ([0, 0, 1], [1, 0, 3], [1, 1, 1], [0, 0, 0], [0, 0, 0], [], [], [0, 1, 0]),
    # x[..., None, 1]: the ellipsis before a new axis and a shrink
    "ellipsis_new_shrink": ([0, 0, 1], [0, 0, 2], [1, 1, 1], [0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 0, 1],
                            [1, 0, 0]),
}


@spec("StridedSlice", grid={"$form": list(_STRIDED), "$operands_at": AXES_AT, "$stride": ["given", "absent"]},
      where=lambda a, v: a["$stride"] == "given" or a["$form"] in ("plain", "ellipsis", "new_shrink", "masks"),
      types={"T": ALL, "I": INDEX},
      fixed={"begin_mask": "set by $form", "end_mask": "set by $form", "new_axis_mask": "set by $form",
             "shrink_axis_mask": "set by $form", "ellipsis_mask": "set by $form"})
def strided_slice(c):
    b, e, s, bm, em, na, sh, el = _STRIDED[c.attrs["$form"]]
    c.attrs.update(begin_mask=bm, end_mask=em, new_axis_mask=na, shrink_axis_mask=sh, ellipsis_mask=el)
    if c.attrs["$stride"] == "absent":  # every stride 1
        return [c.data(X3), _operand(c, b), _operand(c, e)]
    return [c.data(X3), _operand(c, b), _operand(c, e), _operand(c, s)]


_SLICES = {  # start, stop, step, axes
    "plain": ([0, 1], [2, 4], [1, 2], [0, 2]), "negative_step": ([-1], [-10], [-1], [1]),
    "no_axes": ([0, 0, 1], [1, 3, 4], [1, 2, 1], None), "clamped": ([-100, 1], [100, 2], [1, 1], [2, 0]),
    "empty": ([2], [1], [1], [2]),
}


@spec("Slice", grid={"$form": list(_SLICES), "$axes_at": AXES_AT}, cover=("$axes_at",), types={"T": ALL, "I": INDEX})
def slice_(c):
    start, stop, step, axes = _SLICES[c.attrs["$form"]]
    return [c.data(X3), c.index(start), c.index(stop), c.index(step)] + ([c.axes(axes)] if axes else [])


@spec("SliceScatter", grid={"$form": ["plain", "negative_step", "no_axes"]}, types={"T": ALL, "I": INDEX})
def slice_scatter(c):
    start, stop, step, axes = _SLICES[c.attrs["$form"]]
    full = np.zeros(X3)
    idx = [slice(None)] * 3
    for a, s0, s1, st in zip(axes if axes else range(3), start, stop, step):
        idx[a] = slice(s0, s1, st)
    shape = full[tuple(idx)].shape
    return [c.data(X3), c.data(shape), c.index(start), c.index(stop), c.index(step)] + \
        ([c.index(axes)] if axes else [])


@spec("Pad", grid={"pad_mode": ["constant", "edge", "reflect", "symmetric"], "$pads": ["positive", "negative",
                                                                                     "zero"],
                   "$value": ["absent", "given"]},
      where=lambda a, v: (a["$value"] == "absent" or a["pad_mode"] == "constant") and
      (a["$pads"] != "negative" or v >= 12), types={"T": ALL, "I": INDEX})
def pad(c):
    begin, end = {"positive": ([1, 0, 2], [0, 2, 1]), "negative": ([1, -1, 0], [-1, 2, -2]),
                  "zero": ([0, 0, 0], [0, 0, 0])}[c.attrs["$pads"]]
    value = [c.const(np.array(2.5 if c.t in FLOATS else 3))] if c.attrs["$value"] == "given" else []
    return [c.data(X3), c.index(begin), c.index(end)] + value


@spec("Reverse", grid={"mode": ["index", "mask"], "$axes": ["one", "two", "none"], "$axes_at": AXES_AT},
      cover=("$axes_at",), where=lambda a, v: a["mode"] == "index" or a["$axes_at"] == "const",
      types={"T": ALL, "I": INDEX})
def reverse(c):
    axes = {"one": [1], "two": [0, 2], "none": []}[c.attrs["$axes"]]
    if c.attrs["mode"] == "mask":
        return [c.data(X3), c.const([i in axes for i in range(3)], et="boolean")]
    return [c.data(X3), c.axes(axes)]


@spec("ReverseSequence", grid={"batch_axis": [0, 2], "seq_axis": [1, -1], "$indices_at": INDICES_AT},
      where=lambda a, v: a["batch_axis"] % 3 != a["seq_axis"] % 3, cover=("$indices_at",),
      types={"T": ALL, "I": INDEX + ("f32",)})
def reverse_sequence(c):
    b, s = c.attrs["batch_axis"] % 3, c.attrs["seq_axis"] % 3
    lengths = c.rng.integers(1, X3[s], X3[b], endpoint=True)
    return [c.data(X3), c.indices(lengths)]


@spec("Roll", grid={"$form": ["one", "two", "negative", "repeated"], "$axes_at": AXES_AT}, cover=("$axes_at",),
      types={"T": ALL, "I": INDEX})
def roll(c):
    shift, axes = {"one": ([1], [1]), "two": ([2, -1], [0, 2]), "negative": ([-5], [-1]),
                   "repeated": ([1, 2], [2, 2])}[c.attrs["$form"]]
    return [c.data(X3), c.index(shift), c.axes(axes)]


@spec("DepthToSpace", grid={"mode": ["blocks_first", "depth_first"], "block_size": [2, 1], "$rank": [4, 3, 5]})
def depth_to_space(c):
    b, r = c.attrs["block_size"], c.attrs["$rank"]
    return [c.data((1, 2 * b ** (r - 2)) + (2,) * (r - 2))]


@spec("SpaceToDepth", grid={"mode": ["blocks_first", "depth_first"], "block_size": [2, 1], "$rank": [4, 3, 5]})
def space_to_depth(c):
    b, r = c.attrs["block_size"], c.attrs["$rank"]
    return [c.data((1, 2) + (2 * b,) * (r - 2))]


@spec("ShuffleChannels", grid={"axis": [1, -1, 0], "group": [1, 2, 3]})
def shuffle_channels(c):
    return [c.data((6, 6, 2, 6))]


@spec("BatchToSpace", grid={"$form": ["plain", "crops"]}, types={"T": ALL, "I": INDEX})
def batch_to_space(c):
    crops = ([0, 0, 1, 0], [0, 0, 0, 1]) if c.attrs["$form"] == "crops" else ([0] * 4, [0] * 4)
    return [c.data((8, 2, 2, 3)), c.index([1, 1, 2, 4]), c.index(crops[0]), c.index(crops[1])]


@spec("SpaceToBatch", grid={"$form": ["plain", "pads"]}, types={"T": ALL, "I": INDEX})
def space_to_batch(c):
    pads = ([0, 0, 1, 0], [0, 0, 1, 2]) if c.attrs["$form"] == "pads" else ([0] * 4, [0] * 4)
    shape = (2, 2, 2, 6) if c.attrs["$form"] == "plain" else (2, 2, 2, 2)
    return [c.data(shape), c.index([1, 1, 2, 2]), c.index(pads[0]), c.index(pads[1])]


@spec("ReorgYolo", grid={"stride": [[2], [1]]})
def reorg_yolo(c):
    return [c.data((1, 4, 4, 6))]


@spec("ExtractImagePatches", grid={"sizes": [[2, 2], [3, 2]], "strides": [[1, 1], [2, 3]], "rates": [[1, 1], [2, 1]],
                                   "auto_pad": ["valid", "same_upper", "same_lower"]})
def extract_image_patches(c):
    return [c.data((2, 2, 7, 6))]


@spec("Eye", grid={"output_type": ["f32", "i64", "boolean", "u8"], "$form": ["square", "wide", "diag", "batch",
                                                                             "neg_diag"]},
      types={"T": ("i64", "i32")})
def eye(c):
    rows, cols, diag, batch = {"square": (3, None, 0, None), "wide": (2, 4, 0, None), "diag": (3, 4, 2, None),
                               "batch": (2, 3, 1, [2]), "neg_diag": (4, 3, -1, None)}[c.attrs["$form"]]
    ins = [c.const(np.array(rows)), c.const(np.array(cols if cols is not None else rows)), c.const(np.array(diag))]
    return ins + ([c.const(batch)] if batch else [])


#: Range's start, stop, step per form: ``down`` a negative step, ``away`` a step pointing away from stop (empty),
#: ``fraction`` fractional bounds and step (truncated toward zero for an integer output_type), ``one`` one value
_RANGES = {"const": (1, 11, 3), "param": (-2, 7, 2), "float_step": (0.5, 4, 0.75), "down": (9, -3, -2),
           "away": (5, 1, 1), "fraction": (-1.5, 7.9, 1.7), "one": (3, 4, 5)}
_UNSIGNED_DOWN = (1, 9, 3)  # unsigned data holds no negative step
#: Range-4's start, stop, step each of its own element type (``$types=three``): start the data's (T), stop and step
#: of the first of these two lists that is not T (signed and float: a negative step and bound stay; a fractional
#: one is truncated toward zero where its type is an integer, as a frontend's cast would)
_RANGE_STOP, _RANGE_STEP = ("i32", "i64"), ("f32", "f64")


def _range_ok(a, version):
    return (a["$form"] != "param" or a["$operands_at"] == "runtime") and (a["$types"] == "same" or version >= 4)


@spec("Range", grid={"output_type": ["f32", "i32", "i64", "f16", "u8", "f64", "bf16", "i8", "u64"],
                     "$form": list(_RANGES), "$operands_at": ["const", "runtime", "mixed"],
                     "$types": ["same", "three"]},
      cover=("output_type",), where=_range_ok, types={"T": NUMERIC})
def range_(c):
    form = c.attrs["$form"]
    start, stop, step = _RANGES[form]
    if c.t not in FLOATS and form in ("float_step", "fraction"):
        start, stop, step = 1, 8, 2
    if c.t[0] == "u" and form == "down":
        start, stop, step = _UNSIGNED_DOWN
    types = [c.t] * 3
    if c.attrs["$types"] == "three":
        types[1:] = [next(t for t in ts if t != c.t) for ts in (_RANGE_STOP, _RANGE_STEP)]
        stop, step = (_truncated(v, t) for v, t in ((stop, types[1]), (step, types[2])))
    at = c.attrs["$operands_at"]
    if c.version == 1:
        c.attrs.pop("output_type", None)
    values = [np.asarray(np.array(v), dtype=dtype(t)) for v, t in zip((start, stop, step), types)]
    if at == "mixed":  # start and step computed, stop a Constant (torch.arange(x.size(0), 10, s))
        return [c.feed(values[0], types[0]), c.const(values[1], types[1]), c.feed(values[2], types[2])]
    make = c.feed if at == "runtime" else c.const
    return [make(v, t) for v, t in zip(values, types)]


def _truncated(value, et: str):
    """A value as a frontend's cast to ``et`` writes it (toward zero for an integer type)."""
    return int(value) if et[0] in "iu" else value


@spec("OneHot", grid={"axis": [-1, 0, 1], "negative_indices_mode": ["ignore_negative", "normalize"],
                      "$indices_at": INDICES_AT}, cover=("$indices_at",),
      types={"T": ("i64", "i32"), "V": ("f32", "i64", "boolean", "f16", "u8")})
def one_hot(c):
    v = c.types["V"]
    indices = c.rng.integers(-4, 5, (2, 3))
    return [c.feed(indices), c.indices(np.array(4), et="i64"), c.const(np.array(5), et=v),
            c.const(np.array(0 if v == "boolean" else 2), et=v)]


@spec("NonZero", grid={"output_type": ["i64", "i32"]})
def non_zero(c):
    x = c.values(X3, lo=-1, hi=1)
    return [c.feed(x)]


@spec("Unique", grid={"sorted": [True, False], "index_element_type": ["i64", "i32"],
                      "count_element_type": ["i64", "i32"], "$axis": [None, 0, 1, -1]},
      cover=("index_element_type", "count_element_type"),
      types={"T": ALL, "I": INDEX})
def unique(c):
    x = c.values((4, 3), lo=-2, hi=2)
    x[2] = x[0]  # a repeated row
    axis = c.attrs["$axis"]
    return [c.feed(x)] + ([c.index(axis)] if axis is not None else [])


def _by_index(outputs, attrs):
    """TopK sort "none": the order of the k results is unspecified; compare them ordered by index."""
    if attrs.get("sort") != "none":
        return outputs
    values, indices = outputs
    order = np.argsort(indices, axis=attrs["axis"], kind="stable")
    return [np.take_along_axis(values, order, attrs["axis"]), np.take_along_axis(indices, order, attrs["axis"])]


@spec("TopK", grid={"axis": [1, -1, 0], "mode": ["max", "min"], "sort": ["value", "index", "none"],
                    "index_element_type": ["i32", "i64"], "stable": [False, True], "$k": [2, 1, "fed"]},
      cover=("index_element_type",),
      types={"T": ALL, "I": INDEX}, canon=_by_index)
def topk(c):
    x = c.rng.permutation(24).reshape(X3)  # distinct values: without stable, the order of ties is unspecified
    k = c.feed(np.array(2), c.types["I"]) if c.attrs["$k"] == "fed" else c.index(c.attrs["$k"])  # fed: at run time
    if c.t in FLOATS:
        return [c.feed(x / 4.0 - 3.0), k]
    return [c.feed(x if c.t.startswith("u") else x - 12), k]


@spec("CumSum", grid={"exclusive": [False, True], "reverse": [False, True], "$axis": [None, 0, -1], "$axes_at": AXES_AT},
      cover=("$axes_at",), where=lambda a, v: a["$axis"] is not None or a["$axes_at"] == "const",
      types={"T": ALL, "I": INDEX})
def cum_sum(c):
    axis = c.attrs["$axis"]
    return [c.data(X3)] + ([c.axes(axis)] if axis is not None else [])


@spec("Bucketize", grid={"output_type": ["i64", "i32"], "with_right_bound": [True, False]},
      types={"T": NUMERIC, "B": ("f32", "i64", "f16", "i32")})
def bucketize(c):
    b = c.types["B"]
    return [c.data(X3, lo=-5, hi=5), c.const([-3, -1, 0, 2, 4], et=b)]


@spec("SearchSorted", grid={"right_mode": [False, True], "output_type": ["i64", "i32"], "$form": ["1d", "nd"]})
def search_sorted(c):
    if c.attrs["$form"] == "1d":
        seq = np.sort(c.values((6,), lo=-5, hi=5))
        return [c.const(seq), c.data(X3, lo=-6, hi=6)]
    seq = np.sort(c.values((2, 3, 5), lo=-5, hi=5), axis=-1)
    return [c.const(seq), c.data((2, 3, 4), lo=-6, hi=6)]


# --- scatters ---------------------------------------------------------------------------------------

@spec("ScatterUpdate", empty_invalid=lambda a: ROWS_OF_NOTHING if a["$axis"] == 0 else "",
      grid={"$axis": [0, 1, -1], "$indices_at": INDICES_AT}, cover=("$indices_at",), types={"T": ALL, "I": INDEX})
def scatter_update(c):
    axis = c.attrs["$axis"] % 3
    indices = np.array([[2, 0]]) if X3[axis] > 2 else np.array([[1, 0]])
    upd_shape = X3[:axis] + indices.shape + X3[axis + 1:]
    return [c.data(X3), c.indices(indices), c.data(upd_shape), c.index(c.attrs["$axis"])]


@spec("ScatterNDUpdate", empty_invalid=ROWS_OF_NOTHING,
      grid={"reduction": ["none", "sum", "sub", "prod", "min", "max"], "$depth": [1, 2],
            "$dups": [False, True], "$indices_at": INDICES_AT},
      where=lambda a, v: not a["$dups"] or a["reduction"] not in ("none", None), cover=("$indices_at",),
      types={"T": ALL, "I": INDEX})
def scatter_nd_update(c):
    k = c.attrs["$depth"]
    idx = np.array([[1, 2], [0, 1], [1, -1]])[:, :k] if k == 2 else np.array([[1], [0], [-2]])
    if c.attrs["$dups"]:
        idx = np.concatenate([idx, idx[:1]])
    upd_shape = idx.shape[:-1] + X3[k:]
    return [c.data(X3), c.indices(idx), c.data(upd_shape)]


@spec("ScatterElementsUpdate", grid={"reduction": ["none", "sum", "prod", "min", "max", "mean"],
                                     "use_init_val": [True, False], "$axis": [0, 1, -1], "$dups": [False, True],
                                     "$indices_at": INDICES_AT},
      where=lambda a, v: (not a["$dups"] or a["reduction"] not in ("none", None)) and
      (a["reduction"] != "none" or a["use_init_val"]), cover=("$indices_at",), types={"T": ALL, "I": INDEX})
def scatter_elements_update(c):
    axis = c.attrs["$axis"] % 3
    shape = list(X3)
    shape[axis] = 2
    idx = c.rng.integers(-X3[axis], X3[axis] - 1, shape, endpoint=True)
    if not c.attrs["$dups"]:  # distinct positions along the axis
        idx = np.broadcast_to(np.arange(2).reshape([-1 if i == axis else 1 for i in range(3)]) *
                              (1 if X3[axis] < 3 else 2) - 1, shape).copy()
    return [c.data(X3), c.indices(idx), c.data(shape), c.index(c.attrs["$axis"])]


@spec("EmbeddingBagOffsetsSum", empty_invalid=ROWS_OF_NOTHING,
      grid={"$form": ["weights", "no_weights", "default_index", "empty_bag"], "$indices_at": INDICES_AT},
      cover=("$indices_at",), types={"T": FLOATS + INTEGERS, "I": INDEX})
def embedding_bag_offsets_sum(c):
    return _bag_offsets(c)


@spec("EmbeddingBagOffsets", empty_invalid=ROWS_OF_NOTHING,
      grid={"reduction": ["sum", "mean"],
            "$form": ["weights", "no_weights", "default_index", "empty_bag"], "$indices_at": INDICES_AT},
      where=lambda a, v: a["reduction"] == "sum" or a["$form"] != "weights", cover=("$indices_at",),
      types={"T": FLOATS + INTEGERS, "I": INDEX})
def embedding_bag_offsets(c):
    return _bag_offsets(c)


def _bag_offsets(c):
    form = c.attrs["$form"]
    table, indices = c.data((5, 3)), c.indices([0, 2, 4, 1, 1, 3])
    offsets = c.indices([0, 2, 2, 5] if form == "empty_bag" else [0, 2, 5])
    ins = [table, indices, offsets]
    if form != "no_weights":
        ins.append(c.index(1 if form == "default_index" else -1))
    if form == "weights":
        ins.append(c.data((6,)))
    return ins if form != "default_index" else ins


@spec("EmbeddingBagPackedSum", empty_invalid=ROWS_OF_NOTHING,
      grid={"$weights": [True, False], "$indices_at": INDICES_AT}, cover=("$indices_at",),
      types={"T": FLOATS + INTEGERS, "I": INDEX})
def embedding_bag_packed_sum(c):
    return [c.data((5, 3)), c.indices([[0, 2], [4, 1], [1, 3]])] + ([c.data((3, 2))] if c.attrs["$weights"] else [])


@spec("EmbeddingBagPacked", empty_invalid=ROWS_OF_NOTHING,
      grid={"reduction": ["sum", "mean"], "$weights": [True, False], "$indices_at": INDICES_AT},
      where=lambda a, v: a["reduction"] == "sum" or not a["$weights"], cover=("$indices_at",),
      types={"T": FLOATS + INTEGERS, "I": INDEX})
def embedding_bag_packed(c):
    return [c.data((5, 3)), c.indices([[0, 2], [4, 1], [1, 3]])] + ([c.data((3, 2))] if c.attrs["$weights"] else [])


@spec("EmbeddingSegmentsSum", empty_invalid=ROWS_OF_NOTHING,
      grid={"$form": ["weights", "no_weights", "default_index", "empty_segment"], "$indices_at": INDICES_AT},
      cover=("$indices_at",), types={"T": FLOATS + INTEGERS, "I": INDEX})
def embedding_segments_sum(c):
    form = c.attrs["$form"]
    ins = [c.data((5, 3)), c.indices([0, 2, 4, 1, 1, 3]), c.indices([0, 0, 1, 3, 3, 3]), c.index(5 if form ==
                                                                                             "empty_segment" else 4)]
    if form != "no_weights":
        ins.append(c.index(1 if form == "default_index" else -1))
    if form == "weights":
        ins.append(c.data((6,)))
    return ins


@spec("SegmentMax", grid={"fill_mode": ["zero", "lowest"], "$num_segments": [None, 5], "$indices_at": INDICES_AT},
      cover=("$indices_at",), types={"T": NUMERIC, "I": INDEX})
def segment_max(c):
    n = c.attrs["$num_segments"]
    return [c.data((6, 3)), c.indices([0, 0, 1, 3, 3, 3])] + ([c.index(n)] if n is not None else [])


@spec("SparseFillEmptyRows", types={"T": ALL, "I": INDEX})
def sparse_fill_empty_rows(c):
    indices = c.index([[0, 1], [0, 3], [2, 0], [4, 2]])
    return [c.data((4,)), c.index([5, 4]), indices, c.const(np.array(1))]
