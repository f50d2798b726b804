"""Broadcast-1 and Broadcast-3: the op's record (checks, body selection); bodies in ``bodies.py``,
numpy reference in ``reference.py``.

OpenVINO: Broadcast(data, target_shape, axes_mapping?; mode), ``version`` 1 or 3.
Attributes keep OpenVINO's names: ``mode`` (``numpy``, ``explicit`` or its
Broadcast-1 IR spelling ``none``, ``bidirectional`` (Broadcast-3 only), ``pdpd``)
and ``axis`` (pdpd only, default -1). What OpenVINO's reference (``evaluate``)
does, mode by mode:

- ``numpy``: one-way numpy broadcasting of data to exactly target_shape. The
  target rank must be >= the data rank and each trailing-aligned data dim must be
  1 or equal to the target dim (so 1 -> 0 is legal, 0 -> 1 and 3 -> 1 are not).
- ``explicit``/``none``: ``axes_mapping[i]`` is the output axis of data axis i:
  one entry per data axis, strictly increasing ("Broadcast doesn't permit
  transposes"), within [0, target rank); data dim i must be 1 or equal to
  ``target_shape[axes_mapping[i]]``. 0-d data takes an empty axes_mapping, or one
  entry k with ``target_shape[k] == 1`` (OpenVINO's shape inference, its CPU
  plugin and its op tests accept this; its core ``evaluate`` rejects it).
- ``bidirectional``: exactly ONNX Expand (two-way numpy broadcasting).
- ``pdpd``: data dims aligned at ``axis`` (-1: trailing alignment, as numpy);
  the data must end on the last target dim (axis == rank(target) - rank(data)),
  and each aligned pair must be equal or have a 1 on either side; the output dim
  is the data dim where the target dim is 1 and max(data dim, target dim)
  otherwise (so target dim 0 against data dim 1 gives 1, as the reference does).

Negative target dims are errors in every mode. Input counts: explicit needs
axes_mapping; Broadcast-3 refuses it in the other modes; Broadcast-1 accepts and
ignores a third input in numpy and pdpd mode (OpenVINO writes an unused u8
scalar 0 there).

Deliberate differences from the reference: it dies (SIGFPE) on zero-size data
and its explicit-mode evaluate refuses 0-d data with a one-entry axes_mapping;
here both follow the rules above. With a pdpd axis beyond trailing alignment
(axis + rank(data) > rank(target)) the reference reads dims that do not exist
and returns shapes or errors depending on values; this package refuses it.

Bodies (overloads): per mode (``none`` uses explicit's) a fast one whose data
path is a single Expand (plus a free Reshape in explicit mode), for every type
but bf16, which onnxruntime's Expand lacks; and ``<mode>_any``, which loads for
every element type and serves bf16 and unknown types: it Gathers rows of the
largest trailing block that is not broadcast when that block has 16 elements or
more, otherwise GatherElements at element indices Expanded to the output (see
docs/onnxruntime.md#gather-cost-per-index); ``ToTarget`` for a constant target. The checks work on shape vectors
only; each failure is a Gather named after the condition, which onnxruntime
quotes when it raises: ``target_shape_numpy_compatible``,
``axes_mapping_valid``, ``data_dims_match_target_at_axes_mapping``,
``target_shape_pdpd_compatible``. The public ``Broadcast`` handles every mode and
type; an ONNX function cannot see a missing input, so in onnxscript pass
axes_mapping in every mode (it is read in explicit mode only; any integer
tensor, such as ``op.Constant(value_ints=[])``, does for the others).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import OpAttributeError, OpInputError
from ..base import Attr, Bodies, OpSpec, Operand, require_version
from ..native import factory
from .bodies import HELPERS, MODE_BODIES, Broadcast, ToTarget
from .reference import broadcast_reference, check_numpy, explicit_shape, int_vector, pdpd_shape

__all__ = ["SPEC", "VERSIONS", "MODES", "Broadcast", "ToTarget", "broadcast_reference"]

VERSIONS = (1, 3)
MODES = {1: ("numpy", "explicit", "none", "pdpd"), 3: ("numpy", "explicit", "none", "bidirectional", "pdpd")}
_BODY_OF_MODE = {"numpy": "numpy", "explicit": "explicit", "none": "explicit", "bidirectional": "bidirectional",
                 "pdpd": "pdpd"}


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple | None:
    """numpy, explicit: target_shape; bidirectional, pdpd: computed with the data dims (symbolic
    ones where the rules allow, else None). Rank only when target_shape is not a constant."""
    data, target = operands[0], operands[1]
    body, d = _BODY_OF_MODE[attrs["mode"]], data.shape
    if target.value is None:
        t_rank = target.shape[0] if target.rank == 1 and isinstance(target.shape[0], int) else None
        if t_rank is None or (body == "bidirectional" and d is None):
            return None
        return (None,) * (max(t_rank, len(d)) if body == "bidirectional" else t_rank)
    t = int_vector(target.value, "target_shape")
    if body in ("numpy", "explicit"):
        return tuple(t)
    if d is None:
        return None if body == "bidirectional" else (None,) * len(t)
    if all(isinstance(x, int) for x in d):
        if body == "bidirectional":
            return tuple(np.broadcast_shapes(tuple(d), tuple(t)))
        return pdpd_shape(d, t, attrs["axis"])
    if body == "bidirectional":  # (ints checked by check_operands): a dim of 1 takes the other one
        rank = max(len(d), len(t))
        pairs = zip((1,) * (rank - len(d)) + tuple(d), (1,) * (rank - len(t)) + tuple(t))
        return tuple(tt if dd == 1 else dd if tt == 1 or isinstance(dd, int) else tt for dd, tt in pairs)
    start = len(t) - len(d)  # pdpd: data dim dd is tt or 1 unless tt is 1; max(dd, 0) is dd
    return tuple(t[:start]) + tuple(dd if tt in (0, 1) else max(dd, tt) if isinstance(dd, int) else tt
                                    for dd, tt in zip(d, t[start:]))


def check_attributes(attrs: dict) -> dict:
    version, mode, axis = attrs["version"], attrs["mode"].lower(), attrs["axis"]
    require_version("Broadcast", attrs, VERSIONS)
    if mode not in MODES[version]:
        raise OpAttributeError("Broadcast", "mode", f"is {attrs['mode']!r}: Broadcast-{version} modes are "
                               f"{', '.join(MODES[version])}")
    if mode == "pdpd" and axis < -1:
        raise OpAttributeError("Broadcast", "axis", f"is {axis}: pdpd's axis must be -1 (trailing alignment) or >= 0")
    if mode != "pdpd" and axis != -1:
        raise OpAttributeError("Broadcast", "axis", f"is {axis}: only mode pdpd takes an axis")
    return {**attrs, "mode": mode}


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    mode, version = attrs["mode"], attrs["version"]
    n = len(operands)
    if _BODY_OF_MODE[mode] == "explicit" and n != 3:
        raise OpInputError("Broadcast", f"mode {mode!r} needs the axes_mapping input")
    if version == 3 and _BODY_OF_MODE[mode] != "explicit" and n != 2:
        raise OpInputError("Broadcast", f"Broadcast-3 takes no axes_mapping input in mode {mode!r}")
    data, target = operands[0], operands[1]
    for name, o in zip(("target_shape", "axes_mapping"), operands[1:]):
        if name == "axes_mapping" and _BODY_OF_MODE[mode] != "explicit":
            continue  # Broadcast-1's unused third input
        if o.type is not None and not o.type.is_integer:
            raise OpInputError("Broadcast", f"{name} must be integers, got {o.type.ov}")
        if o.rank is not None and o.rank != 1:
            raise OpInputError("Broadcast", f"{name} must be 1-D, got rank {o.rank}")
    # What the known values decide now.
    d = data.shape
    t = None if target.value is None else int_vector(target.value, "target_shape")
    t_rank = len(t) if t is not None else None
    if t_rank is None and target.rank == 1 and isinstance(target.shape[0], int):
        t_rank = target.shape[0]
    if t is not None and any(v < 0 for v in t):
        raise OpInputError("Broadcast", f"target_shape {t} has a negative dim")
    known = d is not None and all(isinstance(x, int) for x in d)
    body = _BODY_OF_MODE[mode]
    if body == "numpy" and d is not None and t_rank is not None and t_rank < len(d):
        raise OpInputError("Broadcast", f"numpy mode: target_shape of rank {t_rank} is smaller than the data rank "
                           f"{len(d)}")
    if body == "pdpd" and d is not None and t_rank is not None:
        start = t_rank - len(d)
        if start < 0 or attrs["axis"] not in (-1, start):
            raise OpInputError("Broadcast", f"pdpd mode: axis {attrs['axis']} does not align data of rank {len(d)} "
                               f"with the end of a target_shape of rank {t_rank}")
    if t is not None and d is not None and not known and body == "numpy" and len(t) >= len(d):
        # the data dims that are known must broadcast one-way
        for dd, tt in zip(d, t[len(t) - len(d):]):
            if isinstance(dd, int) and dd != 1 and dd != tt:
                raise OpInputError("Broadcast", f"numpy mode: data shape {list(d)} does not broadcast one-way to "
                                   f"{list(t)}")
    if t is not None and known:
        if body == "numpy":
            check_numpy(d, t)
        elif body == "pdpd":
            pdpd_shape(d, t, attrs["axis"])
        elif body == "bidirectional":
            try:
                np.broadcast_shapes(tuple(d), tuple(t))
            except ValueError:
                raise OpInputError("Broadcast", f"data shape {list(d)} and target_shape {t} do not broadcast") from None
    if body == "explicit" and operands[2].value is not None:
        a = int_vector(operands[2].value, "axes_mapping")
        if any(x >= y for x, y in zip(a, a[1:])):
            raise OpInputError("Broadcast", f"axes_mapping {a} must be strictly increasing: Broadcast doesn't "
                               "permit transposes")
        if any(x < 0 or (t_rank is not None and x >= t_rank) for x in a):
            raise OpInputError("Broadcast", f"axes_mapping {a} must be within [0, {t_rank})")
        if d is not None and not (len(a) == len(d) or (len(d) == 0 and len(a) == 1)):
            raise OpInputError("Broadcast", f"axes_mapping {a} must have one entry per data axis ({len(d)})")
        if t is not None and known:
            explicit_shape(d, t, a)
        elif t is not None and d is not None and len(a) == len(d) and all(0 <= x < len(t) for x in a):
            for i, (x, dd) in enumerate(zip(a, d)):
                if isinstance(dd, int) and dd != 1 and dd != t[x]:
                    raise OpInputError("Broadcast", f"data dim {i} ({dd}) must be 1 or target_shape[{x}] = {t[x]}")


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    body = _BODY_OF_MODE[attrs["mode"]]
    et = operands[0].type if operands else None
    # Expand has no bf16 kernel; the Gather route also serves unknown types.
    if et is None or et.ov == "bf16":
        return f"{body}_any"
    if body in ("numpy", "explicit"):
        const = _const_overload(body, operands)
        if const is not None:
            return const
    return body


def _const_overload(body: str, operands: Sequence[Operand]) -> str | None:
    """The constant-target overload for this node, or None (values or data rank not known)."""
    data, target = operands[0], operands[1]
    if target.value is None or data.shape is None:
        return None
    t = [int(v) for v in np.asarray(target.value).reshape(-1)]
    d = data.shape
    if body == "numpy":
        offset = len(t) - len(d)
        if offset < 0:
            return None
        checks = [i for i, dim in enumerate(d) if t[offset + i] == 1 and dim != 1]
        return ToTarget("numpy", t, None, checks).name
    if len(operands) < 3 or operands[2].value is None:
        return None
    axes = [int(v) for v in np.asarray(operands[2].value).reshape(-1)]
    if len(d) == 0:
        return ToTarget("explicit", t, (), ()).name  # 0-d data: checked when built (a target dim of 1)
    if len(axes) != len(d):
        return None
    checks = [i for i, (a, dim) in enumerate(zip(axes, d)) if t[a] == 1 and dim != 1]
    return ToTarget("explicit", t, axes, checks).name


def openvino_node(attrs: dict, inputs: list):
    """OpenVINO's spellings: pdpd's axis is the attribute visitor's path (``mode.auto_broadcast_axis`` in
    Broadcast-1, ``mode.mode.axis`` in Broadcast-3); Broadcast-1 always has an ``axes_mapping`` input (an
    unused u8 0 where none is given, as its C++ constructor adds)."""
    from openvino import opset1

    version, mode = attrs["version"], attrs["mode"]
    params = {"mode": mode}
    if mode == "pdpd":
        params["mode.auto_broadcast_axis" if version == 1 else "mode.mode.axis"] = attrs["axis"]
    if version == 1 and len(inputs) == 2:
        inputs = [*inputs, opset1.constant(np.uint8(0)).output(0)]
    return factory(version, "Broadcast", inputs, params)


SPEC = OpSpec(
    name="Broadcast",
    inputs=("data", "target_shape", "axes_mapping"),
    min_inputs=2,
    attributes={"mode": Attr("string", "numpy"), "axis": Attr("int", -1), "version": Attr("int", 3)},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=output_shape,
    read_operands=lambda attrs, operands: operands if _BODY_OF_MODE[attrs["mode"]] == "explicit" else operands[:2],
    bodies=Bodies(Broadcast, MODE_BODIES, [ToTarget]),
    helpers=HELPERS,
    public=Broadcast,
    reference=broadcast_reference,
    openvino=openvino_node,
)
