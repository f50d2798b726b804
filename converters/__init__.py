"""Converters between OpenVINO IR (model.xml + model.bin) and ONNX, and their verification.

The Python API (the ``onnx-ext`` command is a thin layer over it):

- ``convert(src, dst, *, inline=False, verify=False, ...)``: a file or an in-memory
  ``openvino.Model`` to a file; the suffixes give the direction.
- ``ir_to_onnx(model, *, inline=False)``: an ``openvino.Model``, .xml path or ``IRModel``
  to an ``onnx.ModelProto``, nothing written.
- ``verify(ir, onnx, *, inputs=None, seed=0, ..., backend=None)``: run both and compare;
  returns a ``VerifyReport``.

Errors are ``OnnxExtError`` / ``IRError`` subclasses with a one-line message. The
function names ``ir_to_onnx`` and ``verify`` shadow the subpackage and module of the
same names as attributes of ``converters``; import their contents with
``from converters.ir_to_onnx import ...`` / ``from converters.verify import ...``.
"""

# The subpackage and module first, so that the functions bound below stay bound.
from . import ir_to_onnx as _ir_to_onnx_package  # noqa: F401
from . import verify as _verify_module  # noqa: F401
from onnx_ext.errors import OnnxExtError

from .api import Conversion, ConvertError, convert, ir_to_onnx
from .ir import IRError
from .verify import OutputReport, VerifyError, VerifyReport, verify

__version__ = "0.1.0"

__all__ = ["convert", "ir_to_onnx", "verify", "Conversion", "VerifyReport", "OutputReport",
           "OnnxExtError", "IRError", "ConvertError", "VerifyError", "__version__"]
