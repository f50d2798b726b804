"""ONNX -> OpenVINO IR (model.xml + model.bin) through OpenVINO's own ONNX frontend.

The frontend reads the standard ops; ``onnx_ext.openvino_extensions()`` turns the
domain's nodes into Range-4, Broadcast-1/3, Gather-1/7/8 and StridedSlice-1 (their
function bodies, if the model carries them, are not used). The model is read as
``Core.read_model`` reads it (the frontend's load and convert), not by
``convert_model``: that fails 4 more cases of ONNX's backend node suite (Col2Im,
on a partial-shape check) and folds constant sub-graphs, so a Range of constants
would not come back as Range. Constants are saved as they are
(``compress_to_fp16=False``).

Three standard ops are translated here: ONNX Mod-28 allows ``fmod=0`` (floor modulo) on
floats, which OpenVINO 2026.4's frontend refuses; FloorMod computes it (3 more cases
of the backend suite pass; infinities still give NaN, as in OpenVINO's FloorMod). Its
Div floors integers (Divide's m_pythondiv), where ONNX truncates; its DFT ignores
DFT-20's axis input (transforms along axis 1): both found by the IR generator's
``--round-trip`` (docs/ir-generator.md). It also reads an EMPTY constant (dims [0, 6, 7]) as a
scalar: such constants are written as ConstantOfShape of their dims before it reads the model.
"""

from __future__ import annotations

import os
import re
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np

from onnx_ext.errors import OnnxExtError
from onnx_ext.openvino import INSTALL_HINT, openvino_extensions

from .files import make_parent, not_found


def convert_onnx_file(onnx_path, xml_path) -> tuple[Path, Path]:
    """Read an .onnx file and write its IR: ``xml_path`` and the .bin beside it.

    Both files are written all or nothing (saved into a temporary directory beside
    them, then renamed: .bin first, .xml last). Raises ``OnnxExtError`` (one line
    naming the file) for a missing, empty or unreadable model."""
    src, xml = Path(onnx_path), Path(xml_path)
    model = read_onnx(src)
    import openvino as ov

    make_parent(xml)
    bin_ = xml.with_suffix(".bin")
    with tempfile.TemporaryDirectory(prefix=f".{xml.name}.", dir=xml.parent) as tmp:
        staged = Path(tmp) / "model.xml"
        try:
            ov.save_model(model, str(staged), compress_to_fp16=False)
        except RuntimeError as e:
            raise OnnxExtError(f"{src}: OpenVINO cannot write its IR: {one_line(e)}") from None
        for done, target in ((staged.with_suffix(".bin"), bin_), (staged, xml)):
            with open(done, "rb") as f:
                os.fsync(f.fileno())
            os.replace(done, target)
    return xml, bin_


def read_onnx(path: Path):
    """The ``openvino.Model`` of an .onnx file, the domain's nodes as native ops (what
    ``Core.read_model`` gives with the extensions added, without trying the other frontends)."""
    if not path.exists():
        raise not_found(path, "ONNX file")
    if not path.is_file():
        raise OnnxExtError(f"{path}: not a file")
    if path.stat().st_size == 0:
        raise OnnxExtError(f"{path}: empty file (0 bytes), not an ONNX model")
    frontend = _frontend()
    if not frontend.supported(str(path)):
        raise OnnxExtError(f"{path}: not an ONNX model (OpenVINO's ONNX frontend cannot parse it)")
    with tempfile.TemporaryDirectory(prefix="onnx-ext-") as tmp:
        readable = _without_empty_constants(path, Path(tmp))
        try:
            model = frontend.convert(frontend.load(str(readable)))
        except Exception as e:  # noqa: BLE001 - OpConversionFailure, GeneralFailure, RuntimeError, ...
            raise OnnxExtError(f"{path}: OpenVINO cannot read it: {one_line(e)}") from None
    _check_inputs_present(model, path)
    model.set_friendly_name(path.stem)
    return model


#: ConstantOfShape-9's element types (the frontend's too); an empty tensor of another type stays as it is
_FILLABLE = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13}


