"""`audit --format html`: one self-contained HTML page (inline CSS; no script, link or URL).

Every string from the bundle goes through `html.escape`, so a path holding `<`, `&` or quotes
shows as text and cannot open a tag or an attribute.
"""

from __future__ import annotations

from html import escape

from .report import (
    NOT_TESTED,
    AccessItem,
    AuditReport,
    canary_table,
    coverage_table,
    lints_table,
    roots_table,
    versions_table,
)

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#111;background:#fff}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0;max-width:100%}th,td{border:1px solid #bbb;
padding:2px 6px;text-align:left;vertical-align:top;overflow-wrap:anywhere}li{overflow-wrap:anywhere}
th{background:#eee}code,td.p{font-family:monospace}
.ok{color:#064}.fail{color:#a00;font-weight:bold}.mode{border:1px solid #ccc;padding:.5em 1em;
margin:.6em 0}.muted{color:#555}
"""


def e(text: object) -> str:
    """Escape for element content and quoted attributes."""
    return escape(str(text), quote=True)


def _table(
    tid: str, header: tuple[str, ...], rows: list[tuple[str, ...]], path_cols: tuple[int, ...] = ()
) -> list[str]:
    out = [
        f'<table id="{tid}">',
        "<thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr></thead>",
        "<tbody>",
    ]
    for row in rows:
        cells = []
        for i, c in enumerate(row):
            cls = ' class="p"' if i in path_cols else ""
            if c == "FAIL" or c.startswith("FAIL "):
                cls = ' class="fail"'
            elif c == "ok":
                cls = ' class="ok"'
            cells.append(f"<td{cls}>{e(c)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return out


def _items(title: str, items: tuple[AccessItem, ...]) -> list[str]:
    if not items:
        return [f"<p><b>{e(title)}:</b> nothing</p>"]
    out = [f"<p><b>{e(title)}:</b></p>", "<ul>"]
    out += [
        f'<li><code>{e(i.path)}</code> <span class="muted">(decided by {e(i.key)})</span></li>'
        for i in items
    ]
    out.append("</ul>")
    return out


def render_html(r: AuditReport) -> str:
    """The whole page; deterministic except for `generated` (pinned by --now)."""
    all_ok = all(c.ok for c in r.matrix)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>profilec audit report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>profilec audit report</h1>",
    ]
    if r.generated:
        out.append(f'<p class="muted">Generated {e(r.generated)}</p>')
    out.append("<h2>Versions and hashes</h2>")
    out += _table("versions", *versions_table(r))
    out.append("<h2>Protected roots</h2>")
    out += _table("roots", *roots_table(r), (1, 2, 3, 4))
    ws = ", ".join(f"<code>{e(w)}</code>" for w in r.workspace_roots) or "none"
    out.append(f"<p>Workspace roots: {ws}. Default mode: {e(r.default_mode)}.</p>")
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
    out.append("<h2>Coverage matrix</h2>")
    verdict = (
        '<span class="ok">all denied</span>'
        if all_ok
        else ('<span class="fail">SOME NOT DENIED</span>')
    )
    out.append(f"<p>Every mode &times; root &times; spelling must be denied: {verdict}.</p>")
    out += _table("coverage-matrix", *coverage_table(r), (3, 4))
    out.append("<h2>Lints</h2>")
    passed = "pass" if r.check_passed else '<span class="fail">FAIL</span>'
    out.append(f"<p>Static check: {passed}.</p>")
    if r.lints:
        out += _table("lints", *lints_table(r))
    else:
        out.append("<p>No findings.</p>")
    out.append("<h2>Canaries</h2>")
    if r.canary is None:
        out.append(f'<p id="canary-none">This bundle was {NOT_TESTED}.</p>')
    else:
        c = r.canary
        out.append(
            f"<p>Canary run {e(c.run_id)}: {'pass' if c.passed else 'FAIL'} "
            f"(image {e(c.image or 'unknown')}).</p>"
        )
        out += _table("canary-probes", *canary_table(c))
    out += _launchers(r)
    out.append("</body></html>")
    return "\n".join(out) + "\n"


_RESULT_CLASS = {"held": "ok", "lost": "fail", "error": "fail", "not-supported": "muted"}


def _launchers(r: AuditReport) -> list[str]:
    """The "Launchers (end-to-end)" section: summary line per adapter build, then every row."""
    from .launchers import NOT_TESTED_E2E, summary_text

    out = ["<h2>Launchers (end-to-end)</h2>"]
    s = r.launchers
    if s is None:
        return [*out, f'<p id="launchers-none">Launchers: {e(NOT_TESTED_E2E)}.</p>']
    out.append(
        f"<p>Compatibility matrix <code>{e(s.digest)}</code>: {len(s.rows)} observations "
        "(adapter &times; version &times; launch method &times; session event).</p>"
    )
    out.append('<ul id="launcher-summary">')
    for a in s.summaries:
        name, rest = summary_text(a)
        out.append(f"<li><b>{e(name)}</b>: {e(rest)}</li>")
    out.append("</ul>")
    header = ("adapter", "adapter version", "codex", "launch method", "session event", "result",
              "lint", "evidence")
    out += [
        '<table id="launchers">',
        "<thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr></thead>",
        "<tbody>",
    ]
    for x in s.rows:
        cells = [f"<td>{e(c)}</td>" for c in (x.adapter, x.adapter_version, x.codex_version,
                                               x.launch_method, x.session_event)]
        cls = _RESULT_CLASS.get(x.result, "fail")
        cells.append(f'<td class="{cls}">{e(x.result)}</td>')
        cells.append(f"<td>{e(x.lint or '-')}</td>")
        cells.append(f'<td class="p">{e(x.evidence)}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return out
