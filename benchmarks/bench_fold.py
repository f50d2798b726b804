"""Conversion time of IRs whose layers are shape arithmetic over small constants (what folding evaluates),
with folding's numpy path (fold.run_numpy) and with the reference evaluator alone (the path before it),
alternated in one process; plus IRs of OpenVINO's PyTorch frontend when given.

    python benchmarks/bench_fold.py [--layers 400] [--rounds 5] [extra.xml ...]

Prints the median conversion time of each and the ratio evaluator-only / numpy path, with the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def make_shape_ir(path: Path, n_layers: int) -> Path:
    """A Reshape whose target is ``n_layers`` layers of Gather / Add / Multiply / Divide / Unsqueeze /
    Squeeze / Convert / Equal / Select / Subtract over constants (OpenVINO's MOC would fold them)."""
    import numpy as np
    import openvino as ov
    from openvino import opset8 as o

    x = o.parameter([2, 3, 4], np.float32, name="x")
    shape = o.constant(np.array([2, 3, 4], np.int64))
    for i in range(n_layers // 20):
        s = o.gather(shape, o.constant(np.array([0, 1, 2], np.int64)), o.constant(np.int64(0)))
        d = o.divide(o.multiply(o.add(s, o.constant(np.int64(i))), o.constant(np.int64(2))), o.constant(np.int64(2)))
        c = o.convert(o.squeeze(o.unsqueeze(d, o.constant(np.int64(0))), o.constant(np.int64(0))), "i32")
        same = o.equal(c, o.constant(np.int32(3 + i)))
        shape = o.subtract(o.convert(o.select(same, c, c), "i64"), o.constant(np.int64(i)))
    model = ov.Model([o.result(o.reshape(x, shape, False))], [x])
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("extra", nargs="*", type=Path)
    args = parser.parse_args()

    from converters.ir_reader import read_ir
    from converters.ir_to_onnx import fold, ir_to_onnx

    numpy_run = fold.run_numpy
    with tempfile.TemporaryDirectory() as tmp:
        irs = [make_shape_ir(Path(tmp) / "shape.xml", args.layers), *args.extra]
        print(f"load average before: {os.getloadavg()}")
        for xml in irs:
            model = read_ir(xml)
            ir_to_onnx(model)  # warm-up: imports, the domain's tables
            times = {"numpy path": [], "evaluator only": []}
            for _ in range(args.rounds):
                for label in times:
                    fold.run_numpy = numpy_run if label == "numpy path" else (lambda *a: None)
                    start = time.perf_counter()
                    ir_to_onnx(model)
                    times[label].append(time.perf_counter() - start)
            fold.run_numpy = numpy_run
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"{xml.name} ({len(model.layers)} layers): numpy path {med['numpy path'] * 1e3:.0f} ms, "
                  f"evaluator only {med['evaluator only'] * 1e3:.0f} ms, "
                  f"ratio {med['evaluator only'] / med['numpy path']:.2f}")
        print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
