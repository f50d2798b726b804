"""torchvision models of the matrix: random weights (``weights=None, weights_backbone=None``), small inputs.

Classification and segmentation models take [batch, 3, H, W] with every dim but
the channels dynamic (the two runs use different batch and image sizes), except
the small ViT, whose image size its config fixes. Detection models take one
image [1, 3, H, W] (static): their transform resizes it to a fixed size, and
their outputs after NMS are boxes, scores and labels of data-dependent length.
"""

from __future__ import annotations

import numpy as np

from .torchvision_cpu import import_torch
from .torchvision_cpu import import_torchvision

CLASSES = 10
IMAGE_SHAPES = [(1, 3, 64, 64), (2, 3, 96, 80)]
VIT_SHAPES = [(1, 3, 32, 32), (2, 3, 32, 32)]
DETECTION_SHAPE = (1, 3, 128, 96)


def _image(shape, seed: int) -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(seed).standard_normal(shape).astype(np.float32)}


def image_inputs(index: int) -> dict[str, np.ndarray]:
    return _image(IMAGE_SHAPES[index], 80 + index)


def vit_inputs(index: int) -> dict[str, np.ndarray]:
    return _image(VIT_SHAPES[index], 90 + index)


def detection_inputs(index: int) -> dict[str, np.ndarray]:
    return _image(DETECTION_SHAPE, 95 + index)


def _randomise_batch_norm(model) -> None:
    """Non-trivial batch-norm statistics (fresh ones are mean 0, var 1: folding them would not show)."""
    torch = import_torch()
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm) and mod.running_mean is not None:
                mod.running_mean.copy_(torch.rand(mod.running_mean.shape, generator=gen) - 0.5)
                mod.running_var.copy_(torch.rand(mod.running_var.shape, generator=gen) * 1.5 + 0.5)


def _calibrate_batch_norm(model, images: list[np.ndarray]) -> None:
    """Batch-norm statistics measured on ``images`` (random-weight detectors): with arbitrary
    statistics their activations grow through the network until the class scores saturate,
    and hundreds of anchors tie exactly (TopK and NMS then pick among equal scores in whatever
    order each runtime's rounding gives). Calibrated, the scores are distinct."""
    torch = import_torch()
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in norms:
        m.train()
        m.momentum = None  # a cumulative average over the batch
        m.reset_running_stats()
    with torch.no_grad():
        model([torch.from_numpy(image) for image in images])
    for m in norms:
        m.eval()


def _convert(model, example: np.ndarray, shape: list[int], outputs=None, calibrate: bool = False):
    import openvino as ov

    torch = import_torch()
    model = model.eval()
    if calibrate:
        rng = np.random.default_rng(7)
        _calibrate_batch_norm(model, [rng.standard_normal(shape[1:]).astype(np.float32) for _ in range(4)])
    else:
        _randomise_batch_norm(model)
    if outputs is not None:
        model = outputs(model)
    with torch.no_grad():
        converted = ov.convert_model(model, example_input=torch.from_numpy(example), input=[("x", shape, ov.Type.f32)])
    converted.inputs[0].get_tensor().set_names({"x"})
    return converted


def _classifier(name: str, **kwargs):
    import_torchvision()
    torch = import_torch()
    from torchvision import models

    torch.manual_seed(0)
    model = getattr(models, name)(weights=None, num_classes=CLASSES, **kwargs)
    return _convert(model, image_inputs(0)["x"], [-1, 3, -1, -1])


def build_resnet18():
    return _classifier("resnet18")


def build_mobilenet_v3_small():
    return _classifier("mobilenet_v3_small")


def build_efficientnet_b0():
    return _classifier("efficientnet_b0")


def build_regnet_y_400mf():
    return _classifier("regnet_y_400mf")


def build_convnext_tiny():
    return _classifier("convnext_tiny")


def build_shufflenet_v2_x0_5():
    return _classifier("shufflenet_v2_x0_5")


def build_squeezenet1_1():
    return _classifier("squeezenet1_1")


def build_densenet121():
    return _classifier("densenet121")


def build_swin_t():
    return _classifier("swin_t")


