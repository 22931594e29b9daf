"""The package as it ships: import name, package list, data reached through importlib.resources."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import profilec
from profilec import resources, settings
from profilec.errors import EnvironmentMissingError

REPO = Path(__file__).resolve().parents[2]


def test_the_package_list_equals_the_source_tree() -> None:
    """pyproject names every compiler/ folder with an __init__.py, mapped to `profilec`."""
    meta = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    tool = meta["tool"]["setuptools"]
    assert tool["package-dir"] == {"profilec": "compiler"}
    found = sorted(
        "profilec"
        + (
            "." + ".".join(p.parent.relative_to(REPO / "compiler").parts)
            if p.parent != REPO / "compiler"
            else ""
        )
        for p in (REPO / "compiler").rglob("__init__.py")
    )
    assert sorted(tool["packages"]) == found


def test_the_checkout_imports_under_the_installed_name() -> None:
    link = REPO / "profilec"
    assert link.is_symlink() and link.readlink() == Path("compiler")
    assert Path(profilec.__file__).resolve().parent == (REPO / "compiler").resolve()


@pytest.mark.parametrize("kind", ["profiles", "schemas", "canaries"])
def test_package_data_is_the_source_folder(kind: str) -> None:
    """`data/<kind>` is the top-level folder itself (a symlink), never a copy that can drift."""
    assert resources.shipped(kind).resolve() == (REPO / kind).resolve()


def test_missing_data_is_an_environment_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(resources, "data_dir", lambda: tmp_path)
    with pytest.raises(EnvironmentMissingError) as info:
        resources.shipped("canaries", "seccomp.json")
    assert info.value.exit_code == 7


def test_cache_is_never_inside_the_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PROFILEC_CACHE", raising=False)
    monkeypatch.setattr("os.getuid", lambda: 0)
    assert settings.cache_dir() == Path("/var/cache/profilec")  # reachable by the run-as user
    monkeypatch.setattr("os.getuid", lambda: 1000)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert settings.cache_dir() == tmp_path / "xdg" / "profilec"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert settings.cache_dir() == tmp_path / "home" / ".cache" / "profilec"
    monkeypatch.setenv("PROFILEC_CACHE", str(tmp_path / "pc"))
    assert settings.cache_dir() == tmp_path / "pc"
