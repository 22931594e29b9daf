"""Every `--format` of every command: one table per artifact, each format's name, renderer and
whether it writes a directory. The `--format` help, the check of a name and its error text
derive from the table (`FormatTable.help`, `FormatTable.choose`); no other module lists them.

A renderer is named as `module:function` under the package and imported only when that format
is rendered, so a command loads its own renderer and no other. A format whose renderer is None
is rendered by its command's run itself (text, or the run's JSON document).

A new format is one `Format` line in its artifact's table (and the renderer it names).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from .errors import UsageError

if TYPE_CHECKING:
    from .audit.report import AuditReport
    from .models.check import CheckReport
    from .models.compat import CompatibilityMatrix
    from .models.compiled import CompiledBundle
    from .models.mounts import MountPlan

R = TypeVar("R")


@dataclass(frozen=True, kw_only=True, slots=True)
class Format:
    """One output format: its `--format` name, its renderer (`module:function` under the
    package; None: the command's run renders it) and whether it writes a directory (`--out
    DIR`) instead of text."""

    name: str
    renderer: str | None
    directory: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class FormatTable(Generic[R]):
    """The formats of one artifact, in the order help and errors list them; `default` is the
    format a command renders without `--format`. `R` is the type of its renderers."""

    artifact: str
    formats: tuple[Format, ...]
    default: str

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.formats)

    def help(self) -> str:
        """The `--format` help: the names, a directory format marked as such."""
        return " | ".join(
            f"{f.name} (--out is the directory it writes)" if f.directory else f.name
            for f in self.formats
        )

    def choose(self, name: str, *, where: str | None = None) -> Format:
        """The format `name`; else a UsageError listing the table (`where`: the parameter
        name a library caller passed it as, in place of `--format`)."""
        for f in self.formats:
            if f.name == name:
                return f
        said = "format" if where else "--format"
        raise UsageError(
            f"unknown {said} {name!r}; choose one of {', '.join(self.names)}", where=where
        )

    def renderer(self, name: str) -> R:
        """The renderer of format `name`, imported now; a KeyError for a name not in the
        table or a format its run renders itself."""
        ref = next((f.renderer for f in self.formats if f.name == name), None)
        if ref is None:
            raise KeyError(name)
        module, function = ref.split(":")
        return cast(R, getattr(importlib.import_module(f"{__package__}.{module}"), function))


def _text_or_json(artifact: str) -> FormatTable[None]:
    return FormatTable(
        artifact=artifact,
        formats=(Format(name="text", renderer=None), Format(name="json", renderer=None)),
        default="text",
    )


#: `profilec compile`: a codex-home writes `--out DIR` (config.toml and auth.lock).
COMPILE_FORMATS: FormatTable[Callable[[CompiledBundle], str]] = FormatTable(
    artifact="compile",
    formats=(
        Format(name="toml", renderer="emit.codex_toml:render_toml"),
        Format(name="overrides", renderer="emit.overrides:render_overrides"),
        Format(name="acp-json", renderer="emit.acp_json:render_acp_json"),
        Format(name="session-config", renderer="emit.acp_json:render_session_config"),
        Format(name="bundle", renderer="bundle.document:render_bundle"),
        Format(name="codex-home", renderer=None, directory=True),  # emit.codex_home
        Format(name="launch", renderer="emit.launch:render_launch"),
        Format(name="requirements", renderer="emit.requirements:render_requirements"),
    ),
    default="toml",
)

#: `profilec plan`: the mount plan for each sandbox backend.
PLAN_FORMATS: FormatTable[Callable[[MountPlan], str]] = FormatTable(
    artifact="plan",
    formats=(
        Format(name="json", renderer="mounts.render_json:render_json"),
        Format(name="docker", renderer="mounts.render_docker:render_docker"),
        Format(name="bwrap", renderer="mounts.render_bwrap:render_bwrap"),
        Format(name="srt", renderer="mounts.render_srt:render_srt"),
    ),
    default="json",
)

#: `profilec check`: the report (junit and sarif carry a time: SOURCE_DATE_EPOCH fixes it).
CHECK_FORMATS: FormatTable[Callable[[CheckReport, datetime], str]] = FormatTable(
    artifact="check",
    formats=tuple(
        Format(name=name, renderer=f"report.{name}:render")
        for name in ("text", "json", "junit", "sarif", "github")
    ),
    default="text",
)

#: `profilec audit`: the reviewer report.
AUDIT_FORMATS: FormatTable[Callable[[AuditReport], str]] = FormatTable(
    artifact="audit",
    formats=(
        Format(name="md", renderer="audit.report_md:render_md"),
        Format(name="html", renderer="audit.report_html:render_html"),
    ),
    default="md",
)

#: `profilec e2e`: the compatibility matrix.
E2E_FORMATS: FormatTable[Callable[[CompatibilityMatrix], str]] = FormatTable(
    artifact="e2e",
    formats=(
        Format(name="json", renderer="compat_matrix:matrix_json"),
        Format(name="md", renderer="compat_matrix:matrix_markdown"),
    ),
    default="json",
)

#: `profilec canary`, `diff`, `explain`, `rules`: each run renders its text or its JSON.
CANARY_FORMATS = _text_or_json("canary")
DIFF_FORMATS = _text_or_json("diff")
EXPLAIN_FORMATS = _text_or_json("explain")
RULES_FORMATS = _text_or_json("rules")

#: Every table, by artifact (the tests and the docs walk them).
TABLES: dict[str, FormatTable[Any]] = {
    t.artifact: t
    for t in (
        COMPILE_FORMATS,
        PLAN_FORMATS,
        CHECK_FORMATS,
        AUDIT_FORMATS,
        E2E_FORMATS,
        CANARY_FORMATS,
        DIFF_FORMATS,
        EXPLAIN_FORMATS,
        RULES_FORMATS,
    )
}
