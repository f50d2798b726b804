"""A folder of seven real models' IR, as a user converts them: ``openvino.convert_model`` given
only ``example_input`` (so every dim OpenVINO can leave dynamic is dynamic: batch, sequence,
image height and width), saved both uncompressed (``<name>-f32.xml``) and with f16 weights
(``<name>-f16.xml``). Random weights, small sizes, nothing downloaded.

The models: torchvision's resnet18, mobilenet_v3_small and squeezenet1_1 (10 classes), a tiny
BERT and a tiny GPT-2 (transformers configs), a small CNN and an LSTM written in torch.
``tests/test_verify_folder.py`` converts and verifies the folder with no option.

CLI: ``python -m tests.real_models.folder OUT_DIR``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .torchvision_cpu import import_torch, import_torchvision

NAMES = ("resnet18", "mobilenet_v3_small", "squeezenet1_1", "bert", "gpt2", "cnn", "lstm")


def _tv(name: str):
    torchvision = import_torchvision()
    torch = import_torch()
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None, num_classes=10).eval()
    return model, torch.from_numpy(np.random.default_rng(1).standard_normal((1, 3, 64, 64)).astype(np.float32))


def _text(kind: str):
    torch = import_torch()  # before transformers, which imports torchvision
    import transformers as tr

    torch.manual_seed(0)
    ids = torch.from_numpy(np.random.default_rng(2).integers(0, 100, (2, 8)))
    mask = torch.ones((2, 8), dtype=torch.int64)
    mask[-1, 6:] = 0
    if kind == "bert":
        config = tr.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                               intermediate_size=64, max_position_embeddings=64, attn_implementation="sdpa")
        return tr.BertModel(config).eval(), {"input_ids": ids, "attention_mask": mask,
                                             "token_type_ids": torch.zeros_like(ids)}
    config = tr.GPT2Config(vocab_size=100, n_positions=64, n_embd=32, n_layer=2, n_head=2, use_cache=False,
                           attn_implementation="sdpa")
    return tr.GPT2LMHeadModel(config).eval(), {"input_ids": ids, "attention_mask": mask}


def _cnn():
    torch = import_torch()
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 5, stride=2), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(3, 2),
                          nn.Conv2d(8, 16, 3, dilation=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(16, 10)).eval()
    return model, torch.from_numpy(np.random.default_rng(3).standard_normal((1, 3, 40, 40)).astype(np.float32))


def _lstm():
    torch = import_torch()
    from torch import nn

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
            self.head = nn.Linear(16, 5)

        def forward(self, x):
            return self.head(self.lstm(x)[0])

    torch.manual_seed(0)
    return Tagger().eval(), torch.from_numpy(np.random.default_rng(4).standard_normal((2, 7, 8)).astype(np.float32))


def build(name: str):
    """The ``openvino.Model`` of one of ``NAMES``, converted from torch with only an example input."""
    import openvino as ov

    torch = import_torch()
    if name in ("resnet18", "mobilenet_v3_small", "squeezenet1_1"):
        model, example = _tv(name)
    elif name in ("bert", "gpt2"):
        model, example = _text(name)
    else:
        model, example = _cnn() if name == "cnn" else _lstm()
    with torch.no_grad():
        return ov.convert_model(model, example_input=example)


def build_folder(out: Path, names=NAMES) -> Path:
    """Every model of ``names`` into ``out`` as ``<name>-f32.xml`` and ``<name>-f16.xml``."""
    import openvino as ov

    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        model = build(name)
        ov.save_model(model.clone(), str(out / f"{name}-f32.xml"), compress_to_fp16=False)
        ov.save_model(model, str(out / f"{name}-f16.xml"), compress_to_fp16=True)
    return out


if __name__ == "__main__":
    print(build_folder(Path(sys.argv[1])))
