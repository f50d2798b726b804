"""OpenVINO's ONNX frontend with the domain: each node becomes the native op it stands for.

``openvino_extensions()`` gives one ``openvino.frontend.onnx.ConversionExtension``
per op of the domain; the frontend calls it instead of reading the node's function
body (when the model carries one), so the model gets Range-4, Broadcast-1/3,
Gather-1/7/8 and StridedSlice-1 with the node's attributes and ``version``::

    ov.convert_model("m.onnx", extension=onnx_ext.openvino_extensions())
    core.add_extension(onnx_ext.openvino_extensions()); core.read_model("m.onnx")

Attribute names, defaults and checks come from the op's ``OpSpec`` (``SPECS``).
What is OpenVINO's own spelling lives here: pdpd's axis is the attribute visitor's
path (``mode.auto_broadcast_axis`` in Broadcast-1, ``mode.mode.axis`` in
Broadcast-3); Broadcast-1 always has an ``axes_mapping`` input (an unused u8 0
where none is given, as its C++ constructor adds); a StridedSlice without
``stride`` gets ones, as its C++ constructor does.
"""

from __future__ import annotations

import numpy as np

from . import openvino_detection as detection
from .domain import DOMAIN
from .errors import OnnxExtError
from .ops import SPECS, Operand
from .ops.strided_slice import MASKS, extended_masks
from .types import from_onnx

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
    return _BUILDERS.get(op_type) or SPECS[op_type].openvino


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


def _range(attrs, inputs):
    from openvino import Type
    from openvino.opset4.ops import range as range4  # openvino.opset4.range is Range-1

    return range4(*inputs, output_type=getattr(Type, from_onnx(attrs["output_type"]).ov))


def _broadcast(attrs, inputs):
    from openvino import opset1
    from openvino.utils.node_factory import NodeFactory

    version, mode = attrs["version"], attrs["mode"]
    params = {"mode": mode}
    if mode == "pdpd":
        params["mode.auto_broadcast_axis" if version == 1 else "mode.mode.axis"] = attrs["axis"]
    if version == 1 and len(inputs) == 2:
        inputs = [*inputs, opset1.constant(np.uint8(0)).output(0)]
    return NodeFactory(f"opset{version}").create("Broadcast", inputs, params)


def _gather(attrs, inputs):
    from openvino import opset1, opset7, opset8

    if attrs["version"] == 1:
        return opset1.gather(*inputs)
    return {7: opset7, 8: opset8}[attrs["version"]].gather(*inputs, batch_dims=attrs["batch_dims"])


def _strided_slice(attrs, inputs):
    from openvino import opset1

    data, begin, end, *stride = inputs
    stride = stride[0] if stride else _ones_like(begin)
    return opset1.strided_slice(data, begin, end, stride, **native_masks(attrs, _length(begin)))


def native_masks(attrs: dict, num_entries: int | None) -> dict[str, list[int]]:
    """StridedSlice-1's masks as OpenVINO's node takes them. Kept as written where the node
    accepts them (begin_mask and end_mask of one length, the other masks empty or of that
    length); else each is zero-extended or cut to ``num_entries`` (len(begin); the longest
    mask when it is unknown: bits beyond begin are ignored). An ellipsis bit clears the
    new-axis and shrink bits at its index (the ellipsis wins, as in OpenVINO's shape
    inference; its ``evaluate`` would otherwise disagree)."""
    masks = {k: [int(b) for b in attrs[k]] for k in MASKS}
    n = len(masks["begin_mask"])
    if len(masks["end_mask"]) != n or any(len(masks[k]) not in (0, n) for k in MASKS[2:]):
        n = num_entries if num_entries is not None else max(len(v) for v in masks.values())
        masks = {k: [int(b) for b in v] for k, v in extended_masks(attrs, n).items()}
    for i, bit in enumerate(masks["ellipsis_mask"]):
        for k in ("new_axis_mask", "shrink_axis_mask"):
            if bit and i < len(masks[k]):
                masks[k][i] = 0
    return masks


def _length(vector) -> int | None:
    shape = vector.get_partial_shape()
    return shape[0].get_length() if shape.rank.is_static and len(shape) == 1 and shape[0].is_static else None


def _ones_like(begin):
    # What StridedSlice-1's C++ constructor gives a node without strides.
    from openvino import opset1, opset3

    n = _length(begin)
    if n is not None:
        return opset1.constant(np.ones(n, np.int64)).output(0)
    return opset3.broadcast(opset1.constant(np.int64(1)), opset3.shape_of(begin)).output(0)


_BUILDERS = {"Range": _range, "Broadcast": _broadcast, "Gather": _gather, "StridedSlice": _strided_slice}
# the ops of issue 18, one line each
_BUILDERS["PriorBox"] = detection.prior_box
_BUILDERS["PriorBoxClustered"] = detection.prior_box_clustered
_BUILDERS["RegionYolo"] = detection.region_yolo
_BUILDERS["PSROIPooling"] = detection.psroi_pooling
_BUILDERS["DeformablePSROIPooling"] = detection.deformable_psroi_pooling
_BUILDERS["ROIAlignRotated"] = detection.roi_align_rotated
_BUILDERS["ExperimentalDetectronPriorGridGenerator"] = detection.prior_grid_generator
_BUILDERS["ExperimentalDetectronTopKROIs"] = detection.topk_rois
_BUILDERS["ExperimentalDetectronROIFeatureExtractor"] = detection.roi_feature_extractor
