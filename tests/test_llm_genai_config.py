"""genai_config.json from config.json (converters/model_folder.py), without an LLM export (the default environment).

Families keep their own names for heads, layers, hidden size and context (their configs' ``attribute_map``):
MPT's and XGLM's optimum-intel folders were refused ("needs num_attention_heads, num_hidden_layers and
hidden_size"). Falcon's ``num_kv_heads`` (2) is not its IR's cache (optimum-intel's IR caches the 4 heads repeated):
where config.json has no ``num_key_value_heads``, genai's KV heads (which size its cache buffers) are the cache's.
"""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from converters.model_folder import FolderError, genai_config


def _decoder(layers: int, kv_heads: int, head_size: int, vocab: int) -> onnx.ModelProto:
    """The converted decoder's signature as genai_config reads it: the caches' inputs and the logits."""
    past = [helper.make_tensor_value_info(f"past_key_values.{i}.{kv}", TensorProto.FLOAT,
                                          ["batch", kv_heads, "past", head_size])
            for i in range(layers) for kv in ("key", "value")]
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "length"])
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "length", vocab])
    graph = helper.make_graph([], "decoder", [ids, *past], [logits])
    return helper.make_model(graph)


#: config.json as each family's optimum-intel export writes it (the keys that matter), and what genai must read.
FAMILIES = {
    "mpt": ({"model_type": "mpt", "n_heads": 4, "n_layers": 2, "d_model": 64, "max_seq_len": 256, "vocab_size": 320},
            dict(heads=4, layers=2, hidden=64, kv=4, head_size=16, context=256)),
    "xglm": ({"model_type": "xglm", "attention_heads": 4, "num_layers": 2, "d_model": 64,
              "max_position_embeddings": 128, "vocab_size": 320}, dict(heads=4, layers=2, hidden=64, kv=4,
                                                                      head_size=16, context=128)),
    "falcon": ({"model_type": "falcon", "num_attention_heads": 4, "num_kv_heads": 2, "num_hidden_layers": 2,
                "hidden_size": 64, "max_position_embeddings": 256, "vocab_size": 320},
               dict(heads=4, layers=2, hidden=64, kv=4, head_size=16, context=256)),
    "multi-query": ({"model_type": "x", "n_head": 4, "n_layer": 2, "n_embd": 64, "n_positions": 64, "vocab_size": 320},
                    dict(heads=4, layers=2, hidden=64, kv=1, head_size=16, context=64)),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_names_of_the_config_keys(family):
    config, want = FAMILIES[family]
    model = _decoder(want["layers"], want["kv"], want["head_size"], config["vocab_size"])
    genai = genai_config(config, {}, model, Path(family), heads_in_ir=want["heads"])
    decoder = genai["model"]["decoder"]
    got = dict(heads=decoder["num_attention_heads"], layers=decoder["num_hidden_layers"],
               hidden=decoder["hidden_size"], kv=decoder["num_key_value_heads"], head_size=decoder["head_size"],
               context=genai["model"]["context_length"])
    assert got == want
    assert genai["model"]["type"] == "decoder" and genai["search"]["max_length"] == want["context"]


def test_family_key_contradicting_the_ir_is_an_error():
    """The aliases are checked like the standard names: MPT's n_layers against the IR's caches."""
    config = dict(FAMILIES["mpt"][0], n_layers=3)
    with pytest.raises(FolderError, match=r"mpt/config.json: num_hidden_layers is 3, the IR has 2 layers"):
        genai_config(config, {}, _decoder(2, 4, 16, 320), Path("mpt"), heads_in_ir=4)


def test_no_heads_anywhere_is_an_error():
    config = {k: v for k, v in FAMILIES["xglm"][0].items() if k != "attention_heads"}
    with pytest.raises(FolderError, match="needs num_attention_heads"):
        genai_config(config, {}, _decoder(2, 4, 16, 320), Path("xglm"))


def _state_space(layers: int, vocab: int) -> onnx.ModelProto:
    """Mamba's converted signature: per layer a conv and an ssm state (cache_params.past.T.N), no KV cache."""
    states = [helper.make_tensor_value_info(f"cache_params.past.{kind}.{i}", TensorProto.FLOAT, ["batch", 128, size])
              for kind, size in (("conv", 4), ("ssm", 8)) for i in range(layers)]
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "length"])
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "length", vocab])
    return helper.make_model(helper.make_graph([], "mamba", [ids, *states], [logits]))


def test_state_space_layers_count_as_layers():
    """Mamba's config (no attention heads, no KV cache): its layers are the IR's state-space ones; more layers
    than the IR has states for, or no state at all, is an error."""
    config = {"model_type": "mamba", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 320}
    genai = genai_config(config, {}, _state_space(2, 320), Path("mamba"))
    assert genai["model"]["decoder"]["num_hidden_layers"] == 2
    with pytest.raises(FolderError, match=r"num_hidden_layers is 3, the IR has 2 layers: 0 of KV cache, 2 of "
                                          r"state-space states"):
        genai_config(dict(config, num_hidden_layers=3), {}, _state_space(2, 320), Path("mamba"))
    with pytest.raises(FolderError, match="the IR holds no KV cache"):
        genai_config(config, {}, _state_space(0, 320), Path("mamba"))
