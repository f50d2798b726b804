"""How IR -> ONNX runs compressed weights: the options the API (``convert``, ``convert_folder``) and the CLI take as
``contrib``, ``int8_activations``, ``requantize_int4`` (and a model folder's ``rope_in_attention``), carried as one
record down to the translators (``Context.weight_options``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WeightOptions:
    #: onnxruntime's contrib ops (com.microsoft: MatMulNBits; a model folder's fused forms) may be emitted;
    #: False: standard ONNX only.
    contrib: bool = True
    #: Compressed weights (4- and 8-bit) run with int8 activations (MatMulNBits at accuracy level 4), as
    #: OpenVINO's CPU plugin runs them by default: faster, not exact. Needs ``contrib``.
    int8_activations: bool = False
    #: With ``int8_activations``: 8-bit weights of MatMuls (the lm_head NNCF keeps in int4 IRs) requantized to
    #: 4-bit MatMulNBits, as onnxruntime-genai's model builder does: further from the IR.
    requantize_int4: bool = False
    #: A model folder's RoPE inside GroupQueryAttention, as onnxruntime-genai's model builder emits it (the
    #: positions of the padded buffer, not ``position_ids``): fewer kernels a step; not exact for padded batches
    #: (``fusions._rotary_in_attention``). Needs ``contrib``.
    rope_in_attention: bool = False

    def conflict(self) -> str | None:
        """Why these options cannot go together (checked by the API and by a folder's conversion), or None."""
        if self.int8_activations and not self.contrib:
            return "int8_activations runs onnxruntime's contrib op MatMulNBits: not with contrib=False"
        if self.rope_in_attention and not self.contrib:
            return "rope_in_attention fuses into onnxruntime's contrib op GroupQueryAttention: not with contrib=False"
        if self.requantize_int4 and not self.int8_activations:
            return "requantize_int4 goes with int8_activations (4-bit MatMulNBits at accuracy level 4)"
        return None
