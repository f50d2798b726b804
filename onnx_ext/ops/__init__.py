"""The registry of the domain's ops: one module per op, each exporting ``SPEC``."""

from __future__ import annotations

from importlib import import_module

from ..errors import OnnxExtError
from . import broadcast, gather, range, strided_slice  # noqa: A004 (the Range-4 module)
from .base import Attr, Operand, OpSpec

SPECS: dict[str, OpSpec] = {m.SPEC.name: m.SPEC for m in (gather, range, strided_slice, broadcast)}
# the ops of issue 18, one line each
SPECS["Transpose"] = import_module(".transpose", __package__).SPEC
SPECS["PriorBox"] = import_module(".prior_box", __package__).SPEC
SPECS["PriorBoxClustered"] = import_module(".prior_box_clustered", __package__).SPEC
SPECS["DetectionOutput"] = import_module(".detection_output", __package__).SPEC
SPECS["Proposal"] = import_module(".proposal", __package__).SPEC
SPECS["MulticlassNms"] = import_module(".multiclass_nms", __package__).SPEC
SPECS["MatrixNms"] = import_module(".matrix_nms", __package__).SPEC


def spec(op_type: str) -> OpSpec:
    try:
        return SPECS[op_type]
    except KeyError:
        raise OnnxExtError(f"{op_type!r} is not an op of the onnx-ext domain (it has {', '.join(SPECS)})") from None


__all__ = ["SPECS", "spec", "OpSpec", "Operand", "Attr"]
