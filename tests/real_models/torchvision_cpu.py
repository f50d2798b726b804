"""Import torchvision where its wheel is a CUDA build and the machine has no CUDA.

torchvision 0.28.0 (the build for torch 2.13.0) on the package index links its
C++ ops against ``libc10_cuda.so``. On a CPU-only machine that library does not
load, the ops are never registered, and ``import torchvision`` then fails in
``torchvision/_meta_registrations.py`` (``operator torchvision::nms does not
exist``). transformers imports torchvision whenever it is installed, so the
same happens there.

``import_torchvision()`` defines ``torchvision::nms`` (the schema the C++
library would register) with a CPU kernel written in torch before the import
(and ``torchvision::qnms``, schema only, which the import also expects),
and lets ``torchvision.ops.nms`` call it. OpenVINO's PyTorch frontend maps the
op to NonMaxSuppression-9 by name, so the kernel only runs while tracing.
``torchvision::roi_align`` is defined the same way, its kernel being
torchvision's own Python fallback without the ``torch.compile`` wrapper around
it (which ``torch.jit.trace``, and so ``openvino.convert_model``, cannot go
through); OpenVINO maps it to ROIAlign. The other C++ ops keep torchvision's
Python fallbacks. Where torchvision's C++ library does load, nothing is changed.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

_LIBRARY = None  # the torch.library.Library that owns the definition: it must stay alive


def nms_cpu(boxes, scores, iou_threshold: float):
    """Greedy NMS, torchvision's semantics: indices of the kept boxes (x1, y1, x2, y2), by decreasing score.

    A box is dropped when its IoU with a kept, higher-scored box is > iou_threshold.
    """
    import torch

    order = torch.argsort(scores, descending=True, stable=True)
    boxes = boxes[order]
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    suppressed = torch.zeros(len(order), dtype=torch.bool)
    keep = []
    for i in range(len(order)):
        if suppressed[i]:
            continue
        keep.append(i)
        top_left = torch.maximum(boxes[i, :2], boxes[:, :2])
        bottom_right = torch.minimum(boxes[i, 2:], boxes[:, 2:])
        inter = (bottom_right - top_left).clamp(min=0).prod(dim=1)
        suppressed |= inter / (area[i] + area - inter) > iou_threshold
    return order[torch.tensor(keep, dtype=torch.long)]


def _define_ops() -> None:
    global _LIBRARY
    import torch

    if _LIBRARY is not None:
        return
    _LIBRARY = torch.library.Library("torchvision", "DEF")  # noqa: TOR901 - kept alive at module level
    _LIBRARY.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    _LIBRARY.impl("nms", nms_cpu, "CPU")
    # torchvision registers a fake kernel for the quantized variant too: the schema must exist
    _LIBRARY.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    _LIBRARY.define("roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
                    "SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor")
    _LIBRARY.impl("roi_align", roi_align_cpu, "CPU")


def roi_align_cpu(input, rois, spatial_scale: float, pooled_height: int, pooled_width: int, sampling_ratio: int,
                  aligned: bool):
    """torchvision's Python RoIAlign (``torchvision.ops.roi_align._roi_align``) without its torch.compile wrapper."""
    module = importlib.import_module("torchvision.ops.roi_align")
    return module._roi_align.__wrapped__(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                                         aligned)


def _ops_defined() -> None:
    """Stands in for torchvision's ``_assert_has_ops`` in ``torchvision.ops.boxes`` (a plain function:
    ``batched_nms`` is scripted while tracing, and TorchScript compiles what it calls)."""
    return None


def _has_ops() -> bool:
    """Stands in for torchvision's ``_has_ops`` in ``torchvision.ops.roi_align``: go to the op."""
    return True


def _has_native_ops() -> bool:
    """Whether torchvision's C++ library loads (then there is nothing to work around)."""
    spec = importlib.util.find_spec("torchvision")
    if spec is None:
        raise ImportError("torchvision is not installed")
    import torch

    try:
        return hasattr(torch.ops.torchvision, "nms")
    except RuntimeError:  # pragma: no cover - depends on torch's op namespace handling
        return False


def import_torchvision():
    """``import torchvision``, working around a CUDA-only build (see the module docstring)."""
    if "torchvision" in sys.modules:
        return sys.modules["torchvision"]
    import torch  # noqa: F401 - torch first: torchvision's extension loads into it

    if not _has_native_ops():
        # the C++ library may still load (a CPU build): try it before defining the ops ourselves
        try:
            torch.ops.load_library(_extension_path())
        except (OSError, RuntimeError, ImportError):
            _define_ops()
    import torchvision
    from torchvision import extension

    boxes = importlib.import_module("torchvision.ops.boxes")
    # the module: the attribute torchvision.ops.roi_align is the function
    roi_align = importlib.import_module("torchvision.ops.roi_align")

    if not extension._has_ops():
        # torchvision.ops.nms and roi_align refuse to run without the C++ library; ours defines their ops
        boxes._assert_has_ops = _ops_defined
        roi_align._assert_has_ops = _ops_defined
        roi_align._has_ops = _has_ops
    return torchvision


def _extension_path() -> str:
    """The path of torchvision's C++ library (``_C.so``), without importing torchvision."""
    import importlib.machinery
    import os

    folder = importlib.util.find_spec("torchvision").submodule_search_locations[0]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(folder, "_C" + suffix)
        if os.path.exists(path):
            return path
    raise ImportError(f"no torchvision _C library in {folder}")


def import_torch():
    """``import torch``, and torchvision through ``import_torchvision`` when it is installed.

    Call it before importing transformers, which imports torchvision if it can find it.
    """
    import torch

    if importlib.util.find_spec("torchvision") is not None:
        import_torchvision()
    return torch
