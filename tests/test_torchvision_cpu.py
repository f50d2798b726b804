"""tests/real_models/torchvision_cpu.py: torchvision imports on a CPU-only machine, and its NMS
kernel agrees with OpenVINO's NonMaxSuppression-9 (what OpenVINO maps ``torchvision::nms`` to)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

if importlib.util.find_spec("torchvision") is None or importlib.util.find_spec("torch") is None:
    pytest.skip("torchvision is not installed (the `models` extra)", allow_module_level=True)

from real_models import torchvision_cpu  # noqa: E402


def _random_boxes(seed: int, n: int):
    rng = np.random.default_rng(seed)
    corner = rng.uniform(0, 40, (n, 2))
    size = rng.uniform(2, 20, (n, 2))
    boxes = np.concatenate([corner, corner + size], axis=1).astype(np.float32)
    scores = rng.uniform(0.01, 1, n).astype(np.float32)
    return boxes, scores


def _openvino_nms(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float) -> np.ndarray:
    ov = pytest.importorskip("openvino")
    import openvino.opset9 as ops

    b = ops.parameter([1, len(boxes), 4], np.float32)
    s = ops.parameter([1, 1, len(boxes)], np.float32)
    nms = ops.non_max_suppression(b, s, ops.constant(np.int64(len(boxes))), ops.constant(np.float32(iou_threshold)),
                                  ops.constant(np.float32(0.0)), box_encoding="corner", sort_result_descending=True,
                                  output_type="i64")
    compiled = ov.Core().compile_model(ov.Model([nms.output(0), nms.output(2)], [b, s]), "CPU")
    out = compiled([boxes[None], scores[None, None]])
    selected, count = np.asarray(out[0]), int(np.asarray(out[1])[0])
    return selected[:count, 2]


def test_import_torchvision_gives_working_nms():
    tv = torchvision_cpu.import_torchvision()
    import torch

    boxes = torch.tensor([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 10.0]])
    scores = torch.tensor([0.9, 0.95, 0.5, 0.3])
    # box 1 (best) suppresses 0 (IoU 0.68) and 3; box 2 overlaps nothing
    assert tv.ops.nms(boxes, scores, 0.5).tolist() == [1, 2]
    assert tv.ops.nms(boxes, scores, 0.7).tolist() == [1, 0, 2]
    # per class: box 3 is alone in class 1
    assert tv.ops.batched_nms(boxes, scores, torch.tensor([0, 0, 0, 1]), 0.5).tolist() == [1, 2, 3]
    assert torchvision_cpu.import_torchvision() is tv


# Not at iou_threshold 0: torchvision drops a box when IoU > threshold, OpenVINO's NonMaxSuppression-9
# when IoU >= threshold, so there OpenVINO keeps only the best box (disjoint boxes have IoU 0).
@pytest.mark.parametrize("seed, iou", [(0, 0.5), (1, 0.3), (2, 0.7), (3, 0.9)])
def test_nms_kernel_matches_openvino(seed, iou):
    torchvision_cpu.import_torchvision()
    import torch

    boxes, scores = _random_boxes(seed, 60)
    got = torch.ops.torchvision.nms(torch.from_numpy(boxes), torch.from_numpy(scores), iou).numpy()
    np.testing.assert_array_equal(got, _openvino_nms(boxes, scores, iou))
    assert got.dtype == np.int64


def test_nms_kernel_on_no_boxes():
    import torch

    got = torchvision_cpu.nms_cpu(torch.zeros((0, 4)), torch.zeros(0), 0.5)
    assert got.shape == (0,) and got.dtype == torch.int64


def test_import_torch_before_transformers():
    """transformers imports torchvision when it is installed: import_torch makes that import work."""
    torch = torchvision_cpu.import_torch()
    assert torch.ops.torchvision.nms is not None
    transformers = pytest.importorskip("transformers")
    assert transformers.BertConfig(hidden_size=32).hidden_size == 32
    from transformers import BertModel  # the lazy import that fails without the workaround

    assert BertModel is not None


@pytest.mark.parametrize("aligned", [True, False])
def test_roi_align_matches_openvino(aligned):
    """torchvision.ops.roi_align goes to the defined op (traceable) and agrees with OpenVINO's ROIAlign-9."""
    tv = torchvision_cpu.import_torchvision()
    ov = pytest.importorskip("openvino")
    import openvino.opset9 as ops
    import torch

    rng = np.random.default_rng(7)
    data = rng.standard_normal((2, 3, 12, 10)).astype(np.float32)
    boxes, _ = _random_boxes(8, 5)
    boxes = boxes / 4  # inside the 12x10 map at spatial_scale 0.5 mostly, some beyond its edge
    batch = np.array([0, 1, 1, 0, 1], dtype=np.int64)
    rois = np.concatenate([batch[:, None].astype(np.float32), boxes], axis=1)
    got = tv.ops.roi_align(torch.from_numpy(data), torch.from_numpy(rois), (3, 2), spatial_scale=0.5,
                           sampling_ratio=2, aligned=aligned).numpy()

    d = ops.parameter(data.shape, np.float32)
    # torchvision's aligned=True (a half-pixel offset, no minimum roi size) is ROIAlign-9's half_pixel_for_nn
    node = ops.roi_align(d, ops.constant(boxes), ops.constant(batch), 3, 2, 2, 0.5, "avg",
                         aligned_mode="half_pixel_for_nn" if aligned else "asymmetric")
    want = ov.Core().compile_model(ov.Model([node], [d]), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([data])[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert tv.ops.roi_align.__module__ == "torchvision.ops.roi_align"
    assert torch.ops.torchvision.roi_align.default is not None
