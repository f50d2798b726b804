"""Helpers for the IR tests: save OpenVINO models as IR at test time, convert them,
run both sides and compare.

OpenVINO's reference (``Model.evaluate``) is the oracle; the models built here
are well-formed and small, so it runs in-process.
"""

from __future__ import annotations

import re
from pathlib import Path

import ml_dtypes
import numpy as np

from converters.openvino_tensors import from_ov_tensor, to_ov_tensor
import onnx

import onnx_ext
from converters.ir_reader import read_ir
from converters.ir_to_onnx import ir_to_onnx

_BF16 = np.dtype(ml_dtypes.bfloat16)

#: Tolerance in units of the last place, per float dtype name.
ULPS = {"float64": 4, "float32": 4, "float16": 1, "bfloat16": 1}


def save_ir(model, directory: Path, name: str = "model", *, compress: bool = False, version: int = 11) -> Path:
    """Write ``model`` as IR; version 10 goes through the Serialize pass (never compressed)."""
    import openvino as ov

    xml = Path(directory) / f"{name}.xml"
    if version == 10:
        from openvino import passes

        manager = passes.Manager()
        manager.register_pass(passes.Serialize(str(xml), str(xml.with_suffix(".bin")), passes.Version.IR_V10))
        manager.run_passes(model)
    else:
        ov.save_model(model, str(xml), compress_to_fp16=compress)
    return xml


def parameter(shape, et: str = "f32", name: str | None = None):
    """An OpenVINO Parameter; ``name`` also names its tensor (the ONNX input's name)."""
    import openvino as ov
    import openvino.opset8 as o8

    p = o8.parameter(shape, getattr(ov.Type, et), name=name)
    if name:
        p.output(0).get_tensor().set_names({name})
    return p


def model_of(outputs, params):
    """An ``openvino.Model`` of one output (a node or an Output) or a list of them."""
    import openvino as ov

    outs = outputs if isinstance(outputs, list) else [outputs]
    return ov.Model([o.output(0) if hasattr(o, "output") and not isinstance(o, ov.Output) else o for o in outs],
                    params, "case")


