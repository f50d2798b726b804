"""The custom ONNX domain that holds the OpenVINO ops, and the standard opset the bodies use."""

from onnxscript import opset21 as op  # noqa: F401  (bodies import `op` from here: one opset for all)
from onnxscript.values import Opset

DOMAIN = "org.openvinotoolkit.onnx_ext"
DOMAIN_VERSION = 1
#: Standard ONNX opset of the function bodies and of the models we write.
ONNX_OPSET = 21
#: The bodies keep their meaning from this opset on (Reshape allowzero, CastLike).
MIN_ONNX_OPSET = 15
#: onnxruntime 1.31 loads opsets up to 26.
MAX_ONNX_OPSET = 26
#: onnxruntime 1.31 loads IR <= 13; overloads need IR >= 10.
IR_VERSION = 10

ov_ext = Opset(DOMAIN, DOMAIN_VERSION)
