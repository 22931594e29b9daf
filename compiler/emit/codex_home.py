"""`codex-home DIR`: a dedicated CODEX_HOME whose config.toml holds the compiled profiles.

For adapters that list only profiles found in a config layer (agentclientprotocol/codex-acp's
`permission-profile:<id>` modes come from `permissionProfile/list`). Directory 0700, file 0600.
"""

from __future__ import annotations

import os

from ..fsio import ensure_private_dir, write_atomic
from ..models import CompiledBundle
from .codex_toml import render_toml


def write_codex_home(bundle: CompiledBundle, directory: str) -> str:
    """Write DIR/config.toml atomically; returns its path."""
    text = render_toml(bundle)  # render first: an error leaves no directory behind
    ensure_private_dir(directory)
    path = os.path.join(directory, "config.toml")
    write_atomic(path, text.encode("utf-8"), mode=0o600)
    return path
