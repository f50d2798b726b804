"""The OpenVINO ops of issue 18's detection set, built from a node of the domain (``openvino.py`` registers one
builder per op): NodeFactory of the op's opset with OpenVINO's attribute spellings (booleans as booleans)."""

from __future__ import annotations


def _factory(opset: int, op_type: str, inputs, attrs: dict):
    from openvino.utils.node_factory import NodeFactory

    return NodeFactory(f"opset{opset}").create(op_type, inputs, attrs)


def _booleans(attrs: dict, names) -> dict:
    return {k: bool(v) if k in names else v for k, v in attrs.items()}


def prior_box(attrs, inputs):
    from .ops.prior_box.template import BOOLEANS

    version = attrs["version"]
    native = _booleans({k: v for k, v in attrs.items() if k != "version"}, BOOLEANS)
    if version == 1:
        del native["min_max_aspect_ratios_order"]
    return _factory(version, "PriorBox", inputs, native)


def prior_box_clustered(attrs, inputs):
    # OpenVINO's IR and node attributes: width, height, clip, step, step_w, step_h, offset, variance
    return _factory(1, "PriorBoxClustered", inputs, _booleans(attrs, ("clip",)))


def region_yolo(attrs, inputs):
    return _factory(1, "RegionYolo", inputs, _booleans(attrs, ("do_softmax",)))


def psroi_pooling(attrs, inputs):
    return _factory(1, "PSROIPooling", inputs, attrs)


def deformable_psroi_pooling(attrs, inputs):
    return _factory(1, "DeformablePSROIPooling", inputs, attrs)


def roi_align_rotated(attrs, inputs):
    return _factory(15, "ROIAlignRotated", inputs, _booleans(attrs, ("clockwise_mode",)))


def prior_grid_generator(attrs, inputs):
    return _factory(6, "ExperimentalDetectronPriorGridGenerator", inputs, _booleans(attrs, ("flatten",)))


def topk_rois(attrs, inputs):
    return _factory(6, "ExperimentalDetectronTopKROIs", inputs, attrs)


def roi_feature_extractor(attrs, inputs):
    return _factory(6, "ExperimentalDetectronROIFeatureExtractor", inputs, _booleans(attrs, ("aligned",)))
