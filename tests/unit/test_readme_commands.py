"""CI runs the README's two commands exactly as README.md writes them.

`.ci/run` reads them out of the first fenced block of README.md's "Two commands on a fresh
machine" section and runs each, printed first, as `bash -c <command>`; the extras (mypy --strict,
ruff, the wheel smoke) follow. These tests read the README independently of `.ci/run`'s awk and
check `--list`, then run a copy of `.ci/run` on a scratch README (with `python3` and the wheel
smoke stubbed) to see the commands run verbatim, in order, each echoed before it runs, and a
failing one failing the run.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SECTION = "## Two commands on a fresh machine"
EXTRAS = [
    "python3 -m mypy --strict",
    "python3 -m ruff check .",
    "python3 -m ruff format --check .",
    "lint-imports",
    "bash scripts/wheel-smoke.sh",
]


def fenced_blocks(readme: str, heading: str) -> list[list[str]]:
    """The fenced blocks of one `## ` section, each as its lines (split on "\\n" only)."""
    lines = readme.split("\n")
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in lines[start:end]:
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def commands(block: list[str]) -> list[str]:
    """A block's commands: each line less a trailing `# comment`, blank lines dropped."""
    out = [re.sub(r"\s+#.*$", "", line).strip() for line in block]
    return [c for c in out if c]


def readme_commands() -> list[str]:
    return commands(fenced_blocks((REPO / "README.md").read_text(encoding="utf-8"), SECTION)[0])


def test_the_readme_gives_two_commands() -> None:
    assert readme_commands() == ["bash examples/run.sh", "bash scripts/test.sh"]


def test_the_fast_part_has_its_own_readme_line() -> None:
    blocks = fenced_blocks((REPO / "README.md").read_text(encoding="utf-8"), SECTION)
    fast = [c for b in blocks[1:] for c in commands(b)]
    assert "python3 -m pytest tests/unit tests/property -q -n 2" in fast


def test_ci_lists_the_readme_commands_verbatim_then_the_extras() -> None:
    proc = subprocess.run(
        ["bash", str(REPO / ".ci" / "run"), "--list"], capture_output=True, text=True, check=True
    )
    steps = proc.stdout.split("\n")
    assert steps[-1] == ""
    assert steps[:-1] == [f"+ {c}" for c in [*readme_commands(), *EXTRAS]]


def _scratch(tmp_path: Path, block: str) -> tuple[Path, dict[str, str]]:
    """A copy of .ci/run in a scratch checkout whose README holds `block`; python3 and the
    wheel smoke are stubs that print what they were asked to do."""
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    (repo / "scripts").mkdir()
    shutil.copy(REPO / ".ci" / "run", repo / ".ci" / "run")
    (repo / "README.md").write_text(
        f"# x\n\n{SECTION}\n\n```sh\n{block}```\n\nprose\n\n```sh\nnot a command\n```\n\n"
        "## Next\n\n```sh\nnot this either\n```\n",
        encoding="utf-8",
    )
    (repo / "scripts" / "wheel-smoke.sh").write_text('echo "stub wheel smoke"\n', encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("python3", "lint-imports"):
        stub = bin_dir / name
        stub.write_text(f'#!/bin/sh\necho "stub {name} $*"\n', encoding="utf-8")
        stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}
    env.pop("CI", None)
    return repo, env


def test_ci_runs_each_readme_command_as_written_echoed_first(tmp_path: Path) -> None:
    block = "echo \"first 'quoted' $CI\"   # a comment CI drops\n\nprintf '%s\\n' second|tr s S\n"
    repo, env = _scratch(tmp_path, block)
    proc = subprocess.run(
        ["bash", str(repo / ".ci" / "run")], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = [line for line in proc.stdout.split("\n") if not line.startswith("ci: passed")]
    assert out == [
        "+ echo \"first 'quoted' $CI\"",
        "first 'quoted' true",  # CI=true is the one variable .ci/run sets (the README names it)
        "+ printf '%s\\n' second|tr s S",
        "Second",
        "+ python3 -m mypy --strict",
        "stub python3 -m mypy --strict",
        "+ python3 -m ruff check .",
        "stub python3 -m ruff check .",
        "+ python3 -m ruff format --check .",
        "stub python3 -m ruff format --check .",
        "+ lint-imports",
        "stub lint-imports ",
        "+ bash scripts/wheel-smoke.sh",
        "stub wheel smoke",
        "ci: all 7 steps passed",
        "",
    ]


def test_ci_fails_when_a_readme_command_fails_and_still_runs_the_rest(tmp_path: Path) -> None:
    repo, env = _scratch(tmp_path, "exit 3\necho after\n")
    proc = subprocess.run(
        ["bash", str(repo / ".ci" / "run")], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 1
    assert "ci: FAILED (exit 3)" in proc.stdout
    assert "+ echo after\nafter\n" in proc.stdout
    assert proc.stdout.endswith("ci: failed: exit 3\n")


def test_ci_refuses_a_readme_without_the_commands(tmp_path: Path) -> None:
    repo, env = _scratch(tmp_path, "")
    (repo / "README.md").write_text("# x\n\n## Something else\n", encoding="utf-8")
    proc = subprocess.run(
        ["bash", str(repo / ".ci" / "run")], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 2
    assert "no fenced block" in proc.stderr
