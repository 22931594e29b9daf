"""`profilec explain`: the request and its run (the effective access of one path)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..audit.explain import explain, explain_config, live_walker, render_text
from ..check.configstack import ConfigStack, load_config_toml, load_overrides
from ..codex.fsview import LiveFs
from ..compiled import no_plan_layout
from ..errors import UsageError
from ..flags import CompileFlags
from ..formats import EXPLAIN_FORMATS
from ..inputs import Inputs
from . import Outcome, absolute
from .audit import bundle_or_compile

if TYPE_CHECKING:
    from ..models.audit import Explanation


@dataclass(frozen=True, slots=True)
class ExplainRequest(CompileFlags):
    """The argument and flags of one `profilec explain` run; --home/--tmpdir are the launch
    values compile takes too (as for check), and the session's (else $HOME, $TMPDIR)."""

    path: str = ""
    mode: str | None = None
    bundle: Path | None = None
    cwd: str | None = None
    config: Path | None = None
    overrides: Path | None = None
    profile: str | None = None
    fmt: str = EXPLAIN_FORMATS.default


def run(request: ExplainRequest) -> Outcome:
    """What PATH may do under MODE, the winning entry and what it beat, as text or JSON."""
    EXPLAIN_FORMATS.choose(request.fmt)
    absolute(cwd=request.cwd, home=request.home, tmpdir=request.tmpdir)
    if request.config or request.overrides or request.bundle:
        no_plan_layout(request, "--config/--overrides" if request.bundle is None else "--bundle")
    x = _foreign(request) if request.config or request.overrides else _compiled(request)
    if request.fmt == "json":
        return Outcome(text=json.dumps(x.model_dump(mode="json"), indent=2, sort_keys=True) + "\n")
    return Outcome(text=render_text(x))


def _session_home(request: ExplainRequest) -> tuple[str | None, str | None]:
    home = request.home if request.home is not None else os.environ.get("HOME")
    tmpdir = request.tmpdir if request.tmpdir is not None else os.environ.get("TMPDIR")
    return home, tmpdir


def _foreign(request: ExplainRequest) -> Explanation:
    """A config profilec did not write: --config and/or --overrides, the profile --profile
    (else its default_permissions)."""
    edge = Inputs.unrooted(request.profiles)
    layers = []
    if request.config:
        cfg = str(request.config)
        layers.append(load_config_toml(cfg, edge.text(cfg, "config")))
    if request.overrides:
        ovr = str(request.overrides)
        layers.append(load_overrides(ovr, edge.text(ovr, "override list")))
    merged = ConfigStack(tuple(layers)).merged()
    perms = merged.get("permissions")
    pid = request.profile or merged.get("default_permissions")
    if not isinstance(pid, str):
        raise UsageError("give --profile ID: the config sets no default_permissions")
    home, tmpdir = _session_home(request)
    return explain_config(
        perms if isinstance(perms, dict) else {},
        pid,
        request.path,
        cwd=request.cwd or os.getcwd(),
        home=home,
        tmpdir=tmpdir,
        source=", ".join(str(p) for p in (request.config, request.overrides) if p),
        mode=request.mode or "-",
        fs=LiveFs(),
    )


def _compiled(request: ExplainRequest) -> Explanation:
    """What profilec compiles (or the --bundle it compiled), under --mode."""
    if request.mode is None:
        raise UsageError("give --mode (or --config/--overrides with --profile)")
    if request.profile is not None:
        raise UsageError("--profile applies to --config/--overrides; use --mode")
    b, doc, live = bundle_or_compile(
        request.bundle, Inputs.unrooted(request.profiles) if request.bundle else Inputs.of(request)
    )
    home, tmpdir = _session_home(request)
    return explain(
        b,
        request.path,
        request.mode,
        provenance=doc.get("provenance"),
        cwd=request.cwd,
        walker=live_walker if live else None,
        home=home,
        tmpdir=tmpdir,
        fs=LiveFs(),
    )
