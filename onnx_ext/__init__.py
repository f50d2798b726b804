"""OpenVINO's Range-4, Broadcast-1/3, Gather-8 and StridedSlice-1 as ONNX functions.

The ops live in the custom domain ``DOMAIN``; each has an onnxscript function
(call it inside your own ``@script`` functions), a numpy reference and checks.
``attach_functions`` gives a model the bodies its nodes need; ``inline`` turns it
into plain standard ONNX. Importing the package registers the ops' ONNX schemas, so that
``onnx.shape_inference`` and ``onnx.checker`` handle their nodes without bodies.
"""

from .domain import DOMAIN, DOMAIN_VERSION, IR_VERSION, ONNX_OPSET, ov_ext
from .errors import OnnxExtError, OpAttributeError, OpInputError
from .model import attach_functions, function_protos, inline, make_node, node_attributes
from .openvino import openvino_extensions
from .ops import SPECS, Operand
from .reference import OP_RUN_CLASSES, reference_evaluator
from .runtime import run, session
from .schemas import register as _register_schemas

_register_schemas()  # onnx's shape inference and checker then know the ops (see schemas.py)

__version__ = "0.1.0"

__all__ = [
    "DOMAIN",
    "DOMAIN_VERSION",
    "IR_VERSION",
    "ONNX_OPSET",
    "ov_ext",
    "OnnxExtError",
    "OpAttributeError",
    "OpInputError",
    "attach_functions",
    "function_protos",
    "inline",
    "make_node",
    "node_attributes",
    "openvino_extensions",
    "SPECS",
    "Operand",
    "OP_RUN_CLASSES",
    "reference_evaluator",
    "run",
    "session",
]
