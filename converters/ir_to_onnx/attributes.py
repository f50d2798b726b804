"""A layer's <data> attributes, read as OpenVINO's IR reader reads them.

Measured with OpenVINO 2026.4 (``read_model`` on IR whose attribute text was edited; the
differential tests are tests/test_ir_attributes.py):

- boolean: "true" or "1" is true, "false" or "0" false, in any case; any other text ("yes", "",
  " true", "2") is the op's default, as when absent.
- integer: spaces, an optional "-", digits; what follows is ignored ("1.5" is 1, "0x10" 0,
  "1 2" 1). Blank, "+1", "abc", "-" or beyond int64 are refused ("Cannot parse '' to number").
- float: "inf", "-inf" or "nan" (lower case, spaces around), else spaces, an optional sign,
  digits with a "." and an exponent; what follows is ignored ("1,5" is 1). Blank, "INF",
  "NaN", "+inf", "1e" (an exponent without digits) or beyond double range are refused.
- lists: entries separated by ","; "" is the empty list, one trailing "," is ignored, an empty
  entry ("1,,2", ",1") is refused; each entry as above ("1, 2" is [1, 2], " " is refused).
- enum (``auto_pad``, ``mode``, ...): one of the op's names in any case ("VALID"); blank or with
  spaces refused. Plain string attributes (ROIPooling ``method``, Einsum ``equation``) are
  taken as written and checked by the op exactly.
- names (RNN ``activations``): entries separated by ",", each trimmed and lower-cased, empty
  ones dropped.
- element type: ``ir_text.element_type``. Integers and lists are ``ir_text``'s rules (the reader's
  Const shapes follow them too).
- absent: the op's default (what its constructor sets; an attribute the op's version does not
  have is never read).

Each reader takes the layer's attribute ``name`` and ``default`` (None: absent is an error) and
raises a one-line IRError naming the file, the layer and the attribute.
"""

from __future__ import annotations

import math
import re

from onnx_ext.types import ElementType

from ..ir import IRError, Layer
from ..ir_text import SPACE, element_type, parse_entries, parse_int
from .context import Context

_FLOAT = re.compile(rf"[{SPACE}]*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))([eE](?:[+-]?[0-9]+)?)?")


def _where(ctx: Context, layer: Layer) -> str:
    """``ctx.where``, naming ``layer`` too when it is not the layer being translated (a pattern's)."""
    return ctx.where if layer is ctx.layer else f"{ctx.where}: {layer.describe()}"


def _error(ctx: Context, layer: Layer, message: str) -> IRError:
    return ctx.error(message if layer is ctx.layer else f"{layer.describe()}: {message}")


def _text(ctx: Context, layer: Layer, name: str, default) -> str | None:
    """The attribute's text; None when absent with a default."""
    text = layer.data.get(name)
    if text is None and default is None:
        raise _error(ctx, layer, f"attribute {name!r} is missing")
    return text


def _lower(text: str) -> str:
    """ASCII lower case, as OpenVINO compares (Python's would turn U+212A into "k")."""
    return text.lower() if text.isascii() else text


def _parse_float(text: str) -> float | None:
    if text.strip(SPACE) in ("inf", "-inf", "nan"):
        return float(text.strip(SPACE))
    match = _FLOAT.match(text)
    if match is None or match.group(2) in ("e", "E"):  # "1e", "1e+": an exponent without digits
        return None
    value = float(match.group(0).lstrip(SPACE))
    return value if math.isfinite(value) else None


def boolean(layer: Layer, name: str, default: bool) -> bool:
    """Never an error: text other than true, false, 1 or 0 is the default."""
    text = _lower(layer.data.get(name, ""))
    return True if text in ("true", "1") else False if text in ("false", "0") else default


def _read(ctx: Context, layer: Layer, name: str, default, parse, what: str):
    """The attribute ``parse``d (None: refused), or ``default`` when absent."""
    text = _text(ctx, layer, name, default)
    if text is None:
        return default
    value = parse(text)
    if value is None:
        raise _error(ctx, layer, f"{name}={text!r} is not {what}")
    return value


def integer(ctx: Context, layer: Layer, name: str, default: int | None = None) -> int:
    return _read(ctx, layer, name, default, parse_int, "an integer")


def integers(ctx: Context, layer: Layer, name: str, default: list[int] | None = None, *,
             count: int | None = None) -> list[int]:
    """``count``: the number of entries the layer needs; an empty list is then the default, if
    any (OpenVINO's convolutions fill empty strides, dilations and pads, its poolings pads)."""
    values = list(_read(ctx, layer, name, default, lambda text: parse_entries(text, parse_int), "a list of integers"))
    if count is not None and len(values) != count:
        if not values and default is not None:
            return list(default)
        raise _error(ctx, layer, f"{name}={layer.data[name]!r} has {len(values)} entries, the layer needs {count}")
    return values


def number(ctx: Context, layer: Layer, name: str, default: float | None = None) -> float:
    return _read(ctx, layer, name, default, _parse_float, "a number")


def numbers(ctx: Context, layer: Layer, name: str, default: list[float] | None = None) -> list[float]:
    return list(_read(ctx, layer, name, default, lambda text: parse_entries(text, _parse_float), "a list of numbers"))


def choice(ctx: Context, layer: Layer, name: str, allowed: tuple[str, ...], default: str | None = None) -> str:
    """An enum attribute: one of the lower-case names ``allowed``, in any case."""
    text = _text(ctx, layer, name, default)
    value = default if text is None else _lower(text)
    if value not in allowed:
        raise _error(ctx, layer, f"{name} {text!r} is not one of {', '.join(allowed)}")
    return value


def string(ctx: Context, layer: Layer, name: str, default: str | None = None,
           allowed: tuple[str, ...] | None = None) -> str:
    """A plain string attribute as written, one of ``allowed`` (exactly) when given."""
    text = _text(ctx, layer, name, default)
    value = default if text is None else text
    if allowed is not None and value not in allowed:
        raise _error(ctx, layer, f"{name} {text!r} is not one of {', '.join(allowed)}")
    return value


def names(ctx: Context, layer: Layer, name: str, default: list[str] | None = None) -> list[str]:
    """A list of names (RNN ``activations``), lower case."""
    text = _text(ctx, layer, name, default)
    if text is None:
        return list(default)
    return [_lower(entry.strip(SPACE)) for entry in text.split(",") if entry.strip(SPACE)]


def element(ctx: Context, layer: Layer, name: str, default: str | None = None) -> ElementType | None:
    """An element type (None for ``dynamic``)."""
    text = _text(ctx, layer, name, default)
    return element_type(default if text is None else text, f"{_where(ctx, layer)}: {name}")
