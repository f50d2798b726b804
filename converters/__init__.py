"""Converters between OpenVINO IR (model.xml + model.bin) and ONNX, and their verification.

The Python API (the ``onnx-ext`` command is a thin layer over it):

- ``convert(src, dst, *, inline=False, verify=False, ...)``: a file or an in-memory
  ``openvino.Model`` to a file; the suffixes give the direction.
- ``convert_all(sources, dst, *, jobs=1, ...)``: every model of a directory (or files) into a
  directory, one ``FileResult`` per file; a bad file does not stop the others.
- ``ir_to_onnx(model, *, inline=False)``: an ``openvino.Model``, .xml path or ``IRModel``
  to an ``onnx.ModelProto``, nothing written.
- ``verify(ir, onnx_model, *, inputs=None, seed=0, ..., backend=None)``: run both and compare;
  returns a ``VerifyReport``.

Errors are ``OnnxExtError`` subclasses (``IRError``, ``ConvertError``, ``VerifyError``) with a
one-line message, or ``OSError`` (``FileNotFoundError`` for a missing file). The function names
``ir_to_onnx`` and ``verify`` shadow the subpackage and module of the same names as attributes of
``converters``; import their contents with ``from converters.ir_to_onnx import ...`` /
``from converters.verify import ...``.

The names are imported on first use (``import converters`` loads neither onnx nor the
translators), so that the command starts fast.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_EXPORTS = {
    "convert": ".api", "convert_all": ".api", "FileResult": ".api", "ir_to_onnx": ".api", "Conversion": ".api", "ConvertError": ".api",
    "verify": ".verify", "VerifyReport": ".verify", "OutputReport": ".verify", "VerifyError": ".verify",
    "IRError": ".ir", "OnnxExtError": "onnx_ext.errors",
}

__all__ = ["convert", "convert_all", "ir_to_onnx", "verify", "Conversion", "FileResult", "VerifyReport", "OutputReport",
           "OnnxExtError", "IRError", "ConvertError", "VerifyError", "__version__"]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'converters' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__ if module.startswith(".") else None), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


class _Package(ModuleType):
    """Importing the subpackage ``converters.ir_to_onnx`` or the module ``converters.verify`` binds
    its name on this package; the functions of those names keep it."""

    def __setattr__(self, name: str, value) -> None:
        if name in ("ir_to_onnx", "verify") and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
