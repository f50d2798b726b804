"""OpenVINO's ONNX frontend with the domain: each node becomes the native op it stands for.

``openvino_extensions()`` gives one ``openvino.frontend.onnx.ConversionExtension``
per op of the domain; the frontend calls it instead of reading the node's function
body (when the model carries one), so the model gets Range-4, Broadcast-1/3,
Gather-1/7/8 and StridedSlice-1 with the node's attributes and ``version``::

    ov.convert_model("m.onnx", extension=onnx_ext.openvino_extensions())
    core.add_extension(onnx_ext.openvino_extensions()); core.read_model("m.onnx")

Attribute names, defaults and checks come from the op's ``OpSpec`` (``SPECS``), and so
does the native node: ``OpSpec.openvino``, written beside the op with OpenVINO's own
spellings (one registry of builders).
"""

from __future__ import annotations

from .domain import DOMAIN
from .errors import OnnxExtError
from .ops import SPECS, Operand

INSTALL_HINT = "openvino is not installed: pip install 'onnx-ext[openvino]'"


def openvino_extensions() -> list:
    """A ``ConversionExtension`` for each op of the domain, for ``openvino.convert_model(...,
    extension=...)`` or ``openvino.Core.add_extension``."""
    try:
        from openvino.frontend.onnx import ConversionExtension
    except ImportError:
        raise OnnxExtError(INSTALL_HINT) from None
    return [ConversionExtension(name, DOMAIN, _converter(name)) for name in SPECS]


def native_builder(op_type: str):
    """(normalised attributes, OpenVINO inputs) -> the native OpenVINO node of the domain's op ``op_type``."""
    return SPECS[op_type].openvino


def _converter(op_type: str):
    spec = SPECS[op_type]
    build = native_builder(op_type)

    def convert(ctx):
        inputs = [ctx.get_input(i) for i in range(ctx.get_input_size())]
        while inputs and inputs[-1].get_node().get_type_name() == "NullNode":  # an absent optional input ("")
            inputs.pop()
        attrs = spec.normalize({name: ctx.get_attribute(name) for name in spec.attributes if ctx.has_attribute(name)})
        spec.check_inputs(attrs, [Operand()] * len(inputs))  # the count, and which inputs the mode takes
        return build(attrs, inputs).outputs()

    return convert
