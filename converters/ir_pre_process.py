"""An IR's <pre-process> section (IR v10 files of the old Model Optimizer): mean values that
OpenVINO's IR frontend subtracts from one input when it reads the file (``parse_pre_process`` in
src/frontends/ir/src/input_model.cpp). A reader that skipped it would give a model whose outputs
differ from OpenVINO's, so the reader rewrites it, in place, into the layers OpenVINO builds:

    Parameter -> Subtract-1(Parameter, Const mean) -> what read the Parameter

The mean is one value per channel (``<mean value="..."/>``, shape [C, 1, ...]) or one image per
channel from the .bin (``<mean offset=".." size=".."/>``, each [1, H, W], concatenated to [C, H, W]);
the channel is dim 1 of the input (dim 0 of a rank-3 one, as OpenVINO's legacy CHW)."""

from __future__ import annotations

import math
import mmap
from pathlib import Path
from xml.etree.ElementTree import Element

import numpy as np

from .ir import Edge, IRError, IRModel, Layer, Port


def apply_pre_process(root: Element, ir: IRModel, bin_path: Path) -> None:
    section = root.find("pre-process")
    if section is None:
        return
    where = f"{ir.source}: <pre-process>"
    param = _reference_input(section, ir, where)
    port = param.outputs[0]
    if any(d is None for d in port.dims) or port.element_type is None:
        raise IRError(f"{where}: input {param.name!r} has a dynamic shape or type (OpenVINO refuses it too)")
    where = f"{where} of input {param.name!r}"
    dims = port.dims
    if not 2 <= len(dims) <= 5:
        raise IRError(f"{where}: the input has rank {len(dims)}; mean values apply to ranks 2 to 5")
    channels, scalar_shape, image_shape = _mean_shapes(dims)
    values, images = _channels(section, where)
    if values and images:
        raise IRError(f"{where}: mean values have different types (both value= and offset/size)")
    found = values or images
    if len(found) != channels or any(c >= channels for c in found):
        raise IRError(f"{where}: mean values for channels {sorted(found)}, the input has {channels} channels")
    dtype = port.element_type.numpy
    if values:
        mean = np.array([values[c] for c in range(channels)], dtype=np.float32).astype(dtype).reshape(scalar_shape)
    else:
        mean = _images([images[c] for c in range(channels)], image_shape, dtype, bin_path, where)
    _insert_subtract(ir, param, mean)


def _reference_input(section: Element, ir: IRModel, where: str) -> Layer:
    params = [layer for layer in ir.layers if layer.type == "Parameter"]
    name = section.get("reference-layer-name", "").strip()
    if name:
        match = [p for p in params if p.name == name]
        if not match:
            raise IRError(f"{where}: reference-layer-name {name!r} names no input")
        return match[0]
    if not params:
        raise IRError(f"{where}: the model has no input")
    # OpenVINO's fallback (old files): the first input of rank 4, else the first input
    return next((p for p in params if len(p.outputs[0].dims) == 4), params[0])


def _mean_shapes(dims: list[int]) -> tuple[int, list[int], list[int]]:
    """Channels, the shape of per-channel values, the shape of one channel's image."""
    if len(dims) == 2:  # NC
        return dims[1], [dims[1]], [1]
    if len(dims) == 3:  # CHW
        return dims[0], [dims[0], 1, 1], [1, dims[1], dims[2]]
    return dims[1], [dims[1]] + [1] * (len(dims) - 2), [1] + dims[2:]


def _channels(section: Element, where: str) -> tuple[dict[int, float], dict[int, tuple[int, int]]]:
    values, images = {}, {}
    for next_id, chan in enumerate(section.findall("channel")):
        try:
            chan_id = int(chan.get("id", next_id))
        except ValueError:
            raise IRError(f"{where}: channel id {chan.get('id')!r} is not an integer") from None
        mean = chan.find("mean")
        if mean is None:
            continue
        if mean.get("value") is None and mean.get("size") is None:
            raise IRError(f"{where}: channel {chan_id}: <mean> has neither value nor size")
        try:
            if mean.get("value") is not None:
                values[chan_id] = float(mean.get("value"))
            if mean.get("size") is not None and mean.get("offset") is not None:
                images[chan_id] = (int(mean.get("offset")), int(mean.get("size")))
        except ValueError:
            raise IRError(f"{where}: channel {chan_id}: <mean> {dict(mean.attrib)} is not numeric") from None
    return values, images


def _images(spans: list[tuple[int, int]], shape: list[int], dtype: np.dtype, bin_path: Path,
            where: str) -> np.ndarray:
    """The channels' mean images [1, H, W] from the .bin (mapped once), concatenated to [C, H, W]."""
    need = math.prod(shape) * dtype.itemsize
    for offset, size in spans:
        if size != need or offset < 0:
            raise IRError(f"{where}: a mean image of {size} bytes at {offset}; {dtype} {shape} needs {need}")
    try:
        with open(bin_path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            for offset, size in spans:
                if offset + size > len(buf):
                    raise IRError(f"{where}: a mean image at offset {offset} size {size} lies outside {bin_path} "
                                  f"({len(buf)} bytes)")
            return np.concatenate([np.frombuffer(buf, dtype=dtype.newbyteorder("<"), count=math.prod(shape),
                                                 offset=offset).astype(dtype).reshape(shape)
                                   for offset, _ in spans])
    except (OSError, ValueError) as e:  # (mmap of an empty file: ValueError)
        raise IRError(f"{where}: cannot read the mean image from {bin_path} ({e})") from None


def _insert_subtract(ir: IRModel, param: Layer, mean: np.ndarray) -> None:
    """Every reader of the Parameter's output reads Subtract(Parameter, mean) instead."""
    port = param.outputs[0]
    next_id = max(layer.id for layer in ir.layers) + 1
    const = Layer(id=next_id, name=f"{param.name}/mean", type="Const", version="opset1",
                  data={"element_type": port.element_type.ov, "shape": ",".join(map(str, mean.shape))},
                  outputs=[Port(0, port.element_type, list(mean.shape))], value=mean)
    sub = Layer(id=next_id + 1, name=f"{param.name}/subtract_mean", type="Subtract", version="opset1",
                data={"auto_broadcast": "numpy"},
                inputs=[Port(0, port.element_type, list(port.dims)), Port(1, port.element_type, list(mean.shape))],
                outputs=[Port(2, port.element_type, list(port.dims))])
    ir.edges = [Edge(sub.id, 2, e.to_layer, e.to_port) if (e.from_layer, e.from_port) == (param.id, port.id) else e
                for e in ir.edges]
    ir.edges += [Edge(param.id, port.id, sub.id, 0), Edge(const.id, 0, sub.id, 1)]
    ir.layers += [const, sub]
