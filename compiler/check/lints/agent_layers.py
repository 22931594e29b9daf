"""Lints for config layers an agent controls: the session config and the workspace's own files.

PC040-PC049. The session config (CODEX_CONFIG) comes from an agent definition; a workspace's
`.codex/config.toml` comes with the repository. Codex 0.171.0 runs `mcp_servers`/`notify`
programs itself and sends the bearer token where `chatgpt_base_url` or a provider points, and it
loads a *trusted* project's `.codex/config.toml` above `$CODEX_HOME/config.toml` (measured: such
a file re-granted `read` on the credential over a compiled deny). Key classes come from the
reviewed classification in compiler/session.py.

A workspace config file is opened only when lstat shows a regular file that is not a protected
root's target (device and inode compared), with O_NOFOLLOW, and at most MAX_BYTES of it.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ... import projectlayers
from ...codex.vocabulary import SESSION_FORBIDDEN_KEYS, TRUST_TRUSTED
from ...rule_ids import (
    ACCOUNT_APPS_ENABLED,
    NESTED_PROJECT_CONFIG,
    PROJECT_LINK_OUTSIDE,
    SESSION_CONFIG_NOT_ALLOWED,
    SESSION_CONFIG_STRIPPED,
    WORKSPACE_CONFIG_GRANTS,
    WORKSPACE_CONFIG_PRESENT,
    WORKSPACE_PROJECT_TRUSTED,
)
from ...session import MAX_BYTES, classify, load_allowlist, project_root, wrong_type
from ..context import lint
from ..rules import rule

if TYPE_CHECKING:
    from ..context import LintContext


rule(
    WORKSPACE_CONFIG_GRANTS,
    "workspace-config-grants",
    "error",
    "a workspace's .codex/config.toml sets permissions, a program, a URL or approvals",
    "Codex 0.171.0 loads a trusted project's .codex/config.toml above CODEX_HOME/config.toml "
    "(measured: it re-granted read on the credential over the compiled deny); its "
    "mcp_servers and notify run as the trusted parent",
    "remove the file from the repository, or launch through a profilec route (every route "
    "marks the workspace roots untrusted) and never trust the project",
    waivable=False,
)

rule(
    WORKSPACE_CONFIG_PRESENT,
    "workspace-config-present",
    "note",
    "a workspace root or its project root holds a .codex/config.toml",
    "Codex loads it whenever the project is trusted",
    "keep every workspace root untrusted (profilec's outputs do)",
)

rule(
    NESTED_PROJECT_CONFIG,
    "nested-project-config",
    "error",
    "a .codex folder that Codex would load (config.toml, rules, or a link) lies in a directory "
    "below a workspace root (through links to directories and inside .git too), or the scan "
    "for one is incomplete (a directory it cannot list, or its limit reached)",
    "codex-acp 2.6.0 marks every session cwd a trusted project, so a session opened in that "
    "directory loads it above profilec's config (measured: a model-planted one made CODEX_HOME "
    "writable); no config or requirements key turns that off, and Codex keeps only a writable "
    "root's own .codex read-only, so a model command can plant one (compiler/projectlayers.py)",
    "remove the folder before the next session (profilec watch reports one that appears while a "
    "session runs); a repository that ships one on purpose needs a reviewed waiver",
)

rule(
    PROJECT_LINK_OUTSIDE,
    "project-link-outside",
    "error",
    "a link below a workspace root leads to a directory outside every workspace root",
    "a session opened at the link resolves to its target, and codex-acp 2.6.0 loads the "
    "project config there and above it (measured on 0.171.0 and 0.166.0: `<ws>/lib -> /tmp/x` "
    "holding .codex/config.toml loaded); the scan of the roots does not cover that tree "
    "(compiler/projectlayers.py)",
    "remove the link, or copy what it leads to into the workspace; a link to a directory no "
    "mode can write that holds no .codex needs a reviewed waiver",
)

rule(
    SESSION_CONFIG_NOT_ALLOWED,
    "session-config-not-allowed",
    "error",
    "a session config that reaches Codex carries a key outside the reviewed allow-list (or an "
    "allowed key with another value type than the allow-list names)",
    "an agent-controlled layer can run a program as the trusted parent, redirect the "
    "credential, widen access or change approvals; a value of an unreviewed type was never "
    "reviewed",
    "pass the session config through profilec compile --session-config (it strips the key)",
    waivable=False,
)

rule(
    SESSION_CONFIG_STRIPPED,
    "session-config-stripped",
    "warning",
    "the agent's session config asked for a key outside the allow-list, or gave an allowed key "
    "a value of another type; profilec stripped it",
    "an agent definition that sets programs, URLs, access or approvals is suspect; one that "
    "mistypes an allowed key loses that setting (stripped, fail closed)",
    "drop the key from the agent definition; the launcher sets what it vouches for",
)

rule(
    WORKSPACE_PROJECT_TRUSTED,
    "workspace-project-trusted",
    "error",
    "a config layer trusts a workspace root, a directory under one, or its repository root",
    "Codex then loads that directory's .codex/config.toml above CODEX_HOME/config.toml "
    "(measured on 0.171.0: a trusted sub-directory or repository-root entry beat an "
    "untrusted entry for the workspace root)",
    'set trust_level = "untrusted" (profilec\'s outputs do) and trust no directory under it',
    waivable=False,
)

rule(
    ACCOUNT_APPS_ENABLED,
    "account-apps-enabled",
    "warning",
    "account apps/connectors are not disabled (features.apps is not false)",
    "the `apps` feature is stable and on by default in Codex 0.171.0; policy keeps it off",
    "set features.apps = false (profilec's outputs do)",
)


def _project_dirs(root: str) -> list[str]:
    """The workspace root and its ancestors up to the nearest one holding `.git` (lstat only)."""
    top = project_root(root)
    if top is None:
        return [root]  # no project root marker: Codex uses the cwd alone
    out = [root]
    while out[-1] != top:
        out.append(os.path.dirname(out[-1]))
    return out


def _protected_inodes(o: LintContext) -> set[tuple[int, int]]:
    found: set[tuple[int, int]] = set()
    for r in o.inp.roots:
        st = o.lstat(r.target)
        if not isinstance(st, int):
            found.add((st.st_dev, st.st_ino))
    return found


def _read_workspace_config(path: str, o: LintContext) -> tuple[dict[str, Any] | None, str | None]:
    """(table, None) or (None, why it was not read); never opens a protected file."""
    st = o.lstat(path)
    if isinstance(st, int):
        return None, None
    if stat.S_ISLNK(st.st_mode):
        return None, "is a symlink (not followed)"
    if not stat.S_ISREG(st.st_mode):
        return None, "is not a regular file"
    if (st.st_dev, st.st_ino) in _protected_inodes(o):
        return None, "is a protected root (not read)"
    if st.st_size > MAX_BYTES:
        return None, f"is larger than {MAX_BYTES} bytes"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    try:
        fst = os.fstat(fd)
        if (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
            return None, "changed while being read"
        raw = os.read(fd, MAX_BYTES + 1)
    finally:
        os.close(fd)
    try:
        return tomllib.loads(raw.decode("utf-8")), None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return None, "is not valid TOML"


@lint
def _workspace_configs(o: LintContext) -> None:
    seen: set[str] = set()
    for root in o.inp.workspace_roots:
        for d in _project_dirs(root):
            path = os.path.join(d, ".codex", "config.toml")
            if path in seen:
                continue
            seen.add(path)
            data, why = _read_workspace_config(path, o)
            if data is None and why is None:
                continue  # absent
            o.add(WORKSPACE_CONFIG_PRESENT, f"{path} exists", file=path, path=path)
            if why is not None:
                o.add(
                    WORKSPACE_CONFIG_GRANTS,
                    f"{path} {why}; Codex would load it if trusted",
                    file=path,
                    path=path,
                )
                continue
            assert data is not None
            for key in sorted(data):
                cls = classify(key)
                if cls is None or cls == "unknown":
                    continue
                o.add(
                    WORKSPACE_CONFIG_GRANTS,
                    f"{path} sets {key!r} ({cls})",
                    file=path,
                    path=f"{path}:{key}",
                )


#: How many unlistable directories one root's findings name (the rest are counted).
_UNLISTED_SHOWN = 10


@lint
def _nested_configs(o: LintContext) -> None:
    roots = tuple(o.inp.workspace_roots)
    for root in roots:
        seen = projectlayers.scan(root, roots=roots)
        for path in seen.found:
            if not projectlayers.loads(path):
                continue
            where = os.path.dirname(path)
            o.add(
                NESTED_PROJECT_CONFIG,
                f"{path} would load in a session opened in {where}",
                file=path,
                path=path,
            )
        for out in seen.outside:
            o.add(
                PROJECT_LINK_OUTSIDE,
                f"{out.link} leads to {out.target}, outside every workspace root: a session "
                "opened there would load the project config of that tree",
                path=out.link,
            )
        for where in seen.unlisted[:_UNLISTED_SHOWN]:
            o.add(
                NESTED_PROJECT_CONFIG,
                f"{where}: cannot be listed (a link: resolved) by uid {os.geteuid()}, the scan "
                "for planted project configs is incomplete (run check as root, or make it "
                "listable)",
                path=where,
            )
        if len(seen.unlisted) > _UNLISTED_SHOWN:
            o.add(
                NESTED_PROJECT_CONFIG,
                f"{root}: {len(seen.unlisted) - _UNLISTED_SHOWN} more directories cannot be listed",
                path=root,
            )
        if seen.overflow:
            o.add(
                NESTED_PROJECT_CONFIG,
                f"{root}: more than {projectlayers.SCAN_LIMIT} directories, the scan for "
                "planted project configs stopped there",
                path=root,
            )


@lint
def _session_keys(o: LintContext) -> None:
    raw = o.inp.session_raw
    if raw is None:
        return
    allow = o.inp.allowlist or load_allowlist()
    reaching: set[str] = set()
    for layer in o.inp.stack.layers:
        if layer.origin == "session" and layer.name == "session config":
            reaching.update(str(k) for k in layer.data)
    for key in sorted(raw, key=str):
        head = str(key).split(".", 1)[0]
        if head.startswith(SESSION_FORBIDDEN_KEYS):
            continue  # PC012 reports these
        # The same judgement compile's sanitizer makes (compiler/session.py).
        if head in allow.allowed:
            why = wrong_type(str(key), raw[key], allow)
            if why is None:
                continue
            what = f"{why} (wrong-type)"
        else:
            what = f"{key!r} ({classify(head) or 'unknown'})"
        if head in reaching:
            o.add(
                SESSION_CONFIG_NOT_ALLOWED,
                f"session config sets {what}",
                path=str(key),
                file=o.inp.session_file,
            )
        else:
            o.add(
                SESSION_CONFIG_STRIPPED,
                f"session config asked for {what}; stripped",
                path=str(key),
                file=o.inp.session_file,
            )


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


@lint
def _trusted_projects(o: LintContext) -> None:
    roots = o.inp.workspace_roots
    if not roots:
        return
    tops = {t for t in (project_root(os.path.realpath(r)) for r in roots) if t is not None}
    for layer in o.inp.stack.layers:
        projects = layer.data.get("projects")
        if not isinstance(projects, Mapping):
            continue
        for p in sorted(projects, key=str):
            entry = projects[p]
            if not isinstance(entry, Mapping) or entry.get("trust_level") != TRUST_TRUSTED:
                continue
            if any(_within(str(p), r) for r in roots) or str(p) in tops:
                o.add(
                    WORKSPACE_PROJECT_TRUSTED,
                    f"{layer.name}: projects.{p!r} is trusted",
                    layer=layer,
                    needles=(str(p),),
                    path=str(p),
                )


@lint
def _apps(o: LintContext) -> None:
    features = o.merged.get("features")
    if isinstance(features, Mapping) and features.get("apps") is False:
        return
    o.add(ACCOUNT_APPS_ENABLED, "features.apps is not false in the config stack")
