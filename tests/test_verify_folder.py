"""The seven-model folder (issue 19): IR of real models as a user makes them (``openvino.convert_model``
with only ``example_input``, so batch, sequence and image sizes are dynamic; f32 and f16 weights)
converts and verifies with ``onnx-ext convert DIR OUT --verify`` and no other option: the random
inputs' sizes come from the models (shared dims, spatial dims that fit the kernels, an LSTM's
input size from its weights). Built once per session (tests/real_models/folder.py)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

pytest.importorskip("openvino")
_MISSING = [m for m in ("torch", "torchvision", "transformers") if importlib.util.find_spec(m) is None]
if _MISSING:  # not imported here: torchvision needs real_models.torchvision_cpu first
    pytest.skip(f"{_MISSING[0]} is not installed (the `models` extra)", allow_module_level=True)

from real_models import folder  # noqa: E402
from real_models.cache import cache_dir  # noqa: E402
from real_models.build_models import _locked  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def seven(tmp_path_factory) -> Path:
    out = cache_dir(tmp_path_factory, "verify-folder") / "models"
    with _locked(out.parent / "build.lock"):
        if not all((out / f"{n}-{c}.xml").exists() for n in folder.NAMES for c in ("f32", "f16")):
            folder.build_folder(out)
    return out


def test_seven_real_models_convert_and_verify_with_no_option(seven, tmp_path):
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "converters.cli", "convert", str(seven), str(out), "--verify"],
                       capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "14 files: 14 ok, 0 differ, 0 failed"
    assert r.stderr == ""  # no log line of onnxruntime or OpenVINO
    for name in folder.NAMES:
        for flavour in ("f32", "f16"):
            inputs = onnx.load(str(out / f"{name}-{flavour}.onnx"), load_external_data=False).graph.input
            dims = [d.dim_param for i in inputs for d in i.type.tensor_type.shape.dim if d.dim_param]
            assert dims and dims[0] in {"input_ids_d0", "x_d0", "input_d0"}  # dynamic, as the issue says


def test_bert_dims_shared_across_inputs(seven, tmp_path, capsys):
    """The README's verify line on a BERT: attention_mask and token_type_ids follow input_ids."""
    from converters.cli import main

    onnx_path = tmp_path / "bert.onnx"
    assert main(["convert", str(seven / "bert-f32.xml"), str(onnx_path)]) == 0
    status = main(["verify", str(seven / "bert-f32.xml"), str(onnx_path), "--dim", "input_ids_d1=16",
                   "--dynamic-size", "2", "--verbose"])
    out = capsys.readouterr().out
    assert status == 0, out
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        assert f"input {name}: 2x16 int64" in out
    assert main(["verify", str(seven / "bert-f32.xml"), str(onnx_path), "--shape", "attention_mask=1,5",
                 "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "input input_ids: 1x5 int64" in out and "input token_type_ids: 1x5 int64" in out


def test_spatial_dims_fit_the_kernels(seven, tmp_path):
    """squeezenet1_1 needs 31 pixels or more (its strided 3x3 windows); 3, the old default, fails."""
    import converters
    from converters.verify import dims

    onnx_path = tmp_path / "squeezenet.onnx"
    converters.convert(seven / "squeezenet1_1-f16.xml", onnx_path)
    plan = dims.plan_dims(onnx.load(str(onnx_path)))
    assert plan.spatial == ("x_d2", "x_d3") and plan.sizes == {"x_d0": 3, "x_d2": 32, "x_d3": 32}
    report = converters.verify(seven / "squeezenet1_1-f16.xml", onnx_path)
    assert report.ok and report.inputs["x"].shape == (3, 3, 32, 32)
    with pytest.raises(converters.VerifyError, match=r"random inputs: x 3x3x3x3; .*--shape NAME=D0,D1"):
        converters.verify(seven / "squeezenet1_1-f16.xml", onnx_path, dynamic_size=3)


def test_numpy_backend_runs_the_bert(seven, tmp_path):
    """The numpy references run what the other backends run (the issue's BERT failed in onnx's
    reference GatherElements with an internal error)."""
    import converters

    onnx_path = tmp_path / "bert.onnx"
    converters.convert(seven / "bert-f16.xml", onnx_path)
    report = converters.verify(seven / "bert-f16.xml", onnx_path, backend="numpy")
    assert report.ok and report.backend == "numpy" and [r.name for r in report.rows] == ["last_hidden_state",
                                                                                          "pooler_output"]
