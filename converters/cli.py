"""The ``onnx-ext`` command: convert between OpenVINO IR and ONNX, and verify.

    onnx-ext convert model.xml model.onnx [--inline] [--verify]
    onnx-ext convert model.onnx model.xml
    onnx-ext verify model.xml model.onnx [--inputs in.npz | --seed N ...]

Exit status: 0 success, 1 outputs differ, 2 bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from onnx_ext.errors import OnnxExtError

from .ir import IRError

EXIT_MISMATCH = 1
EXIT_BAD_INPUT = 2


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (IRError, OnnxExtError, OSError) as e:
        print(f"onnx-ext: error: {_one_line(e)}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _one_line(e: Exception) -> str:
    text = str(e) if not isinstance(e, OSError) or not e.filename else f"{e.filename}: {e.strerror}"
    return " ".join(text.split())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="onnx-ext", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    convert = sub.add_parser("convert", help="convert IR (.xml) to ONNX (.onnx) or back; the extensions decide")
    convert.add_argument("src", type=Path)
    convert.add_argument("dst", type=Path)
    convert.add_argument("--inline", action="store_true", help="IR -> ONNX: plain standard ONNX, no domain functions")
    convert.add_argument("--verify", action="store_true", help="IR -> ONNX: run both on random inputs and compare")
    _add_input_flags(convert)
    convert.set_defaults(func=_convert)

    verify = sub.add_parser("verify", help="run an IR and an ONNX model on the same inputs and compare")
    verify.add_argument("xml", type=Path)
    verify.add_argument("onnx", type=Path)
    _add_input_flags(verify)
    verify.set_defaults(func=_verify)
    return parser


def _add_input_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("verification inputs")
    g.add_argument("--inputs", type=Path, help=".npz file of input arrays named like the model inputs")
    g.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    g.add_argument("--dynamic-size", type=int, default=3, help="size of every dynamic dim (default 3)")
    g.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE", help="size of one symbolic dim")
    g.add_argument("--float-range", nargs=2, type=float, default=(-1.0, 1.0), metavar=("LO", "HI"))
    g.add_argument("--int-range", nargs=2, type=int, default=(0, 4), metavar=("LO", "HI"),
                   help="integers in [LO, HI) (default 0 4: small, as they often feed shapes and indices)")
    g.add_argument("--backend", choices=["reference", "cpu", "numpy"],
                   help="IR side: OpenVINO's reference (default when installed), its CPU plugin at f32, "
                        "or this package's numpy evaluation")


def _policy(args):
    from .verify import InputPolicy

    dims = {}
    for item in args.dim:
        name, _, size = item.partition("=")
        if not size.isdigit():
            raise OnnxExtError(f"--dim {item!r}: expected NAME=SIZE")
        dims[name] = int(size)
    return InputPolicy(seed=args.seed, dynamic_size=args.dynamic_size, dims=dims,
                       float_range=tuple(args.float_range), int_range=tuple(args.int_range))


def _convert(args) -> int:
    src, dst = args.src, args.dst
    kinds = (src.suffix.lower(), dst.suffix.lower())
    if kinds in ((".xml", ".onnx"), (".onnx", ".xml")):
        dst.parent.mkdir(parents=True, exist_ok=True)
    if kinds == (".xml", ".onnx"):
        from .ir_to_onnx import convert_ir_file

        convert_ir_file(src, dst, inline=args.inline)
        print(f"wrote {dst}")
        if args.verify:
            return _report(src, dst, args)
        return 0
    if kinds == (".onnx", ".xml"):
        if args.inline or args.verify:
            raise OnnxExtError("--inline and --verify apply to IR -> ONNX; verify ONNX -> IR with `onnx-ext verify`")
        from .onnx_to_ir import convert_onnx_file

        convert_onnx_file(src, dst)
        print(f"wrote {dst} and {dst.with_suffix('.bin')}")
        return 0
    raise OnnxExtError(f"cannot tell the direction from {src.name} -> {dst.name}: use .xml -> .onnx or .onnx -> .xml")


def _verify(args) -> int:
    return _report(args.xml, args.onnx, args)


def _report(xml: Path, onnx_path: Path, args) -> int:
    from .verify import format_table, verify

    reports, backend = verify(xml, onnx_path, inputs=args.inputs, policy=_policy(args), backend=args.backend)
    print(format_table(reports, backend))
    bad = [r.name for r in reports if not r.ok]
    if bad:
        print(f"{len(bad)} of {len(reports)} outputs differ: {', '.join(bad)}")
        return EXIT_MISMATCH
    print(f"all {len(reports)} outputs match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
