"""How a one-layer case is described: ``OpSpec`` (one per IR layer type, for all its versions) and
the ``Inputs`` helper its input function builds the layer's inputs with.

    @spec("Convolution", grid={"strides": [[1, 1], [2, 1]], "auto_pad": ["explicit", "same_upper"]},
          types={"T": FLOATS})
    def convolution(c):
        return [c.data((1, 3, 7, 7)), c.const((4, 3, 3, 3))]

``grid``: attribute name -> the values to try (their product, filtered by ``where``); names that
the op version does not have are dropped (one spec serves Interpolate-1, -4 and -11), names that
start with ``$`` are not attributes but choices the input function reads (``c.attrs["$axes"]``).
``types``: type parameter -> candidate element types; ``T`` is the data's (``c.t``), other
parameters (``I`` for indices, axes and shapes) are read with ``c.types["I"]``. ``fixed``: the
op's attributes deliberately left at one value, with why (tests/test_ir_generator.py checks that
every attribute of every version is in ``grid`` or ``fixed``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = ("f32", "f16", "bf16", "f64")
SIGNED = ("i8", "i16", "i32", "i64")
UNSIGNED = ("u8", "u16", "u32", "u64")
INTEGERS = SIGNED + UNSIGNED
NUMERIC = FLOATS + INTEGERS
ALL = NUMERIC + ("boolean",)
INDEX = ("i64", "i32")
#: Narrow types OpenVINO converts from and to (weights, FP8 emulation): the 8-bit floats fed as Parameters (ml_dtypes
#: holds them), the 4-bit integers Constants only (OpenVINO's Python API feeds no packed type)
FP8 = ("f8e4m3", "f8e5m2")
NARROW = FP8 + ("i4", "u4")
#: Where an axes input comes from (``$axes_at``, read by ``Inputs.axes``): a Constant, or computed at run time
#: (a Parameter, as a graph that computes them gives the layer).
AXES_AT = ["const", "runtime"]
#: Where a layer's weights come from (``$weights_at``, read by ``Inputs.weight``): a Constant; a Parameter (weights
#: at run time, as a TF/keras model's variables or a graph that computes them give them); or ``decompressed``, a
#: u8 Constant -> Convert -> Subtract a zero point -> Multiply a scale, as NNCF's and ovc's compressed weights.
WEIGHTS_AT = ["const", "runtime", "decompressed"]
#: Where a layer's indices, offsets, lengths, depth or boxes come from (``$indices_at``, read by
#: ``Inputs.indices``): a Constant, or a Parameter fed them (computed at run time, as a model's lookups).
INDICES_AT = ["const", "runtime"]
#: The zero point and the scale of ``decompressed`` weights (float data: multiples of 1/16, exact in bf16 within
#: +-4; integer data: scale 1)
DECOMPRESS_ZP, DECOMPRESS_SCALE = 64, 1 / 16

_NUMPY = {"f32": np.float32, "f16": np.float16, "bf16": BF16, "f64": np.float64, "i8": np.int8,
          "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16,
          "u32": np.uint32, "u64": np.uint64, "boolean": np.bool_,
          "f8e4m3": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2, "i4": ml_dtypes.int4,
          "u4": ml_dtypes.uint4}


def dtype(et: str) -> np.dtype:
    return np.dtype(_NUMPY[et])


#: ``empty_invalid`` reasons: the emptying rule leaves these inputs as they are, pointing into nothing.
ROWS_OF_NOTHING = "its indices address rows of the emptied table"
ROIS_OF_NOTHING = "its ROIs address images of the emptied batch"


class Skip(Exception):
    """The case is not one OpenVINO's spec allows (the input function says why)."""


@dataclass
class Input:
    """One input of the layer: a Parameter fed ``value`` (its dims made dynamic by the case's
    shape mode), or a Constant holding it."""

    value: np.ndarray
    const: bool = False
    weight: bool = False  # the layer's weights: the ``empty`` mode leaves their dims as they are
    decompressed: bool = False  # a Constant built as u8 -> Convert -> Subtract -> Multiply (``WEIGHTS_AT``)


@dataclass
class OpSpec:
    op: str  # the IR type as OpenVINO's NodeFactory names it (``Relu``, not ``ReLU``)
    inputs: Callable  # (Inputs) -> list[Input]
    grid: dict = field(default_factory=dict)
    types: dict = field(default_factory=lambda: {"T": ALL})
    where: Callable | None = None  # (attrs, version) -> bool: the combinations the spec allows
    cover: tuple[str, ...] = ()  # grid names not crossed: each of their values once
    fixed: dict = field(default_factory=dict)  # attribute -> why it is not varied
    rtol: float = 1.0  # a multiplier of the per-type tolerance (ops computed in another order)
    atol: float = 0.0  # absolute tolerance, in units of the output's magnitude
    itol: int = 0  # integer outputs may differ by this much (rounding of a float computation)
    canon: Callable | None = None  # (outputs, attrs) -> outputs: an order OpenVINO leaves unspecified
    outputs: tuple[int, ...] | None = None  # the outputs compared (None: all)
    static_only: bool = False  # the op needs static input shapes (its spec says so)
    bodies: bool = True  # also inside If and Loop bodies
    make: Callable | None = None  # (input Outputs, attrs) -> node, for ops NodeFactory cannot build
    no_evaluate: str = ""  # why OpenVINO's reference must not run it (then its CPU plugin does)
    # why the reference must only run the model reshaped to the feeds' shapes (then, where that leaves
    # it dynamic, its CPU plugin decides)
    evaluate_static: str = ""
    # why the ``empty`` mode's case is not valid (its indices or ROIs address rows of the emptied first input,
    # where OpenVINO's outputs are undefined and onnxruntime refuses): a reason, or (attrs) -> reason ("" valid);
    # such cases are not generated
    empty_invalid: str | Callable = ""

    def empty_reason(self, attrs: dict) -> str:
        return self.empty_invalid(attrs) if callable(self.empty_invalid) else self.empty_invalid
    note: str = ""


