"""IR -> ONNX: the driver around the translators."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

import onnx_ext
from onnx_ext.errors import OnnxExtError
from onnx_ext.types import from_numpy

from ..ir import IRError, IRModel, Layer
from ..files import write_atomically
from ..ir_reader import pack_4bit, read_ir, split_names
from .context import Context, Value
from .handlers.quantized import decompression_subgraphs
from .ranks import infer_rank
from .shape_hints import relax_declared_shapes
from .unsupported import no_onnx_equivalent
from .registry import lookup

PRODUCER = "onnx-ext"


def ir_to_onnx(ir: IRModel, *, inline: bool = False) -> onnx.ModelProto:
    """The ONNX model of ``ir``: nodes of the onnx-ext domain with their function
    bodies attached, or (``inline=True``) plain standard ONNX.

    Raises IRError (one line naming the file and layer) for anything that cannot
    be converted; every unsupported layer type/version is listed in one error.
    The weights are copied once, from the IR's arrays into the ModelProto (a model
    past protobuf's 2 GB cannot be serialised in one piece: ``convert_ir_file``
    writes such models with ONNX external data).
    """
    model, weights = _convert(ir, inline)
    _embed_weights(model, weights)
    return model


def convert_ir_file(xml_path, onnx_path, inline: bool = False, bin_path=None, *,
                    external_data: bool | None = None) -> Path:
    """Read ``xml_path`` (+ .bin), convert, and write ``onnx_path`` atomically.

    The model is written to a temporary file beside ``onnx_path`` and renamed
    into place; on any error nothing is written and an existing file is left as
    it was. Each weight's bytes go from the (memory-mapped) .bin to the file once:
    the model is streamed, never serialised with its weights in memory. Models
    past 2 GB (or with ``external_data=True``) keep their large initializers in
    ``<onnx file name>.data`` beside the model (ONNX external data, offsets aligned
    to 4096 bytes). Returns the path written.
    """
    onnx_path = Path(onnx_path)
    model, weights = _convert(read_ir(xml_path, bin_path), inline)
    _drop_weight_inputs(model, weights)
    weight_bytes = sum(_nbytes(a) for a in weights.values())
    if external_data is None:
        external_data = model.ByteSize() + weight_bytes + 64 * len(weights) >= PROTOBUF_LIMIT
    if not external_data:
        write_atomically([(onnx_path, lambda f: _stream_model(f, model, weights))])
        return onnx_path
    data_path = onnx_path.with_name(onnx_path.name + ".data")
    layout, offset = {}, 0
    for name, array in weights.items():
        offset = -(-offset // EXTERNAL_ALIGNMENT) * EXTERNAL_ALIGNMENT
        layout[name] = (offset, _nbytes(array))
        offset += _nbytes(array)
    for name, array in weights.items():
        tensor = _tensor_header(name, array)
        tensor.data_location = onnx.TensorProto.EXTERNAL
        for key, value in (("location", data_path.name), ("offset", str(layout[name][0])),
                           ("length", str(layout[name][1]))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        model.graph.initializer.append(tensor)

    def write_data(f):
        for name, array in weights.items():
            f.seek(layout[name][0])
            f.write(_raw_bytes(array))
        f.truncate(offset)

    write_atomically([(data_path, write_data), (onnx_path, lambda f: f.write(model.SerializeToString()))])
    return onnx_path


#: protobuf refuses to serialise or parse messages of 2 GB or more.
PROTOBUF_LIMIT = 2**31 - 1
#: Offsets of external data (a page: onnxruntime can map it).
EXTERNAL_ALIGNMENT = 4096


def _convert(ir: IRModel, inline: bool) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The model with its large initializers stood in for by graph inputs (so that
    attaching, inlining and checking never copy them), and those arrays by name."""
    layers = live_layers(ir)
    check_supported(ir, layers)
    ctx = Context(ir)
    translate_graph(ctx, layers)
    model, weights = _model(ctx, ir)
    try:
        if ctx.domain_used:
            model = onnx_ext.inline(model) if inline else onnx_ext.attach_functions(model)
        try:
            onnx.checker.check_model(model, full_check=True)
        except onnx.shape_inference.InferenceError:
            # Declared shapes are hints: drop those the ops contradict (warns), check again.
            if not relax_declared_shapes(model, _output_owners(ctx), ir.source):
                raise
            onnx.checker.check_model(model, full_check=True)
    except IRError:
        raise
    except (OnnxExtError, onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        raise IRError(" ".join(f"{ir.source}: the converted model is invalid: {e}".split())) from None
    return model, weights


def _output_owners(ctx: Context) -> dict[str, str]:
    """Graph output name -> the layer that makes it ("StridedSlice-opset1 'name'"), for messages."""
    producers = ctx.ir.producers()
    by_id = {layer.id: layer for layer in ctx.ir.layers}
    owners = {}
    for lid, info in ctx.result_infos.items():
        result = by_id[lid]
        src = by_id[producers[(lid, result.inputs[0].id)][0]]
        owners[info.name] = f"{src.type}-{src.version} {src.name!r}"
    return owners


def _drop_weight_inputs(model: onnx.ModelProto, weights: dict) -> None:
    kept = [i for i in model.graph.input if i.name not in weights]
    del model.graph.input[:]
    model.graph.input.extend(kept)


def _embed_weights(model: onnx.ModelProto, weights: dict[str, np.ndarray]) -> None:
    _drop_weight_inputs(model, weights)
    for name, array in weights.items():
        tensor = _tensor_header(name, array)
        tensor.raw_data = _raw_bytes(array).tobytes()  # the one copy (protobuf keeps this bytes object)
        model.graph.initializer.append(tensor)


def _tensor_header(name: str, array: np.ndarray) -> onnx.TensorProto:
    tensor = onnx.TensorProto()
    tensor.name = name
    tensor.dims.extend(array.shape)
    tensor.data_type = from_numpy(array.dtype).onnx
    return tensor


def _nbytes(array: np.ndarray) -> int:
    """The size of the array's data in an ONNX file (u4/i4: two values per byte)."""
    return -(-array.size // 2) if from_numpy(array.dtype).packed_bits else array.nbytes


def _raw_bytes(array: np.ndarray) -> memoryview:
    """The array's bytes as ONNX stores them: little-endian, C order, u4/i4 two per byte
    (low nibble first); without a copy when it is contiguous and not 4-bit."""
    if from_numpy(array.dtype).packed_bits:
        return memoryview(pack_4bit(array))
    array = np.ascontiguousarray(array)
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return memoryview(array.reshape(-1).view(np.uint8))


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, length: int) -> bytes:
    """The key and length of a length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(length)


def _stream_model(f, model: onnx.ModelProto, weights: dict[str, np.ndarray]) -> None:
    """Write ``model`` and, as its initializers, ``weights`` without building them in memory:
    protobuf merges a message field that occurs twice, so the weights follow the model as a
    second ``graph`` field holding only initializers, each written from the array's bytes."""
    f.write(model.SerializeToString())
    if not weights:
        return
    raw_data = onnx.TensorProto.DESCRIPTOR.fields_by_name["raw_data"].number
    initializer = onnx.GraphProto.DESCRIPTOR.fields_by_name["initializer"].number
    graph = onnx.ModelProto.DESCRIPTOR.fields_by_name["graph"].number
    parts = []
    for name, array in weights.items():
        header = _tensor_header(name, array).SerializeToString() + _field(raw_data, _nbytes(array))
        parts.append((header, array))
    entries = [(_field(initializer, len(h) + _nbytes(a)), h, a) for h, a in parts]
    f.write(_field(graph, sum(len(k) + len(h) + _nbytes(a) for k, h, a in entries)))
    for key, header, array in entries:
        f.write(key)
        f.write(header)
        f.write(_raw_bytes(array))




def translate_graph(ctx: Context, layers: list[Layer]) -> None:
    """Run the translators of ``layers`` (producers first) in ``ctx``."""
    _rank_knowledge(ctx, layers)
    _assign_names(ctx, ctx.ir, layers)
    subgraphs = decompression_subgraphs(ctx.ir, layers)  # compressed weights: one node in their place
    for layer in layers:
        ctx.layer = layer
        if layer.id in subgraphs and subgraphs[layer.id] is None:
            continue
        _check_empty_ports(ctx, layer)
        translate = subgraphs[layer.id].translate if layer.id in subgraphs else lookup(layer.type, layer.version)
        try:
            translate(ctx, layer)
        except IRError:
            raise
        except OnnxExtError as e:
            raise ctx.error(str(e)) from None
        except (ValueError, KeyError, IndexError, TypeError) as e:  # a malformed layer (bad attribute text, ...)
            raise ctx.error(f"cannot translate the layer ({type(e).__name__}: {e})") from e
        for i, port in enumerate(layer.outputs):
            if (layer.id, port.id) not in ctx.values:
                ctx.values[(layer.id, port.id)] = ctx.out_value(i)
    ctx.layer = None


def _check_empty_ports(ctx: Context, layer: Layer) -> None:
    """An output port written with no <dim> reads as a scalar; when the inputs say the
    rank is higher (IR from tools that leave out dims they do not know), use that rank."""
    if layer.type.lower() in ("parameter", "const", "result") or not layer.outputs:
        return
    empty = [p for p in layer.outputs if not p.dims and (layer.id, p.id) not in ctx.rank_unknown]
    if not empty:
        return
    rank = infer_rank(layer, [ctx.input(i) for i in range(len(layer.inputs))])
    if rank:
        for port in empty:
            ctx.dims_override[(layer.id, port.id)] = (None,) * rank


def translate_body(parent: Context, body: IRModel, inputs: dict[int, Value], results: list[int],
                   name: str) -> onnx.GraphProto:
    """A sub-graph body as an ONNX graph: its Parameters stand for the outer values
    ``inputs`` (by Parameter layer id); its outputs are the Results ``results``, in order."""
    ctx = Context(body, parent)
    ctx.param_values = inputs
    translate_graph(ctx, live_layers(body))
    missing = [r for r in results if r not in ctx.result_infos]
    if missing:
        raise parent.error(f"{name} has no Result layer {missing[0]}")
    return helper.make_graph(ctx.nodes, name, [], [ctx.result_infos[r] for r in results])


# --- graph analysis -----------------------------------------------------------------


def live_layers(ir: IRModel) -> list[Layer]:
    """Layers that reach a Result, and every Parameter, producers first (as OpenVINO's
    reader builds the model: layers feeding no Result are dropped)."""
    order = ir.topological_layers()
    preds: dict[int, set[int]] = {layer.id: set() for layer in ir.layers}
    for e in ir.edges:
        preds[e.to_layer].add(e.from_layer)
    live = set()
    stack = [layer.id for layer in ir.layers if layer.type.lower() in ("result", "assign")]
    while stack:
        lid = stack.pop()
        if lid in live:
            continue
        live.add(lid)
        stack.extend(preds[lid])
    return [layer for layer in order if layer.id in live or layer.type.lower() == "parameter"]


def check_supported(ir: IRModel, layers: list[Layer]) -> None:
    """One IRError listing every layer type/version that has no translator, with counts, each
    said to have no ONNX equivalent (``unsupported.NO_ONNX_EQUIVALENT``) or to be not
    translated yet."""
    missing: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    kinds: dict[str, str] = {}
    for layer in _with_bodies(layers):
        if lookup(layer.type, layer.version) is None:
            key = f"{layer.type}-{layer.version or '(no version)'}"
            kinds[key] = "no ONNX equivalent" if no_onnx_equivalent(layer.type) else "not translated yet"
            missing[key] += 1
            examples.setdefault(key, []).append(f"{layer.id} {layer.name!r}")
    if not missing:
        return
    total = sum(missing.values())
    parts = []
    for key, count in sorted(missing.items()):
        shown = ", ".join(examples[key][:3]) + (", ..." if count > 3 else "")
        parts.append(f"{key} x{count} ({kinds[key]}; layer {shown})")
    raise IRError(f"{ir.source}: {total} layer{'s' if total > 1 else ''} of {len(missing)} unsupported "
                  f"type{'s' if len(missing) > 1 else ''}/version{'s' if len(missing) > 1 else ''}: {'; '.join(parts)}")


def _with_bodies(layers: list[Layer]):
    for layer in layers:
        yield layer
        for body in layer.bodies.values():
            yield from _with_bodies(live_layers(body))


def _rank_knowledge(ctx: Context, layers: list[Layer]) -> None:
    """IR files write a dynamic rank as no <dim> at all, like a scalar. A port is taken
    as "rank unknown" when it has no dims and comes from a Parameter of dynamic rank
    (``shape="..."``) or from a layer with such an input."""
    producers = ctx.ir.producers()
    for layer in layers:
        if layer.type.lower() == "parameter":
            if "..." in layer.data.get("shape", "") and layer.outputs and not layer.outputs[0].dims:
                ctx.rank_unknown.add((layer.id, layer.outputs[0].id))
            continue
        if layer.type.lower() == "const":
            continue
        tainted = any(producers[(layer.id, p.id)] in ctx.rank_unknown for p in layer.inputs)
        if tainted:
            for port in layer.outputs:
                if not port.dims:
                    ctx.rank_unknown.add((layer.id, port.id))


def _preferred_name(names: list[str]) -> str | None:
    # Exporters list an internal number first ("316,last_hidden_state"): prefer a real name.
    return next((n for n in names if not n.isdigit()), names[0] if names else None)


def _assign_names(ctx: Context, ir: IRModel, layers: list[Layer]) -> None:
    """ONNX names: graph inputs and outputs keep the IR tensor names (port ``names``,
    Result ``output_names``, else the layer name); a Result takes over its producer's
    value when it can, else gets an Identity."""
    producers = ir.producers()
    by_id = {layer.id: layer for layer in layers}
    for layer in layers:
        if layer.type.lower() == "parameter":
            port = layer.outputs[0] if layer.outputs else None
            if port is None:
                raise IRError(f"{ir.source}: {layer.describe()}: a Parameter needs an output port")
            if ctx.in_body:
                outer = ctx.param_values.get(layer.id)
                if outer is None:
                    raise IRError(f"{ir.source}: {layer.describe()}: no outer input feeds this body Parameter")
                ctx.port_names[(layer.id, port.id)] = outer.name
                continue
            wanted = _preferred_name(port.names) or layer.name
            ctx.port_names[(layer.id, port.id)] = ctx.unique(wanted)
    for layer in layers:
        if layer.type.lower() != "result":
            continue
        if len(layer.inputs) != 1:
            raise IRError(f"{ir.source}: {layer.describe()}: a Result needs exactly one input")
        src = producers[(layer.id, layer.inputs[0].id)]
        src_layer = by_id[src[0]]
        src_port = next(p for p in src_layer.outputs if p.id == src[1])
        names = split_names(layer.extra.get("output_names", "")) or src_port.names or layer.inputs[0].names
        wanted = _preferred_name(names) or layer.name
        if ctx.in_body:
            # A body output must be made by a node of the body, and its producer may turn out an
            # outer value or a (folded) constant: always a fresh name and an Identity.
            ctx.result_names[layer.id] = ctx.unique(wanted)
        elif src in ctx.port_names:  # a Parameter, or a value another Result named
            if ctx.port_names[src] == wanted and wanted not in ctx.result_names.values():
                ctx.result_names[layer.id] = wanted
            else:
                ctx.result_names[layer.id] = ctx.unique(wanted)
        elif wanted not in ctx.used_names:
            ctx.port_names[src] = ctx.unique(wanted)
            ctx.result_names[layer.id] = wanted
        else:
            ctx.result_names[layer.id] = ctx.unique(wanted)
    for layer in layers:
        for i, port in enumerate(layer.outputs):
            if (layer.id, port.id) in ctx.port_names:
                continue
            if port.names:
                wanted = port.names[0]
            else:
                wanted = layer.name if len(layer.outputs) == 1 else f"{layer.name}:{i}"
            ctx.port_names[(layer.id, port.id)] = ctx.unique(wanted)


# --- the model ----------------------------------------------------------------------


def _model(ctx: Context, ir: IRModel) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The model, with the large initializers as graph inputs of their type and shape, and
    those arrays by name (see _convert)."""
    _share_identical_initializers(ctx)
    used = {i for n in _all_nodes(ctx.nodes) for i in n.input} | {o.name for o in ctx.outputs}
    outputs = {o.name for o in ctx.outputs}
    inits, weights = [], {}
    for name, t in ctx.initializers.items():
        if name not in used:
            continue
        if isinstance(t, np.ndarray):
            if name in outputs:
                inits.append(numpy_helper.from_array(t, name))
            else:
                weights[name] = t
        else:
            inits.append(t)
    weight_inputs = [helper.make_tensor_value_info(name, from_numpy(a.dtype).onnx, list(a.shape))
                     for name, a in weights.items()]
    graph = helper.make_graph(ctx.nodes, ir.name or "model", ctx.inputs + weight_inputs, ctx.outputs,
                              initializer=inits)
    graph.doc_string = f"converted from OpenVINO IR v{ir.ir_version} {Path(ir.source).name}"
    opsets = [helper.make_opsetid("", onnx_ext.ONNX_OPSET)]
    if ctx.domain_used:
        opsets.append(helper.make_opsetid(onnx_ext.DOMAIN, onnx_ext.DOMAIN_VERSION))
    opsets += [helper.make_opsetid(domain, version) for domain, version in sorted(ctx.extra_opsets.items())]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=onnx_ext.IR_VERSION,
                              producer_name=PRODUCER, producer_version=onnx_ext.__version__)
    return model, weights


def _all_nodes(nodes):
    for node in nodes:
        yield node
        for attr in node.attribute:
            for g in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _all_nodes(g.node)


def _share_identical_initializers(ctx: Context) -> None:
    """openvino.save_model stores equal constants once in the .bin, but each Const layer
    becomes its own initializer: let nodes share one copy (graph outputs keep theirs).
    Large arrays are compared by a sample of their bytes, then exactly (in place)."""
    outputs = {o.name for o in ctx.outputs}
    first: dict[tuple, list[str]] = {}
    rename: dict[str, str] = {}
    for name, t in ctx.initializers.items():
        if name in outputs:
            continue
        if isinstance(t, np.ndarray):
            key = ("array", t.dtype.str, t.shape, _fingerprint(t))
        elif len(t.raw_data) < 64:
            continue
        else:
            key = (t.data_type, tuple(t.dims), t.raw_data)
        same = next((n for n in first.get(key, []) if _same_values(ctx.initializers[n], t)), None)
        if same is not None:
            rename[name] = same
        else:
            first.setdefault(key, []).append(name)
    if not rename:
        return
    for node in _all_nodes(ctx.nodes):
        for i, name in enumerate(node.input):
            if name in rename:
                node.input[i] = rename[name]


def _fingerprint(array: np.ndarray) -> bytes:
    """A few KB of the array's bytes (start, middle, end): equal arrays have equal ones, and
    reading them costs nothing like hashing gigabytes of weights."""
    raw = _raw_bytes(array)
    n = len(raw)
    if n <= 3 * 4096:
        return bytes(raw)
    mid = n // 2
    return bytes(raw[:4096]) + bytes(raw[mid:mid + 4096]) + bytes(raw[-4096:])


def _same_values(a, b) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(np.asarray(_raw_bytes(a)), np.asarray(_raw_bytes(b))))
    return True  # TensorProtos: the key holds their bytes
