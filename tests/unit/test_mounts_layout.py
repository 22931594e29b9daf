"""Bad layouts through the CLI: one clear line, a distinct exit code, and nothing written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from profilec.cli import main
from profilec.errors import LayoutError, TrustError
from profilec.models.mounts import PlanLayout
from profilec.mounts.layout import layout_toml, parse_layout
from tests.helpers import Layout, make_layout


def _doc(lay: Layout) -> dict[str, object]:
    return {
        "schema_version": 1,
        "daemon_root": str(lay.base / "daemon"),
        "agent_home": str(lay.codex_home),
        "workspace_roots": [str(lay.workspace)],
        "state_dir": str(lay.base / "daemon" / "state" / "cand-1"),
        "backends": ["codex"],
        # Not base/host: that directory is the credential's vault, bound whole for the save.
        "hidden": {"host_home": str(lay.base / "hosthome")},
    }


def _toml(doc: dict[str, object]) -> str:
    import tomlkit

    return tomlkit.dumps(doc)


@pytest.fixture
def lay(tmp_path: Path) -> Layout:
    layout = make_layout(tmp_path / "l")
    (layout.base / "daemon").mkdir()
    (layout.base / "hosthome").mkdir()
    return layout


def _write(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text, encoding="utf-8")
    os.chmod(path, mode)
    return path


def _run(
    lay: Layout, text: str, capsys: pytest.CaptureFixture[str], *, mode: int = 0o600
) -> tuple[int, str, Path]:
    layout = _write(lay.base / "layout.toml", text, mode)
    out = lay.base / "plan.json"
    rc = main(["plan", "--roots", str(lay.manifest), "--layout", str(layout), "--out", str(out)])
    return rc, capsys.readouterr().err, out


def test_good_layout_writes_a_plan_whose_credential_is_read_write(
    lay: Layout, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, err, out = _run(lay, _toml(_doc(lay)), capsys)
    assert rc == 0, err
    plan = json.loads(out.read_text())
    assert plan["credentials"][0]["target"] == str(lay.host_target)
    assert lay.marker not in out.read_text()


def test_warning_for_a_rejected_knob_goes_to_stderr_and_into_the_plan(
    lay: Layout, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _doc(lay) | {"backends": ["codex", "cursor"], "passthrough_env": ["XDG_CONFIG_HOME"]}
    rc, err, out = _run(lay, _toml(doc), capsys)
    assert rc == 0
    assert err.startswith("profilec: warning: cursor: XDG_CONFIG_HOME")
    assert json.loads(out.read_text())["warnings"][0]["knob"] == "XDG_CONFIG_HOME"


def _bad(lay: Layout) -> list[tuple[str, dict[str, object], str]]:
    d = _doc(lay)
    no_home = {k: v for k, v in d.items() if k != "agent_home"}
    return [
        ("missing key", no_home, "agent_home: Field required"),
        ("relative path", d | {"state_dir": "state/cand-1"}, "must be absolute"),
        ("traversal", d | {"workspace_roots": [str(lay.workspace) + "/../host"]}, "traversal"),
        (
            "remote traversal",
            d | {"remote": {"mirror_base": str(lay.workspace), "roots": ["a/../../host"]}},
            "not a single safe path segment",
        ),
        (
            "overlap",
            d | {"workspace_roots": [str(lay.base)], "state_dir": str(lay.base.parent / "st")},
            "contains the hidden",
        ),
        (
            "grant is hidden",
            d | {"workspace_roots": [str(lay.base / "hosthome")]},
            "cannot also be hidden",
        ),
        ("unknown key", d | {"workspaces": []}, "unknown key `workspaces`"),
        ("unknown backend", d | {"backends": ["gemini"]}, "unknown backend"),
        ("state in login home", d | {"state_dir": str(lay.codex_home / "s")}, "outside the shared"),
    ]


@pytest.mark.parametrize("case", range(9))
def test_bad_layout_is_one_line_exit_2_and_no_output(
    lay: Layout, capsys: pytest.CaptureFixture[str], case: int
) -> None:
    name, doc, needle = _bad(lay)[case]
    rc, err, out = _run(lay, _toml(doc), capsys)
    assert rc == LayoutError.exit_code == 2, name
    assert err.count("\n") == 1 and err.startswith("profilec: layout: "), err
    assert needle in err, (name, err)
    assert not out.exists()


def test_traversal_is_reported_before_any_other_problem(lay: Layout) -> None:
    doc = {"daemon_root": "/a/../b", "bogus": 1}
    with pytest.raises(LayoutError, match="traversal"):
        parse_layout(_toml(doc).encode(), where="layout.toml")


def test_group_writable_layout_fails_the_trust_check_with_exit_3(
    lay: Layout, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, err, out = _run(lay, _toml(_doc(lay)), capsys, mode=0o664)
    assert rc == TrustError.exit_code == 3
    assert "group- or world-writable" in err and not out.exists()


def test_symlinked_workspace_is_rejected_naming_the_real_path(
    lay: Layout, capsys: pytest.CaptureFixture[str]
) -> None:
    (lay.base / "wslink").symlink_to(lay.workspace)
    rc, err, out = _run(
        lay, _toml(_doc(lay) | {"workspace_roots": [str(lay.base / "wslink")]}), capsys
    )
    assert rc == 2 and "crosses symlink" in err and str(lay.workspace) in err
    assert not out.exists()


def test_unknown_format_is_a_usage_error(lay: Layout, capsys: pytest.CaptureFixture[str]) -> None:
    layout = _write(lay.base / "layout.toml", _toml(_doc(lay)))
    rc = main(["plan", "--roots", str(lay.manifest), "--layout", str(layout), "--format", "yaml"])
    assert rc == 2 and "unknown --format 'yaml'" in capsys.readouterr().err


def test_layout_round_trips_through_its_toml() -> None:
    lay = PlanLayout.model_validate(
        {
            "schema_version": 1,
            "daemon_root": "/d",
            "agent_home": "/d/h",
            "workspace_roots": ["/w"],
            "state_dir": "/s",
            "backends": ["codex"],
            "env": {"LANG": "C.UTF-8"},
        },
        strict=False,
    )
    assert parse_layout(layout_toml(lay).encode(), where="x") == lay


def test_root_as_the_trusted_parent_is_one_line_exit_2_and_no_output(
    lay: Layout, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, err, out = _run(lay, _toml(_doc(lay) | {"user": "0:0"}), capsys)
    assert rc == 2 and not out.exists()
    assert err.count("\n") == 1 and "setting up uid map: Operation not permitted" in err


def test_a_vault_that_holds_the_workspace_is_one_line_exit_5_and_no_output(
    lay: Layout, capsys: pytest.CaptureFixture[str]
) -> None:
    # The workspace inside the credential's directory: binding the vault would grant it twice.
    ws = lay.host_target.parent / "ws"
    ws.mkdir()
    rc, err, out = _run(lay, _toml(_doc(lay) | {"workspace_roots": [str(ws)]}), capsys)
    assert rc == 5 and not out.exists()
    assert err.count("\n") == 1 and "contains the workspace grant" in err
    assert "put the credential in a directory of its own" in err
