"""Compile refuses a bundle the sandbox would not start (exit 10), naming the entry and the fix.

Each class is one `enforce()` refusal measured against the real `codex sandbox`; the real-binary
side is tests/integration/test_refusal_classes_codex.py. Controls: the same layout without the
offending policy entry compiles.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from profilec.api import load_and_compile
from profilec.errors import SandboxRefusesError
from profilec.policy import default_profiles_dir
from profilec.startup import REFUSAL_CLASSES
from tests.helpers import Layout, make_layout


def _policy(tmp_path: Path, mode_file: str, extra: str) -> Path:
    pdir = tmp_path / "profiles"
    shutil.copytree(default_profiles_dir(), pdir)
    f = pdir / mode_file
    text = f.read_text(encoding="utf-8")
    if "[filesystem]\n" not in text:
        text = text.replace("\n[network]", "\n[filesystem]\n\n[network]", 1)
    f.write_text(text.replace("[filesystem]\n", "[filesystem]\n" + extra + "\n", 1), "utf-8")
    return pdir


def _compile(lay: Layout, pdir: Path | None) -> None:
    load_and_compile(
        str(lay.manifest),
        workspace_roots=[str(lay.workspace)],
        codex_home=str(lay.codex_home),
        profiles_dir=str(pdir) if pdir else None,
    )


@pytest.mark.parametrize(
    ("mode_file", "entry", "code"),
    [
        ("agent.toml", '"{ws}/control.txt" = "write"', "write-on-file"),
        (
            "read-only.toml",
            '"{ws}/sub" = "deny"\n"{ws}/sub/f" = "deny"',
            "deny-inside-denied-dir",
        ),
    ],
)
def test_compile_refuses_a_profile_the_sandbox_will_not_start(
    tmp_path: Path, mode_file: str, entry: str, code: str
) -> None:
    lay = make_layout(tmp_path / "l")
    (lay.workspace / "sub").mkdir()
    (lay.workspace / "sub" / "f").write_text("x", encoding="utf-8")
    _compile(lay, None)  # control: the reviewed policy starts
    pdir = _policy(tmp_path, mode_file, entry.format(ws=lay.workspace))
    with pytest.raises(SandboxRefusesError) as info:
        _compile(lay, pdir)
    err = info.value
    assert err.exit_code == 10
    line = err.one_line()
    assert code in line and REFUSAL_CLASSES[code].rule in line
    assert REFUSAL_CLASSES[code].fix in line
    assert "\n" not in line


def test_every_refusal_class_has_a_declared_lint_with_a_measured_range() -> None:
    from profilec.check.rules import rule_by_id

    for code, cls in REFUSAL_CLASSES.items():
        r = rule_by_id(cls.rule)
        assert r.fix == cls.fix, code
        assert r.codex_versions and "0.171.0" in r.codex_versions, code
        assert "measured" in r.why, code


def test_policy_refuses_a_scoped_table_under_an_absolute_path(tmp_path: Path) -> None:
    # so compile never emits the PC055 shape under an absolute key; a `~/...` table with a
    # pattern-holding base and a deny glob is refused too (never emitted)
    from profilec.codex.lexical import EvaluationError
    from profilec.errors import PolicyError

    lay = make_layout(tmp_path / "l")
    pdir = _policy(tmp_path, "read-only.toml", f'"{lay.workspace}/x*y" = {{ "*.pem" = "deny" }}')
    with pytest.raises(PolicyError, match="scoped tables under absolute paths are not policy"):
        _compile(lay, pdir)
    pdir = _policy(tmp_path / "t", "read-only.toml", '"~/x*y" = { "*.pem" = "deny" }')
    with pytest.raises((SandboxRefusesError, EvaluationError)):
        _compile(lay, pdir)
