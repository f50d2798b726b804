"""CTCLoss-4: the op's record (checks, body selection) and numpy reference. Bodies: ``bodies.py``; semantics:
docs/ops/ctc_loss.md.

OpenVINO: CTCLoss-4(logits: F [N, T, C], logit_length: I1 [N], labels: I2 [N, T], label_length: I1 [N],
blank_index?: I2 scalar; preprocess_collapse_repeated, ctc_merge_repeated, unique) -> F [N]: minus the log of
the summed probabilities (softmax over C per step) of every path of logit_length[i] steps that decodes to the
target, as OpenVINO's reference (src/core/reference/include/openvino/reference/ctc_loss.hpp) enumerates them:

- the target: the first label_length[i] labels; with ``unique`` their first occurrences in order; else with
  ``preprocess_collapse_repeated`` repeats merged (labels[i, 0] kept even when label_length[i] is 0);
- a path: each target label on a run of steps (one step unless ``ctc_merge_repeated``), blanks (blank_index,
  default C - 1) before, between and after, at least one between equal labels when merging;
- an empty target: the loss is 0 (the reference searches no path and returns -0); no path: +inf.

The reference sums the paths one by one; here (bodies and numpy) the forward algorithm in log space sums the
same paths. Lengths outside 0 <= label_length <= logit_length <= T fail (the reference throws:
``lengths_within_time`` at run time), and so do target labels or a blank_index outside [0, C) (the reference
reads out of bounds: ``labels_within_classes``, ``blank_index_within_classes``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import OpInputError
from ..base import Attr, Bodies, OpSpec, Operand, require_bool
from .bodies import HELPERS, CTCLoss, Computed

__all__ = ["SPEC", "CTCLoss", "ctc_loss_reference", "decoded_target"]

INPUTS = ("logits", "logit_length", "labels", "label_length", "blank_index")
FLAGS = ("preprocess_collapse_repeated", "ctc_merge_repeated", "unique")


def decoded_target(labels, label_length: int, preprocess_collapse_repeated: bool, unique: bool) -> list[int]:
    """The labels a path must decode to, as the reference decodes ``labels`` (one row)."""
    row = [int(v) for v in np.asarray(labels).reshape(-1)]
    if unique:
        out = []
        for v in row[:label_length]:
            if v not in out:
                out.append(v)
        return out
    if preprocess_collapse_repeated:
        out = row[:1]  # (kept even when label_length is 0)
        for v in row[1:label_length]:
            if v != out[-1]:
                out.append(v)
        return out
    return row[:label_length]


def _forward(log_p: np.ndarray, target: list[int], blank: int, merge: bool) -> float:
    """log of the summed path probabilities: log_p [steps, C] (f64), the forward algorithm over the extended
    sequence blank, l1, blank, ..., blank."""
    ext = [blank]
    for label in target:
        ext += [label, blank]
    alpha = np.full(len(ext), -np.inf)
    alpha[0] = 0.0
    for step in log_p:
        new = np.full_like(alpha, -np.inf)
        for s, c in enumerate(ext):
            terms = [alpha[s]] if s % 2 == 0 or merge else []
            terms += [alpha[s - 1]] if s >= 1 else []
            if s % 2 == 1 and s >= 3 and (not merge or ext[s] != ext[s - 2]):
                terms.append(alpha[s - 2])
            new[s] = np.logaddexp.reduce(terms) + step[c]
        alpha = new
    return float(np.logaddexp(alpha[-1], alpha[-2]))


def ctc_loss_reference(logits, logit_length, labels, label_length, blank_index=None,
                       preprocess_collapse_repeated: int = 0, ctc_merge_repeated: int = 1,
                       unique: int = 0) -> np.ndarray:
    logits, labels = np.asarray(logits), np.asarray(labels)
    _check_shapes(logits.shape, np.shape(logit_length), labels.shape, np.shape(label_length),
                  None if blank_index is None else np.shape(blank_index))
    batch, t_len, classes = logits.shape
    blank = classes - 1 if blank_index is None else int(np.asarray(blank_index).reshape(-1)[0])
    if not 0 <= blank < classes:
        raise OpInputError("CTCLoss", f"blank_index {blank} is outside [0, {classes})")
    x = logits.astype(np.float64)
    log_p = x - np.logaddexp.reduce(x, axis=2, keepdims=True) if classes else x
    out = np.empty(batch, logits.dtype)
    for b in range(batch):
        steps, length = int(np.asarray(logit_length)[b]), int(np.asarray(label_length)[b])
        if not 0 <= length <= steps <= t_len:
            raise OpInputError("CTCLoss", f"batch {b}: logit_length {steps} and label_length {length} must "
                               f"satisfy 0 <= label_length <= logit_length <= {t_len}")
        target = decoded_target(labels[b], length, bool(preprocess_collapse_repeated), bool(unique))
        if any(not 0 <= v < classes for v in target):
            raise OpInputError("CTCLoss", f"batch {b}: labels {target} has a class outside [0, {classes})")
        out[b] = -_forward(log_p[b, :steps], target, blank, bool(ctc_merge_repeated)) if target else -0.0
    return out


# --- checks ---------------------------------------------------------------------------------------------


def _same(a, b) -> bool:
    return not (isinstance(a, int) and isinstance(b, int) and a != b)


def _check_shapes(logits, logit_length, labels, label_length, blank) -> None:
    def fail(message):
        raise OpInputError("CTCLoss", message)

    if logits is not None and len(logits) != 3:
        fail(f"logits must have rank 3 [N, T, C], got shape {list(logits)}")
    for name, shape in (("logit_length", logit_length), ("label_length", label_length)):
        if shape is not None and len(shape) != 1:
            fail(f"{name} must be a 1-D vector [N], got shape {list(shape)}")
        if shape is not None and logits is not None and not _same(shape[0], logits[0]):
            fail(f"{name} has {shape[0]} entries for a batch of {logits[0]}")
    if labels is not None and len(labels) != 2:
        fail(f"labels must have rank 2 [N, T], got shape {list(labels)}")
    if labels is not None and logits is not None and not all(_same(a, b) for a, b in zip(labels, logits[:2])):
        fail(f"labels {list(labels)} does not match logits' [N, T] {list(logits[:2])}")
    if blank is not None and len(blank) != 0 and tuple(blank) != (1,) and not (
            len(blank) == 1 and not isinstance(blank[0], int)):
        fail(f"blank_index must be a scalar, got shape {list(blank)}")


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    logits, logit_length, labels, label_length, *blank = operands
    if logits.type is not None and not logits.type.is_float:
        raise OpInputError("CTCLoss", f"logits must be floating-point, got {logits.type.ov}")
    for name, o in zip(INPUTS[1:], operands[1:]):
        if o.type is not None and o.type.ov not in ("i32", "i64"):
            raise OpInputError("CTCLoss", f"{name} must be i32 or i64, got {o.type.ov}")
    _check_shapes(*(o.shape for o in operands), *([None] if not blank else []))
    if blank and blank[0].value is not None and logits.shape is not None and isinstance(logits.shape[2], int):
        value = int(np.asarray(blank[0].value).reshape(-1)[0])
        if not 0 <= value < logits.shape[2]:
            raise OpInputError("CTCLoss", f"blank_index {value} is outside [0, {logits.shape[2]})")


def check_attributes(attrs: dict) -> dict:
    require_bool("CTCLoss", attrs, *FLAGS)
    return attrs


# --- bodies, shapes, OpenVINO --------------------------------------------------------------------------


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    f64 = operands[0].type is not None and operands[0].type.ov == "f64"
    return Computed("f64" if f64 else "f32", len(operands) > 4).name


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    for o in operands[:4]:
        if o.shape is not None and o.shape and isinstance(o.shape[0], int):
            return (o.shape[0],)
    return (operands[0].shape[0] if operands[0].shape else None,)


def openvino_node(attrs: dict, inputs: list):
    from openvino import opset4

    logits, logit_length, labels, label_length, *blank = inputs
    return opset4.ctc_loss(logits, logit_length, labels, label_length, blank[0] if blank else None,
                           **{name: bool(attrs[name]) for name in FLAGS})


SPEC = OpSpec(
    name="CTCLoss",
    inputs=INPUTS,
    min_inputs=4,
    attributes={"preprocess_collapse_repeated": Attr("int", 0), "ctc_merge_repeated": Attr("int", 1),
                "unique": Attr("int", 0)},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=output_shape,
    bodies=Bodies(CTCLoss, {"general": CTCLoss}, [Computed], listed=[Computed("f64"), Computed("f32", False),
                                                                   Computed("f64", False)]),
    helpers=HELPERS,
    public=CTCLoss,
    reference=ctc_loss_reference,
    openvino=openvino_node,
)
