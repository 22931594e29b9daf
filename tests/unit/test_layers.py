"""The layers are enforced (pyproject.toml `[tool.importlinter]`, docs/architecture.md).

`lint-imports` passes on the tree, every module of the package sits in a layer, and a
deliberately added upward import (models importing the CLI), a cycle, or an import of the dev
harness or the tests from the package makes it fail: the contracts can fail.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.fail("lint-imports is missing: pip install -e '.[dev]' installs import-linter")
    return subprocess.run(
        [exe, "--config", str(root / "pyproject.toml"), "--no-cache"],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=300,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "HOME": str(root)},
    )


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(
        REPO / "compiler",
        root / "compiler",
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__", "data"),
    )
    (root / "profilec").symlink_to("compiler")
    # `harness` and `tests` are root packages of the config (for the forbidden contract).
    for tree in ("harness", "tests"):
        shutil.copytree(REPO / tree, root / tree, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def test_every_module_of_a_layered_subpackage_sits_in_a_layer() -> None:
    """Inside each subpackage with a contract, a module left out of its layers would be
    unconstrained: every module (or sub-package) is named."""
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    for contract in cfg["tool"]["importlinter"]["contracts"]:
        containers = contract.get("containers", [])
        if not containers:
            continue
        (container,) = containers
        pkg = REPO / "compiler" / container.removeprefix("profilec.").replace(".", "/")
        named = {m.strip() for layer in contract["layers"] for m in layer.split("|")}
        found = {p.stem for p in pkg.glob("*.py") if p.stem not in ("__init__", "__main__")}
        found |= {p.parent.name for p in pkg.glob("*/__init__.py")}
        assert found == named, (contract["name"], sorted(found ^ named))


def test_a_type_level_circle_breaks_them(tmp_path: Path) -> None:
    """An import under TYPE_CHECKING counts: the lint context importing the checker for a type
    closes a circle (checker -> lints -> context -> checker)."""
    root = _copy(tmp_path)
    ctx = root / "compiler" / "check" / "context.py"
    text = ctx.read_text(encoding="utf-8")
    anchor = "if TYPE_CHECKING:\n"
    assert anchor in text
    ctx.write_text(text.replace(anchor, anchor + "    from .checker import Checker\n", 1))
    proc = _lint(root)
    assert proc.returncode != 0, proc.stdout[-2000:]
    marked = [ln for ln in proc.stdout.split("\n") if " BROKEN" in ln]
    assert any("check: the run on top" in ln for ln in marked), proc.stdout[-2000:]


def test_the_e2e_leaf_contract_covers_every_other_module() -> None:
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (leaf,) = [
        c for c in cfg["tool"]["importlinter"]["contracts"] if c["name"].startswith("e2e is")
    ]
    pkg = REPO / "compiler"
    found = {p.stem for p in pkg.glob("*.py") if p.stem not in ("__init__", "__main__")}
    found |= {p.parent.name for p in pkg.glob("*/__init__.py")}
    named = {m.removeprefix("profilec.") for m in leaf["source_modules"]}
    assert named == found - {"e2e", "cli"}


def test_the_architecture_page_lists_every_subpackage_contract() -> None:
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8").split("\n")
    for contract in cfg["tool"]["importlinter"]["contracts"]:
        for container in contract.get("containers", []):
            chain = " > ".join(f"`{layer}`" for layer in contract["layers"])
            assert f"- `{container}`: {chain}" in page, container


def test_every_module_of_the_package_sits_in_a_layer() -> None:
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    layers = cfg["tool"]["importlinter"]["contracts"][0]["layers"]
    named = {m.strip().removeprefix("profilec.") for layer in layers for m in layer.split("|")}
    pkg = REPO / "compiler"
    found = {p.stem for p in pkg.glob("*.py") if p.stem not in ("__init__", "__main__")}
    found |= {p.parent.name for p in pkg.glob("*/__init__.py")}
    assert found - named == set(), "a module outside every layer is unconstrained"
    assert named - {"cli"} <= found


def test_the_tree_keeps_the_contracts() -> None:
    proc = _lint(REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "17 kept, 0 broken" in proc.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        ("models/base.py", "import profilec.cli", "layers: no upward import"),
        ("codex/resolve.py", "import profilec.compile", "layers: no upward import"),
        ("codex/globs.py", "import profilec.codex.enforce", "the Codex wing"),
        ("check/configstack.py", "import profilec.check.checker", "no import cycle"),
        ("check/configstack.py", "import profilec.check.triage", "check: the run on top"),
        ("canary/paths.py", "import profilec.canary.tree", "canary: the run on top"),
        ("e2e/layout.py", "import profilec.e2e.acp", "e2e: the matrix run"),
        ("canary/paths.py", "import profilec.e2e.layout", "e2e is a leaf"),
        ("commands/canary.py", "import profilec.commands.audit", "commands: explain on top"),
        ("report/json.py", "import profilec.report.text", "report: every check format"),
        ("audit/diff.py", "import profilec.audit.explain", "audit: renderers on top"),
        ("cli/options.py", "import profilec.cli.root", "cli: the commands on top"),
        ("cli/plan_cmd.py", "import profilec.cli.rules_cmd", "cli: the commands on top"),
        ("emit/tomltext.py", "import profilec.emit.extras", "emit: the documents on top"),
        ("mounts/shell.py", "import profilec.mounts.plan", "mounts: the api on top"),
        ("bundle/sources.py", "import profilec.bundle.load", "bundle: the lock on top"),
        ("models/base.py", "import profilec.models.compiled", "models: the format families"),
        ("pipeline.py", "import harness.codex_oracle", "imports no dev harness"),
        ("e2e/run.py", "from harness.difftest import gen", "imports no dev harness"),
        ("cli/__init__.py", "from tests.helpers import make_layout", "imports no dev harness"),
    ],
)
def test_an_upward_import_or_a_cycle_breaks_them(
    tmp_path: Path, module: str, line: str, broken: str
) -> None:
    root = _copy(tmp_path)
    path = root / "compiler" / module
    text = path.read_text(encoding="utf-8")
    # After the module's first import line (compiler/models/base.py has no `from __future__`).
    lines = text.split("\n")
    first = next(i for i, s in enumerate(lines) if s.startswith(("from ", "import ")))
    lines.insert(first + 1, line + "  # noqa")
    path.write_text("\n".join(lines), encoding="utf-8")
    proc = _lint(root)
    assert proc.returncode != 0, proc.stdout[-2000:]
    # Every contract's name is listed; the one named must be the one marked BROKEN.
    marked = [ln for ln in proc.stdout.split("\n") if " BROKEN" in ln]
    assert any(broken in ln for ln in marked), proc.stdout[-2000:]
