"""MkDocs hooks of the documentation site (mkdocs.yml): pages generated from the code, files from
outside docs/, and every docs/*.md page in the navigation.

- ``cli.md``: the command's reference, from its argparse parser (``converters.cli``).
- ``notebooks/*.ipynb`` (the tutorials, rendered by mkdocs-jupyter without running them),
  ``benchmarks/results/*`` and ``tests/real_models/README.md``, at their repository paths, so that
  the pages link to them as the repository does.
- Pages under docs/ that mkdocs.yml's nav does not name go under "More" (another session's
  ``docs/<topic>.md`` appears without an edit here).
- A page's relative link to a repository file outside docs/ (``../benchmarks/results/x.md``, as
  it reads on the repository's web view) works on the site too: the file is copied to the site
  at its repository path and the link pointed at the copy.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = ("notebooks/*.ipynb", "benchmarks/results/*.md", "benchmarks/results/*.png", "tests/real_models/README.md")
GENERATED = ("cli.md",)
LINK = re.compile(r"(\]\()([^)#\s]+)([^)]*\))")


def _nav_paths(items) -> set[str]:
    found = set()
    for item in items or []:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            found |= _nav_paths(value)
        elif isinstance(value, str):
            found.add(value)
    return found


def on_config(config):
    docs = Path(config.docs_dir)
    listed = _nav_paths(config.nav)
    more = sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*.md")
                  if p.relative_to(docs).as_posix() not in listed and p.name != "README.md")
    if more:
        config.nav.append({"More": more})
    return config


@event_priority(100)  # before mkdocs-jupyter looks for notebooks among the files
def on_files(files, config):
    for pattern in OUTSIDE:
        for path in sorted(ROOT.glob(pattern)):
            files.append(File(path.relative_to(ROOT).as_posix(), str(ROOT), config.site_dir,
                              config.use_directory_urls))
    files.append(File.generated(config, "cli.md", content=cli_page()))
    present = {f.src_uri for f in files}
    docs = Path(config.docs_dir)
    for page in list(files.documentation_pages()):
        if page.abs_src_path is None or not page.src_uri.endswith(".md"):
            continue
        for target in _repository_links(Path(page.abs_src_path).read_text(), docs / Path(page.src_uri).parent, docs):
            if target not in present:
                files.append(File(target, str(ROOT), config.site_dir, config.use_directory_urls))
                present.add(target)
    return files


def on_page_markdown(markdown, page, config, files):
    """Links to repository files outside docs/ point at their copies on the site; the spec
    corrections page gets the list of the tests that check the spec's examples."""
    if page.file.src_uri == "spec-corrections.md":
        markdown = markdown.rstrip() + "\n\n" + spec_tests_section() + "\n"
    docs = Path(config.docs_dir)
    here = docs / Path(page.file.src_uri).parent

    def repoint(match):
        target = _outside(match.group(2), here, docs)
        if target is None:
            return match.group(0)
        return match.group(1) + os.path.relpath(docs / target, here).replace(os.sep, "/") + match.group(3)

    return LINK.sub(repoint, markdown)


def _outside(link: str, here: Path, docs: Path) -> str | None:
    """The repository path of ``link`` when it leaves docs/ for a file of the repository."""
    if "://" in link or link.startswith(("/", "mailto:")):
        return None
    path = Path(os.path.normpath(here / link))
    if docs in path.parents or path == docs or ROOT not in path.parents or not path.is_file():
        return None
    return path.relative_to(ROOT).as_posix()


def _repository_links(markdown: str, here: Path, docs: Path):
    for match in LINK.finditer(markdown):
        target = _outside(match.group(2), here, docs)
        if target is not None:
            yield target


def cli_page() -> str:
    """The command's reference: the help of the command and of each subcommand, as it prints them."""
    import argparse
    import os

    from converters import cli

    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: the same text everywhere
    parser = cli._parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    parts = ["# Command line: `onnx-ext`", "",
             "Generated from the command's parser (`converters/cli.py`): what `onnx-ext --help`, "
             "`onnx-ext convert --help` and `onnx-ext verify --help` print.", "",
             "```text", parser.format_help().rstrip(), "```"]
    for name, subparser in sub.choices.items():
        parts += ["", f"## `onnx-ext {name}`", "", "```text", subparser.format_help().rstrip(), "```"]
    return "\n".join(parts) + "\n"


def spec_tests_section() -> str:
    """The tests that run the op specifications' examples (``test_spec_*``, ``*spec_examples``), read
    from tests/."""
    import ast

    lines = ["## The tests of the spec's examples", "",
             "Generated from `tests/`: each runs an example of the op's specification through this package "
             "and expects what OpenVINO's reference computes (where that differs from the text, the "
             "corrections above).", ""]
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        names = [node.name for node in ast.parse(path.read_text()).body
                 if isinstance(node, ast.FunctionDef) and (node.name.startswith("test_spec_")
                                                           or node.name.endswith("spec_examples"))]
        if names:
            lines.append(f"- `tests/{path.name}`: " + ", ".join(f"`{n}`" for n in names))
    return "\n".join(lines)
