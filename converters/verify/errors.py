"""verify's error: the comparison could not run."""

from __future__ import annotations

from onnx_ext.errors import OnnxExtError


class VerifyError(OnnxExtError):
    """The comparison could not run: bad inputs, models that do not belong together, a
    runtime that fails. One line naming the file or input and what is wrong."""


def ov_message(e: BaseException) -> str:
    """The informative line of an OpenVINO error (its text is a C++ trace of "Exception from" lines)."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip() and not ln.strip().startswith("Exception from")]
    return lines[-1] if lines else type(e).__name__
