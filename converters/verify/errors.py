"""verify's error: the comparison could not run."""

from __future__ import annotations

from onnx_ext.errors import OnnxExtError

from .ov_side import ov_message  # noqa: F401 - here for the package's other modules


class VerifyError(OnnxExtError):
    """The comparison could not run: bad inputs, models that do not belong together, a
    runtime that fails. One line naming the file or input and what is wrong."""
