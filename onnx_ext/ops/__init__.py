"""The registry of the domain's ops: one module per op, each exporting ``SPEC``."""

from __future__ import annotations

from importlib import import_module

import onnx_ir as ir
from onnxscript.values import OnnxFunction

from ..domain import DOMAIN, DOMAIN_VERSION
from ..errors import OnnxExtError
from . import broadcast, gather, range, strided_slice  # noqa: A004 (the Range-4 module)
from .base import Attr, Operand, OpSpec

SPECS: dict[str, OpSpec] = {m.SPEC.name: m.SPEC for m in (gather, range, strided_slice, broadcast)}
# the ops of issue 18, one line each
SPECS["Transpose"] = import_module(".transpose", __package__).SPEC
SPECS.update(import_module(".dft", __package__).SPECS)  # DFT-7, IDFT-7, RDFT-9, IRDFT-9
SPECS["PriorBox"] = import_module(".prior_box", __package__).SPEC
SPECS["PriorBoxClustered"] = import_module(".prior_box_clustered", __package__).SPEC
SPECS["RegionYolo"] = import_module(".region_yolo", __package__).SPEC
SPECS["DetectionOutput"] = import_module(".detection_output", __package__).SPEC
SPECS["PSROIPooling"] = import_module(".psroi_pooling", __package__).SPEC
SPECS["DeformablePSROIPooling"] = import_module(".deformable_psroi_pooling", __package__).SPEC
SPECS["ROIAlignRotated"] = import_module(".roi_align_rotated", __package__).SPEC
SPECS["ExperimentalDetectronPriorGridGenerator"] = import_module(".experimental_detectron.grid_topk", __package__).GRID
SPECS["ExperimentalDetectronTopKROIs"] = import_module(".experimental_detectron.grid_topk", __package__).TOPK
SPECS["ExperimentalDetectronROIFeatureExtractor"] = import_module(".experimental_detectron.features", __package__).SPEC
SPECS["GatherTree"] = import_module(".gather_tree", __package__).SPEC
SPECS.update(import_module(".ctc_greedy_decoder", __package__).SPECS)  # CTCGreedyDecoder-1, CTCGreedyDecoderSeqLen-6
SPECS["RandomUniform"] = import_module(".random_uniform", __package__).SPEC
SPECS["FakeConvert"] = import_module(".fake_convert", __package__).SPEC
SPECS["Multinomial"] = import_module(".multinomial", __package__).SPEC
SPECS["BinaryConvolution"] = import_module(".binary_convolution", __package__).SPEC
SPECS["CTCLoss"] = import_module(".ctc_loss", __package__).SPEC
SPECS["Proposal"] = import_module(".proposal", __package__).SPEC
SPECS["MulticlassNms"] = import_module(".multiclass_nms", __package__).SPEC
SPECS["MatrixNms"] = import_module(".matrix_nms", __package__).SPEC
SPECS["GenerateProposals"] = import_module(".generate_proposals", __package__).SPEC
SPECS["ExperimentalDetectronGenerateProposalsSingleImage"] = import_module(".ed_generate_proposals", __package__).SPEC
SPECS["NMSRotated"] = import_module(".nms_rotated", __package__).SPEC
SPECS["NonMaxSuppression"] = import_module(".non_max_suppression", __package__).SPEC  # soft-NMS, NMS-5/-9
SPECS["ExperimentalDetectronDetectionOutput"] = import_module(".experimental_detectron.detection_output", __package__).SPEC


def _import_the_domain_where_called(fn: OnnxFunction) -> None:
    # onnxscript imports the domain of a function only for calls in its top graph, not inside If/Loop
    # branches (onnxruntime: "No opset registered for domain ... in function _gather_batched_rows").
    if any(n.domain == DOMAIN for n in ir.traversal.RecursiveGraphIterator(fn.function_ir.graph)):
        fn.function_ir.opset_imports.setdefault(DOMAIN, DOMAIN_VERSION)


for _spec in SPECS.values():
    for _fn in (_spec.public, *_spec.helpers):
        _import_the_domain_where_called(_fn)


def spec(op_type: str) -> OpSpec:
    try:
        return SPECS[op_type]
    except KeyError:
        raise OnnxExtError(f"{op_type!r} is not an op of the onnx-ext domain (it has {', '.join(SPECS)})") from None


__all__ = ["SPECS", "spec", "OpSpec", "Operand", "Attr"]
