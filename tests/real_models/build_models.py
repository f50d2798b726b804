"""Real networks with random weights, converted to OpenVINO IR by OpenVINO itself.

Nothing is downloaded: every model is built from a config (``transformers``) or
from code (torch, TensorFlow) with a fixed seed, then converted with
``openvino.convert_model`` and saved with ``openvino.save_model`` both with and
without f16 weight compression. The IR files go into a cache directory; nothing
binary is committed.

Models (``MODELS``):

- ``bert``: ``transformers.BertModel``; inputs input_ids, attention_mask,
  token_type_ids, all [batch, seq] dynamic.
- ``gpt2``: ``transformers.GPT2LMHeadModel`` (causal attention, no KV cache);
  inputs input_ids, attention_mask, [batch, seq] dynamic.
- ``resnet``: a ResNet-style CNN written in torch (basic residual blocks with
  batch norm, a squeeze-excitation gate, max pool, global average pool, a
  linear head); input [batch, 3, height, width] dynamic.
- ``tf``: a TensorFlow ``tf.Module`` with strided slices (ellipsis, new-axis,
  shrink masks), ``tf.range``, ``tf.gather`` with ``batch_dims``,
  ``tf.broadcast_to``, ``tf.einsum`` and Keras dense and layer-norm layers;
  inputs x [batch, time, 8] and idx [batch, k], dynamic.

Each comes in two sizes: ``small`` (CI) and ``large`` (tests marked slow).

The matrix (issue 10) adds one size of each of: torchvision classification,
segmentation and detection models (``tv_models.py``), transformers models from
tiny configs (``hf_models.py``) and Keras applications (``keras_models.py``);
``MODELS`` marks the ones beyond the default set ``slow``. torchvision is
imported through ``torchvision_cpu.py`` (its wheel is a CUDA build).

CLI::

    python -m tests.real_models.build_models --out /tmp/ir [--size large] [--only bert,tf]

builds the IR and prints, per IR file, the layer types/versions with counts.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import json
import os
import sys
import time
import xml.etree.ElementTree as ET  # noqa: S405 - our own files, written by OpenVINO
from pathlib import Path
from typing import Callable

import numpy as np

from . import hf_models as hf
from . import keras_models as keras
from . import tv_models as tv
from .torchvision_cpu import import_torch

SIZES = ("small", "large")
COMPRESSIONS = {"f32": False, "f16": True}  # IR flavour -> compress_to_fp16


@dataclasses.dataclass
class ModelInfo:
    name: str
    needs: tuple[str, ...]  # importable modules it needs (for pytest.importorskip)
    build: Callable[[str], object]  # size -> openvino.Model
    inputs: Callable[[str, int], dict[str, np.ndarray]]  # (size, shape index) -> feeds
    shapes: int = 2  # how many input shapes the tests run
    sizes: tuple[str, ...] = SIZES
    slow: bool = False  # the small size too runs only with -m slow
    family: str = ""  # what the matrix groups it under (README)
    rtol: float = 1e-4
    atol: float = 1e-5
    detections: bool = False  # outputs (boxes, scores, labels) after NMS: compared as sorted rows
    domain_ops: bool = False  # the ONNX model must use onnx-ext's domain


def matrix_model(name: str, family: str, needs: tuple[str, ...], build: Callable[[], object],
                 inputs: Callable[[int], dict[str, np.ndarray]], **kwargs) -> ModelInfo:
    """A model of the matrix: one size ("small"), built and fed by size-less functions."""
    return ModelInfo(name, needs, lambda size: build(), lambda size, index: inputs(index), sizes=("small",),
                     family=family, **kwargs)


# --------------------------------------------------------------------------- BERT

_BERT = {
    "small": dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=64, max_position_embeddings=64, type_vocab_size=2),
    "large": dict(vocab_size=8000, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                  intermediate_size=1024, max_position_embeddings=512, type_vocab_size=2),
}
_SEQ_SHAPES = {"small": [(2, 8), (3, 13)], "large": [(2, 64), (4, 128)]}


def _ov():
    import openvino as ov

    return ov


def _text_inputs(vocab: int, size: str, index: int, token_types: bool) -> dict[str, np.ndarray]:
    batch, seq = _SEQ_SHAPES[size][index]
    rng = np.random.default_rng(100 + index)
    feeds = {"input_ids": rng.integers(0, vocab, (batch, seq), dtype=np.int64)}
    mask = np.ones((batch, seq), dtype=np.int64)
    mask[-1, seq - seq // 3:] = 0  # the last sequence is padded at the end
    feeds["attention_mask"] = mask
    if token_types:
        types = np.zeros((batch, seq), dtype=np.int64)
        types[:, seq // 2:] = 1
        feeds["token_type_ids"] = types
    return feeds


def build_bert(size: str = "small"):
    torch = import_torch()  # before transformers, which imports torchvision
    from transformers import BertConfig, BertModel

    ov = _ov()
    torch.manual_seed(0)
    cfg = BertConfig(**_BERT[size], attn_implementation="sdpa")
    model = BertModel(cfg).eval()
    example = {k: torch.from_numpy(v) for k, v in bert_inputs(size, 0).items()}
    names = list(example)
    with torch.no_grad():
        return ov.convert_model(model, example_input=example,
                                input=[(n, [-1, -1], ov.Type.i64) for n in names])


def bert_inputs(size: str, index: int) -> dict[str, np.ndarray]:
    return _text_inputs(_BERT[size]["vocab_size"], size, index, token_types=True)


# --------------------------------------------------------------------------- GPT-2

_GPT2 = {
    "small": dict(vocab_size=100, n_positions=64, n_embd=32, n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0),
    "large": dict(vocab_size=8000, n_positions=512, n_embd=256, n_layer=4, n_head=4, bos_token_id=0, eos_token_id=0),
}


def build_gpt2(size: str = "small"):
    torch = import_torch()
    from transformers import GPT2Config, GPT2LMHeadModel

    ov = _ov()
    torch.manual_seed(0)
    cfg = GPT2Config(**_GPT2[size], use_cache=False, attn_implementation="sdpa")
    model = GPT2LMHeadModel(cfg).eval()

    class Logits(torch.nn.Module):  # plain tensor output, no cache
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits

    example = {k: torch.from_numpy(v) for k, v in gpt2_inputs(size, 0).items()}
    with torch.no_grad():
        return ov.convert_model(Logits(model).eval(), example_input=example,
                                input=[(n, [-1, -1], ov.Type.i64) for n in example])


def gpt2_inputs(size: str, index: int) -> dict[str, np.ndarray]:
    return _text_inputs(_GPT2[size]["vocab_size"], size, index, token_types=False)


# --------------------------------------------------------------------------- ResNet-style CNN

_RESNET = {
    "small": dict(stem=8, widths=(8, 16, 32), classes=10),
    "large": dict(stem=64, widths=(64, 128, 256, 512), classes=1000),
}
_IMAGE_SHAPES = {"small": [(1, 3, 32, 32), (2, 3, 48, 40)], "large": [(1, 3, 224, 224), (2, 3, 160, 192)]}


def build_resnet(size: str = "small"):
    torch = import_torch()
    from torch import nn

    ov = _ov()

    class Block(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int, se: bool):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
            # squeeze-excitation gate (SE-ResNet)
            self.se = nn.Sequential(nn.Conv2d(cout, max(cout // 4, 4), 1), nn.ReLU(),
                                    nn.Conv2d(max(cout // 4, 4), cout, 1), nn.Sigmoid()) if se else None

        def forward(self, x):
            y = torch.relu(self.b1(self.c1(x)))
            y = self.b2(self.c2(y))
            if self.se is not None:
                y = y * self.se(y.mean((2, 3), keepdim=True))
            return torch.relu(y + (x if self.down is None else self.down(x)))

    cfg = _RESNET[size]

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, cfg["stem"], 7, 2, 3, bias=False), nn.BatchNorm2d(cfg["stem"]),
                                      nn.ReLU(), nn.MaxPool2d(3, 2, 1))
            blocks, cin = [], cfg["stem"]
            for i, w in enumerate(cfg["widths"]):
                blocks.append(Block(cin, w, 1 if i == 0 else 2, se=False))
                blocks.append(Block(w, w, 1, se=i == len(cfg["widths"]) - 1))
                cin = w
            self.layers = nn.Sequential(*blocks)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(cin, cfg["classes"])

        def forward(self, x):
            return self.fc(torch.flatten(self.pool(self.layers(self.stem(x))), 1))

    torch.manual_seed(0)
    model = Net().eval()
    with torch.no_grad():  # non-trivial batch-norm statistics, so folding them matters
        for mod in model.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 2.0)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.2, 0.2)
        example = torch.from_numpy(resnet_inputs(size, 0)["x"])
        return ov.convert_model(model, example_input=example, input=[("x", [-1, 3, -1, -1], ov.Type.f32)])


def resnet_inputs(size: str, index: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(200 + index)
    return {"x": rng.standard_normal(_IMAGE_SHAPES[size][index]).astype(np.float32)}


# --------------------------------------------------------------------------- torch sequence layers

_SEQ_FEATURES = 8
_RNN_SHAPES = [(2, 5), (3, 9)]  # (batch, time)


def build_torch_seq():
    """torch.nn layers users write: a 2-layer bidirectional LSTM and a GRU (batch_first), a
    TransformerDecoder layer with a causal mask over the RNN's output; dynamic batch and time.
    OpenVINO makes them LSTMSequence-5 / GRUSequence-5 and scaled_dot_product_attention (2026-11-28 hunt)."""
    ov = _ov()
    torch = import_torch()
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(_SEQ_FEATURES, 12, num_layers=2, bidirectional=True, batch_first=True)
            self.gru = nn.GRU(24, 16, batch_first=True)
            self.decoder = nn.TransformerDecoderLayer(16, 2, 32, dropout=0.0, batch_first=True)

        def forward(self, x):
            seq, (h, _) = self.lstm(x)
            seq, _ = self.gru(seq)
            mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1])
            return self.decoder(seq, seq, tgt_mask=mask, tgt_is_causal=True), h

    torch.manual_seed(0)
    model = Net().eval()
    with torch.no_grad():
        example = torch.from_numpy(torch_seq_inputs(0)["x"])
        return ov.convert_model(model, example_input=example, input=[("x", [-1, -1, _SEQ_FEATURES], ov.Type.f32)])


def torch_seq_inputs(index: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(300 + index)
    return {"x": rng.standard_normal((*_RNN_SHAPES[index], _SEQ_FEATURES)).astype(np.float32)}


# --------------------------------------------------------------------------- TensorFlow

_TF = {
    "small": dict(features=8, hidden=16, out=4),
    "large": dict(features=64, hidden=256, out=32),
}
_TF_SHAPES = {"small": [(2, 5, 3), (3, 9, 6)], "large": [(4, 64, 16), (8, 128, 40)]}  # (batch, time, k)


def build_tf(size: str = "small"):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # no oneDNN / CPU-feature banners
    import tensorflow as tf

    ov = _ov()
    cfg = _TF[size]
    f, hid, out = cfg["features"], cfg["hidden"], cfg["out"]
    tf.keras.utils.set_random_seed(0)

    class Net(tf.Module):
        def __init__(self):
            super().__init__()
            g = tf.random.Generator.from_seed(0)
            self.w1 = tf.Variable(g.normal([f, hid], stddev=f ** -0.5))
            self.b1 = tf.Variable(g.normal([hid], stddev=0.1))
            self.mix = tf.Variable(g.normal([hid, hid], stddev=hid ** -0.5))
            self.b2 = tf.Variable(g.normal([out], stddev=0.1))
            self.dense = tf.keras.layers.Dense(out, activation="tanh")
            self.norm = tf.keras.layers.LayerNormalization(epsilon=1e-5)
            self.dense.build((None, hid))
            self.norm.build((None, None, hid))

        # autograph off: no Python control flow here, and autograph's conversion of the code
        # it calls depends on what else the process has imported
        @tf.function(input_signature=[tf.TensorSpec([None, None, f], tf.float32, name="x"),
                                      tf.TensorSpec([None, None], tf.int32, name="idx")], autograph=False)
        def __call__(self, x, idx):
            # x[..., tf.newaxis, 1:]: ellipsis and new-axis masks
            shifted = x[..., tf.newaxis, 1:]  # [B, T, 1, F-1]
            h = tf.nn.relu(tf.matmul(x, self.w1) + self.b1)  # [B, T, H]
            steps = tf.range(tf.shape(x)[1])  # [T]
            h = h + tf.cast(steps, tf.float32)[:, tf.newaxis] * 0.01
            h = self.norm(tf.einsum("bth,hk->btk", h, self.mix))
            picked = tf.gather(h, idx, axis=1, batch_dims=1)  # [B, K, H]
            bias = tf.broadcast_to(self.b2, tf.concat([tf.shape(picked)[:-1], [out]], 0))
            y = self.dense(picked) + bias  # [B, K, out]
            last = x[:, -1, ::2]  # shrink-axis mask and a stride
            odd = h[1::2, ..., ::-1]  # ellipsis in the middle, a negative stride
            return {"y": y, "shifted": shifted, "last": last, "odd": odd}

    net = Net()
    return ov.convert_model(net.__call__.get_concrete_function())


def tf_inputs(size: str, index: int) -> dict[str, np.ndarray]:
    batch, time_, k = _TF_SHAPES[size][index]
    rng = np.random.default_rng(300 + index)
    return {"x": rng.standard_normal((batch, time_, _TF[size]["features"])).astype(np.float32),
            "idx": rng.integers(0, time_, (batch, k), dtype=np.int32)}


_NEEDS_TORCH, _NEEDS_HF, _NEEDS_TV, _NEEDS_TF = ("torch",), ("torch", "transformers"), ("torch", "torchvision"), \
    ("tensorflow",)

MODELS: dict[str, ModelInfo] = {
    "bert": ModelInfo("bert", _NEEDS_HF, build_bert, bert_inputs, family="transformers: encoder", domain_ops=True),
    "gpt2": ModelInfo("gpt2", _NEEDS_HF, build_gpt2, gpt2_inputs, family="transformers: decoder", domain_ops=True),
    "resnet": ModelInfo("resnet", _NEEDS_TORCH, build_resnet, resnet_inputs, family="torch: CNN"),
    "tf": ModelInfo("tf", _NEEDS_TF, build_tf, tf_inputs, family="TensorFlow", domain_ops=True),
}

# The matrix (issue 10): the default set covers every family; the rest is marked slow.
_MATRIX = [
    matrix_model("torch_seq", "torch: sequence layers", _NEEDS_TORCH, build_torch_seq, torch_seq_inputs, slow=True),
    # torchvision classification
    matrix_model("tv_mobilenet_v3_small", "torchvision: classification", _NEEDS_TV, tv.build_mobilenet_v3_small,
                 tv.image_inputs),
    matrix_model("tv_vit", "torchvision: classification", _NEEDS_TV, tv.build_vit_small, tv.vit_inputs),
    matrix_model("tv_resnet18", "torchvision: classification", _NEEDS_TV, tv.build_resnet18, tv.image_inputs,
                 slow=True),
    matrix_model("tv_efficientnet_b0", "torchvision: classification", _NEEDS_TV, tv.build_efficientnet_b0,
                 tv.image_inputs, slow=True),
    matrix_model("tv_regnet_y_400mf", "torchvision: classification", _NEEDS_TV, tv.build_regnet_y_400mf,
                 tv.image_inputs, slow=True),
    matrix_model("tv_shufflenet_v2_x0_5", "torchvision: classification", _NEEDS_TV, tv.build_shufflenet_v2_x0_5,
                 tv.image_inputs, slow=True),
    matrix_model("tv_squeezenet1_1", "torchvision: classification", _NEEDS_TV, tv.build_squeezenet1_1,
                 tv.image_inputs, slow=True),
    matrix_model("tv_convnext_tiny", "torchvision: classification", _NEEDS_TV, tv.build_convnext_tiny,
                 tv.image_inputs, slow=True),
    matrix_model("tv_densenet121", "torchvision: classification", _NEEDS_TV, tv.build_densenet121,
                 tv.image_inputs, slow=True),
    matrix_model("tv_swin_t", "torchvision: classification", _NEEDS_TV, tv.build_swin_t, tv.image_inputs, slow=True),
    # torchvision segmentation
    matrix_model("tv_lraspp_mobilenet_v3_large", "torchvision: segmentation", _NEEDS_TV,
                 tv.build_lraspp_mobilenet_v3_large, tv.image_inputs),
    matrix_model("tv_deeplabv3_mobilenet_v3_large", "torchvision: segmentation", _NEEDS_TV,
                 tv.build_deeplabv3_mobilenet_v3_large, tv.image_inputs, slow=True),
    matrix_model("tv_fcn_resnet50", "torchvision: segmentation", _NEEDS_TV, tv.build_fcn_resnet50, tv.image_inputs,
                 atol=5e-5, slow=True),  # ResNet-50's sums: 1.7e-5 apart near 0 on outputs of magnitude 2-4
    # torchvision detection: one static image, outputs after NMS; boxes in pixels, within 1e-3 of one
    matrix_model("tv_ssdlite320_mobilenet_v3_large", "torchvision: detection", _NEEDS_TV,
                 tv.build_ssdlite320_mobilenet_v3_large, tv.detection_inputs, shapes=1, detections=True, atol=1e-3),
    matrix_model("tv_fasterrcnn_mobilenet_v3_large_320_fpn", "torchvision: detection", _NEEDS_TV,
                 tv.build_fasterrcnn_mobilenet_v3_large_320_fpn, tv.detection_inputs, shapes=1, detections=True,
                 atol=1e-3, slow=True),
    matrix_model("tv_retinanet_resnet50_fpn", "torchvision: detection", _NEEDS_TV, tv.build_retinanet_resnet50_fpn,
                 tv.detection_inputs, shapes=1, detections=True, atol=1e-3, slow=True),
    matrix_model("tv_fcos_resnet50_fpn", "torchvision: detection", _NEEDS_TV, tv.build_fcos_resnet50_fpn,
                 tv.detection_inputs, shapes=1, detections=True, atol=1e-3, slow=True),
    # torchvision optical flow: static 128x128 pairs
    matrix_model("tv_raft_small", "torchvision: optical flow", _NEEDS_TV, tv.build_raft_small, tv.flow_inputs,
                 atol=1e-4, slow=True),
    # transformers
    matrix_model("hf_llama", "transformers: decoder", _NEEDS_HF, hf.build_llama, hf.text_inputs),
    matrix_model("hf_qwen2", "transformers: decoder", _NEEDS_HF, hf.build_qwen2, hf.text_inputs, slow=True),
    matrix_model("hf_mistral", "transformers: decoder", _NEEDS_HF, hf.build_mistral, hf.text_inputs, slow=True),
    matrix_model("hf_gemma", "transformers: decoder", _NEEDS_HF, hf.build_gemma, hf.text_inputs, slow=True),
    matrix_model("hf_phi3", "transformers: decoder", _NEEDS_HF, hf.build_phi3, hf.text_inputs, slow=True),
    matrix_model("hf_t5", "transformers: encoder-decoder", _NEEDS_HF, hf.build_t5, hf.seq2seq_inputs),
    matrix_model("hf_bart", "transformers: encoder-decoder", _NEEDS_HF, hf.build_bart, hf.seq2seq_inputs, slow=True),
    matrix_model("hf_whisper", "transformers: speech encoder-decoder", _NEEDS_HF, hf.build_whisper, hf.whisper_inputs),
    matrix_model("hf_wav2vec2", "transformers: speech encoder", _NEEDS_HF, hf.build_wav2vec2, hf.audio_inputs),
    matrix_model("hf_vit", "transformers: vision", _NEEDS_HF, hf.build_vit, hf.image_inputs),
    matrix_model("hf_clip", "transformers: text + vision", _NEEDS_HF, hf.build_clip, hf.clip_inputs),
    matrix_model("hf_distilbert", "transformers: encoder", _NEEDS_HF, hf.build_distilbert, hf.text_inputs, slow=True),
    matrix_model("hf_deberta_v2", "transformers: encoder", _NEEDS_HF, hf.build_deberta_v2, hf.text_inputs, slow=True),
    matrix_model("hf_bloom", "transformers: decoder", _NEEDS_HF, hf.build_bloom, hf.text_inputs, slow=True),
    # Keras
    matrix_model("keras_mobilenet_v3_small", "Keras applications", _NEEDS_TF, keras.build_keras_mobilenet_v3_small,
                 keras.image_inputs),
    matrix_model("keras_efficientnet_b0", "Keras applications", _NEEDS_TF, keras.build_keras_efficientnet_b0,
                 keras.image_inputs, slow=True),
]
MODELS.update((m.name, m) for m in _MATRIX)


# --------------------------------------------------------------------------- IR files


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock (pytest-xdist workers share the cache)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        try:
            import fcntl

            fcntl.flock(fh, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - not on POSIX: no lock
            pass
        yield


def ir_paths(cache: Path, name: str, size: str) -> dict[str, Path]:
    """Compression flavour ("f32", "f16") -> the model.xml path."""
    return {c: Path(cache) / f"{name}-{size}" / c / "model.xml" for c in COMPRESSIONS}


def build_ir(name: str, size: str, cache: Path) -> dict[str, Path]:
    """Build the model (unless the cache has it) and save it both ways; returns ``ir_paths``."""
    ov = _ov()
    paths = ir_paths(cache, name, size)
    with _locked(Path(cache) / f"{name}-{size}.lock"):
        if all(p.exists() and p.with_suffix(".bin").exists() for p in paths.values()):
            return paths
        model = MODELS[name].build(size)
        for flavour, compress in COMPRESSIONS.items():
            paths[flavour].parent.mkdir(parents=True, exist_ok=True)
            # save_model may alter the model it is given: save a clone each time
            ov.save_model(model.clone(), str(paths[flavour]), compress_to_fp16=compress)
    return paths


def layer_inventory(xml_path: Path) -> collections.Counter:
    """(type, version) -> count for every layer of an IR file, sub-graphs included."""
    root = ET.parse(xml_path).getroot()  # noqa: S314 - our own files
    return collections.Counter((layer.get("type"), layer.get("version")) for layer in root.iter("layer"))


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="cache directory for the IR files")
    parser.add_argument("--size", choices=SIZES, default="small")
    parser.add_argument("--only", default=",".join(MODELS), help="comma-separated model names")
    parser.add_argument("--json", type=Path, help="also write the inventory as JSON here")
    args = parser.parse_args(argv)
    report, status = {}, 0
    for name in args.only.split(","):
        if args.size not in MODELS[name].sizes:
            continue
        start = time.perf_counter()
        try:
            paths = build_ir(name, args.size, args.out)
        except Exception as exc:  # noqa: BLE001 - report it and go on with the next model
            print(f"== {name}-{args.size}: FAILED {type(exc).__name__}: {str(exc).splitlines()[0]}")
            status = 1
            continue
        took = time.perf_counter() - start
        print(f"== {name}-{args.size}: {took:.1f} s")
        for flavour, path in paths.items():
            inv = layer_inventory(path)
            report[f"{name}-{args.size}-{flavour}"] = {f"{t}-{v}": n for (t, v), n in sorted(inv.items())}
            print(f"  {flavour}: {path}  ({sum(inv.values())} layers)")
            print("    " + ", ".join(f"{t}-{v} x{n}" for (t, v), n in sorted(inv.items())))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, sort_keys=True))
    return status


if __name__ == "__main__":
    sys.exit(_main())
