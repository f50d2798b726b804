"""A converted model loads silently in a plain onnxruntime session: at onnxruntime's default
log level, no body of any op makes it write to stderr (it wrote eight CastElimination
warnings per float Range with runtime inputs). Sessions are created in a subprocess whose
file descriptor 2 is captured, one model per body family and element type."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import onnxruntime as ort
    from onnx import helper, numpy_helper
    import onnx_ext
    from onnx_ext.types import ELEMENT_TYPES, NUMERIC_TYPES, from_ov

    def model(op, inputs, attrs, out_type, types_known=True):
        """inputs: (element type, shape, value or None: a graph input); types_known=False: the
        overload is chosen as if the input types were unknown (the exact Range bodies)."""
        names, graph_inputs, inits, operands = [], [], [], []
        for i, (et, shape, value) in enumerate(inputs):
            name = f"in{i}"
            names.append(name)
            if value is None:
                graph_inputs.append(helper.make_tensor_value_info(name, et.onnx, list(shape)))
            else:
                inits.append(numpy_helper.from_array(np.asarray(value, et.numpy).reshape(shape), name))
            operands.append(onnx_ext.Operand(et if types_known else None, tuple(shape), None if value is None else
                                             np.asarray(value, et.numpy).reshape(shape)))
        node = onnx_ext.make_node(op, names, ["out"], operands=operands, **attrs)
        graph = helper.make_graph([node], op, graph_inputs, [helper.make_tensor_value_info("out", out_type.onnx, None)],
                                  initializer=inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx_ext.ONNX_OPSET)])
        return node.overload, onnx_ext.attach_functions(m).SerializeToString()

    def cases():
        i64, i32, f32 = from_ov("i64"), from_ov("i32"), from_ov("f32")
        for out in NUMERIC_TYPES:
            for types in ([out] * 3, [f32] * 3, [from_ov("f64")] * 3, [i64] * 3, [from_ov("f16"), i32, from_ov("u64")]):
                for start in (None, 0, 5):
                    inputs = [(types[0], (), start), (types[1], (), None), (types[2], (), None)]
                    yield model("Range", inputs, {"output_type": out.onnx}, out)
            yield model("Range", [(f32, (), None), (i64, (), None), (from_ov("u64"), (), None)],
                        {"output_type": out.onnx}, out, types_known=False)
        for et in ELEMENT_TYPES:
            d = (et, (2, "N", 3), None)
            for batch_dims, axis in ((0, None), (0, 1), (0, -1), (1, None), (1, 1)):
                yield model("Gather", [d, (i64, (2, 4), None), (i64, (), axis)], {"batch_dims": batch_dims}, et)
            for mode, target, axes in (("numpy", None, None), ("numpy", [5, 2, 4, 3], None),
                                       ("bidirectional", None, None), ("pdpd", None, None),
                                       ("explicit", None, [0, 1, 2]), ("explicit", [2, 4, 3], [0, 1, 2])):
                inputs = [d, (i64, (len(target) if target else 4,), target)]
                if axes:
                    inputs.append((i64, (3,), axes))
                yield model("Broadcast", inputs, {"mode": mode}, et)
            masks = {"begin_mask": [0, 1], "end_mask": [1, 0], "shrink_axis_mask": [0, 0, 1], "new_axis_mask": [1]}
            for b in (None, [0, 1, 0]):
                yield model("StridedSlice",
                            [d, (i64, (3,), b), (i64, (3,), [2, 2, 1] if b else None), (i32, (3,), None)], masks, et)
            yield model("StridedSlice", [d, (i64, ("M",), None), (i64, ("M",), None), (i64, ("M",), None)], masks, et)

    for overload, m in cases():
        sys.stderr.write(f"@{overload}\\n")
        sys.stderr.flush()
        ort.InferenceSession(m, providers=["CPUExecutionProvider"])
''')


def test_every_body_loads_silently_at_default_log_level(tmp_path):
    script = tmp_path / "load_all.py"
    script.write_text(_SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stderr.splitlines()
    loaded = [line for line in lines if line.startswith("@")]
    noise = [(prev, line) for prev, line in zip([""] + lines, lines) if not line.startswith("@")]
    assert len(loaded) > 300
    assert not noise, f"{len(noise)} lines on stderr, first after overload {noise[0][0]!r}: {noise[0][1][:300]}"


_CONVERTED = textwrap.dedent('''
    import sys
    import numpy as np
    import onnxruntime as ort
    import openvino as ov
    import openvino.opset4 as o4
    import openvino.opset8 as o8
    import converters

    x = o8.parameter([-1, 5], ov.Type.f32, name="x")
    n = o8.parameter([], ov.Type.u8, name="n")
    ids = o4.range(o8.constant(np.uint8(0)), n, o8.constant(np.uint8(1)), "u8")  # the unsigned bodies
    rows = o8.gather(x, o8.convert(ids, "i64"), o8.constant(np.int64(0)))  # an axis no body reads
    tiny = ov.Model([rows], [x, n], "tiny")
    for source in (sys.argv[1], tiny):
        for inline in (False, True):
            sys.stderr.write(f"@{source if isinstance(source, str) else 'tiny'} inline={inline}\\n")
            sys.stderr.flush()
            model = converters.ir_to_onnx(source, inline=inline)
            ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
''')


def test_converted_models_load_silently_with_bodies_and_inlined(tmp_path):
    """The bundled example and a Range/Gather model, converted, attached and inlined (an inlined
    model once warned about the initializers its bodies do not read and a CastLike it could not fold)."""
    script = tmp_path / "load_converted.py"
    script.write_text(_CONVERTED)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, str(script), str(ROOT / "examples" / "embedding_block.xml")], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stderr.splitlines()
    assert len([line for line in lines if line.startswith("@")]) == 4
    noise = [line for line in lines if not line.startswith("@")]
    assert not noise, noise[:3]
