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
    for page in ("index.md", "llm.md", "ops/nms.md"):
        (docs / page).write_text("# A page\n")
    config.docs_dir = str(docs)
    config = hooks.on_config(config)
    assert config.nav[-1] == {"More": ["llm.md", "ops/nms.md"]}  # index.md is in the nav already


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
