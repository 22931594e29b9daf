"""`audit --format html`: one self-contained HTML page (inline CSS; no script, link or URL).

Every string from the bundle goes through `html.escape`, so a path holding `<`, `&` or quotes
shows as text and cannot open a tag or an attribute.
"""

from __future__ import annotations

import re
from html import escape

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

_CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;padding:1em;max-width:1400px;color:#111;
background:#fff}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;margin-top:1.6em}
.wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #bbb;
padding:2px 6px;text-align:left;vertical-align:top}li{overflow-wrap:anywhere}
td.p,td.why{overflow-wrap:anywhere;min-width:12ch}td{overflow-wrap:break-word}
th{background:#eee}code,td.p{font-family:monospace}
.ok{color:#064}.fail{color:#a00;font-weight:bold}tr.fail td{background:#fde8e8}
.ctl{color:#555;font-style:italic}.mode{border:1px solid #ccc;padding:.5em 1em;
margin:.6em 0}.muted{color:#555}
#verdict{border:3px solid;padding:.6em 1em;margin:.6em 0 1.2em}
#verdict.pass{border-color:#064;background:#e6f4ea}#verdict.fail{border-color:#a00;
background:#fde8e8}#verdict h2{border:0;margin:.1em 0 .3em;font-size:1.7em}
#verdict.pass h2{color:#064}#verdict.fail h2{color:#a00}
"""


def e(text: object) -> str:
    """Escape for element content and quoted attributes."""
    return escape(str(text), quote=True)


#: A quoted span holds no `/`: a path that contains backticks stays literal text.
_TICKS = re.compile(r"`([^`/\n]+)`")


def t(text: object) -> str:
    """Escape prose for element content, with each `quoted` span set as <code> (a literal
    backtick in the page reads as markup that was never rendered). Never for a path or an
    attribute: a path keeps its backticks, escaped."""
    return _TICKS.sub(lambda m: f"<code>{m.group(1)}</code>", e(text))


def _table(
    tid: str,
    header: tuple[str, ...],
    rows: list[tuple[str, ...]],
    path_cols: tuple[int, ...] = (),
    row_ids: bool = False,
) -> list[str]:
    out = [
        f'<div class="wrap"><table id="{tid}">',
        "<thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr></thead>",
        "<tbody>",
    ]
    for n, row in enumerate(rows):
        cells = []
        failed = False
        for i, c in enumerate(row):
            cls = ' class="p"' if i in path_cols else ""
            if c == "FAIL" or c.startswith("FAIL "):
                cls = ' class="fail"'
                failed = True
            elif c == "ok" or c.startswith("ok: "):
                cls = ' class="ok"'
            cells.append(f"<td{cls}>{e(c) if i in path_cols else t(c)}</td>")
        rid = f' id="{tid}-{n}"' if row_ids else ""
        rcls = ' class="fail"' if failed else ""
        out.append(f"<tr{rid}{rcls}>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return out


def _banner(r: AuditReport) -> list[str]:
    """PASS/FAIL, the counts, and every item at or above --fail-on linked to its section."""
    v = r.verdict
    assert v is not None
    word, cls = ("PASS", "pass") if v.passed else ("FAIL", "fail")
    counts = ", ".join(f"{n} {label}" for label, n in v.counts)
    out = [
        f'<section id="verdict" class="{cls}">',
        f"<h2>{word}</h2>",
        f"<p><b>{e(counts)}</b> (fails at {e(v.fail_on)} and above).</p>",
    ]
    failing = v.failing
    if failing:
        out.append("<ol>")
        out += [
            f'<li><a href="#{e(i.anchor)}">{e(i.severity)}: {t(i.text)}</a></li>' for i in failing
        ]
        out.append("</ol>")
    rest = [i for i in v.items if i not in failing]
    if rest:
        out.append(
            "<p>Below the threshold: "
            + "; ".join(f'<a href="#{e(i.anchor)}">{e(i.severity)}: {t(i.text)}</a>' for i in rest)
            + ".</p>"
        )
    out.append("</section>")
    return out


def _changes(r: AuditReport) -> list[str]:
    if r.changes is None:
        return []
    out = [
        '<h2 id="changes">Changed since the lock</h2>',
        f"<p>Lock {e(r.lock_hash or '-')} &rarr; bundle {e(r.content_hash)}.</p>",
    ]
    if not r.changes:
        return [*out, "<p>No change.</p>"]
    rows: list[tuple[str, ...]] = [
        (("FAIL " if d == "widening" else "") + d, m, p, t) for d, m, p, t in r.changes
    ]
    return out + _table("changes-table", ("direction", "mode", "path", "detail"), rows, (2,))


def _items(title: str, items: tuple[AccessItem, ...]) -> list[str]:
    if not items:
        return [f"<p><b>{e(title)}:</b> nothing</p>"]
    out = [f"<p><b>{e(title)}:</b></p>", "<ul>"]
    out += [
        f'<li><code>{e(i.path)}</code> <span class="muted">(decided by {t(i.key)})</span></li>'
        for i in folded_items(items)
    ]
    out.append("</ul>")
    return out


def render_html(r: AuditReport) -> str:
    """The whole page; deterministic except for `generated` (pinned by --now)."""
    all_ok = all(c.ok for c in r.matrix)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>profilec audit report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>profilec audit report</h1>",
    ]
    out += _banner(r)
    out += _changes(r)
    if r.generated:
        out.append(f'<p class="muted">Generated {e(r.generated)}</p>')
    out.append("<h2>Versions and hashes</h2>")
    out += _table("versions", *versions_table(r))
    out.append("<h2>Protected roots</h2>")
    out += _table("roots", *roots_table(r), (1, 2, 3, 4))
    ws = ", ".join(f"<code>{e(w)}</code>" for w in r.workspace_roots) or "none"
    out.append(f"<p>Workspace roots: {ws}. Default mode: {e(r.default_mode)}.</p>")
    out.append("<h2>Trusted parent (profiles/parent.toml)</h2>")
    out.append(
        "<p>Set in every output; the agent's session config cannot undo any of it "
        "(docs/parent.md).</p>"
    )
    out += _table("parent", *parent_table(r))
    out.append("<h2>Modes</h2>")
    for m in r.modes:
        out.append(f'<div class="mode" id="mode-{e(m.mode)}">')
        out.append(f'<h3>{e(m.mode)} <span class="muted">(profile {e(m.profile_id)})</span></h3>')
        out.append(
            f"<p><b>extends:</b> {e(m.extends or 'nothing')} &middot; <b>network:</b> "
            f"{'enabled' if m.network else 'disabled'}</p>"
        )
        out += _items("readable", m.readable)
        out += _items("writable", m.writable)
        out += _items("denied", m.denied)
        out.append("</div>")
    out.append("<h2>Outer sandbox (mount plan)</h2>")
    if not r.has_mount_plan:
        out.append(
            "<p>No mount plan in this bundle (compile with --plan-layout to include one).</p>"
        )
    else:
        out.append(f"<p>Network: {'enabled' if r.plan_network else 'disabled'}.</p>")
        out += _table(
            "mounts", ("type", "path", "source", "purpose"), [tuple(m) for m in r.mounts], (1, 2)
        )
        out.append("<p>Kept out of the sandbox:</p>")
        out += _table("hidden", ("path", "reason", "how"), [tuple(h) for h in r.hidden], (0,))
    out.append('<h2 id="coverage">Coverage matrix</h2>')
    verdict = (
        '<span class="ok">all denied</span>'
        if all_ok
        else ('<span class="fail">SOME NOT DENIED</span>')
    )
    out.append(f"<p>Every mode &times; root &times; spelling must be denied: {verdict}.</p>")
    out += _table("coverage-matrix", *coverage_table(r), (3, 4))
    out.append('<h2 id="lints-section">Lints</h2>')
    passed = "pass" if r.check_passed else '<span class="fail">FAIL</span>'
    out.append(f"<p>Static check: {passed}.</p>")
    if r.lints:
        header, rows = lints_table(r)
        out += _table(
            "lint",
            header,
            [(("FAIL " if x[0] == "error" else "") + x[0], *x[1:]) for x in rows],
            row_ids=True,
        )
    else:
        out.append("<p>No findings.</p>")
    out.append('<h2 id="canaries">Canaries</h2>')
    if r.canary is None:
        out.append(f'<p id="canary-none">This bundle was {t(NOT_TESTED)}.</p>')
    else:
        c = r.canary
        word = "pass" if c.passed else '<span class="fail">FAIL</span>'
        out.append(f"<p>Canary run {e(c.run_id)}: {word} (image {e(c.image or 'unknown')}).</p>")
        out.append(f"<p>{t(binding_text(c))}</p>")
        out += _table("canary-probes", *canary_table(c))
    out += _launchers(r)
    out.append("</body></html>")
    return "\n".join(out) + "\n"


_RESULT_CLASS = {"held": "ok", "lost": "fail", "error": "fail", "not-supported": "muted"}


def _launchers(r: AuditReport) -> list[str]:
    """The "Launchers (end-to-end)" section: summary line per adapter build, then every row."""
    out = ['<h2 id="launchers-section">Launchers (end-to-end)</h2>']
    s = r.launchers
    if s is None:
        return [*out, f'<p id="launchers-none">Launchers: {t(NOT_TESTED_E2E)}.</p>']
    out.append(
        f"<p>Compatibility matrix <code>{e(s.digest)}</code>: {len(s.rows)} observations "
        "(adapter &times; version &times; launch method &times; session event).</p>"
    )
    out.append('<ul id="launcher-summary">')
    for a in s.summaries:
        name, rest = summary_text(a)
        out.append(f"<li><b>{e(name)}</b>: {t(rest)}</li>")
    out.append("</ul>")
    header = (*MATRIX_COLUMNS, "why")
    out += [
        '<div class="wrap"><table id="launchers">',
        "<thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr></thead>",
        "<tbody>",
    ]
    # Failing rows first; explained losses (controls, unused methods) are not red.
    for x, head, why in launcher_rows(s):
        cells = [f"<td>{e(c)}</td>" for c in head]
        failing = why.startswith("FAIL")
        cls = _RESULT_CLASS.get(x.result, "fail")
        if not failing and cls == "fail":
            cls = "ctl"
        cells.append(f'<td class="{cls}">{e(x.result)}</td>')
        cells.append(f"<td>{e(x.lint or '-')}</td>")
        cells.append(f'<td class="p">{e(x.evidence)}</td>')
        cells.append(f'<td class="why">{t(why or "-")}</td>')
        out.append(('<tr class="fail">' if failing else "<tr>") + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return out
