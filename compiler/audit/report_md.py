"""`audit --format md`: the reviewer report as GitHub-flavoured Markdown, every path escaped.

A path may hold any byte but NUL: `|` would split a table cell, a backtick would open a code
span, `<` would open an HTML tag, a newline would end the row. `md()` neutralises all of them,
so a hostile directory name shows as itself and cannot change the document's structure.
"""

from __future__ import annotations

import html

from ..compat_matrix import MATRIX_COLUMNS
from .launchers import NOT_TESTED_E2E, summary_text
from .report import (
    NOT_TESTED,
    AccessItem,
    AuditReport,
    binding_text,
    canary_table,
    coverage_table,
    folded_items,
    launcher_rows,
    lints_table,
    parent_table,
    roots_table,
    versions_table,
)

#: Inline-significant characters (`<`, `>`, `&` are turned into entities before this).
_MD_SPECIAL = "\\`*_[]|~"


def md(text: str) -> str:
    """Escape `text` for a Markdown paragraph or table cell (one line, literal)."""
    out = html.escape(text, quote=False)  # & < > first: `&lt;` is literal in Markdown too
    out = "".join("\\" + c if c in _MD_SPECIAL else c for c in out)
    return out.replace("\r", "\\r").replace("\n", "\\n")


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(md(c) for c in r) + " |" for r in rows]
    return lines


def _items(title: str, items: tuple[AccessItem, ...]) -> list[str]:
    if not items:
        return [f"- **{title}:** nothing"]
    out = [f"- **{title}:**"]
    out += [f"  - {md(i.path)} (decided by {md(i.key)})" for i in folded_items(items)]
    return out


def render_md(r: AuditReport) -> str:
    """The whole report; deterministic except for `generated` (pinned by --now)."""
    lines = ["# profilec audit report", "", *_banner(r), *_changes(r)]
    if r.generated:
        lines += [f"Generated {md(r.generated)}.", ""]
    lines += [
        "## Versions and hashes",
        "",
        *_table(*versions_table(r)),
        "",
        "## Protected roots",
        "",
        *_table(*roots_table(r)),
        "",
        "Workspace roots: "
        + (", ".join(md(w) for w in r.workspace_roots) if r.workspace_roots else "none")
        + f". Default mode: {md(r.default_mode)}.",
        "",
        "## Trusted parent (profiles/parent.toml)",
        "",
        "Set in every output; the agent's session config cannot undo any of it (docs/parent.md).",
        "",
        *_table(*parent_table(r)),
        "",
        "## Modes",
        "",
    ]
    for m in r.modes:
        lines += [
            f"### {md(m.mode)} (profile {md(m.profile_id)})",
            "",
            f"- **extends:** {md(m.extends or 'nothing')}",
            f"- **network:** {'enabled' if m.network else 'disabled'}",
            *_items("readable", m.readable),
            *_items("writable", m.writable),
            *_items("denied", m.denied),
            "",
        ]
    lines += ["## Outer sandbox (mount plan)", ""]
    if not r.has_mount_plan:
        lines += ["No mount plan in this bundle (compile with --plan-layout to include one).", ""]
    else:
        lines += [
            f"Network: {'enabled' if r.plan_network else 'disabled'}.",
            "",
            *_table(("type", "path", "source", "purpose"), [tuple(m) for m in r.mounts]),
            "",
            "Kept out of the sandbox:",
            "",
            *_table(("path", "reason", "how"), [tuple(h) for h in r.hidden]),
            "",
        ]
    lines += [
        "## Coverage matrix",
        "",
        f"Every mode x root x spelling must be denied: "
        f"{'all denied' if all(c.ok for c in r.matrix) else 'SOME NOT DENIED'}.",
        "",
        *_table(*coverage_table(r)),
        "",
        "## Lints",
        "",
        f"Static check: {'pass' if r.check_passed else 'FAIL'}.",
        "",
    ]
    if r.lints:
        lines += _table(*lints_table(r))
    else:
        lines.append("No findings.")
    lines += ["", "## Canaries", ""]
    if r.canary is None:
        lines.append(f"This bundle was {NOT_TESTED}.")
    else:
        c = r.canary
        lines.append(
            f"Canary run {md(c.run_id)}: {'pass' if c.passed else '**FAIL**'} "
            f"(image {md(c.image or 'unknown')})."
        )
        lines += ["", md(binding_text(c)), ""]
        lines += _table(*canary_table(c))
    lines += ["", *_launchers(r)]
    return "\n".join(lines) + "\n"


def _launchers(r: AuditReport) -> list[str]:
    """The "Launchers (end-to-end)" section: summary line per adapter build, then every row."""
    out = ["## Launchers (end-to-end)", ""]
    s = r.launchers
    if s is None:
        return [*out, f"Launchers: {md(NOT_TESTED_E2E)}."]
    out += [
        f"Compatibility matrix {md(s.digest)}: {len(s.rows)} observations "
        "(adapter x version x launch method x session event).",
        "",
    ]
    for a in s.summaries:
        name, rest = summary_text(a)
        out.append(f"- **{md(name)}**: {md(rest)}")
    out.append("")
    header = (*MATRIX_COLUMNS, "why")
    out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for x, head, why in launcher_rows(s):
        cells = [md(c) for c in head]
        # held stays plain; anything else is bold so a loss cannot pass for a hold at a glance.
        cells.append(md(x.result) if x.result == "held" else f"**{md(x.result)}**")
        cells += [md(x.lint or "-"), md(x.evidence), md(why or "-")]
        out.append("| " + " | ".join(cells) + " |")
    return out


def _banner(r: AuditReport) -> list[str]:
    """`## PASS` or `## FAIL`, the counts, then every item at or above --fail-on."""
    v = r.verdict
    assert v is not None
    counts = ", ".join(f"{n} {label}" for label, n in v.counts)
    out = [
        f"## {'PASS' if v.passed else 'FAIL'}",
        "",
        f"**{counts}** (fails at {v.fail_on} and above).",
        "",
    ]
    failing = v.failing
    if not failing:
        out.pop()
    out += [
        f"1. {i.severity}: {md(i.text)} ([{_slug(i.anchor)}](#{_slug(i.anchor)}))" for i in failing
    ]
    rest = [i for i in v.items if i not in failing]
    if rest:
        out += ["", "Below the threshold:", ""]
        out += [f"- {i.severity}: {md(i.text)}" for i in rest]
    return [*out, ""]


#: The HTML anchor of a verdict item -> the GitHub slug of the Markdown heading it names.
_SLUGS = {
    "coverage": "coverage-matrix",
    "canaries": "canaries",
    "launchers-section": "launchers-end-to-end",
    "changes": "changed-since-the-lock",
}


def _slug(anchor: str) -> str:
    return "lints" if anchor.startswith("lint-") else _SLUGS.get(anchor, anchor)


def _changes(r: AuditReport) -> list[str]:
    if r.changes is None:
        return []
    out = [
        "## Changed since the lock",
        "",
        f"Lock {md(r.lock_hash or '-')} -> bundle {md(r.content_hash)}.",
        "",
    ]
    if not r.changes:
        return [*out, "No change.", ""]
    return [*out, *_table(("direction", "mode", "path", "detail"), list(r.changes)), ""]
