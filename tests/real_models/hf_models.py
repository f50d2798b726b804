"""transformers models of the matrix: tiny random configs (hidden 32, 2 layers, vocab 100).

Each builder returns an ``openvino.Model`` converted by ``openvino.convert_model``
from a thin ``torch.nn.Module`` wrapper that names the inputs and returns plain
tensors (no KV cache). Token inputs are [batch, seq] dynamic; image and audio
inputs keep the size the config fixes and have a dynamic batch.
"""

from __future__ import annotations

import numpy as np

from .torchvision_cpu import import_torch

VOCAB = 100
# (batch, seq) of the two runs; decoder inputs use (batch, seq // 2 + 1)
TEXT_SHAPES = [(2, 8), (3, 13)]
IMAGE = 32  # pixels per side of ViT/CLIP images (patch 8)
WHISPER_MELS, WHISPER_FRAMES = 8, 32  # max_source_positions 16 after the stride-2 conv
WAV2VEC_SAMPLES = [400, 720]


def _ids(batch: int, seq: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB, (batch, seq), dtype=np.int64)


def _mask(batch: int, seq: int) -> np.ndarray:
    mask = np.ones((batch, seq), dtype=np.int64)
    mask[-1, seq - seq // 3:] = 0  # the last sequence is padded at the end
    return mask


def _pixels(batch: int, seed: int, size: int = IMAGE) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((batch, 3, size, size)).astype(np.float32)


def text_inputs(index: int) -> dict[str, np.ndarray]:
    batch, seq = TEXT_SHAPES[index]
    return {"input_ids": _ids(batch, seq, 10 + index), "attention_mask": _mask(batch, seq)}


def seq2seq_inputs(index: int) -> dict[str, np.ndarray]:
    batch, seq = TEXT_SHAPES[index]
    return {**text_inputs(index), "decoder_input_ids": _ids(batch, seq // 2 + 1, 20 + index)}


def image_inputs(index: int) -> dict[str, np.ndarray]:
    return {"pixel_values": _pixels(index + 1, 30 + index)}


def clip_inputs(index: int) -> dict[str, np.ndarray]:
    return {**text_inputs(index), "pixel_values": _pixels(index + 1, 40 + index)}


def whisper_inputs(index: int) -> dict[str, np.ndarray]:
    batch, seq = TEXT_SHAPES[index]
    rng = np.random.default_rng(50 + index)
    return {"input_features": rng.standard_normal((batch, WHISPER_MELS, WHISPER_FRAMES)).astype(np.float32),
            "decoder_input_ids": _ids(batch, seq // 2 + 1, 60 + index),
            # with no mask, transformers looks for packed sequences with aten::diff, which OpenVINO cannot convert
            "decoder_attention_mask": _mask(batch, seq // 2 + 1)}


def audio_inputs(index: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(70 + index)
    return {"input_values": rng.standard_normal((index + 1, WAV2VEC_SAMPLES[index])).astype(np.float32)}


def _wrap(model, names: list[str], outputs: list[str]):
    """A module whose forward takes ``names`` (in order) and returns the ``outputs`` fields as a tuple.

    The forward's declared signature lists ``names``: OpenVINO names the model's inputs after it.
    """
    import inspect

    torch = import_torch()

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, *args):
            out = self.inner(**dict(zip(names, args)))
            return tuple(getattr(out, k) for k in outputs)

    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ["self", *names]]
    Wrapped.forward.__signature__ = inspect.Signature(params)
    return Wrapped().eval()


def _convert(model, feeds: dict[str, np.ndarray], outputs: list[str], dynamic: dict[str, list[int]]):
    import openvino as ov

    torch = import_torch()
    example = {n: torch.from_numpy(v) for n, v in feeds.items()}
    types = {np.dtype(np.int64): ov.Type.i64, np.dtype(np.float32): ov.Type.f32}
    spec = [(n, dynamic[n], types[v.dtype]) for n, v in feeds.items()]
    with torch.no_grad():
        converted = ov.convert_model(_wrap(model, list(feeds), outputs), example_input=example, input=spec)
    for port, name in zip(converted.inputs, feeds):  # a float input can come out named after a traced value
        port.get_tensor().set_names({name})
    return converted


def _config(cls_name: str, **kwargs):
    torch = import_torch()  # before transformers, which imports torchvision
    import transformers

    torch.manual_seed(0)
    return getattr(transformers, cls_name)(**kwargs)


def _model(cls_name: str, cfg):
    import transformers

    return getattr(transformers, cls_name)(cfg).eval()


_TEXT_DYN = {"input_ids": [-1, -1], "attention_mask": [-1, -1], "decoder_input_ids": [-1, -1]}
_DECODER = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                use_cache=False, attn_implementation="sdpa", bos_token_id=0, eos_token_id=0, pad_token_id=0)


def _causal_lm(config_cls: str, model_cls: str, **extra):
    cfg = _config(config_cls, **{**_DECODER, **extra})
    return _convert(_model(model_cls, cfg), text_inputs(0), ["logits"], _TEXT_DYN)


def build_llama():
    return _causal_lm("LlamaConfig", "LlamaForCausalLM")


def build_qwen2():
    return _causal_lm("Qwen2Config", "Qwen2ForCausalLM")


def build_mistral():
    return _causal_lm("MistralConfig", "MistralForCausalLM", sliding_window=6)  # shorter than the 2nd run's seq


def build_gemma():
    return _causal_lm("GemmaConfig", "GemmaForCausalLM", head_dim=8)


def build_phi3():
    return _causal_lm("Phi3Config", "Phi3ForCausalLM", pad_token_id=0)


def build_t5():
    cfg = _config("T5Config", vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                  num_heads=4, relative_attention_num_buckets=8, use_cache=False, decoder_start_token_id=0,
                  pad_token_id=0, eos_token_id=1)
    return _convert(_model("T5ForConditionalGeneration", cfg), seq2seq_inputs(0),
                    ["logits", "encoder_last_hidden_state"], _TEXT_DYN)


def build_bart():
    cfg = _config("BartConfig", vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2,
                  encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                  max_position_embeddings=64, use_cache=False, attn_implementation="sdpa",
                  pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)
    return _convert(_model("BartForConditionalGeneration", cfg), seq2seq_inputs(0),
                    ["logits", "encoder_last_hidden_state"], _TEXT_DYN)


def build_vit():
    cfg = _config("ViTConfig", image_size=IMAGE, patch_size=8, hidden_size=32, num_hidden_layers=2,
                  num_attention_heads=2, intermediate_size=64, attn_implementation="sdpa")
    return _convert(_model("ViTModel", cfg), image_inputs(0), ["last_hidden_state", "pooler_output"],
                    {"pixel_values": [-1, 3, IMAGE, IMAGE]})


def build_whisper():
    cfg = _config("WhisperConfig", vocab_size=VOCAB, num_mel_bins=WHISPER_MELS, d_model=32, encoder_layers=2,
                  decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                  decoder_ffn_dim=64, max_source_positions=WHISPER_FRAMES // 2, max_target_positions=32,
                  use_cache=False, attn_implementation="sdpa", pad_token_id=0, bos_token_id=0, eos_token_id=0,
                  decoder_start_token_id=0, begin_suppress_tokens=None, suppress_tokens=None)
    return _convert(_model("WhisperForConditionalGeneration", cfg), whisper_inputs(0),
                    ["logits", "encoder_last_hidden_state"],
                    {"input_features": [-1, WHISPER_MELS, WHISPER_FRAMES], "decoder_input_ids": [-1, -1],
                     "decoder_attention_mask": [-1, -1]})


def build_clip():
    text = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                max_position_embeddings=32, bos_token_id=0, eos_token_id=2, pad_token_id=1)
    vision = dict(image_size=IMAGE, patch_size=8, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=2)
    cfg = _config("CLIPConfig", text_config=text, vision_config=vision, projection_dim=16,
                  attn_implementation="sdpa")
    return _convert(_model("CLIPModel", cfg), clip_inputs(0), ["logits_per_image", "text_embeds", "image_embeds"],
                    {**_TEXT_DYN, "pixel_values": [-1, 3, IMAGE, IMAGE]})


def build_wav2vec2():
    cfg = _config("Wav2Vec2Config", vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=64, conv_dim=(16, 16, 16), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                  num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2, feat_extract_norm="group",
                  do_stable_layer_norm=False, attn_implementation="sdpa")
    return _convert(_model("Wav2Vec2Model", cfg), audio_inputs(0), ["last_hidden_state"],
                    {"input_values": [-1, -1]})


def build_distilbert():
    cfg = _config("DistilBertConfig", vocab_size=VOCAB, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                  max_position_embeddings=64, attn_implementation="sdpa")
    return _convert(_model("DistilBertModel", cfg), text_inputs(0), ["last_hidden_state"], _TEXT_DYN)


def build_deberta_v2():
    """DeBERTa-v2: disentangled relative attention (log position buckets, c2p/p2c scores gathered by
    GatherElements), eager attention written out (no SDPA)."""
    cfg = _config("DebertaV2Config", vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=64, max_position_embeddings=64, relative_attention=True, position_buckets=8,
                  max_relative_positions=16, pos_att_type=["p2c", "c2p"], position_biased_input=False,
                  norm_rel_ebd="layer_norm", share_att_key=True, pad_token_id=0)
    return _convert(_model("DebertaV2Model", cfg), text_inputs(0), ["last_hidden_state"], _TEXT_DYN)


def build_bloom():
    """BLOOM: ALiBi (per-head slopes times the cumulative sum of the mask) instead of position embeddings."""
    cfg = _config("BloomConfig", vocab_size=VOCAB, hidden_size=32, n_layer=2, n_head=4, use_cache=False,
                  attn_implementation="eager", bos_token_id=0, eos_token_id=0, pad_token_id=0)
    return _convert(_model("BloomForCausalLM", cfg), text_inputs(0), ["logits"], _TEXT_DYN)
