"""The ACP adapters a launcher would use, pinned, and how each one takes its configuration.

Both come from npm and are installed by `.ci/tools.d/acp.sh` under
`$PROFILEC_CACHE/acp/<scope>-codex-acp-<version>` (keep the versions in step; a unit test compares
them). What each adapter reads was learned from its shipped code (`dist/index.js` of the
TypeScript one; `--help` and the binary's strings for the Rust one), see docs/e2e-acp.md:

* `@agentclientprotocol/codex-acp` (TypeScript, runs on node >= 20): spawns
  `<CODEX_PATH or its bundled @openai/codex> app-server` with the inherited environment; reads
  `CODEX_CONFIG` (JSON sent as the thread `config`; its `model_provider`/`model_providers` also
  become app-server `-c` flags), `MODEL_PROVIDER`, `DEFAULT_AUTH_REQUEST`, `INITIAL_AGENT_MODE`.
  Modes: read-only, workspace-write, agent, agent-full-access, plus `permission-profile:<id>` for
  every allowed profile that `permissionProfile/list` returns.
* `@zed-industries/codex-acp` (Rust, embeds its own Codex core): takes `-c key=value` args and
  `CODEX_HOME`; reads neither `CODEX_CONFIG` nor `INITIAL_AGENT_MODE`. No bundled bubblewrap: the
  sandbox uses the system `bwrap` on PATH.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..settings import cache_dir, codex_binary, codex_version

AdapterKind = Literal["ts", "zed"]

#: Pinned versions; override with the environment variables named in `pinned_version`.
DEFAULT_TS_VERSION = "2.6.0"
DEFAULT_ZED_VERSION = "0.16.0"

TS_PACKAGE = "@agentclientprotocol/codex-acp"
ZED_PACKAGE = "@zed-industries/codex-acp"

#: Launch methods (how the compiled profiles reach Codex).
METHOD_C_OVERRIDES = "c-overrides"
METHOD_CODEX_HOME = "codex-home"
METHOD_CODEX_CONFIG = "codex-config"
METHOD_CODEX_HOME_INITIAL_MODE = "codex-home+initial-mode"
#: Negative control: no profile reaches Codex at all (the harness must see the loss).
METHOD_NONE = "none"
#: A method name ending in this runs the adapter as NON_ROOT_UID (the harness must be root):
#: as root, a sandbox that keeps capabilities lets a model command unmount the deny mask.
NON_ROOT_SUFFIX = "+non-root"
NON_ROOT_UID = 65534
METHODS = (
    METHOD_C_OVERRIDES,
    METHOD_CODEX_HOME,
    METHOD_CODEX_CONFIG,
    METHOD_CODEX_HOME_INITIAL_MODE,
)


def pinned_version(kind: AdapterKind) -> str:
    """The pinned npm version of an adapter (PROFILEC_ACP_TS_VERSION / PROFILEC_ACP_ZED_VERSION)."""
    if kind == "ts":
        return os.environ.get("PROFILEC_ACP_TS_VERSION", DEFAULT_TS_VERSION)
    return os.environ.get("PROFILEC_ACP_ZED_VERSION", DEFAULT_ZED_VERSION)


def package_name(kind: AdapterKind) -> str:
    """The npm package of an adapter kind."""
    return TS_PACKAGE if kind == "ts" else ZED_PACKAGE


def install_dir(kind: AdapterKind, version: str | None = None) -> Path:
    """Where `.ci/tools.d/acp.sh` installs the adapter."""
    ver = version or pinned_version(kind)
    slug = package_name(kind).lstrip("@").replace("/", "-")
    return cache_dir() / "acp" / f"{slug}-{ver}"


@dataclass(frozen=True)
class Adapter:
    """One installed (or missing) adapter and the codex it drives."""

    kind: AdapterKind
    package: str
    version: str
    argv: tuple[str, ...]  # empty when not runnable here
    codex_version: str  # the Codex core that runs the sandbox
    codex_path: str | None  # the codex binary the TS adapter spawns (CODEX_PATH); None for zed
    missing: str | None = None  # why it cannot run here
    wrap_codex: str | None = None  # the native codex a CODEX_PATH `-c` wrapper execs

    @property
    def name(self) -> str:
        """The npm package name (the matrix's adapter column)."""
        return self.package

    def methods(self) -> tuple[str, ...]:
        """Launch methods run for this adapter (the others of METHODS are not-supported)."""
        if self.kind == "ts":
            extra = (
                ()
                if self.codex_path is None
                else (METHOD_CODEX_HOME_INITIAL_MODE + NON_ROOT_SUFFIX,)
            )
            return (*METHODS, *extra, METHOD_NONE)
        return (
            METHOD_C_OVERRIDES,
            METHOD_CODEX_HOME,
            METHOD_C_OVERRIDES + NON_ROOT_SUFFIX,
            METHOD_CODEX_HOME + NON_ROOT_SUFFIX,
            METHOD_NONE,
        )

    def unsupported_reason(self, method: str) -> str | None:
        """Why `method` does not apply to this adapter, or None."""
        if method in self.methods():
            return None
        if self.kind == "zed":
            return (
                f"{self.package} {self.version} reads neither CODEX_CONFIG nor INITIAL_AGENT_MODE "
                "(absent from the binary; config comes only from CODEX_HOME and -c args)"
            )
        return f"unknown launch method {method}"


def split_method(method: str) -> tuple[str, bool]:
    """(base launch method, whether the adapter runs as a non-root user)."""
    if method.endswith(NON_ROOT_SUFFIX):
        return method[: -len(NON_ROOT_SUFFIX)], True
    return method, False


def node_binary() -> str | None:
    """The node that runs the TS adapter (PROFILEC_NODE, else `node` on PATH)."""
    env = os.environ.get("PROFILEC_NODE")
    if env:
        return env
    return shutil.which("node")


def ts_adapter(*, bundled_codex: bool = False) -> Adapter:
    """The TypeScript adapter; CODEX_PATH is the pinned codex unless `bundled_codex`."""
    ver = pinned_version("ts")
    base = install_dir("ts", ver) / "node_modules"
    script = base / "@agentclientprotocol" / "codex-acp" / "dist" / "index.js"
    node = node_binary()
    missing = None
    if not script.is_file():
        missing = f"{TS_PACKAGE} {ver} is not installed under {install_dir('ts', ver)}"
    elif node is None:
        missing = "node is not on PATH (needs node >= 20)"
    wrap: str | None = None
    if bundled_codex:
        pkg = base / "@openai" / "codex" / "package.json"
        cver = _package_version(pkg) or "unknown"
        codex_path = None
        natives = sorted(base.glob("@openai/codex-linux-*/vendor/*/bin/codex"))
        wrap = str(natives[0]) if natives else None
    else:
        pinned = codex_binary()
        cver = codex_version()
        codex_path = str(pinned) if pinned is not None and pinned.is_file() else None
        if codex_path is None and missing is None:
            missing = f"pinned codex {cver} is not installed (run .ci/tools.sh)"
        wrap = codex_path
    argv = (node, str(script)) if missing is None and node is not None else ()
    return Adapter("ts", TS_PACKAGE, ver, argv, cver, codex_path, missing, wrap)


def zed_adapter() -> Adapter:
    """The Rust adapter: its platform package's native binary (embeds its own Codex core)."""
    ver = pinned_version("zed")
    base = install_dir("zed", ver) / "node_modules" / "@zed-industries"
    found = sorted(base.glob("codex-acp-linux-*/bin/codex-acp")) if base.is_dir() else []
    missing = None
    if not (base / "codex-acp" / "package.json").is_file():
        missing = f"{ZED_PACKAGE} {ver} is not installed under {install_dir('zed', ver)}"
    elif not found:
        missing = f"{ZED_PACKAGE} {ver} ships no binary for this platform ({os.uname().machine})"
    argv = (str(found[0]),) if found and missing is None else ()
    # The embedded core is not reported by the binary (no --version); research notes name the
    # codex-rs checkout it was built from, recorded here as "embedded".
    return Adapter("zed", ZED_PACKAGE, ver, argv, "embedded", None, missing)


def all_adapters() -> tuple[Adapter, ...]:
    """Every adapter the matrix covers, in matrix order."""
    return (ts_adapter(), zed_adapter())


def _package_version(path: Path) -> str | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ver = doc.get("version") if isinstance(doc, dict) else None
    return ver if isinstance(ver, str) else None