def normal_f32(rng, *shape, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def edit_ir(xml: Path, pattern: str, replacement: str, count: int = 1) -> Path:
    """Rewrite the XML in place (for what the Python API cannot build, e.g. pdpd axes)."""
    text = xml.read_text()
    new, n = re.subn(pattern, replacement, text, count=count)
    assert n, f"{pattern!r} not found in {xml}"
    xml.write_text(new)
    return xml






def evaluate_ir(xml: Path, feeds: list[np.ndarray]) -> list[np.ndarray]:
    """The IR's outputs on OpenVINO's reference implementation, as read back from the files."""
    import openvino as ov

    return evaluate_model(ov.Core().read_model(str(xml)), feeds)


def evaluate_ir_cpu(xml: Path, feeds: list[np.ndarray]) -> list[np.ndarray]:
    """The IR's outputs on OpenVINO's CPU plugin at f32 (for layers the reference cannot evaluate)."""
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled([to_ov_tensor(np.asarray(f)) for f in feeds])
    return [np.array(result[out]) for out in compiled.outputs]


def evaluate_model(model, feeds: list[np.ndarray]) -> list[np.ndarray]:
    """An openvino.Model's outputs on OpenVINO's reference implementation (``Model.evaluate``)."""
    import openvino as ov

    outputs = [ov.Tensor(o.get_element_type(), ov.Shape([0])) for o in model.outputs]
    ok = model.evaluate(outputs, [to_ov_tensor(np.asarray(f)) for f in feeds])
    assert ok, "OpenVINO's reference could not evaluate the model"
    return [from_ov_tensor(t) for t in outputs]


def evaluate_model_cpu(model, feeds: list[np.ndarray]) -> list[np.ndarray]:
    """An openvino.Model's outputs on OpenVINO's CPU plugin at f32, its inputs reshaped to the
    feeds' shapes first (the plugin refuses some ops whose output rank is not known)."""
    import openvino as ov

    model = model.clone()
    model.reshape({p: ov.PartialShape(list(np.shape(f))) for p, f in zip(model.inputs, feeds)})
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    request.infer([to_ov_tensor(np.asarray(f)) for f in feeds])
    return [from_ov_tensor(request.get_output_tensor(i)) for i in range(len(compiled.outputs))]


def native_model(op: str, version: int, inputs: list, const: list[bool], attrs: dict, spec: bool = False):
    """The op built with openvino's NodeFactory(opsetN) (``spec``: by the domain op's OpSpec from its attributes,
    ``ov_reference.native_node``): constants for ``const`` inputs, else Parameters."""
    import openvino as ov
    from ov_reference import native_node

    args, params = [], []
    for value, is_const in zip(inputs, const):
        value = np.asarray(value)
        if is_const:
            args.append(ov.op.Constant(to_ov_tensor(value)).output(0))
        else:
            p = ov.opset8.parameter(list(value.shape), to_ov_tensor(value).element_type)
            params.append(p)
            args.append(p.output(0))
    return ov.Model(native_node(op, version, args, attrs, spec).outputs(), params, "native")


def domain_ops(model) -> list:
    """The model's ops other than Parameter, Constant and Result."""
    return [n for n in model.get_ordered_ops() if n.get_type_name() not in ("Parameter", "Constant", "Result")]


def convert(xml: Path, inline: bool = False) -> onnx.ModelProto:
    return ir_to_onnx(read_ir(xml), inline=inline)


def run_onnx(model: onnx.ModelProto, feeds: list[np.ndarray]) -> list[np.ndarray]:
    names = [i.name for i in model.graph.input]
    assert len(names) == len(feeds), f"model inputs {names}, {len(feeds)} feeds"
    return onnx_ext.run(model, {n: np.asarray(f) for n, f in zip(names, feeds)})


def assert_close(got: np.ndarray, want: np.ndarray, what: str = "", ulps: int | None = None, atol: float = 0.0) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if got.dtype.kind == "f" or got.dtype == _BF16:
        n = ULPS[got.dtype.name] if ulps is None else ulps
        g, w = got.astype(np.float64), want.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            spacing = np.abs(np.spacing(np.abs(want).astype(got.dtype))).astype(np.float64) if got.dtype != _BF16 \
                else np.abs(w) * 2.0**-7 + 1e-38
            # (finite ones only within the tolerance: the spacing of the largest finite value is inf)
            ok = (g == w) | (np.isnan(g) & np.isnan(w)) | \
                ((np.abs(g - w) <= n * spacing + atol) & np.isfinite(g) & np.isfinite(w))
        assert ok.all(), f"{what}: {np.count_nonzero(~ok)} values differ: {got[~ok][:6]} vs {want[~ok][:6]}"
    else:
        assert np.array_equal(got, want), f"{what}: values differ:\n{got}\nvs\n{want}"


def check_ir(xml: Path, feeds: list[np.ndarray], *, inline: bool = False, ulps: int | None = None,
             legacy_types: bool = False, backend: str = "reference", atol: float = 0.0) -> onnx.ModelProto:
    """Convert ``xml``, run it in onnxruntime and compare every output with OpenVINO's reference.

    ``legacy_types``: OpenVINO reads IR v10 through its old-API compatibility layer,
    which turns i64/u8/f16/bool outputs into i32/f32: compare values only.
    """
    model = convert(xml, inline=inline)
    check_model_limits(model)
    got = run_onnx(model, feeds)
    want = evaluate_ir(xml, feeds) if backend == "reference" else evaluate_ir_cpu(xml, feeds)
    assert len(got) == len(want), f"{len(got)} ONNX outputs, {len(want)} IR outputs"
    for i, (g, w) in enumerate(zip(got, want)):
        if legacy_types:
            w = w.astype(g.dtype)
        assert_close(g, w, f"{xml.name} output {i} ({model.graph.output[i].name})", ulps, atol)
    return model


def check_model_limits(model: onnx.ModelProto) -> None:
    assert model.ir_version <= 13
    std = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    assert std and std[0] <= 26
    onnx.checker.check_model(model, full_check=True)
