"""ONNX -> OpenVINO IR (model.xml + model.bin) through OpenVINO's own ONNX frontend.

The frontend reads the standard ops; ``onnx_ext.openvino_extensions()`` turns the
domain's nodes into Range-4, Broadcast-1/3, Gather-1/7/8 and StridedSlice-1 (their
function bodies, if the model carries them, are not used). The model is read as
``Core.read_model`` reads it (the frontend's load and convert), not by
``convert_model``: that fails 4 more cases of ONNX's backend node suite (Col2Im,
on a partial-shape check) and folds constant sub-graphs, so a Range of constants
would not come back as Range. Constants are saved as they are
(``compress_to_fp16=False``).

One standard op is translated here: ONNX Mod-28 allows ``fmod=0`` (floor modulo) on
floats, which OpenVINO 2026.4's frontend refuses; FloorMod computes it (3 more cases
of the backend suite pass; infinities still give NaN, as in OpenVINO's FloorMod).
"""

from __future__ import annotations

import os
import re
import tempfile
from functools import lru_cache
from pathlib import Path

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
    try:
        model = frontend.convert(frontend.load(str(path)))
    except Exception as e:  # noqa: BLE001 - OpConversionFailure, GeneralFailure, RuntimeError, ...
        raise OnnxExtError(f"{path}: OpenVINO cannot read it: {one_line(e)}") from None
    _check_inputs_present(model, path)
    model.set_friendly_name(path.stem)
    return model


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
    frontend.add_extension(openvino_extensions() + [ConversionExtension("Mod", _mod)])
    return frontend


def _mod(ctx):
    # ONNX Mod: fmod=1 truncates (OpenVINO Mod), fmod=0 floors (FloorMod), integers and floats alike.
    from openvino import opset1

    a, b = ctx.get_input(0), ctx.get_input(1)
    fmod = ctx.get_attribute("fmod") if ctx.has_attribute("fmod") else 0
    return (opset1.mod(a, b) if fmod == 1 else opset1.floor_mod(a, b)).outputs()


def one_line(error: Exception) -> str:
    """OpenVINO's multi-line error as one line: what failed, on which node or op (not where
    in OpenVINO's sources)."""
    lines = [line.strip() for line in str(error).splitlines()]
    return " ".join(line for line in lines if line and not _NOISE.match(line))


#: Lines of OpenVINO's errors that say where in its sources (or in Python) it failed, not what.
_NOISE = re.compile(r"^(Exception from src/|Check '.*' failed at src/|At:$|\S+\.py\(\d+\): |Summary:$)")
