"""The README stays short and its links resolve in the repository; the documentation site (mkdocs.yml,
built with --strict in CI) lists every docs/*.md page, named in its nav or under "More"."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_readme_is_short_and_its_links_resolve():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) < 80
    links = [target for target in re.findall(r"\]\(([^)#]+)", text) if "://" not in target]
    assert links and all((ROOT / target).exists() for target in links), [t for t in links if not (ROOT / t).exists()]
    for command in ("onnx-ext convert examples/embedding_block.xml out/embedding_block.onnx --verify",
                    "python -m pytest -n 2 -q", "python -m mkdocs build --strict"):
        assert command in text


def test_a_new_docs_page_appears_in_the_nav(tmp_path):
    pytest.importorskip("mkdocs")
    import importlib.util

    from mkdocs.config import load_config

    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    config = load_config(str(ROOT / "mkdocs.yml"))
    docs = tmp_path / "docs"
    (docs / "ops").mkdir(parents=True)
    for page in ("index.md", "a-new-page.md", "ops/nms.md"):
        (docs / page).write_text("# A page\n")
    config.docs_dir = str(docs)
    config = hooks.on_config(config)
    assert config.nav[-1] == {"More": ["a-new-page.md", "ops/nms.md"]}  # index.md is in the nav already


def test_the_cli_page_is_the_parser_help():
    pytest.importorskip("mkdocs")
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = hooks.cli_page()
    for heading in ("# Command line: `onnx-ext`", "## `onnx-ext convert`", "## `onnx-ext verify`"):
        assert heading in page
    assert "--shape NAME=D0,D1,..." in page and "exit status:" in page


def test_links_to_repository_files_outside_docs_work_on_the_site():
    pytest.importorskip("mkdocs")
    import importlib.util
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    docs = ROOT / "docs"
    text = "[r](../../benchmarks/results/bench_ops.md) [v](../verify.md) [x](../../nothing.md) [w](https://x.org/a.md)"
    assert list(hooks._repository_links(text, docs / "ops", docs)) == ["benchmarks/results/bench_ops.md"]
    page = SimpleNamespace(file=SimpleNamespace(src_uri="ops/page.md"))
    out = hooks.on_page_markdown(text, page, SimpleNamespace(docs_dir=str(docs)), None)
    assert out == ("[r](../benchmarks/results/bench_ops.md) [v](../verify.md) [x](../../nothing.md) "
                   "[w](https://x.org/a.md)")  # the copy sits at its repository path under the site's root


# The pages' Python blocks run, in order, each page in one namespace (as a reader pastes them into one
# session), in a directory holding what they name: model.xml (the bundled example), m.onnx, models/.
DOCS = ROOT / "docs"
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
NOT_RUN = {  # (page, index of its Python block): why it cannot run as it stands
    ("extending.md", 0): "a translator as it sits in a handlers module (Context, _data_type are that module's)",
    ("llm.md", 0): "needs the llm extra and an optimum-intel folder (tests/test_llm.py and notebook 04 run that)",
}


def _python_blocks() -> dict[str, list[tuple[int, str]]]:
    pages = {}
    for path in sorted(DOCS.rglob("*.md")):
        page = path.relative_to(DOCS).as_posix()
        for index, match in enumerate(PYTHON_BLOCK.finditer(path.read_text())):
            pages.setdefault(page, []).append((index, match.group(1)))
    return pages


def test_every_block_left_out_exists():
    blocks = _python_blocks()
    assert all(index < len(blocks.get(page, ())) for page, index in NOT_RUN), "a NOT_RUN entry names no block"


@pytest.fixture(scope="module")
def reader_dir(tmp_path_factory):
    import shutil

    import converters

    here = tmp_path_factory.mktemp("docs")
    example = ROOT / "examples" / "embedding_block"
    for suffix in (".xml", ".bin"):
        shutil.copy(example.with_suffix(suffix), here / f"model{suffix}")
        (here / "models" / "block").mkdir(parents=True, exist_ok=True)
        shutil.copy(example.with_suffix(suffix), here / "models" / "block" / f"embedding{suffix}")
    shutil.copy(example.with_suffix(".xml"), here / "models" / "broken.xml")  # no .bin
    converters.convert(here / "model.xml", here / "m.onnx")
    return here


@pytest.mark.parametrize("page", sorted(p for p, blocks in _python_blocks().items()
                                        if any((p, i) not in NOT_RUN for i, _ in blocks)))
def test_the_python_blocks_of_a_page_run(page, reader_dir):
    """The page's blocks, one after the other, as one script in a fresh interpreter (onnxscript's
    ``@script`` reads its function's source: the code lives in a file, as a reader's does)."""
    import os
    import subprocess
    import sys

    pytest.importorskip("openvino")
    code = "\n".join(code for index, code in _python_blocks()[page] if (page, index) not in NOT_RUN)
    script = reader_dir / (page.replace("/", "_") + ".py")
    script.write_text(code)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    r = subprocess.run([sys.executable, script.name], cwd=reader_dir, capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, f"docs/{page}: its Python blocks fail:\n{r.stderr[-3000:]}"
    for expected in EXPECTED.get(page, ()):
        assert expected in r.stdout, (page, expected, r.stdout)


#: What a page's blocks print, as the page says in its comments.
EXPECTED = {
    "ops.md": ["[[ 8.  9. 10. 11.]\n [ 8.  9. 10. 11.]\n [ 0.  0.  0.  0.]]",
               "[[ 6.  4.  2.  0.]\n [14. 12. 10.  8.]\n [22. 20. 18. 16.]]\nTrue ['Range', 'StridedSlice']\nTrue\n"],
    "python-api.md": ["(PosixPath('model.onnx'),) True", "True reference ", "ONNX: onnxruntime",
                      "['Broadcast', 'Gather', 'Range', 'StridedSlice']\nTrue\n",
                      "ok out/block/embedding.onnx\nfailed models/broken.bin: weights file not found (expected for "
                      "models/broken.xml"],
}


# The `onnx-ext` commands of the pages' and the README's bash blocks and of `onnx-ext --help`: each parses with the
# command's own parser
# (a flag renamed in the code and not in the docs fails here), and runs, in order, in a directory holding what
# they name, with exit status 0, but those NOT_RUN_COMMANDS names.
BASH_BLOCK = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)
NOT_RUN_COMMANDS = {  # a word of the command: why it is only parsed
    "ov_llm/": "an optimum-intel LLM folder (tests/test_llm.py::test_cli_converts_a_folder runs the command)",
    "ov_model_dir/": "an optimum-intel LLM folder (tests/test_llm.py::test_cli_converts_a_folder)",
    "ov_whisper/": "an optimum-intel seq2seq folder (tests/test_model_folder.py::test_real_whisper_export runs it)",
}


def _onnx_ext_commands() -> list[tuple[str, str]]:
    """(page, command) for every `onnx-ext ...` of a bash block, comments cut, `a; b` split."""
    commands = []
    for path in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        for block in BASH_BLOCK.findall(path.read_text()):
            for line in block.splitlines():
                for part in line.split("#")[0].split(";"):
                    if part.strip().startswith("onnx-ext"):
                        commands.append((path.relative_to(ROOT).as_posix(), part.strip()))
    from converters import cli

    for line in cli.EPILOG.splitlines():  # the examples of `onnx-ext --help`, their explanation cut
        if line.strip().startswith("onnx-ext "):
            commands.append(("onnx-ext --help", line.strip().split("  ")[0]))
    return commands


def test_the_docs_onnx_ext_commands_parse_and_run(tmp_path, monkeypatch, capsys):
    import shlex
    import shutil

    import numpy as np

    pytest.importorskip("openvino")
    from converters.cli import _parser, main

    commands = _onnx_ext_commands()
    pages = {page for page, _ in commands}
    assert {"README.md", "docs/converters.md", "docs/index.md", "docs/llm.md", "onnx-ext --help"} <= pages, pages
    example = ROOT / "examples" / "embedding_block"
    for target in ("examples/embedding_block", "model", "a", "models/block/embedding"):
        (tmp_path / target).parent.mkdir(parents=True, exist_ok=True)
        for suffix in (".xml", ".bin"):
            shutil.copy(example.with_suffix(suffix), tmp_path / f"{target}{suffix}")
    monkeypatch.chdir(tmp_path)
    assert main(["convert", "-q", "a.xml", "b.onnx"]) == 0
    for npz in ("inputs.npz", "in.npz"):
        np.savez(npz, input_ids=np.random.default_rng(0).integers(0, 64, (2, 16)))
    ran = []  # a command of several pages runs once
    for page, command in commands:
        argv = shlex.split(command)[1:]
        if "--help" in argv or "--version" in argv:
            with pytest.raises(SystemExit) as exit_info:
                _parser().parse_args(argv)
            assert exit_info.value.code == 0, (page, command)
            continue
        _parser().parse_args(argv)  # argparse exits 2 on an unknown flag
        if any(word in argv for word in NOT_RUN_COMMANDS) or argv in ran:
            continue
        ran.append(argv)
        status = main(argv)
        assert status == 0, (page, command, capsys.readouterr().err)
    capsys.readouterr()
    out = tmp_path / "out"
    assert (out / "embedding_block.onnx").exists() and (out / "block" / "embedding.onnx").exists()


def test_every_flag_of_the_command_is_explained_on_a_page():
    """The generated command-line page lists the flags; a hand-written page must say what each is for."""
    import argparse

    from converters.cli import _parser

    text = "\n".join(path.read_text() for path in DOCS.rglob("*.md"))
    parser = _parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flags = {flag for p in sub.choices.values() for a in p._actions for flag in a.option_strings
             if flag.startswith("--") and flag != "--help"}
    assert len(flags) > 15 and not [f for f in sorted(flags) if not re.search(re.escape(f) + r"\b", text)]
