"""Greedy generation with a decoder LLM three ways, for the token-for-token tests (issue 17):

- OpenVINO's own stateful run of the optimum-intel IR on the CPU plugin at f32 (``OV_CONFIG``);
- our ONNX in onnxruntime, a plain loop that feeds ``past_key_values.N.*`` back from ``present.N.*``;
- our folder in onnxruntime-genai (``og.Generator``).

Prompts are token ids; a batch is left-padded with the pad token (attention mask 0), and
``position_ids`` count the real tokens (``cumsum(mask) - 1``, 1 on padding), as optimum-intel feeds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: OpenVINO at f32 throughout: no bf16 inference, no u8 KV cache, no dynamic quantization of activations.
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}


@dataclass
class Generation:
    tokens: np.ndarray  # [batch, new tokens]
    logits: list[np.ndarray] = field(default_factory=list)  # per step: [batch, vocab], the last position's


def left_padded(prompts: list[list[int]], pad: int) -> tuple[np.ndarray, np.ndarray]:
    """input_ids and attention_mask [batch, longest] of ``prompts``, padded on the left."""
    width = max(len(p) for p in prompts)
    ids = np.full((len(prompts), width), pad, np.int64)
    mask = np.zeros((len(prompts), width), np.int64)
    for row, p in enumerate(prompts):
        ids[row, width - len(p):] = p
        mask[row, width - len(p):] = 1
    return ids, mask


def positions(mask: np.ndarray) -> np.ndarray:
    pos = np.cumsum(mask, axis=1) - 1
    return np.where(mask == 0, 1, pos).astype(np.int64)


def _greedy(step, ids: np.ndarray, mask: np.ndarray, new_tokens: int) -> Generation:
    """``step(input_ids, attention_mask, position_ids) -> logits [batch, length, vocab]``, run greedily."""
    out, all_logits = [], []
    feed, pos = ids, positions(mask)
    for _ in range(new_tokens):
        logits = step(feed, mask, pos)[:, -1, :]
        all_logits.append(np.array(logits, np.float32))
        token = np.argmax(logits, axis=-1).astype(np.int64)[:, None]
        out.append(token)
        mask = np.concatenate([mask, np.ones_like(token)], axis=1)
        pos = pos[:, -1:] + 1
        feed = token
    return Generation(np.concatenate(out, axis=1), all_logits)


def greedy_openvino(xml, ids: np.ndarray, mask: np.ndarray, new_tokens: int, core=None) -> Generation:
    """The stateful IR on OpenVINO's CPU plugin at f32."""
    import openvino as ov

    compiled = (core or ov.Core()).compile_model(str(xml), "CPU", OV_CONFIG)
    request = compiled.create_infer_request()
    request.reset_state()
    beam = np.arange(ids.shape[0], dtype=np.int32)
    wanted = {name for port in compiled.inputs for name in port.get_names()}  # no position_ids: Bloom (ALiBi)

    def step(feed, m, pos):
        feeds = {"input_ids": feed, "attention_mask": m, "position_ids": pos, "beam_idx": beam}
        request.infer({k: v for k, v in feeds.items() if k in wanted})
        return request.get_tensor("logits").data.copy()

    return _greedy(step, ids, mask, new_tokens)


def greedy_onnxruntime(onnx_path, ids: np.ndarray, mask: np.ndarray, new_tokens: int,
                       options=None) -> Generation:
    """The converted model in onnxruntime: the cache goes out as ``present.N.*`` and comes back as
    ``past_key_values.N.*``, the first step with an empty past [batch, kv heads, 0, head size]; a state-space
    layer's states (a hybrid's) go out as ``cache_params.present.T.N`` and come back as ``cache_params.past.T.N``,
    zeros at first (their static shape), as the IR's ReadValues start them."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
    past_inputs = [i for i in session.get_inputs() if i.name.startswith(("past_key_values.", "cache_params.past."))]
    names = [o.name for o in session.get_outputs()]
    wanted = {i.name for i in session.get_inputs()}
    # [batch, static dims]: the KV cache's past length (dynamic) 0
    past = {i.name: np.zeros([ids.shape[0]] + [d if isinstance(d, int) else 0 for d in i.shape[1:]], np.float32)
            for i in past_inputs}

    def step(feed, m, pos):
        feeds = {"input_ids": feed, "attention_mask": m, "position_ids": pos, **past}
        results = dict(zip(names, session.run(None, {k: v for k, v in feeds.items() if k in wanted})))
        for name in past:
            past[name] = results[name.replace("past_key_values.", "present.").replace(".past.", ".present.")]
        return results["logits"]

    return _greedy(step, ids, mask, new_tokens)


def greedy_genai(folder, prompts: list[list[int]], new_tokens: int) -> list[list[int]]:
    """onnxruntime-genai's greedy search on the folder: the new tokens of each prompt (it stops at the
    end-of-sequence token, which it leaves out)."""
    import onnxruntime_genai as og

    model = og.Model(str(folder))
    config_pad = _pad_id(folder)
    ids, _ = left_padded(prompts, config_pad)
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=ids.shape[1] + new_tokens, batch_size=len(prompts))
    generator = og.Generator(model, params)
    generator.append_tokens(ids)
    while not generator.is_done():
        generator.generate_next_token()
    return [list(generator.get_sequence(i))[ids.shape[1]:] for i in range(len(prompts))]


def _pad_id(folder) -> int:
    import json
    from pathlib import Path

    return json.loads((Path(folder) / "genai_config.json").read_text())["model"]["pad_token_id"]


def until_eos(tokens, eos) -> list[int]:
    """The tokens before the first end-of-sequence token (onnxruntime-genai stops there and leaves it out)."""
    eos = set(eos if isinstance(eos, list) else [eos])
    out = []
    for t in tokens:
        if int(t) in eos:
            break
        out.append(int(t))
    return out
