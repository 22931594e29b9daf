"""Shared test helpers: synthetic credential layouts in throwaway dirs (random markers only)."""

from __future__ import annotations

import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit


def marker() -> str:
    """A fresh random marker; never a real credential."""
    return "PROFILEC-CANARY-" + secrets.token_hex(12)


def write_manifest(path: Path, roots: list[dict[str, object]], *, mode: int = 0o600) -> Path:
    """Write a roots manifest with safe permissions (the trust check passes)."""
    doc = tomlkit.document()
    doc["schema_version"] = 1
    aot = tomlkit.aot()
    for r in roots:
        t = tomlkit.table()
        for k, v in r.items():
            t[k] = v
        aot.append(t)
    doc["roots"] = aot
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    os.chmod(path, mode)
    return path


@dataclass(frozen=True)
class Layout:
    """A synthetic production layout: host target, private CODEX_HOME link, workspace."""

    base: Path
    host_target: Path
    codex_home: Path
    link: Path
    workspace: Path
    control: Path
    marker: str
    manifest: Path


def make_layout(base: Path, *, relative_link: bool = False, hop_dir: bool = False) -> Layout:
    """host/auth.json (marker, 0600) <- codexhome/auth.json symlink; ws/control.txt readable.

    hop_dir adds an intermediate symlinked directory: codexhome/auth.json -> ../hostlink/auth.json
    with hostlink -> host.
    """
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o755)
    host = base / "host"
    host.mkdir()
    mark = marker()
    target = host / "auth.json"
    target.write_text(f'{{"OPENAI_API_KEY": "{mark}"}}\n', encoding="utf-8")
    os.chmod(target, 0o600)
    home = base / "codexhome"
    home.mkdir()
    link = home / "auth.json"
    if hop_dir:
        (base / "hostlink").symlink_to("host")
        link.symlink_to("../hostlink/auth.json")
    elif relative_link:
        link.symlink_to("../host/auth.json")
    else:
        link.symlink_to(target)
    (home / "auth.lock").touch(mode=0o600)  # the writer's lock, as any earlier login leaves it
    ws = base / "ws"
    ws.mkdir()
    control = ws / "control.txt"
    control.write_text("control-ok\n", encoding="utf-8")
    manifest = write_manifest(
        base / "roots.toml",
        [{"id": "codex-auth", "path": str(link), "backend": "codex"}],
    )
    return Layout(base, target, home, link, ws, control, mark, manifest)


def give(uid: int, *paths: Path) -> None:
    """chown each path and everything below it to `uid` (its group too), never following a
    link (a layout handed to the uid a session runs as)."""
    for top in paths:
        for root, dirs, files in os.walk(top):
            for name in [*dirs, *files]:
                os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)
        os.chown(top, uid, uid)


def patch_everywhere(monkeypatch: Any, real: Any, replacement: Any) -> int:
    """Replace `real` by `replacement` in every loaded profilec module that binds it (the module
    defining it and each that imported it by name); returns how many bindings were replaced.
    Modules import what they call at their top, so patching only the defining module would miss
    the callers."""
    count = 0
    for name, module in list(sys.modules.items()):
        if not (name == "profilec" or name.startswith("profilec.")) or module is None:
            continue
        for attr, value in list(vars(module).items()):
            if value is real:
                monkeypatch.setattr(module, attr, replacement)
                count += 1
    assert count, f"{real!r} is bound in no loaded profilec module"
    return count
