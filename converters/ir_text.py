"""The text of an IR file as OpenVINO 2026.4 reads it: element type names, dimensions, tensor names,
integers and integer lists. Shared by the reader (ports, Const shapes) and the attribute readers."""

from __future__ import annotations

import re

from onnx_ext.types import F4E2M1, F8E8M0, NF4, ElementType, UnknownElementType, from_ov

from .ir import IRError

#: The largest dimension and element count ONNX (int64 dims) and OpenVINO can declare.
MAX_DIM = 2**63 - 1
#: Port ``precision`` spellings of IR files (legacy upper-case names) that are not simply the
#: upper-case type name, -> element type names. OpenVINO takes a precision spelled exactly so,
#: or in lower case, and a <data> element type in any case but no legacy spelling.
_PRECISION_ALIASES = {"FP16": "f16", "FP32": "f32", "FP64": "f64", "BOOL": "boolean", "UNSPECIFIED": "undefined"}
_NOT_UPPER = ("F16", "F32", "F64", "BOOLEAN", "UNDEFINED", "DYNAMIC")  # their legacy spellings only
#: What OpenVINO skips before a number (C's isspace).
SPACE = " \t\n\r\f\v"
_INTEGER = re.compile(rf"[{SPACE}]*(-?[0-9]+)")
#: u1 (one bit per value, packed; port precision BIN: BinaryConvolution's weights) is read as boolean, the
#: bits unpacked (ir_weights.py): ONNX has no 1-bit type.
_ONE_BIT = {"u1": "boolean", "bin": "boolean"}
#: Element types that mean "not known" (ports of dynamically typed tensors).
_UNDEFINED_TYPES = {"dynamic", "undefined"}


_TABLE_TYPES = {t.ov: t for t in (NF4, F4E2M1, F8E8M0)}


def element_type(text: str, where: str, *, precision: bool = False) -> ElementType | None:
    """An IR element type name as OpenVINO reads it: in <data> (``f32``, ``I64``, ``boolean``),
    or (``precision``) a port's precision (``f32`` or ``FP32``, ``BOOL``, ``I64``); None for
    dynamic types."""
    if precision:
        key = _PRECISION_ALIASES.get(text, text.lower() if text.isupper() and text not in _NOT_UPPER else text)
    else:
        key = text.lower()
    if key in _UNDEFINED_TYPES:
        return None
    key = _ONE_BIT.get(key, key)
    if key == "string":  # OpenVINO tokenizers' IRs: say why, not "unknown"
        raise IRError(f"{where}: element type 'string': string tensors do not convert (ONNX has string tensors but "
                      "no standard op that reads or writes their bytes, as StringTensorPack/Unpack do)")
    if key in _TABLE_TYPES:  # Consts only: the reader rewrites them (ir_nf4.py) and refuses them elsewhere
        return _TABLE_TYPES[key]
    try:
        et = from_ov(key)
    except UnknownElementType:
        et = None
    if et is None or et.ov != key:  # from_ov is lenient ("bool", " f32"); OpenVINO is not
        raise IRError(f"{where}: unknown or unsupported element type {text!r}")
    return et


def dim(text: str, where: str, *, open_below: bool = False) -> int | None:
    """A dimension: a number, -1 or ? (dynamic), or an interval ``lo..hi`` (dynamic here; ``hi``
    may be left out, and in a Parameter's <data> shape ``lo`` too, as OpenVINO allows); None
    for dynamic ones."""
    t = text.strip()
    if t == "":
        raise IRError(f"{where}: empty dimension")
    if t == "?":
        return None
    lo, interval, hi = t.partition("..")
    try:
        value = int(lo) if lo.strip() or not (interval and open_below) else 0
        upper = int(hi) if interval and hi.strip() else None
    except ValueError:
        raise IRError(f"{where}: bad dimension {text!r}") from None
    if value < -1 or value > MAX_DIM or (upper is not None and not max(value, 0) <= upper <= MAX_DIM):
        raise IRError(f"{where}: bad dimension {text!r} (must be -1 to 2^63-1, intervals lo..hi with lo <= hi)")
    return None if interval or value == -1 else value


def split_names(text: str) -> list[str]:
    """``names="a,b\\,c"`` -> ["a", "b,c"] (a backslash escapes a comma inside a name)."""
    if not text.strip():
        return []
    names, current, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] == ",":
            current.append(",")
            i += 2
            continue
        if ch == ",":
            names.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
        i += 1
    names.append("".join(current).strip())
    return [n for n in names if n]


def parse_int(text: str) -> int | None:
    """An integer as OpenVINO reads one (<data> attributes, Const shapes): spaces, an optional "-",
    digits, anything after them ignored ("1.5" is 1); None where it refuses the text (blank,
    "+1", beyond int64)."""
    match = _INTEGER.match(text)
    value = int(match.group(1)) if match else None
    return value if value is not None and -(2**63) <= value < 2**63 else None


def parse_entries(text: str, parse) -> list | None:
    """An IR list as OpenVINO reads it, each entry by ``parse``: ``"0, 1, 1"`` -> [0, 1, 1],
    ``""`` -> [], a trailing "," ends the last entry; None where it refuses the text (an empty
    entry, ``"1,,2"``, or one ``parse`` refuses)."""
    entries = text.split(",") if text else []
    if entries and entries[-1] == "":
        entries.pop()
    values = [parse(entry) if entry else None for entry in entries]
    return None if None in values else values


def parse_list(text: str | None) -> list[int]:
    """An IR integer list as OpenVINO reads it (``parse_entries``). Raises ValueError."""
    values = parse_entries(text or "", parse_int)
    if values is None:
        raise ValueError(f"{text!r} is not a list of integers")
    return values
