"""The inputs both sides get: given (arrays or an .npz, checked against the model) or seeded random values."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping

import numpy as np
import onnx

from onnx_ext.types import ElementType

from ..files import not_found
from .dims import DEFAULT_SIZE, plan_dims
from .errors import VerifyError
from .signature import onnx_signature


@dataclass(frozen=True)
class InputPolicy:
    """How random inputs are made when none are given."""

    seed: int = 0
    dynamic_size: int | None = None  # every dynamic dim not named; None: sizes that fit the model (dims.py)
    dims: Mapping[str, int] | None = None  # symbolic dim name -> size
    float_range: tuple[float, float] = (-1.0, 1.0)
    int_range: tuple[int, int] = (0, 4)  # small: integers often feed shapes and indices
    shapes: Mapping[str, tuple[int, ...]] | None = None  # input name -> its whole shape
    skip_unknown: bool = False  # names in dims / shapes that the model lacks are skipped (a batch of models)


def make_inputs(model: onnx.ModelProto, policy: InputPolicy = InputPolicy()) -> dict[str, np.ndarray]:
    """Seeded random inputs honouring the model's declared types and shapes; dynamic dims sized by
    ``policy`` (dims shared across inputs get one size: ``dims.plan_dims``)."""
    rng = np.random.default_rng(policy.seed)
    declared = onnx_signature(model)[0]
    named = dict(_dims_of_shapes(declared, policy.shapes or {}))
    named.update({k: v for k, v in (policy.dims or {}).items() if k in symbolic_dims(model)})
    sizes = plan_dims(model, named, policy.dynamic_size).sizes if symbolic_dims(model) else {}
    feeds = {}
    for t in declared:
        if t.type is None:
            raise VerifyError(f"input {t.name!r}: no random values for its element type; give --inputs")
        given = (policy.shapes or {}).get(t.name)
        if given is not None:
            shape = list(given)
        else:
            shape = [d if isinstance(d, int) else sizes.get(d, policy.dynamic_size or DEFAULT_SIZE)
                     for d in (t.dims or ())]
        feeds[t.name] = _random_array(rng, t.type, shape, policy)
    return feeds


def _dims_of_shapes(declared, shapes: Mapping[str, tuple[int, ...]]):
    """The symbolic dims that ``--shape`` sizes (then every dim shared with them follows)."""
    for t in declared:
        if t.name in shapes:
            for d, size in zip(t.dims or (), shapes[t.name]):
                if isinstance(d, str):
                    yield d, size


def symbolic_dims(model: onnx.ModelProto) -> list[str]:
    """The names of the symbolic dims of the model's inputs, in order of appearance."""
    seen: dict[str, None] = {}
    for t in onnx_signature(model)[0]:
        for d in t.dims or ():
            if isinstance(d, str):
                seen[d] = None
    return list(seen)


def check_dims(model: onnx.ModelProto, policy: InputPolicy) -> InputPolicy:
    """Raise VerifyError unless every dim and shape named in ``policy`` fits the model; the policy
    with the names the model lacks dropped when it skips unknown names (a batch of models)."""
    known = symbolic_dims(model)
    dims = {}
    for name, size in (policy.dims or {}).items():
        if size < 0:
            raise VerifyError(f"dim {name}={size}: a size must be >= 0")
        if name in known:
            dims[name] = size
        elif not policy.skip_unknown:
            raise VerifyError(f"dim {name}={size}: the model's inputs have no dim named {name!r} "
                              f"(their symbolic dims: {', '.join(known) or 'none'})")
    declared = {t.name: t for t in onnx_signature(model)[0]}
    shapes = {}
    for name, shape in (policy.shapes or {}).items():
        t = declared.get(name)
        text = ",".join(map(str, shape))
        if t is None:
            if policy.skip_unknown:
                continue
            raise VerifyError(f"shape {name}={text}: no model input named {name!r} (the inputs: {', '.join(declared)})")
        if t.dims is not None and len(t.dims) != len(shape):
            raise VerifyError(f"shape {name}={text}: {name!r} has rank {len(t.dims)}, not {len(shape)}")
        for i, (d, size) in enumerate(zip(t.dims or (), shape)):
            if size < 0 or isinstance(d, int) and d != size:
                raise VerifyError(f"shape {name}={text}: dim {i} of {name!r} is {d}")
        shapes[name] = tuple(shape)
    return replace(policy, dims=dims, shapes=shapes)


def _random_array(rng, et: ElementType, shape, policy: InputPolicy) -> np.ndarray:
    if et.kind == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if et.is_integer:
        lo, hi = policy.int_range
        if et.kind == "uint":
            lo = max(lo, 0)
        return rng.integers(lo, hi, shape, endpoint=False).astype(et.numpy)
    lo, hi = policy.float_range
    return rng.uniform(lo, hi, shape).astype(np.float32).astype(et.numpy)


def load_inputs(path: str | Path) -> dict[str, np.ndarray]:
    try:
        with open(path, "rb") as f:  # np.load takes any other bytes for a pickle and says so
            if f.read(2) != b"PK":
                raise ValueError("not an .npz archive: numpy.savez(path, NAME=array, ...) writes one")
        with np.load(path, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except FileNotFoundError:
        raise not_found(path, "inputs file") from None
    except (OSError, ValueError, EOFError) as e:
        raise VerifyError(f"{path}: cannot read inputs ({' '.join(str(e).split())})") from None


def check_feeds(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], source: str) -> None:
    """Raise VerifyError naming the input unless ``feeds`` has each model input once, with the
    declared element type, rank and static dims."""
    declared = onnx_signature(model)[0]
    expected = {t.name for t in declared}
    extra = [n for n in feeds if n not in expected]
    if extra:
        raise VerifyError(f"{source}: no model input named {extra[0]!r} (the inputs: {', '.join(sorted(expected))})")
    for t in declared:
        if t.name not in feeds:
            raise VerifyError(f"{source}: input {t.name!r} is missing")
        value = np.asarray(feeds[t.name])
        if t.type is not None and value.dtype != t.type.numpy:
            raise VerifyError(f"{source}: input {t.name!r} has dtype {value.dtype}, the model expects {t.type.numpy}"
                              f" ({t.type.ov})")
        if t.dims is not None and (len(value.shape) != len(t.dims) or any(
                isinstance(d, int) and d != s for d, s in zip(t.dims, value.shape))):
            want = "[" + ", ".join("?" if d is None else str(d) for d in t.dims) + "]"
            raise VerifyError(f"{source}: input {t.name!r} has shape {list(value.shape)}, the model expects {want}")
