"""Do an IR and an ONNX model belong together: their inputs and outputs (names, element types, dims)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import onnx
import onnx_ir as ir

from onnx_ext.errors import OnnxExtError
from onnx_ext.model import operand
from onnx_ext.types import ElementType, from_ov

from ..ir import IRModel
from ..ir_text import split_names
from .errors import VerifyError


@dataclass(frozen=True)
class Tensor:
    """A graph input or output: its names (an IR port has several), element type and dims."""

    names: tuple[str, ...]
    type: ElementType | None
    dims: tuple | None = None  # ints, or None / a name for a dynamic dim

    @property
    def name(self) -> str:
        return self.names[0] if self.names else "?"


def ir_signature(ir: IRModel) -> tuple[list[Tensor], list[Tensor]]:
    """The IR's inputs (Parameters) and outputs (Results), in the order of the .xml."""
    producers = ir.producers()
    ports = {(layer.id, p.id): p for layer in ir.layers for p in layer.outputs}
    inputs, outputs = [], []
    for layer in ir.layers:
        kind = layer.type.lower()
        if kind == "parameter" and layer.outputs:
            port = layer.outputs[0]
            et = port.element_type or _ov_type(layer.data.get("element_type"))
            inputs.append(Tensor(tuple(port.names) + (layer.name,), et, tuple(port.dims)))
        elif kind == "result" and layer.inputs:
            src = ports.get(producers.get((layer.id, layer.inputs[0].id), (-1, -1)))
            names = (split_names(layer.extra.get("output_names", "")) + (src.names if src else [])
                     + layer.inputs[0].names)
            outputs.append(Tensor(tuple(names) + (layer.name,), src.element_type if src else None))
    return inputs, outputs


def _ov_type(name: str | None) -> ElementType | None:
    try:
        return from_ov(name) if name else None
    except (OnnxExtError, KeyError, ValueError):
        return None


def onnx_signature(model: onnx.ModelProto) -> tuple[list[Tensor], list[Tensor]]:
    inits = {i.name for i in model.graph.initializer}

    def tensor(vi) -> Tensor:
        facts = operand(ir.serde.deserialize_value_info_proto(vi, None))
        return Tensor((vi.name,), facts.type, facts.shape)

    return ([tensor(vi) for vi in model.graph.input if vi.name not in inits],
            [tensor(vi) for vi in model.graph.output])


def check_pair(ir_label: str, ir_inputs: list[Tensor], ir_outputs: list[Tensor], onnx_label: str,
               model: onnx.ModelProto) -> None:
    """Raise VerifyError unless the ONNX model's inputs are the IR's (names and element types)
    and both have as many outputs."""
    onnx_inputs, onnx_outputs = onnx_signature(model)
    where = f"{ir_label} and {onnx_label} do not belong together"

    def names(ts: Sequence[Tensor]) -> str:
        return ", ".join(t.name for t in ts) or "none"

    if len(onnx_inputs) != len(ir_inputs):
        raise VerifyError(f"{where}: the ONNX model has {len(onnx_inputs)} inputs ({names(onnx_inputs)}), "
                          f"the IR {len(ir_inputs)} ({names(ir_inputs)})")
    for t in onnx_inputs:
        match = next((i for i in ir_inputs if t.name in i.names), None)
        if match is None:
            raise VerifyError(f"{where}: ONNX input {t.name!r} is not an input of the IR "
                              f"(IR inputs: {names(ir_inputs)})")
        if t.type and match.type and t.type != match.type:
            raise VerifyError(f"{where}: input {t.name!r} is {t.type.ov} in the ONNX model and {match.type.ov} "
                              "in the IR")
        if _dims_differ(t.dims, match.dims):
            raise VerifyError(f"{where}: input {t.name!r} has shape {_shape(t.dims)} in the ONNX model and "
                              f"{_shape(match.dims)} in the IR")
    if len(onnx_outputs) != len(ir_outputs):
        raise VerifyError(f"{where}: the ONNX model has {len(onnx_outputs)} outputs ({names(onnx_outputs)}), "
                          f"the IR {len(ir_outputs)} ({names(ir_outputs)})")


def _dims_differ(a: tuple | None, b: tuple | None) -> bool:
    """Two static facts that cannot both hold: another rank, or a dim fixed to two different sizes (no dims
    at all can be an IR port of dynamic rank: not compared)."""
    if not a or not b:
        return False
    return len(a) != len(b) or any(isinstance(x, int) and isinstance(y, int) and x != y for x, y in zip(a, b))


def _shape(dims: tuple) -> str:
    return "[" + ", ".join(str(d) if isinstance(d, int) else "?" for d in dims) + "]"
