"""The Python API: converters.convert, converters.ir_to_onnx, converters.verify."""

from pathlib import Path

import numpy as np
import onnx
import pytest

import openvino  # noqa: E402,F401  (the test extra installs it)

import converters  # noqa: E402
import onnx_ext  # noqa: E402
from converters import ConvertError, IRError, OnnxExtError, VerifyError  # noqa: E402
from converters.ir_reader import read_ir  # noqa: E402

import verify_models as vm  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "embedding_block.xml"


def test_convert_in_memory_openvino_model_with_verify(tmp_path):
    model = vm.embedding()
    result = converters.convert(model, tmp_path / "emb.onnx", verify=True, dims={"ids_d1": 5})
    assert result.written == (tmp_path / "emb.onnx",) and result.ok
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emb.onnx"]
    report = result.report
    assert report.ok and report.backend == "reference"
    assert [(r.name, r.shape_onnx, r.dtype_onnx) for r in report.rows] == [
        ("emb", (3, 5, 4), "float32"), ("pos", (5,), "int64")]
    assert report.inputs["ids"].shape == (3, 5)
    # the file holds the domain's Gather and Range, and runs like OpenVINO's CPU plugin
    onnx_model = onnx.load(str(tmp_path / "emb.onnx"))
    assert {n.op_type for n in onnx_model.graph.node if n.domain == onnx_ext.DOMAIN} == {"Gather", "Range"}
    ids = np.array([[0, 15, 16, -1]], np.int64)  # 16 is out of range: zeros, as in OpenVINO
    got = onnx_ext.run(onnx_model, {"ids": ids})
    want = vm.ov_cpu(model, {"ids": ids})
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_allclose(got[0][0, :2], want[0][0, :2], rtol=1e-6)
    np.testing.assert_array_equal(got[0][0, 2], np.zeros(4, np.float32))


def test_ir_to_onnx_in_memory_from_model_path_and_irmodel(tmp_path):
    model = vm.embedding()
    xml = vm.save(vm.embedding, tmp_path)
    ids = np.array([[3, 1], [0, 2]], np.int64)
    want = vm.ov_cpu(model, {"ids": ids})
    for source in (model, xml, str(xml), read_ir(xml)):
        proto = converters.ir_to_onnx(source)
        assert isinstance(proto, onnx.ModelProto)
        got = onnx_ext.run(proto, {"ids": ids})
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
        np.testing.assert_array_equal(got[1], want[1])
    plain = converters.ir_to_onnx(model, inline=True)
    assert all(n.domain == "" for n in plain.graph.node) and not plain.functions
    # the dynamic dims are named <input>_d<i>
    dims = [d.dim_param for d in plain.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["ids_d0", "ids_d1"]
    with pytest.raises(ConvertError, match="expected an openvino.Model"):
        converters.ir_to_onnx(42)
    with pytest.raises(ConvertError, match=r"^m.onnx: ir_to_onnx takes an IR \(.xml\); ONNX -> IR is "
                                           r"convert\('m.onnx', "):
        converters.ir_to_onnx("m.onnx")  # was "malformed XML"


def test_subpackage_contents_still_import():
    from converters.ir_to_onnx import convert_ir_file, ir_to_onnx
    from converters.verify import InputPolicy, verify

    assert callable(convert_ir_file) and ir_to_onnx is not converters.ir_to_onnx
    assert verify is converters.verify and InputPolicy().dynamic_size is None


def test_round_trip_both_directions_verified(tmp_path):
    onnx_path, xml = tmp_path / "m.onnx", tmp_path / "back" / "m.xml"
    first = converters.convert(EXAMPLE, onnx_path, verify=True)
    assert first.report.ok and first.written == (onnx_path,)
    second = converters.convert(onnx_path, xml, verify=True, seed=4)
    assert second.written == (xml, xml.with_suffix(".bin")) and all(p.exists() for p in second.written)
    assert second.report.ok and [r.name for r in second.report.rows] == ["features", "last_token"]


def test_verify_report_for_a_mismatch(tmp_path):
    onnx_path = tmp_path / "m.onnx"
    converters.convert(EXAMPLE, onnx_path)
    model = onnx.load(str(onnx_path))
    for init in model.graph.initializer:
        if init.dims and init.dims[0] == 64:  # the embedding table
            init.CopyFrom(onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(init) + 1, init.name))
    report = converters.verify(EXAMPLE, model)  # a ModelProto works as well as a path
    assert not report.ok and report.differing == ["features", "last_token"]
    assert all(r.max_abs == pytest.approx(1.0) for r in report.rows)
    text = str(report)
    assert text.count("MISMATCH") == 2 and "2 of 2 outputs differ" in text


