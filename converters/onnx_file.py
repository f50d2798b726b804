"""Writing a converted model and its weights to an ONNX file, the weights not copied into memory.

External data (models past 2 GB, or on request) is onnx_ir's: it writes each weight from its
array into the ``.data`` file. Embedded weights are framed here by hand, because onnx_ir's
``save`` serialises the whole ModelProto, weights included, which doubles the memory. Measured
on this machine with 125 f32 [1024, 1024] weights (500 MB, memory-mapped): ``ir.save`` 1.08 s
and +1008 MiB of anonymous memory, ``ir.save`` with external data 0.54 s and +0 MiB; here, the
whole ``convert_ir_file`` (benchmarks/bench_convert.py, weights-500M) +1 MiB.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO, Callable, Sequence

import onnx
import onnx_ir as ir

from .files import staged

#: protobuf refuses to serialise or parse messages of 2 GB or more.
PROTOBUF_LIMIT = 2**31 - 1
#: Offsets of external data (a page: onnxruntime can map it).
EXTERNAL_ALIGNMENT = 4096


def write_onnx(model: onnx.ModelProto, weights: Sequence[ir.TensorProtocol], path: Path,
               external_data: bool | None = None, check: Callable[[Path], None] | None = None) -> None:
    """Write ``model`` and, as its last initializers, ``weights`` to ``path`` atomically (on an error
    nothing is written). The weights are written from their arrays: after the rest of the model,
    or (``external_data``; None: when the model would reach protobuf's limit) in ``<file name>.data``
    beside it, at offsets aligned to ``EXTERNAL_ALIGNMENT``. ``check(file)``: runs on the complete
    file (its data beside it) before it is moved into place; what it raises stops the write."""
    if external_data is None:
        external_data = model.ByteSize() + sum(t.nbytes for t in weights) + 64 * len(weights) >= PROTOBUF_LIMIT
    data_path = path.with_name(path.name + ".data")
    with staged([data_path, path] if external_data else [path]) as temps:
        model_temp = temps[-1]
        if external_data:
            external = ir.external_data.convert_tensors_to_external(
                weights, model_temp.parent, data_path.name, alignment=EXTERNAL_ALIGNMENT, align_threshold=0)
            model.graph.initializer.extend(ir.serde.serialize_tensor(t) for t in external)
            model_temp.write_bytes(model.SerializeToString())
        else:
            with open(model_temp, "wb") as f:
                _stream(f, model, weights)
        if check is not None:
            check(model_temp)


def _field(number: int, length: int) -> bytes:
    """The key and length of a length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(length)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _stream(f: BinaryIO, header: onnx.ModelProto, tensors: Sequence[ir.TensorProtocol]) -> None:
    """Write ``header`` and, as its last initializers, ``tensors`` without building them in memory:
    protobuf merges a message field that occurs twice, so the tensors follow the model as a second
    ``graph`` field holding only initializers, each written from the array's bytes."""
    f.write(header.SerializeToString())
    if not tensors:
        return
    raw_data = onnx.TensorProto.DESCRIPTOR.fields_by_name["raw_data"].number
    initializer = onnx.GraphProto.DESCRIPTOR.fields_by_name["initializer"].number
    graph = onnx.ModelProto.DESCRIPTOR.fields_by_name["graph"].number
    heads = [_tensor_header(t).SerializeToString() + _field(raw_data, t.nbytes) for t in tensors]
    keys = [_field(initializer, len(h) + t.nbytes) for h, t in zip(heads, tensors)]
    f.write(_field(graph, sum(len(k) + len(h) + t.nbytes for k, h, t in zip(keys, heads, tensors))))
    for key, head, tensor in zip(keys, heads, tensors):
        f.write(key)
        f.write(head)
        tensor.tofile(f)


def _tensor_header(tensor: ir.TensorProtocol) -> onnx.TensorProto:
    proto = onnx.TensorProto()
    proto.name = tensor.name
    proto.dims.extend(tensor.shape.numpy())
    proto.data_type = tensor.dtype.value
    return proto