def build_vit_small():
    """torchvision's VisionTransformer (the vit_b_16 class) at 2 layers, hidden 32, 32x32 images."""
    import_torchvision()
    torch = import_torch()
    from torchvision.models.vision_transformer import VisionTransformer

    torch.manual_seed(0)
    model = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
                              num_classes=CLASSES)
    with torch.no_grad():  # torchvision zero-initialises the head: the output would be all zeros
        torch.nn.init.normal_(model.heads.head.weight, std=0.2)
        torch.nn.init.normal_(model.heads.head.bias, std=0.1)
    return _convert(model, vit_inputs(0)["x"], [-1, 3, 32, 32])


def _segmentation(name: str):
    import_torchvision()
    torch = import_torch()
    from torchvision.models import segmentation

    class Out(torch.nn.Module):  # the dict's "out" tensor
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x)["out"]

    torch.manual_seed(0)
    model = getattr(segmentation, name)(weights=None, weights_backbone=None, num_classes=CLASSES)
    return _convert(model, image_inputs(0)["x"], [-1, 3, -1, -1], outputs=Out)


def build_lraspp_mobilenet_v3_large():
    return _segmentation("lraspp_mobilenet_v3_large")


def build_deeplabv3_mobilenet_v3_large():
    return _segmentation("deeplabv3_mobilenet_v3_large")


def build_fcn_resnet50():
    return _segmentation("fcn_resnet50")


def _detection(name: str, **kwargs):
    import_torchvision()
    torch = import_torch()
    from torchvision.models import detection

    class Boxes(torch.nn.Module):  # one image in, (boxes, scores, labels) out
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            out = self.inner([x[0]])[0]
            return out["boxes"], out["scores"], out["labels"]

    torch.manual_seed(0)
    model = getattr(detection, name)(weights=None, weights_backbone=None, num_classes=CLASSES, **kwargs)
    return _convert(model, detection_inputs(0)["x"], list(DETECTION_SHAPE), outputs=Boxes, calibrate=True)


def build_ssdlite320_mobilenet_v3_large():
    return _detection("ssdlite320_mobilenet_v3_large", detections_per_img=50, topk_candidates=100)


def build_fasterrcnn_mobilenet_v3_large_320_fpn():
    return _detection("fasterrcnn_mobilenet_v3_large_320_fpn", box_detections_per_img=50,
                      rpn_pre_nms_top_n_test=100, rpn_post_nms_top_n_test=50)


def build_retinanet_resnet50_fpn():
    # Its head starts at the prior score 0.01 (below the default threshold 0.05): with random
    # weights nothing would be detected.
    return _detection("retinanet_resnet50_fpn", detections_per_img=50, topk_candidates=100, min_size=128, max_size=160,
                      score_thresh=0.001)


def build_fcos_resnet50_fpn():
    # Anchor-free (per-pixel boxes, centerness); like RetinaNet its head starts at the prior score 0.01
    return _detection("fcos_resnet50_fpn", detections_per_img=50, topk_candidates=100, min_size=128, max_size=160,
                      score_thresh=0.001)


FLOW_SHAPE = (1, 3, 128, 128)  # RAFT's correlation pyramid needs H, W >= 128


def flow_inputs(index: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(97 + index)
    return {name: rng.standard_normal(FLOW_SHAPE).astype(np.float32) for name in ("image1", "image2")}


def build_raft_small():
    """Optical flow: a correlation volume, grid_sample lookups and 3 refinement iterations (the last flow out)."""
    import openvino as ov

    import_torchvision()
    torch = import_torch()
    from torchvision.models import optical_flow

    class Flow(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, image1, image2):
            return self.inner(image1, image2, num_flow_updates=3)[-1]

    torch.manual_seed(0)
    model = optical_flow.raft_small(weights=None).eval()
    _randomise_batch_norm(model)
    feeds = flow_inputs(0)
    with torch.no_grad():
        converted = ov.convert_model(Flow(model), example_input=tuple(torch.from_numpy(feeds[n]) for n in feeds),
                                     input=[(n, list(FLOW_SHAPE), ov.Type.f32) for n in feeds])
    for port, name in zip(converted.inputs, feeds):
        port.get_tensor().set_names({name})
    return converted