SPECS: dict[str, OpSpec] = {}


def spec(op: str, **kwargs):
    """Register the decorated input function as the spec of IR type ``op`` (every version)."""
    def register(fn: Callable) -> Callable:
        key = op.lower()
        if key in SPECS:
            raise ValueError(f"two specs for {op}")
        SPECS[key] = OpSpec(op, fn, **kwargs)
        return fn
    return register


class Inputs:
    """What an input function works with: the case's attributes (``attrs``, which it may change:
    ``c.attrs["pads_end"] = ...``), element types (``t``, ``types``), op version and a seeded rng."""

    def __init__(self, attrs: dict, types: dict, version: int, rng: np.random.Generator):
        self.attrs = attrs
        self.types = types
        self.t = types["T"]
        self.version = version
        self.rng = rng

    @property
    def dtype(self) -> np.dtype:
        return dtype(self.t)

    def values(self, shape, et: str | None = None, lo: float = -4, hi: float = 4) -> np.ndarray:
        """Random values of type ``et`` (default the data's) in [lo, hi]: floats uniform, integers
        uniform within the type's range, booleans half true."""
        et = et or self.t
        dt = dtype(et)
        shape = tuple(shape)
        if et == "boolean":
            return self.rng.random(shape) < 0.5
        if dt.kind == "f" or dt == BF16 or et in FP8:
            return self.rng.uniform(lo, hi, shape).astype(dt)
        info = ml_dtypes.iinfo(dt) if et in NARROW else np.iinfo(dt)
        lo, hi = max(int(np.floor(lo)), info.min), min(int(np.ceil(hi)), info.max)
        return self.rng.integers(lo, hi, shape, endpoint=True).astype(dt)

    def data(self, shape, et: str | None = None, lo: float = -4, hi: float = 4) -> Input:
        """A Parameter of random values."""
        return Input(self.values(shape, et, lo, hi))

    def const(self, value_or_shape, et: str | None = None, lo: float = -4, hi: float = 4) -> Input:
        """A Constant: ``value_or_shape`` as an array of type ``et`` (default the data's) when it is
        an array or a list of values, random values when it is a shape tuple."""
        if isinstance(value_or_shape, tuple):
            return Input(self.values(value_or_shape, et, lo, hi), const=True)
        return Input(np.asarray(value_or_shape, dtype=dtype(et or self.t)), const=True)

    def index(self, values, et: str | None = None) -> Input:
        """A Constant of axes, a shape or indices, of the index type (``types["I"]``, default i64)."""
        return Input(np.asarray(values, dtype=dtype(et or self.types.get("I", "i64"))), const=True)

    def axes(self, values, et: str | None = None) -> Input:
        """Axes of the index type: a Constant, or a Parameter fed them when the case's ``$axes_at`` is
        ``runtime``."""
        if self.attrs.get("$axes_at") == "runtime":
            return self.feed(values, et or self.types.get("I", "i64"))
        return self.index(values, et)

    def weight(self, value_or_shape, et: str | None = None, lo: float = -4, hi: float = 4) -> Input:
        """Weights (``const``'s arguments): a Constant, a Parameter fed them or a decompressed Constant, as the
        case's ``$weights_at`` says."""
        value = self.const(value_or_shape, et, lo, hi).value
        at = self.attrs.get("$weights_at", "const")
        if at == "decompressed":
            scale = DECOMPRESS_SCALE if value.dtype.kind == "f" or value.dtype == BF16 else 1
            q = np.clip(np.round(value.astype(np.float64) / scale), -DECOMPRESS_ZP, 255 - DECOMPRESS_ZP)
            value = (q * scale).astype(value.dtype)
        return Input(value, const=at != "runtime", weight=True, decompressed=at == "decompressed")

    def indices(self, values, et: str | None = None) -> Input:
        """Indices, offsets, lengths of the index type (default ``types["I"]``): a Constant, or a Parameter fed
        them when the case's ``$indices_at`` is ``runtime``."""
        if self.attrs.get("$indices_at") == "runtime":
            return self.feed(values, et or self.types.get("I", "i64"))
        return self.index(values, et)

    def feed(self, value, et: str | None = None) -> Input:
        """A Parameter fed exactly ``value``."""
        return Input(np.asarray(value, dtype=dtype(et or self.t)))
