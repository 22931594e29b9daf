"""The one edge: every input file of a run, each read once, its bytes kept for every later use.

`Inputs` holds the command's compile flags (one `CompileFlags` record, compiler/flags.py) and
reads each file the first time something asks for it: the roots manifest, the vouched-MCP file,
the plan layout and a check's project config (its waivers) through the trust check on the open
descriptor (roots.read_trusted_bytes), the policy files in the profiles directory and the
session config plainly (the session config bounded, it is untrusted). Every later use, by
compile, provenance, lock, check or audit, parses the same bytes, so the sha256 a bundle's
provenance reports (compiler/bundle/sources.py hashes these bytes) is the sha256 of what was
compiled. The parsed manifest, policy and session config are kept too, so a run validates each
once. Nothing computed from them is kept here: the compile step returns its own record
(compiler/compiled.py `Compiled`), and a step that needs a catalog or layout parses it once and
passes it on. The other files a command names go through here too: a check's
`--config`/`--overrides`/`--acp-json`/`--mode-map`/launcher files and its `--baseline` (`text`,
`project_file`), a lock, bundle, canary JSON or e2e matrix (`json_object`), the adapter and
backend catalogs (`policy_file`, parsed beside their models: emit/catalog.adapters_of,
mounts/backends.catalog_of). No other module opens an input file (tests/unit/test_one_edge.py
scans for readers).

Only input files go through here, never a credential: roots are walked with lstat/readlink by
compiler/roots.py.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import InputError, PolicyError, UsageError
from .flags import CompileFlags
from .flags import text as flag_text
from .fsio import read_input
from .policy import default_profiles_dir, load_policy
from .readers import load_manifest, parse_toml, read_trusted_bytes

if TYPE_CHECKING:
    from .models.mcp import VouchedMcpServers
    from .models.roots import RootsManifest
    from .models.session import SessionAllowList
    from .policy import Policy


class InputFile(NamedTuple):
    """One input file as read: its path and bytes."""

    path: str
    data: bytes


#: The flags `Inputs.with_flags` may change: none names a file `Inputs` parses and keeps.
_UNPARSED = frozenset({"home", "tmpdir", "plan_layout"})

#: Where an error in a session config given as data points.
SESSION_DATA = "<session config data>"


@dataclass(slots=True)
class Inputs:
    """What one compile/check/lock/audit run read: the compile flags it was built from, and the
    files they name, each read once.

    The flags are compiler/flags.py's `CompileFlags`, held as one record (their one
    declaration; tests/unit/test_compile_flags.py). Nothing a later step computes is kept here:
    the compile step returns its own record (compiler/bundle/load.py `Compiled`)."""

    flags: CompileFlags = field(default_factory=CompileFlags)
    #: The session config given as data (JSON text) instead of a path: untrusted all the same,
    #: bounded and parsed exactly as a file's bytes.
    session_data: bytes | None = None
    #: path -> the file as read (insertion order = read order).
    files: dict[str, InputFile] = field(default_factory=dict)
    _parsed: dict[str, Any] = field(default_factory=dict, repr=False)
    #: The keys of `files` read through the trust check.
    _checked: set[str] = field(default_factory=set, repr=False)

    @classmethod
    def of(
        cls,
        flags: CompileFlags,
        missing: str = "give --roots (and the compile flags) or --bundle FILE",
    ) -> Inputs:
        """The run's one read edge over `flags` (a request's compile flags, its own fields
        dropped); a UsageError `missing` without --roots."""
        if flags.roots is None:
            raise UsageError(missing)
        return cls(flags.flags())

    @classmethod
    def unrooted(cls, profiles: str | os.PathLike[str] | None = None) -> Inputs:
        """An edge without a roots manifest: for a run that reads only the reviewed policy or
        files it names itself (diff, explain of a foreign config, e2e, a library's
        load_policy()/load_catalog(), a --bundle or --lock run)."""
        return cls(CompileFlags(profiles=Path(profiles) if profiles else None))

    def with_flags(self, **changes: Any) -> Inputs:
        """The same read edge (the same files, read and parsed once) under other values of the
        flags that name no parsed input: the HOME and TMPDIR a plan layout gives
        (compiler/bundle/load.py), a lock's plan layout (compiler/audit/drift.py)."""
        if set(changes) - _UNPARSED:
            raise ValueError(f"flags naming a parsed input: {sorted(set(changes) - _UNPARSED)}")
        flags = replace(self.flags, **changes)
        return Inputs(flags, self.session_data, self.files, self._parsed, self._checked)

    @property
    def roots_path(self) -> str:
        """The roots manifest's path as text; a UsageError on an edge without one."""
        if self.flags.roots is None:
            raise UsageError("no roots manifest: give --roots")
        return str(self.flags.roots)

    # -- reading ---------------------------------------------------------------------------

    def _file(self, path: str, reader: Any) -> InputFile:
        key = os.path.abspath(path)
        hit = self.files.get(key)
        if hit is None:
            data: bytes = reader(path)
            hit = InputFile(path, data)
            self.files[key] = hit
        return hit

    def trusted(self, path: str) -> InputFile:
        """A daemon-owned file, trust-checked on the descriptor it is read from. A path some
        flag named for a plain read earlier in the run is read again, checked: the bytes kept
        for it are never ones that skipped the check."""
        key = os.path.abspath(path)
        if key not in self._checked:
            self.files.pop(key, None)
        hit = self._file(path, read_trusted_bytes)
        self._checked.add(key)
        return hit

    def policy_file(self, path: str) -> InputFile:
        """A reviewed policy file (profiles/): no trust check, a policy error when unreadable."""
        return self._file(path, lambda p: read_input(p, error=PolicyError))

    def untrusted(self, path: str, limit: int) -> InputFile:
        """Agent-supplied input (the session config): at most `limit` bytes are read."""
        return self._file(path, lambda p: read_input(p, limit=limit))

    def project_file(self, path: str, what: str) -> InputFile:
        """A file of the project being checked (a `--baseline` report, a foreign config): read
        plainly, an InputError naming `what` when unreadable. The project config, which waives
        findings, is read through `trusted` instead (compiler/check/waivers.py)."""
        return self._file(path, lambda p: read_input(p, what))

    def text(self, path: str, what: str) -> str:
        """A UTF-8 project file (`project_file`), decoded; an InputError naming `what` when it
        is not UTF-8."""
        raw = self.project_file(path, what).data
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{what} is not valid UTF-8 at byte {exc.start}", where=path) from None

    def json_object(self, path: str, what: str) -> dict[str, Any]:
        """A JSON object file (a lock, a bundle, canary JSON, an e2e matrix) read as a project
        file; each call parses afresh (callers may change what they get)."""
        return json_object(self.project_file(path, what).data, path, what)

    @property
    def profiles_dir(self) -> str:
        """The policy directory: `--profiles`, else the shipped one."""
        return str(self.flags.profiles or default_profiles_dir())

    def _once(self, key: str, build: Any) -> Any:
        if key not in self._parsed:
            self._parsed[key] = build()
        return self._parsed[key]

    # -- parsed inputs ---------------------------------------------------------------------

    def manifest(self) -> RootsManifest:
        """The roots manifest: trust-checked, parsed and validated once."""
        return self._once(  # type: ignore[no-any-return]
            "manifest",
            lambda: load_manifest(self.roots_path, data=self.trusted(self.roots_path).data),
        )

    def policy(self) -> Policy:
        """The reviewed policy (mode map, base profiles, trusted base), read once."""

        def read(path: str) -> bytes:
            return self.policy_file(path).data

        return self._once(  # type: ignore[no-any-return]
            "policy", lambda: load_policy(self.profiles_dir, read=read)
        )

    def allowlist(self) -> SessionAllowList:
        """The session allow-list of the policy directory."""
        from .session import ALLOWLIST_FILE, allowlist_from_bytes

        path = os.path.join(self.profiles_dir, ALLOWLIST_FILE)
        return self._once(  # type: ignore[no-any-return]
            "allowlist", lambda: allowlist_from_bytes(self.policy_file(path).data, where=path)
        )

    def session_raw(self) -> dict[str, Any] | None:
        """The untrusted session config as parsed (bounded), or None without one."""
        if self.session_data is None and self.flags.session_config is None:
            return None  # no session config: the sanitizer stays unimported
        from .session import MAX_BYTES, parse_session_bytes

        path = flag_text(self.flags.session_config)
        if self.session_data is not None:
            if path is not None:
                raise UsageError("give the session config as a path or as data, not both")
            data = self.session_data
            return self._once(  # type: ignore[no-any-return]
                "session", lambda: parse_session_bytes(data, where=SESSION_DATA)
            )
        if path is None:
            return None
        return self._once(  # type: ignore[no-any-return]
            "session",
            lambda: parse_session_bytes(self.untrusted(path, MAX_BYTES + 1).data, where=path),
        )

    def vouched(self) -> VouchedMcpServers | None:
        """The launcher-vouched MCP servers (trust-checked), or None without the file."""
        path = flag_text(self.flags.vouched_mcp)
        if path is None:
            return None  # no vouched servers: the MCP model stays unimported
        from .mcp import load_vouched

        return self._once(  # type: ignore[no-any-return]
            "vouched",
            lambda: load_vouched(parse_toml(self.trusted(path).data, where=path), where=path),
        )


def json_object(raw: bytes, path: str, what: str) -> dict[str, Any]:
    """The JSON object `raw` holds (read from `path`), one clear line on any error."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{what} is not valid JSON: {exc}", where=path) from None
    if not isinstance(data, dict):
        raise InputError(f"{what} must be a JSON object", where=path)
    return data