def _without_empty_constants(path: Path, tmp: Path) -> Path:
    """``path``, or where the model is written again with each EMPTY constant (an initializer or a Constant node
    whose dims hold a 0) as ``ConstantOfShape`` of its dims: OpenVINO 2026.4's ONNX frontend reads an empty
    tensor as a scalar (shape [], one element), so an IR -> ONNX -> IR round trip of an empty result or an LSTM's
    zero-batch branch came back a scalar; ConstantOfShape keeps the dims. The copy sits in ``tmp`` with links to
    the model's external data files, whose locations are relative to the model."""
    import onnx

    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception:  # noqa: BLE001 - the frontend says what is wrong with the file
        return path
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    if opset < 9 or not sum(_fill_empty_constants(graph) for graph in _graphs(model.graph)):  # (ConstantOfShape-9)
        return path
    for location in {entry.value for tensor in _tensors(model) for entry in tensor.external_data
                     if entry.key == "location"}:
        (tmp / location).parent.mkdir(parents=True, exist_ok=True)
        (tmp / location).symlink_to((path.parent / location).resolve())
    onnx.save(model, str(tmp / "model.onnx"))
    return tmp / "model.onnx"


def _graphs(graph):
    yield graph
    for node in graph.node:
        for attribute in node.attribute:
            for body in [attribute.g] if attribute.HasField("g") else attribute.graphs:
                yield from _graphs(body)


def _tensors(model):
    for graph in _graphs(model.graph):
        yield from graph.initializer
        for node in graph.node:
            yield from (a.t for a in node.attribute if a.HasField("t"))


def _fill_empty_constants(graph) -> int:
    """Each empty initializer or Constant value of a fillable type as ConstantOfShape(dims): how many."""
    from onnx import helper, numpy_helper

    fills = []
    for tensor in [t for t in graph.initializer if 0 in t.dims and t.data_type in _FILLABLE]:
        graph.initializer.remove(tensor)
        for stale in [i for i in graph.input if i.name == tensor.name]:  # (IR < 4: initializers listed as inputs)
            graph.input.remove(stale)
        fills.append((tensor.name, tensor))
    for node in [n for n in graph.node if n.op_type == "Constant" and n.domain in ("", "ai.onnx")]:
        value = next((a.t for a in node.attribute if a.name == "value"), None)
        if value is not None and 0 in value.dims and value.data_type in _FILLABLE:
            graph.node.remove(node)
            fills.append((node.output[0], value))
    for name, tensor in reversed(fills):
        dims = f"{name}__onnx_ext_dims"
        graph.initializer.append(numpy_helper.from_array(np.array(tensor.dims, np.int64), dims))
        zero = helper.make_tensor("zero", tensor.data_type, [1], [0])
        graph.node.insert(0, helper.make_node("ConstantOfShape", [dims], [name], value=zero))
    return len(fills)


def _check_inputs_present(model, path: Path) -> None:
    """The frontend stands an empty input name ("") in for by a NullNode, also where the op
    needs the input; save_model would write a layer no reader takes."""
    for op in _ops_with_bodies(model):
        if op.get_type_name() == "NullNode":
            users = [t.get_node() for o in op.outputs() for t in o.get_target_inputs()]
            what = f"{users[0].get_type_name()} {users[0].get_friendly_name()!r}" if users else "a node"
            raise OnnxExtError(f"{path}: {what} lacks a required input (its name is empty)")


def _ops_with_bodies(model):
    for op in model.get_ordered_ops():
        yield op
        if hasattr(op, "get_function"):  # If (then, else), Loop and TensorIterator (body)
            bodies = (op.get_function(0), op.get_function(1)) if op.get_type_name() == "If" else (op.get_function(),)
            for body in bodies:
                yield from _ops_with_bodies(body)


@lru_cache(maxsize=1)
def _frontend():
    try:
        from openvino.frontend import FrontEndManager
    except ImportError:
        raise OnnxExtError(INSTALL_HINT) from None
    from openvino.frontend.onnx import ConversionExtension

    frontend = FrontEndManager().load_by_framework("onnx")
    frontend.add_extension(openvino_extensions() + [ConversionExtension("Mod", _mod), ConversionExtension("DFT", _dft),
                                                    ConversionExtension("Div", _div)])
    return frontend


def _mod(ctx):
    # ONNX Mod: fmod=1 truncates (OpenVINO Mod), fmod=0 floors (FloorMod), integers and floats alike.
    from openvino import opset1

    a, b = ctx.get_input(0), ctx.get_input(1)
    fmod = ctx.get_attribute("fmod") if ctx.has_attribute("fmod") else 0
    return (opset1.mod(a, b) if fmod == 1 else opset1.floor_mod(a, b)).outputs()


