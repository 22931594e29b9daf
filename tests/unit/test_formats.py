"""One format table per artifact (compiler/formats.py): every command's `--format` help,
default, check and error text come from its table, every renderer a table names exists, and
no other module or document spells a format list of its own."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from profilec.cli import click_command, full_app, main
from profilec.errors import UsageError
from profilec.formats import COMPILE_FORMATS, TABLES, Format, FormatTable

REPO = Path(__file__).resolve().parents[2]

#: The command rendering each artifact.
COMMAND_OF = {name: name for name in TABLES}


def format_param(command: str) -> Any:
    full_app()
    params = click_command().commands[command].params
    return next(p for p in params if "--format" in p.opts)


def test_every_command_taking_format_renders_an_artifact_with_a_table() -> None:
    full_app()
    group = click_command()
    taking = {n for n, c in group.commands.items() if any("--format" in p.opts for p in c.params)}
    assert taking == set(COMMAND_OF.values())


@pytest.mark.parametrize("artifact", list(TABLES))
def test_help_default_and_choices_come_from_the_table(artifact: str) -> None:
    table = TABLES[artifact]
    param = format_param(COMMAND_OF[artifact])
    assert param.help == table.help()
    assert param.default == table.default
    assert table.default in table.names
    assert len(set(table.names)) == len(table.names)


@pytest.mark.parametrize("artifact", list(TABLES))
def test_an_unknown_format_is_refused_with_the_table(
    artifact: str, capsys: pytest.CaptureFixture[str]
) -> None:
    table = TABLES[artifact]
    with pytest.raises(UsageError) as err:
        table.choose("yaml")
    want = f"unknown --format 'yaml'; choose one of {', '.join(table.names)}"
    assert want in str(err.value)
    args = {"plan": ["--roots", "/r", "--layout", "/l"], "diff": ["/a", "/b"], "explain": ["/p"]}
    args |= {n: ["--roots", "/r"] for n in ("compile", "check", "canary")}
    code = main([COMMAND_OF[artifact], *args.get(artifact, []), "--format", "yaml"])
    assert code == 2
    assert want in capsys.readouterr().err


@pytest.mark.parametrize("artifact", list(TABLES))
def test_every_named_renderer_exists(artifact: str) -> None:
    table = TABLES[artifact]
    for f in table.formats:
        if f.renderer is None:
            with pytest.raises(KeyError):
                table.renderer(f.name)
        else:
            assert callable(table.renderer(f.name)), f.name
    with pytest.raises(KeyError):
        table.renderer("yaml")


def test_a_directory_format_is_marked_in_help_and_needs_out() -> None:
    assert [f.name for f in COMPILE_FORMATS.formats if f.directory] == ["codex-home"]
    assert "codex-home (--out is the directory it writes)" in COMPILE_FORMATS.help()
    table: FormatTable[Any] = FormatTable(
        artifact="t",
        formats=(Format(name="a", renderer=None), Format(name="d", renderer=None, directory=True)),
        default="a",
    )
    assert table.help() == "a | d (--out is the directory it writes)"


def test_no_module_spells_a_format_list_of_its_own() -> None:
    """`--format` is declared through cli/options.format_option, refused through a table."""
    for path in sorted((REPO / "compiler").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(REPO).as_posix()
        if rel != "compiler/formats.py":
            assert "choose one of" not in text or "unknown --format" not in text, rel
            assert not re.search(r"FORMATS\s*[:=]\s*\(", text), rel
        if rel != "compiler/cli/options.py":
            assert 'Option("--format"' not in text, rel


def test_every_format_list_in_the_docs_is_a_table() -> None:
    """A synopsis `--format a|b|c` in README or docs/ lists one table, whole and in order."""
    tables = {"|".join(t.names) for t in TABLES.values()}
    found = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for spelled in re.findall(r"--format ([a-z-]+(?:\|[a-z-]+)+)", doc.read_text("utf-8")):
            found.append(spelled)
            assert spelled in tables, (doc.name, spelled)
    assert "|".join(COMPILE_FORMATS.names) in found