def test_verify_accepts_arrays_and_an_openvino_model():
    model = vm.gather_runtime_axis()
    feeds = {"data": np.arange(12, dtype=np.float32).reshape(3, 4), "idx": np.array([2, 0]), "axis": np.array(1)}
    proto = converters.ir_to_onnx(model)
    report = converters.verify(model, proto, inputs=feeds)
    assert report.ok and report.backend == "reference"
    assert report.rows[0].shape_onnx == (3, 2)


@pytest.mark.parametrize("src, dst, match", [
    ("m.xml", "m.txt", "cannot tell the direction"),
    ("m.onnx", "m.onnx", "cannot tell the direction"),
])
def test_direction_errors(tmp_path, src, dst, match):
    with pytest.raises(ConvertError, match=match):
        converters.convert(tmp_path / src, tmp_path / dst)


def test_a_directory_of_models_says_how_to_convert_it(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    with pytest.raises(ConvertError) as e:
        converters.convert(models, tmp_path / "out")
    assert str(e.value) == (f"{models}: a directory with no openvino_model.xml nor config.json with openvino_*.xml "
                            "(not an optimum-intel model folder): "
                            f"convert takes one model; for every model under it run `onnx-ext convert {models} "
                            f"{tmp_path / 'out'}`, or loop over its files (docs/python-api.md)")


def test_a_backend_without_openvino_is_named_before_any_input(tmp_path, monkeypatch):
    import importlib

    onnx_path = tmp_path / "m.onnx"
    converters.convert(EXAMPLE, onnx_path)
    monkeypatch.setattr(importlib.import_module("converters.verify"), "_have_openvino", lambda: False)
    with pytest.raises(VerifyError) as e:
        converters.verify(EXAMPLE, onnx_path, backend="reference")
    assert str(e.value) == ("backend 'reference' needs openvino: pip install 'onnx-ext[openvino]' "
                            "(or backend 'numpy': this package's numpy references)")  # no hint on input sizes


def test_output_that_is_a_directory_is_named(tmp_path):
    (tmp_path / "out.onnx").mkdir()
    with pytest.raises(ConvertError, match=r"out.onnx: is a directory"):
        converters.convert(EXAMPLE, tmp_path / "out.onnx")
    onnx_path = tmp_path / "m.onnx"
    converters.convert(EXAMPLE, onnx_path)
    (tmp_path / "back.bin").mkdir()
    with pytest.raises(ConvertError, match=r"back.bin: is a directory"):
        converters.convert(onnx_path, tmp_path / "back.xml")
    assert not (tmp_path / "back.xml").exists()
    with pytest.raises(ConvertError, match="^inline applies to IR -> ONNX and optimum-intel model folders, not to "):
        converters.convert(onnx_path, tmp_path / "b2.xml", inline=True)


@pytest.mark.parametrize("src, dst, options, expected", [
    ("m.onnx", "b.xml", dict(contrib=False), r"^contrib=False applies to IR -> ONNX and optimum-intel model "
                                             r"folders, not to \S*m.onnx -> b.xml \(ONNX -> IR\): it picks the ONNX "
                                             r"ops written$"),
    ("m.onnx", "b.xml", dict(external_data=True), r"^external_data applies to IR -> ONNX, not to \S*m.onnx -> b.xml "
                                                  r"\(ONNX -> IR\): it says where the ONNX weights go$"),
    ("m.onnx", "b.xml", dict(requantize_int4=True, int8_activations=True), r"^int8_activations applies to IR -> ONNX"),
    (EXAMPLE, "b.onnx", dict(rope_in_attention=True), r"^rope_in_attention applies to optimum-intel model folders, "
                                                      r"not to \S*embedding_block.xml -> b.onnx \(IR -> ONNX\)"),
    (EXAMPLE, "b.onnx", dict(seed=3, shapes={"ids": (2, 3)}), r"^seed, shapes: verification options given without "
                                                               r"verify=True \(add it, or drop them\)$"),
    (EXAMPLE, "b.onnx", dict(verify=True, seed=3, policy="any"), r"^policy is the input options as one InputPolicy: "
                                                                 r"not with seed \(put them in it\)$"),
])
def test_a_keyword_that_cannot_apply_is_refused(tmp_path, src, dst, options, expected):
    """A keyword that would do nothing here (were: silently ignored) is a one-line ValueError, nothing written."""
    converters.convert(EXAMPLE, tmp_path / "m.onnx")
    src = src if isinstance(src, Path) else tmp_path / src
    with pytest.raises(ConvertError, match=expected) as info:
        converters.convert(src, tmp_path / dst, **options)
    assert isinstance(info.value, ValueError) and "\n" not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]


