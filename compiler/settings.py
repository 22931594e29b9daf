"""Settings that a run may override from the environment: pinned tool versions and the cache."""

from __future__ import annotations

import os
from pathlib import Path

#: The Codex CLI release every real-Codex test and canary targets. Override with
#: PROFILEC_CODEX_VERSION to try a newer one; the lints are version-gated on this.
DEFAULT_CODEX_VERSION = "0.171.0"


def codex_version() -> str:
    """The pinned `@openai/codex` version, or the one PROFILEC_CODEX_VERSION names."""
    return os.environ.get("PROFILEC_CODEX_VERSION", DEFAULT_CODEX_VERSION)


def repo_root() -> Path:
    """The checkout this package lives in (the cache sits beside it)."""
    return Path(__file__).resolve().parent.parent


def cache_dir() -> Path:
    """The project's own cache: npm installs, built images' contexts. PROFILEC_CACHE overrides."""
    env = os.environ.get("PROFILEC_CACHE")
    return Path(env) if env else repo_root() / ".cache"


def codex_binary() -> Path | None:
    """The native codex binary of the pinned version, if installed in the cache or named by env."""
    env = os.environ.get("PROFILEC_CODEX_BIN")
    if env:
        return Path(env)
    base = cache_dir() / f"codex-{codex_version()}" / "node_modules" / "@openai"
    for cand in sorted(base.glob("codex-linux-*/vendor/*/bin/codex")):
        if cand.is_file():
            return cand
    return None
