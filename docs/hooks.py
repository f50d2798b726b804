"""MkDocs hooks of the documentation site (mkdocs.yml): pages generated from the code, files from
outside docs/, and every docs/*.md page in the navigation.

- ``cli.md``: the command's reference, from its argparse parser (``converters.cli``).
- ``notebooks/*.ipynb`` (the tutorials, rendered by mkdocs-jupyter without running them),
  ``benchmarks/results/*`` and ``tests/real_models/README.md``, at their repository paths, so that
  the pages link to them as the repository does.
- Pages under docs/ that mkdocs.yml's nav does not name go under "More" (another session's
  ``docs/<topic>.md`` appears without an edit here).
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = ("notebooks/*.ipynb", "benchmarks/results/*.md", "benchmarks/results/*.png", "tests/real_models/README.md")
GENERATED = ("cli.md",)


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
    return files


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
