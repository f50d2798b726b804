"""ONNX -> OpenVINO IR (model.xml + model.bin), in pure Python.

``onnx_to_ir(model)`` builds an ``IRModel``; ``convert_onnx_file(onnx_path,
xml_path)`` converts in memory, then writes both files atomically
(``converters.ir_writer``). One handler per ONNX op and opset version
(``registry``, handlers in ``handlers/``):

- nodes of the onnx-ext domain become the native OpenVINO ops they stand for,
  not their function bodies (a node's ``overload`` is ignored): Gather ->
  Gather-1/7/8 (``batch_dims``), Range -> Range-4 (``output_type`` as an IR
  name), Broadcast -> Broadcast-1/3 (mode spelled as the node gives it; pdpd's
  axis as ``mode.auto_broadcast_axis`` on Broadcast-1 and ``mode.mode.axis`` on
  Broadcast-3, the spellings save_model writes), StridedSlice -> StridedSlice-1
  (masks as "1, 0");
- standard ONNX ops become their OpenVINO equivalents, If and Loop with nested
  bodies, so a model inlined by ``onnx_ext.inline`` converts too.

Choices and known differences:

- ONNX Range -> Range-4, as OpenVINO's ONNX reader does: Range-4 computes
  start + i*step while onnxruntime's kernel accumulates, so long float ranges
  differ in the last bits.
- Integer Div -> Divide with ``m_pythondiv="false"`` (truncation, as ONNX).
- Broadcast-1 in numpy/pdpd mode without axes_mapping gets the unused u8
  scalar 0 input save_model gives it (pdpd does not load without it).
- StridedSlice masks of different lengths are zero-extended to the longest
  (OpenVINO refuses different lengths; a missing bit is 0 for both).
- Graph inputs -> Parameter (``shape="?,3"`` with ``<dim>-1</dim>`` on the port
  as save_model writes dynamic dims, ``"..."`` for an unknown rank); outputs ->
  Result with ``output_names``; ONNX tensor names go to the ports' ``names``.
- Port dims come from ONNX shape inference (annotations only: OpenVINO infers
  shapes itself on reading); shapes are never folded into constants unless
  declared or constant.
- OpenVINO differs from onnxruntime on a few float edge cases of ops mapped
  one to one: FloorMod (ONNX Mod fmod=0) with infinities gives NaN, ReduceMax
  over an empty axis gives the lowest finite value instead of -inf; signed
  zeros of FloorMod are not kept.
"""

from . import handlers  # noqa: F401  (fills the registry)
from .converter import convert_onnx_file, onnx_to_ir
from .graph import ConversionError, UnsupportedOpsError
from .registry import Handler, handlers as registered_handlers, lookup, register

__all__ = [
    "onnx_to_ir",
    "convert_onnx_file",
    "ConversionError",
    "UnsupportedOpsError",
    "Handler",
    "registered_handlers",
    "lookup",
    "register",
]