def test_convert_all_refuses_a_keyword_no_file_takes_and_gives_one_to_those_that_do(tmp_path):
    """contrib=False for a directory of ONNX models only is refused before converting; with an IR among them it
    goes to the IR (was: ignored; a keyword that did not apply to a file failed it)."""
    (tmp_path / "src").mkdir()
    converters.convert(EXAMPLE, tmp_path / "src" / "m.onnx")
    with pytest.raises(ConvertError, match=r"^convert_all: contrib=False applies to IR -> ONNX and optimum-intel model "
                                           r"folders, not to the 1 model found \(ONNX -> IR\)"):
        converters.convert_all(tmp_path / "src", tmp_path / "out", contrib=False)
    assert not (tmp_path / "out").exists()
    results = converters.convert_all([tmp_path / "src", EXAMPLE], tmp_path / "out", contrib=False, inline=True)
    assert [(r.dst.name, r.status) for r in results] == [("m.xml", "ok"), ("embedding_block.onnx", "ok")]
    assert not onnx.load(str(tmp_path / "out" / "embedding_block.onnx")).functions


def test_convert_all_checks_its_options_once_and_gives_each_file_all_of_them(tmp_path, monkeypatch):
    """The file-independent checks run once for the batch (were: again in every file's convert), before anything
    is converted; each file gets every keyword of convert, the ONNX options only where they apply."""
    api = converters.api
    (tmp_path / "src").mkdir()
    converters.convert(EXAMPLE, tmp_path / "src" / "m.onnx")
    checks, calls = [], []
    real_check, real_convert = api._check_options, api.convert_checked
    monkeypatch.setattr(api, "_check_options", lambda options: checks.append(dict(options)) or real_check(options))
    monkeypatch.setattr(api, "convert_checked", lambda src, dst, options: calls.append((Path(src).name, dict(options)))
                        or real_convert(src, dst, options))
    results = converters.convert_all([tmp_path / "src", EXAMPLE], tmp_path / "out", inline=True, verify=True, seed=2)
    assert [r.status for r in results] == ["ok", "ok"] and len(checks) == 1
    assert [name for name, _ in calls] == ["m.onnx", "embedding_block.xml"]
    for name, options in calls:
        assert list(options) == list(api.convert_defaults()) and options["seed"] == 2 and options["verify"] is True
        assert options["inline"] is (name == "embedding_block.xml")  # inline applies to IR -> ONNX only
    with pytest.raises(ConvertError, match=r"^requantize_int4 goes with int8_activations"):
        converters.convert_all(tmp_path / "src", tmp_path / "out2", requantize_int4=True)
    with pytest.raises(ConvertError, match=r"^seed: verification option given without verify=True"):
        converters.convert_all(tmp_path / "src", tmp_path / "out2", seed=1)
    assert not (tmp_path / "out2").exists() and len(calls) == 2


