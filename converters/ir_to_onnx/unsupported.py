"""IR layer types that have no ONNX equivalent: no standard ONNX op, and no short
composition of them, computes what the OpenVINO op specifies. Every other layer
without a translator is just not translated yet. ``convert.check_supported`` and the
coverage table say which is which.
"""

from __future__ import annotations

_STRINGS = ("a string tensor to or from its UTF-8 bytes (begins, ends, symbols): ONNX has string tensors but "
            "no standard op that reads or writes their bytes (onnxruntime-extensions' custom ops do)")

#: lower-case IR layer type -> why it has no ONNX equivalent (every version).
NO_ONNX_EQUIVALENT: dict[str, str] = {
    "stringtensorpack": _STRINGS,
    "stringtensorunpack": _STRINGS,
}


def no_onnx_equivalent(op_type: str) -> str | None:
    """Why ``op_type`` has no ONNX equivalent, or None when it could be translated."""
    return NO_ONNX_EQUIVALENT.get(op_type.lower())
