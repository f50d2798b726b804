"""BinaryConvolution-1: the op's record, bodies and numpy reference. Semantics: docs/ops/binary_convolution.md.

OpenVINO: BinaryConvolution-1(data: F [N, C, spatial...], kernel: u1 [O, C, k...]; strides, pads_begin, pads_end,
dilations, mode "xnor-popcount", pad_value, auto_pad) -> F [N, O, ...]. In the domain the kernel is an ONNX BOOL
tensor (ONNX has no 1-bit type; the converter unpacks the IR's bits). As OpenVINO's reference
(binary_convolution.hpp): each window position counts +1 where the input value (pad_value outside the data)
equals the kernel bit (0 or 1, compared as the data type), -1 elsewhere; the output is the sum over the window and
the input channels.

Body: with e1 = (x == 1), e0 = (x == 0), a position counts 2 w (e1 - e0) + (2 e0 - 1): a Conv of e1 - e0 by 2 w
plus a 1-channel Conv (a box sum) of the channels' total of 2 e0 - 1, each feature less its value at pad_value
(so that zero padding is exact), and a bias (the pad values times the kernel sums). Exact: the sums are integers
within f32's 2^24.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Annotated, Sequence

import numpy as np
import onnx
from onnxscript import FLOAT, script

from ...domain import op, ov_ext
from ...errors import OpAttributeError, OpInputError
from ...types import from_ov
from ..base import (INT, INTS, Attr, Bodies, OpSpec, Operand, Overload, require_non_negative, require_one_of,
                    require_positive, words)
from ..builder import BodyBuilder

__all__ = ["SPEC", "Convolve", "binary_convolution_reference"]

AUTO_PADS = ("explicit", "same_upper", "same_lower", "valid")
TYPES = ("f16", "f32")


def _pads(attrs: dict, spatial: Sequence[int], kernel: Sequence[int]) -> tuple[list[int], list[int]]:
    """pads_begin, pads_end as OpenVINO resolves auto_pad (same_*: the output of ceil(in / stride))."""
    if attrs["auto_pad"] == "valid":
        return [0] * len(spatial), [0] * len(spatial)
    if attrs["auto_pad"] == "explicit":
        return list(attrs["pads_begin"]), list(attrs["pads_end"])
    begin, end = [], []
    for size, k, s, d in zip(spatial, kernel, attrs["strides"], attrs["dilations"]):
        total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begin.append(small if attrs["auto_pad"] == "same_upper" else large)
        end.append(large if attrs["auto_pad"] == "same_upper" else small)
    return begin, end


def binary_convolution_reference(data, kernel, strides, pads_begin, pads_end, dilations, mode="xnor-popcount",
                                 pad_value=0.0, auto_pad="explicit") -> np.ndarray:
    data, kernel = np.asarray(data), np.asarray(kernel).astype(bool)
    attrs = dict(strides=strides, pads_begin=pads_begin, pads_end=pads_end, dilations=dilations, auto_pad=auto_pad)
    _check_shapes(data.shape, kernel.shape, attrs)
    spatial = data.ndim - 2
    begin, end = _pads(attrs, data.shape[2:], kernel.shape[2:])
    x = data.astype(np.float32)
    pad_in = np.float32(np.asarray(pad_value).astype(data.dtype))
    padded = np.pad(x, [(0, 0), (0, 0)] + list(zip(begin, end)), constant_values=pad_in)
    w = kernel.astype(np.float32)
    sizes = [(padded.shape[2 + i] - (kernel.shape[2 + i] - 1) * dilations[i] - 1) // strides[i] + 1
             for i in range(spatial)]
    out = np.zeros((data.shape[0], kernel.shape[0], *sizes), np.float64)
    for index in np.ndindex(*kernel.shape[2:]):
        window = padded[(slice(None), slice(None)) + tuple(
            slice(index[i] * dilations[i], index[i] * dilations[i] + (sizes[i] - 1) * strides[i] + 1, strides[i])
            for i in range(spatial))]
        bits = w[(slice(None), slice(None)) + index]  # [O, C]
        match = window[:, None] == bits[None, :, :, *([None] * spatial)]  # [N, O, C, ...]
        out += np.where(match, 1.0, -1.0).sum(axis=2)
    return out.astype(data.dtype)


def _check_shapes(data, kernel, attrs) -> None:
    if data is not None and len(data) < 3:
        raise OpInputError("BinaryConvolution", f"data must have rank >= 3 [N, C, spatial...], got {list(data)}")
    if kernel is not None and data is not None and len(kernel) != len(data):
        raise OpInputError("BinaryConvolution", f"kernel rank {len(kernel)} differs from data rank {len(data)}")
    if kernel is not None and data is not None and isinstance(kernel[1], int) and isinstance(data[1], int) and \
            kernel[1] != data[1]:
        raise OpInputError("BinaryConvolution", f"kernel has {kernel[1]} input channels, data {data[1]}")
    rank = len(data) - 2 if data is not None else len(kernel) - 2 if kernel is not None else None
    if rank is not None:
        for name in ("strides", "dilations") + (("pads_begin", "pads_end") if attrs["auto_pad"] == "explicit" else ()):
            if len(attrs[name]) != rank:
                raise OpAttributeError("BinaryConvolution", name, f"has {len(attrs[name])} entries for {rank} spatial "
                                       f"dims")


def check_attributes(attrs: dict) -> dict:
    require_one_of("BinaryConvolution", attrs, "mode", ("xnor-popcount",))
    require_one_of("BinaryConvolution", attrs, "auto_pad", AUTO_PADS)
    require_positive("BinaryConvolution", attrs, "strides", "dilations")
    require_non_negative("BinaryConvolution", attrs, "pads_begin", "pads_end")
    if len(attrs["strides"]) != len(attrs["dilations"]):
        raise OpAttributeError("BinaryConvolution", "dilations", "must have as many entries as strides")
    return attrs


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    data, kernel = operands
    if data.type is not None and data.type.ov not in TYPES:
        raise OpInputError("BinaryConvolution", f"data must be f16 or f32, got {data.type.ov}")
    if kernel.type is not None and kernel.type.ov != "boolean":
        raise OpInputError("BinaryConvolution", f"kernel must be BOOL (the IR's u1 bits), got {kernel.type.ov}")
    _check_shapes(data.shape, kernel.shape, attrs)


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple | None:
    data, kernel = operands
    if data.shape is None:
        return None
    out = [data.shape[0], kernel.shape[0] if kernel.shape is not None else None]
    for i, size in enumerate(data.shape[2:]):
        k = kernel.shape[2 + i] if kernel.shape is not None else None
        if not isinstance(size, int) or not isinstance(k, int):
            out.append(None)
            continue
        if attrs["auto_pad"] in ("same_upper", "same_lower"):
            out.append(-(-size // attrs["strides"][i]))
            continue
        begin, end = _pads(attrs, data.shape[2:], kernel.shape[2:])
        out.append((size + begin[i] + end[i] - (k - 1) * attrs["dilations"][i] - 1) // attrs["strides"][i] + 1)
    return tuple(out)


def _bits(value: float) -> int:
    return struct.unpack("<i", struct.pack("<f", value))[0]


@dataclass(frozen=True)
class Convolve(Overload):
    """BinaryConvolution-1 of one data type and attributes (pad_value as its f32 bits)."""

    SPELLING = "{type}_s{strides}_b{pads_begin}_e{pads_end}_d{dilations}_v{pad_bits}_{auto_pad}"
    type: Annotated[str, words(TYPES)]
    strides: Annotated[tuple, INTS]
    pads_begin: Annotated[tuple, INTS]
    pads_end: Annotated[tuple, INTS]
    dilations: Annotated[tuple, INTS]
    pad_bits: Annotated[int, INT]
    auto_pad: Annotated[str, words(AUTO_PADS)]

    def build(self, g: BodyBuilder) -> str:
        et = from_ov(self.type)
        f32 = onnx.TensorProto.FLOAT
        x = "data" if et.ov == "f32" else g("Cast", "data", to=f32)
        pad = float(np.float32(struct.unpack("<f", struct.pack("<i", self.pad_bits))[0]).astype(et.numpy))
        e1, e0 = (g("Cast", g("Equal", x, g.const(v, np.float32)), to=f32) for v in (1.0, 0.0))
        pad_e1, pad_e0 = float(pad == 1.0), float(pad == 0.0)
        # the two features less their value at pad_value: zero where Conv pads
        first = g("Sub", g("Sub", e1, e0), g.const(pad_e1 - pad_e0, np.float32))
        second = g("Sub", g("Sub", g("Mul", e0, g.const(2.0, np.float32)), g.const(1.0, np.float32)),
                   g.const(2 * pad_e0 - 1, np.float32))
        # (the second feature's weights are all 1: its part is one box sum over the channels' total, for every
        # output channel: a 1-channel Conv, half the work of stacking it with the first)
        side = g("ReduceSum", second, g.const([1]), keepdims=1)
        w = g("Cast", "kernel", to=f32)
        weights = g("Mul", w, g.const(2.0, np.float32))
        ones = g("Add", g("Mul", g("ReduceMax", w, g.const([0, 1]), keepdims=1), g.const(0.0, np.float32)),
                 g.const(1.0, np.float32))  # [1, 1, k...]
        # what the padded positions add back: per output channel, the pad features times the whole kernel
        rank = len(self.strides)
        bias = g("ReduceSum", g("Add", g("Mul", w, g.const(2.0 * (pad_e1 - pad_e0), np.float32)),
                                g.const(2 * pad_e0 - 1, np.float32)), g.const(list(range(1, rank + 2))), keepdims=0)
        conv = dict(strides=list(self.strides), dilations=list(self.dilations))
        if self.auto_pad == "explicit":
            conv["pads"] = list(self.pads_begin) + list(self.pads_end)
        elif self.auto_pad != "valid":  # (onnxruntime's Conv takes no SAME auto_pad with dilations)
            pads = self._same_pads(g)
            first, side = g("Pad", first, pads), g("Pad", side, pads)
        y = g("Add", g("Conv", first, weights, bias, **conv), g("Conv", side, ones, **conv))
        return y if et.ov == "f32" else g("Cast", y, to=et.onnx)


    def _same_pads(self, g: BodyBuilder) -> str:
        """same_upper / same_lower padding at run time: total = max((ceil(in / s) - 1) s + (k - 1) d + 1 - in, 0),
        the odd one at the end (upper) or the beginning (lower)."""
        size, k = g("Shape", "data", start=2), g("Shape", "kernel", start=2)
        s, d = g.const(list(self.strides)), g.const(list(self.dilations))
        blocks = g("Div", g("Add", size, g("Sub", s, g.const(1))), s)
        total = g("Max", g("Sub", g("Add", g("Add", g("Mul", g("Sub", blocks, g.const(1)), s),
                                                   g("Mul", g("Sub", k, g.const(1)), d)), g.const(1)), size),
                  g.const(0))
        small = g("Div", total, g.const(2))
        large = g("Sub", total, small)
        begin, end = (small, large) if self.auto_pad == "same_upper" else (large, small)
        return g("Concat", g.const([0, 0]), begin, g.const([0, 0]), end, axis=0)


@script(ov_ext, default_opset=op)
def BinaryConvolution(data, kernel, strides: list[int], pads_begin: list[int], pads_end: list[int],
                      dilations: list[int], mode: str = "xnor-popcount", pad_value: float = 0.0,
                      auto_pad: str = "explicit"):
    # BinaryConvolution-1(data: F [N, C, ...], kernel: BOOL [O, C, k...]; strides, pads_begin, pads_end, dilations,
    #   mode, pad_value, auto_pad) -> F
    # General body: explicit padding with pad_value (a Pad), then the Conv of the features; auto_pad other than
    # explicit fails, naming the check (attach_functions gives each node the body of its attributes).
    explicit = op.Equal(op.Constant(value_string=auto_pad), op.Constant(value_string="explicit"))
    general_body_pads_explicitly = op.Gather(op.Constant(value_ints=[0]), op.Reshape(
        op.Cast(op.Not(explicit), to=7), op.Constant(value_ints=[1])))
    begin = op.Constant(value_ints=pads_begin)
    end = op.Constant(value_ints=pads_end)
    zeros = op.Constant(value_ints=[0, 0])
    pads = op.Add(op.Concat(zeros, begin, zeros, end, axis=0), op.ReduceSum(general_body_pads_explicitly, keepdims=0))
    x = op.Pad(op.Cast(data, to=FLOAT.dtype), pads, op.Cast(op.CastLike(op.Constant(value_float=pad_value), data),
                                                              to=FLOAT.dtype))
    e1 = op.Cast(op.Equal(x, op.Constant(value_float=1.0)), to=FLOAT.dtype)
    e0 = op.Cast(op.Equal(x, op.Constant(value_float=0.0)), to=FLOAT.dtype)
    features = op.Concat(op.Sub(e1, e0), op.Sub(op.Mul(e0, op.Constant(value_float=2.0)),
                                                op.Constant(value_float=1.0)), axis=1)
    w = op.Cast(kernel, to=FLOAT.dtype)
    ones = op.Add(op.Mul(w, op.Constant(value_float=0.0)), op.Constant(value_float=1.0))
    weights = op.Concat(op.Mul(w, op.Constant(value_float=2.0)), ones, axis=1)
    return op.CastLike(op.Conv(features, weights, strides=strides, dilations=dilations), data)


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    et = operands[0].type
    if et is None or et.ov not in TYPES:
        return "general"
    return Convolve(et.ov, attrs["strides"], attrs["pads_begin"], attrs["pads_end"], attrs["dilations"],
                    _bits(attrs["pad_value"]), attrs["auto_pad"]).name


def openvino_node(attrs: dict, inputs: list):
    import openvino as ov
    from openvino import opset1

    data, kernel = inputs
    source = kernel.get_node()
    if source.get_type_name() != "Constant":
        raise ValueError("BinaryConvolution: OpenVINO takes the kernel as a u1 Constant only; this one is computed")
    bits = np.asarray(source.get_data()).astype(bool)
    u1 = ov.op.Constant(ov.Type.u1, ov.Shape(list(bits.shape)), bits.reshape(-1).astype(np.uint8).tolist())
    return opset1.binary_convolution(data, u1, attrs["strides"], attrs["pads_begin"], attrs["pads_end"],
                                     attrs["dilations"], attrs["mode"], attrs["pad_value"], attrs["auto_pad"])


SPEC = OpSpec(
    name="BinaryConvolution",
    inputs=("data", "kernel"),
    min_inputs=2,
    attributes={"strides": Attr("ints"), "pads_begin": Attr("ints"), "pads_end": Attr("ints"),
                "dilations": Attr("ints"), "mode": Attr("string", "xnor-popcount"), "pad_value": Attr("float", 0.0),
                "auto_pad": Attr("string", "explicit")},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=output_shape,
    bodies=Bodies(BinaryConvolution, {"general": BinaryConvolution}, [Convolve]),
    public=BinaryConvolution,
    reference=binary_convolution_reference,
    openvino=openvino_node,
)
