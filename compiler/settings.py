"""Settings that a run may override from the environment: pinned tool versions and the cache."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

#: The Codex CLI release every real-Codex test and canary targets (compiler/codex/vocabulary.py).
#: Override with PROFILEC_CODEX_VERSION to try a newer one; the lints are version-gated on this.
from .codex.vocabulary import DEFAULT_CODEX_VERSION as DEFAULT_CODEX_VERSION


def codex_version() -> str:
    """The pinned `@openai/codex` version, or the one PROFILEC_CODEX_VERSION names."""
    return os.environ.get("PROFILEC_CODEX_VERSION", DEFAULT_CODEX_VERSION)


#: root's cache: the adapters and Codex installed here must stay reachable by the non-root user
#: a launcher runs the trusted parent as (a 0700 /root/.cache is not: measured, the adapter run
#: as uid 65534 could not even start, "initialize: pid ... closed its stdout").
ROOT_CACHE = "/var/cache/profilec"


def cache_dir() -> Path:
    """The project's own cache (npm installs of Codex and the adapters, scratch trees).

    PROFILEC_CACHE, else /var/cache/profilec for root, else `$XDG_CACHE_HOME/profilec`, else
    `~/.cache/profilec`; never inside the installed package. `.ci/tools.sh` installs into the
    same place."""
    env = os.environ.get("PROFILEC_CACHE")
    if env:
        return Path(env)
    if os.getuid() == 0:
        return Path(ROOT_CACHE)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "profilec"


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


def now_utc() -> datetime:
    """The one clock of every dated output (reports, waiver expiry): now in UTC, whole seconds,
    or SOURCE_DATE_EPOCH when it is set, so CI output is reproducible."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), tz=UTC)
    return datetime.now(tz=UTC).replace(microsecond=0)
