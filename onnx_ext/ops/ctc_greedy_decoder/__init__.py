"""CTCGreedyDecoder-1 and CTCGreedyDecoderSeqLen-6: the ops' records and numpy references (OpenVINO's
reference, src/core/reference/include/openvino/reference/ctc_greedy_decoder*.hpp). Bodies: ``bodies.py``;
semantics: docs/ops/ctc_greedy_decoder.md.

Per sequence, per step the class of the largest logit (the first of equal ones); a class is emitted unless it
is the blank or, merging repeats, the previous step's class (blanks count as the previous class too); the
emitted classes fill the front of the row, -1 the rest.

- CTCGreedyDecoder-1(data: F [T, N, C], sequence_mask: F [T, N]; ctc_merge_repeated) -> F [N, T, 1, 1]: a
  sequence ends at its first step whose mask is 0; the blank is C - 1 (classes >= C - 1 are not emitted).
- CTCGreedyDecoderSeqLen-6(data: F [N, T, C], sequence_length: I [N], blank_index?: I scalar or [1];
  merge_repeated, classes_index_type, sequence_length_type) -> (decoded [N, T], decoded_length [N]): a
  sequence has sequence_length steps (checked within [0, T]: ``sequence_length_within_time``); the blank is
  blank_index (default C - 1).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import onnx

from ...errors import OpInputError
from ...types import from_onnx
from ..base import Attr, Bodies, OpSpec, Operand, require_bool, require_index_type
from .bodies import HELPERS, CTCGreedyDecoder, CTCGreedyDecoderSeqLen, Decoded, ctc_greedy_decoder_direct

__all__ = ["SPECS", "ctc_greedy_decoder_reference", "ctc_greedy_decoder_seq_len_reference"]

#: Float types ArgMax takes as they are (bf16 goes through f64 in the general bodies).
_DIRECT = ("f16", "f32", "f64")


def _classes(logits: np.ndarray) -> np.ndarray:
    return np.argmax(logits.astype(np.float64), axis=-1)


def _greedy(classes: np.ndarray, steps: int, blank, merge: bool, emit_below: bool) -> list[int]:
    out, previous = [], -1
    for c in classes[:steps]:
        c = int(c)
        if (c < blank if emit_below else c != blank) and not (merge and c == previous):
            out.append(c)
        previous = c
    return out


def ctc_greedy_decoder_reference(data, sequence_mask, ctc_merge_repeated: int = 1) -> np.ndarray:
    data, mask = np.asarray(data), np.asarray(sequence_mask)
    _check_v1_shapes(data.shape, mask.shape)
    t_len, batch, classes_count = data.shape
    out = np.full((batch, t_len, 1, 1), -1, data.dtype)
    classes = _classes(data)
    for b in range(batch):
        stops = np.flatnonzero(mask[:, b] == 0)
        steps = int(stops[0]) if stops.size else t_len
        found = _greedy(classes[:, b], steps, classes_count - 1, bool(ctc_merge_repeated), True)
        out[b, :len(found), 0, 0] = found
    return out


def ctc_greedy_decoder_seq_len_reference(data, sequence_length, blank_index=None, merge_repeated: int = 1,
                                         classes_index_type: int = onnx.TensorProto.INT32,
                                         sequence_length_type: int = onnx.TensorProto.INT32):
    data, lengths = np.asarray(data), np.asarray(sequence_length)
    _check_seq_len_shapes(data.shape, lengths.shape, None if blank_index is None else np.shape(blank_index))
    batch, t_len, classes_count = data.shape
    blank = classes_count - 1 if blank_index is None else int(np.asarray(blank_index).reshape(-1)[0])
    decoded = np.full((batch, t_len), -1, from_onnx(classes_index_type).numpy)
    count = np.zeros(batch, from_onnx(sequence_length_type).numpy)
    classes = _classes(data)
    for b, steps in enumerate(lengths.astype(np.int64)):
        if not 0 <= steps <= t_len:
            raise OpInputError("CTCGreedyDecoderSeqLen", f"sequence_length {int(steps)} of batch {b} is outside "
                               f"[0, {t_len}]")
        found = _greedy(classes[b], int(steps), blank, bool(merge_repeated), False)
        decoded[b, :len(found)] = found
        count[b] = len(found)
    return decoded, count


# --- checks ---------------------------------------------------------------------------------------------


def _same(a, b) -> bool:
    return not (isinstance(a, int) and isinstance(b, int) and a != b)


def _check_v1_shapes(data, mask) -> None:
    if data is not None and len(data) != 3:
        raise OpInputError("CTCGreedyDecoder", f"data must have rank 3 [T, N, C], got shape {list(data)}")
    if mask is not None and len(mask) != 2:
        raise OpInputError("CTCGreedyDecoder", f"sequence_mask must have rank 2 [T, N], got shape {list(mask)}")
    if data is not None and mask is not None and not all(_same(a, b) for a, b in zip(data[:2], mask)):
        raise OpInputError("CTCGreedyDecoder", f"sequence_mask {list(mask)} does not match data's [T, N] "
                           f"{list(data[:2])}")


def _check_seq_len_shapes(data, lengths, blank) -> None:
    op_name = "CTCGreedyDecoderSeqLen"
    if data is not None and len(data) != 3:
        raise OpInputError(op_name, f"data must have rank 3 [N, T, C], got shape {list(data)}")
    if lengths is not None and len(lengths) != 1:
        raise OpInputError(op_name, f"sequence_length must be a 1-D vector, got shape {list(lengths)}")
    if data is not None and lengths is not None and not _same(data[0], lengths[0]):
        raise OpInputError(op_name, f"sequence_length has {lengths[0]} entries for a batch of {data[0]}")
    if blank is not None and not (len(blank) == 0 or (len(blank) == 1 and not isinstance(blank[0], int))
                                  or tuple(blank) == (1,)):
        raise OpInputError(op_name, f"blank_index must be a scalar or a 1-element vector, got shape {list(blank)}")


def _floats(op_name: str, data: Operand, name: str = "data") -> None:
    if data.type is not None and not data.type.is_float:
        raise OpInputError(op_name, f"{name} must be floating-point, got {data.type.ov}")


def _check_v1(attrs: dict, operands: Sequence[Operand]) -> None:
    data, mask = operands
    _floats("CTCGreedyDecoder", data)
    _floats("CTCGreedyDecoder", mask, "sequence_mask")
    _check_v1_shapes(data.shape, mask.shape)


def _check_seq_len(attrs: dict, operands: Sequence[Operand]) -> None:
    data, lengths, *blank = operands
    _floats("CTCGreedyDecoderSeqLen", data)
    for name, o in (("sequence_length", lengths), *((("blank_index", blank[0]),) if blank else ())):
        if o.type is not None and not o.type.is_integer:
            raise OpInputError("CTCGreedyDecoderSeqLen", f"{name} must be integers, got {o.type.ov}")
    _check_seq_len_shapes(data.shape, lengths.shape, blank[0].shape if blank else None)
    if lengths.value is not None and data.shape is not None and isinstance(data.shape[1], int):
        bad = [int(v) for v in np.asarray(lengths.value).reshape(-1) if not 0 <= v <= data.shape[1]]
        if bad:
            raise OpInputError("CTCGreedyDecoderSeqLen", f"sequence_length {bad[0]} is outside [0, {data.shape[1]}]")


def _check_attrs(attrs: dict) -> dict:
    require_bool("CTCGreedyDecoder", attrs, "ctc_merge_repeated")
    return attrs


def _check_seq_len_attrs(attrs: dict) -> dict:
    require_bool("CTCGreedyDecoderSeqLen", attrs, "merge_repeated")
    require_index_type("CTCGreedyDecoderSeqLen", attrs, "classes_index_type", "sequence_length_type")
    return attrs


# --- bodies, shapes, OpenVINO --------------------------------------------------------------------------


def _direct(data: Operand) -> bool:
    return data.type is not None and data.type.ov in _DIRECT


def _v1_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    data, mask = operands
    t_len, batch = (data.shape[0], data.shape[1]) if data.shape is not None else (None, None)
    if mask.shape is not None:
        t_len = t_len if isinstance(t_len, int) else mask.shape[0]
        batch = batch if isinstance(batch, int) else mask.shape[1]
    return batch, t_len, 1, 1


def _seq_len_shapes(attrs: dict, operands: Sequence[Operand]) -> tuple:
    data, lengths = operands[:2]
    batch, t_len = (data.shape[0], data.shape[1]) if data.shape is not None else (None, None)
    if lengths.shape is not None and not isinstance(batch, int):
        batch = lengths.shape[0]
    return (batch, t_len), (batch,)


def _v1_openvino(attrs: dict, inputs: list):
    from openvino import opset1

    return opset1.ctc_greedy_decoder(*inputs, merge_repeated=bool(attrs["ctc_merge_repeated"]))


def _seq_len_openvino(attrs: dict, inputs: list):
    from openvino import opset6

    data, lengths, *blank = inputs
    return opset6.ctc_greedy_decoder_seq_len(
        data, lengths, blank[0] if blank else None, merge_repeated=bool(attrs["merge_repeated"]),
        classes_index_type=from_onnx(attrs["classes_index_type"]).ov,
        sequence_length_type=from_onnx(attrs["sequence_length_type"]).ov)


V1 = OpSpec(
    name="CTCGreedyDecoder",
    inputs=("data", "sequence_mask"),
    min_inputs=2,
    attributes={"ctc_merge_repeated": Attr("int", 1)},
    check_attributes=_check_attrs,
    check_operands=_check_v1,
    select_body=lambda attrs, operands: "direct" if _direct(operands[0]) else "general",
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=_v1_shape,
    bodies=Bodies(CTCGreedyDecoder, {"general": CTCGreedyDecoder, "direct": ctc_greedy_decoder_direct}),
    helpers=HELPERS,
    public=CTCGreedyDecoder,
    reference=ctc_greedy_decoder_reference,
    openvino=_v1_openvino,
)

SEQ_LEN = OpSpec(
    name="CTCGreedyDecoderSeqLen",
    inputs=("data", "sequence_length", "blank_index"),
    min_inputs=2,
    attributes={"merge_repeated": Attr("int", 1), "classes_index_type": Attr("int", onnx.TensorProto.INT32),
                "sequence_length_type": Attr("int", onnx.TensorProto.INT32)},
    check_attributes=_check_seq_len_attrs,
    check_operands=_check_seq_len,
    select_body=lambda attrs, operands: ("direct" if _direct(operands[0]) else "general")
    + ("" if len(operands) > 2 else "_noblank"),
    output_type=lambda attrs, operands: (from_onnx(attrs["classes_index_type"]),
                                         from_onnx(attrs["sequence_length_type"])),
    output_shape=_seq_len_shapes,
    bodies=Bodies(CTCGreedyDecoderSeqLen, {"general": CTCGreedyDecoderSeqLen}, [Decoded],
                  listed=[Decoded("data"), Decoded("f64", False), Decoded("data", False)]),
    helpers=HELPERS,
    public=CTCGreedyDecoderSeqLen,
    reference=ctc_greedy_decoder_seq_len_reference,
    outputs=("decoded", "decoded_length"),
    openvino=_seq_len_openvino,
)

SPECS = {V1.name: V1, SEQ_LEN.name: SEQ_LEN}