def test_convert_passes_every_keyword_it_was_given(tmp_path, monkeypatch):
    """convert's options are its keywords by name (were: ``locals()``, which a new local would have joined)."""
    seen = []
    monkeypatch.setattr(converters.api, "convert_checked", lambda src, dst, options: seen.append(options))
    converters.convert(EXAMPLE, tmp_path / "b.onnx", inline=True, verify=True, seed=5, int_range=(1, 3))
    assert list(seen[0]) == list(converters.api.convert_defaults())
    assert converters.api.given_options(seen[0]) == ["inline", "verify", "seed", "int_range"]


def test_errors_are_the_package_errors(tmp_path):
    assert issubclass(VerifyError, OnnxExtError) and issubclass(ConvertError, OnnxExtError)
    bad = tmp_path / "bad.xml"
    bad.write_text("<net")
    with pytest.raises(IRError, match="bad.xml"):
        converters.ir_to_onnx(bad)
    with pytest.raises((IRError, OSError), match="nope.xml"):
        converters.convert(tmp_path / "nope.xml", tmp_path / "x.onnx")
    assert not (tmp_path / "x.onnx").exists()


def test_external_data_is_listed_and_verifies(tmp_path):
    dst = tmp_path / "m.onnx"
    result = converters.convert(EXAMPLE, dst, external_data=True, verify=True)
    assert result.written == (dst, tmp_path / "m.onnx.data") and result.report.ok
    assert any(t.data_location == onnx.TensorProto.EXTERNAL
               for t in onnx.load(str(dst), load_external_data=False).graph.initializer)


def test_a_misspelt_shape_name_fails_before_converting(tmp_path):
    """shapes naming no input of the model fails before anything is written (was: converted, written, then the
    verification's error naming the file it left)."""
    for src in (EXAMPLE, None):
        if src is None:
            src = tmp_path / "m.onnx"
            converters.convert(EXAMPLE, src)
        dst = tmp_path / ("b.xml" if src.suffix == ".onnx" else "b.onnx")
        with pytest.raises(VerifyError, match=r"^shape input_idz=2,3: no model input named 'input_idz' \(the inputs of \S+: "
                                              r"input_ids\)$"):
            converters.convert(src, dst, verify=True, shapes={"input_idz": (2, 3)})
        assert not dst.exists()


@pytest.mark.parametrize("options, expected", [
    (dict(int_range=(4, 0)), r"^int_range \(4, 0\): values are drawn from \[LO, HI\), LO must be below HI$"),
    (dict(float_range=(1.0, -1.0)), r"^float_range \(1.0, -1.0\): values are drawn from \[LO, HI\), LO must be below "
                                    r"HI$"),
    (dict(seed="1"), r"^seed '1': expected a whole number >= 0$"),
    (dict(dynamic_size=0), r"^dynamic_size 0: expected a whole number >= 1$"),
])
def test_input_options_out_of_their_domain_are_named_before_anything_runs(tmp_path, options, expected):
    """(were: a reversed float range silently drew from (HI, LO]; numpy's "low >= high" or its SeedSequence's
    TypeError, after the conversion was written)"""
    with pytest.raises(VerifyError, match=expected):
        converters.verify(EXAMPLE, tmp_path / "none.onnx", **options)
    with pytest.raises(VerifyError, match=expected):
        converters.convert(EXAMPLE, tmp_path / "m.onnx", verify=True, **options)
    assert not (tmp_path / "m.onnx").exists()
