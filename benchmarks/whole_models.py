"""The models of bench_models.py: random-weight torch modules (transformers configs, torchvision ``weights=None``),
every parameter perturbed, with their inputs; named forward arguments, plain tensors out."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tests.real_models.torchvision_cpu import import_torch, import_torchvision


@dataclass
class Built:
    module: object  # torch.nn.Module, eval mode
    feeds: dict[str, np.ndarray]  # in the order of the module's forward arguments
    outputs: list[str]


@dataclass
class ModelSpec:
    name: str
    what: str
    build: Callable[[argparse.Namespace], Built]


# --- models -----------------------------------------------------------------------------------


def perturb(module, seed: int = 0) -> None:
    """Every float parameter gets noise (biases of 0 and norms of scale 1 / shift 0 become ordinary
    values); batch-norm statistics are drawn as in tests/real_models (mean in [-0.5, 0.5), var in
    [0.5, 2))."""
    torch = import_torch()
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(torch.randn(p.shape, generator=gen) * 0.02)
        for mod in module.modules():
            if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm) and mod.running_mean is not None:
                mod.running_mean.copy_(torch.rand(mod.running_mean.shape, generator=gen) - 0.5)
                mod.running_var.copy_(torch.rand(mod.running_var.shape, generator=gen) * 1.5 + 0.5)


def _transformers_model(config_cls: str, model_cls: str, **config):
    import_torch().manual_seed(0)  # torch (and torchvision through the workaround) before transformers
    import transformers

    cfg = getattr(transformers, config_cls)(**config)
    return getattr(transformers, model_cls)(cfg).eval()


def _modules():
    """The wrappers: named forward arguments (OpenVINO and the exporter name the inputs after them), plain
    tensors out. Defined on first use: torch is imported only then."""
    torch = import_torch()

    class Bert(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state, out.pooler_output

    class CausalLM(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask).logits

    class Encoder(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_features):
            return self.inner(input_features=input_features).last_hidden_state

    class SegmentationOut(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x)["out"]

    return {"Bert": Bert, "CausalLM": CausalLM, "Encoder": Encoder, "SegmentationOut": SegmentationOut}


def _tokens(vocab: int, seq: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, vocab, (1, seq), dtype=np.int64)


def build_bert(args) -> Built:
    inner = _transformers_model("BertConfig", "BertModel", attn_implementation="sdpa")  # BERT-base's defaults
    perturb(inner)
    feeds = {"input_ids": _tokens(inner.config.vocab_size, args.seq, 1),
             "attention_mask": np.ones((1, args.seq), np.int64),
             "token_type_ids": np.zeros((1, args.seq), np.int64)}
    return Built(_modules()["Bert"](inner).eval(), feeds, ["last_hidden_state", "pooler_output"])


def build_gpt2(args) -> Built:
    inner = _transformers_model("GPT2Config", "GPT2LMHeadModel", use_cache=False,
                                attn_implementation="sdpa")  # GPT-2 small's defaults
    perturb(inner)
    feeds = {"input_ids": _tokens(inner.config.vocab_size, args.seq, 2),
             "attention_mask": np.ones((1, args.seq), np.int64)}
    return Built(_modules()["CausalLM"](inner).eval(), feeds, ["logits"])


def build_llama(args) -> Built:
    inner = _transformers_model("LlamaConfig", "LlamaForCausalLM", vocab_size=32000, hidden_size=768,
                                intermediate_size=2048, num_hidden_layers=12, num_attention_heads=12,
                                num_key_value_heads=4, max_position_embeddings=2048, use_cache=False,
                                attn_implementation="sdpa", bos_token_id=0, eos_token_id=0, pad_token_id=0)
    perturb(inner)
    feeds = {"input_ids": _tokens(32000, args.seq, 3), "attention_mask": np.ones((1, args.seq), np.int64)}
    return Built(_modules()["CausalLM"](inner).eval(), feeds, ["logits"])


def build_whisper_encoder(args) -> Built:
    """Whisper-tiny's encoder: 30 s of audio (80 mels x 3000 frames, fixed by its positions)."""
    model = _transformers_model("WhisperConfig", "WhisperModel", d_model=384, encoder_layers=4,
                                encoder_attention_heads=6, encoder_ffn_dim=1536, decoder_layers=4,
                                decoder_attention_heads=6, decoder_ffn_dim=1536, num_mel_bins=80,
                                max_source_positions=1500, attn_implementation="sdpa")
    inner = model.get_encoder().eval()
    perturb(inner)
    feeds = {"input_features": np.random.default_rng(4).standard_normal((1, 80, 3000)).astype(np.float32)}
    return Built(_modules()["Encoder"](inner).eval(), feeds, ["last_hidden_state"])


def _image(args, seed: int) -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(seed).standard_normal((1, 3, args.image, args.image)).astype(np.float32)}


def _torchvision(name: str, args, seed: int) -> Built:
    import_torchvision()
    import_torch().manual_seed(0)
    from torchvision import models

    module = getattr(models, name)(weights=None).eval()
    perturb(module)  # also gives ViT's zero-initialised head weights
    return Built(module, _image(args, seed), ["logits"])


def build_resnet50(args) -> Built:
    return _torchvision("resnet50", args, 5)


def build_vit_b_16(args) -> Built:
    return _torchvision("vit_b_16", args, 6)


def build_mobilenet_v3_large(args) -> Built:
    return _torchvision("mobilenet_v3_large", args, 7)


def build_lraspp(args) -> Built:
    import_torchvision()
    import_torch().manual_seed(0)
    from torchvision.models import segmentation

    inner = segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None).eval()
    perturb(inner)
    return Built(_modules()["SegmentationOut"](inner).eval(), _image(args, 8), ["out"])


MODELS = {spec.name: spec for spec in [
    ModelSpec("bert", "transformers BertModel, BERT-base config (12 layers, hidden 768, 12 heads), SDPA; "
              "input_ids, attention_mask (all ones), token_type_ids [1, seq]; last_hidden_state, pooler_output",
              build_bert),
    ModelSpec("gpt2", "transformers GPT2LMHeadModel, GPT-2 small config (12 layers, 768, vocab 50257), SDPA, "
              "no KV cache; input_ids, attention_mask [1, seq]; logits", build_gpt2),
    ModelSpec("resnet50", "torchvision resnet50(weights=None); x [1, 3, image, image]; logits", build_resnet50),
    ModelSpec("vit_b_16", "torchvision vit_b_16(weights=None); x [1, 3, image, image]; logits", build_vit_b_16),
    ModelSpec("mobilenet_v3_large", "torchvision mobilenet_v3_large(weights=None) (HSwish, HSigmoid); "
              "x [1, 3, image, image]; logits", build_mobilenet_v3_large),
    ModelSpec("lraspp", "torchvision segmentation lraspp_mobilenet_v3_large(weights=None) (HSwish, HSigmoid, "
              "bilinear Interpolate); x [1, 3, image, image]; out", build_lraspp),
    ModelSpec("whisper_encoder", "transformers WhisperModel's encoder, Whisper-tiny config (4 layers, 384, 6 heads), "
              "SDPA; input_features [1, 80, 3000]; last_hidden_state", build_whisper_encoder),
    ModelSpec("llama", "transformers LlamaForCausalLM, 12 layers, hidden 768, 12 heads (4 KV heads), MLP 2048, "
              "vocab 32000, SDPA, no KV cache (Swish, RMS norm, rotary embeddings, grouped KV heads); input_ids, "
              "attention_mask [1, seq]; logits", build_llama),
]}
