"""Start-up times of the command and the package: `onnx-ext --version`, `onnx-ext --help`,
`onnx-ext convert --help` and `python -c "import converters"`, each a fresh interpreter, against the
bare interpreter (`python -c pass`) measured in the same run, interleaved; medians of N rounds
(default 15). Targets (issue 19): --version and --help under 0.5 s, import converters under 1 s.
tests/test_startup.py checks, deterministically, that none of them imports the heavy modules.

    python benchmarks/bench_startup.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "python -c pass (baseline)": [sys.executable, "-c", "pass"],
    "onnx-ext --version": [sys.executable, "-m", "converters.cli", "--version"],
    "onnx-ext --help": [sys.executable, "-m", "converters.cli", "--help"],
    "onnx-ext convert --help": [sys.executable, "-m", "converters.cli", "convert", "--help"],
    "import converters": [sys.executable, "-c", "import converters"],
    "import converters; converters.convert (the API)": [sys.executable, "-c", "import converters; converters.convert"],
}
TARGETS = {"onnx-ext --version": 0.5, "onnx-ext --help": 0.5, "onnx-ext convert --help": 0.5,
           "import converters": 1.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.rounds):
        for name, cmd in COMMANDS.items():
            start = time.perf_counter()
            subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["python -c pass (baseline)"])
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.rounds} rounds, medians (best)")
    print(f"{'command':<50} {'median s':>9} {'best s':>7} {'x python':>9}  target")
    for name, values in times.items():
        median, target = statistics.median(values), TARGETS.get(name)
        verdict = "" if target is None else f"< {target} s: {'yes' if median < target else 'NO'}"
        print(f"{name:<50} {median:>9.3f} {min(values):>7.3f} {median / base:>9.1f}  {verdict}")


if __name__ == "__main__":
    main()
