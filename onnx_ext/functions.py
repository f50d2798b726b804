"""The ops as onnxscript functions, to call inside your own ``@script`` functions.

    from onnx_ext.functions import Gather
    @script()
    def f(x: FLOAT["N", 8], i: INT64["M"]) -> FLOAT["M", 8]:
        return Gather(x, i, op.Constant(value_int=0))

Calling these ``OnnxFunction`` objects puts their definitions in the model; then
``onnx_ext.attach_functions(model)`` checks the nodes and gives each the body
specialised for its types and attributes.
"""

from .ops import SPECS


def __getattr__(name: str):
    if name in SPECS:
        return SPECS[name].public
    raise AttributeError(f"onnx_ext.functions has no op {name!r} (ops: {', '.join(SPECS)})")


def __dir__():
    return sorted(SPECS)
