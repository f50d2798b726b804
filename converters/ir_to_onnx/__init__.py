"""OpenVINO IR -> ONNX.

``ir_to_onnx(ir)`` turns an ``IRModel`` (see ``converters.ir_reader.read_ir``)
into an ONNX model; ``convert_ir_file(xml, onnx_path)`` reads, converts and
writes atomically. Each IR layer type/version has one translator in a registry
(``registry.translator``); Range-4, Broadcast-1/3, Gather-1/7/8 and StridedSlice-1
become nodes of the onnx-ext domain with their function bodies attached (or
inlined with ``inline=True``), the rest standard ONNX ops.
"""

from . import handlers  # noqa: F401  (registers the translators)
from .convert import check_supported, convert_ir_file, ir_to_onnx, live_layers
from .registry import lookup, supported, translator

__all__ = ["ir_to_onnx", "convert_ir_file", "check_supported", "live_layers", "translator", "lookup", "supported"]