def _div(ctx):
    # ONNX's Div truncates integers (as C, onnx's reference and onnxruntime); OpenVINO 2026.4's frontend gives
    # Divide with its default m_pythondiv=true, which floors: -7 / 2 was -4, not -3.
    import numpy as np
    from openvino import opset1

    a, b = ctx.get_input(0), ctx.get_input(1)
    if ctx.has_attribute("broadcast") and ctx.get_attribute("broadcast") == 1 and ctx.has_attribute("axis"):
        # Div-1/6's legacy broadcast: b's dims line up with a's from ``axis`` on
        rank_a, rank_b = a.get_partial_shape().rank, b.get_partial_shape().rank
        if rank_a.is_dynamic or rank_b.is_dynamic:
            raise ValueError("Div with broadcast and axis needs inputs of static rank")
        axis = ctx.get_attribute("axis") % rank_a.get_length()
        trailing = rank_a.get_length() - axis - rank_b.get_length()
        if trailing > 0:
            b = opset1.unsqueeze(b, opset1.constant(np.arange(rank_b.get_length(), rank_b.get_length() + trailing)))
    node = opset1.divide(a, b)
    node.set_attribute("m_pythondiv", False)  # (no argument of opset1.divide sets it)
    return node.outputs()


def _dft(ctx):
    # OpenVINO 2026.4's translator of ONNX DFT reads the axis from DFT-17's attribute only (default 1), so it
    # transforms along axis 1 whatever DFT-20's axis input says (a wrong result, no error): the axis input is
    # read here. The signal's last dim is 2 (complex) or 1 (real); the axis counts in the input's rank.
    import numpy as np
    from openvino import opset1

    def i64(values):
        return opset1.constant(np.array(values, np.int64))

    inputs = [ctx.get_input(i) for i in range(ctx.get_input_size())]
    present = [i < len(inputs) and inputs[i].get_node().get_type_name() != "NullNode" for i in range(3)]
    inverse = ctx.has_attribute("inverse") and ctx.get_attribute("inverse") == 1
    onesided = ctx.has_attribute("onesided") and ctx.get_attribute("onesided") == 1
    data, shape = inputs[0], inputs[0].get_partial_shape()
    if shape.rank.is_dynamic or shape[-1].is_dynamic or shape[-1].get_length() not in (1, 2):
        raise ValueError("DFT: the signal's last dim must be 1 (real) or 2 (complex), of static rank")
    if present[2]:
        if inputs[2].get_node().get_type_name() != "Constant":
            raise ValueError("DFT: the axis input must be a constant")
        axis = int(inputs[2].get_node().get_data().reshape(-1)[0])
    else:  # DFT-17's attribute, or DFT-20 without the input: the frontend's own reading (default 1)
        axis = ctx.get_attribute("axis") if ctx.has_attribute("axis") else 1
    axis += shape.rank.get_length() if axis < 0 else 0
    axes = i64([axis])
    size = [opset1.reshape(inputs[1], i64([1]), False)] if present[1] else []
    if data.get_element_type().get_type_name() == "f64":  # OpenVINO's DFT ops take f32, f16 and bf16 only
        out = _dft_of(opset1.convert(data, "f32"), shape, axes, size, inverse, onesided)
        return [opset1.convert(out, "f64").output(0)]
    return [_dft_of(data, shape, axes, size, inverse, onesided)]


def _dft_of(data, shape, axes, size, inverse: bool, onesided: bool):
    import numpy as np
    from openvino import opset1, opset7, opset8, opset9

    def i64(values):
        return opset1.constant(np.array(values, np.int64))

    if shape[-1].get_length() == 1:
        if onesided and not inverse:
            return opset9.rdft(opset1.squeeze(data, i64([-1])), axes, *size).output(0)
        data = opset1.concat([data, opset1.multiply(data, opset1.convert_like(i64(0), data))], -1)  # imaginary 0
    if inverse and onesided:
        return opset9.irdft(data, axes, *size).output(0)
    out = (opset7.idft if inverse else opset7.dft)(data, axes, *size)
    if onesided:  # the first n // 2 + 1 frequencies
        n = opset8.gather(opset1.shape_of(out), axes, i64(0))
        out = opset8.slice(out, i64([0]), opset1.add(opset1.divide(n, i64([2])), i64([1])), i64([1]), axes)
    return out.output(0)


def one_line(error: Exception) -> str:
    """OpenVINO's multi-line error as one line: what failed, on which node or op (not where
    in OpenVINO's sources)."""
    lines = [line.strip() for line in str(error).splitlines()]
    return " ".join(line for line in lines if line and not _NOISE.match(line))


#: Lines of OpenVINO's errors that say where in its sources (or in Python) it failed, not what.
_NOISE = re.compile(r"^(Exception from src/|Check '.*' failed at src/|At:$|\S+\.py\(\d+\): |Summary:$)")
