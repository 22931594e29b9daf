"""`profilec audit --e2e-matrix`: the "Launchers (end-to-end)" section, in Markdown and HTML.

A small hand-built matrix (no Codex run) with a hostile evidence string, a lost row, an error, a
not-supported method and the shipped catalog's reviewed method; the absent-matrix wording; and
bad matrix files (exit 2, one line, nothing written).
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from profilec.audit.launchers import NOT_TESTED_E2E
from profilec.audit.report_md import md as md_escape
from profilec.compat_matrix import matrix_json
from profilec.models.compat import CompatibilityMatrix, MatrixRow
from tests.audit_helpers import run, setup, validate

TS = "@agentclientprotocol/codex-acp"
ZED = "@zed-industries/codex-acp"
# Everything the escaping must neutralise; and it says "held" so a loss could hide behind it.
HOSTILE = "cat: a<script>x</script>|`c`&d_e~ &amp; **held** | held"


def _row(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "adapter": TS,
        "adapter_version": "2.6.0",
        "codex_version": "0.171.0",
        "launch_method": "c-overrides",
        "session_event": "new",
        "result": "held",
        "evidence": "cat target: Permission denied; control read",
        "lint": None,
    }
    base.update(kw)
    return base


def _rows() -> list[dict[str, Any]]:
    return [
        _row(),
        _row(session_event="resumed"),
        _row(launch_method="codex-home+initial-mode"),
        _row(launch_method="codex-home+initial-mode", session_event="loaded"),
        _row(
            launch_method="codex-home+initial-mode",
            session_event="mode:agent",
            result="lost",
            lint="PC023",
            evidence="holder dir writable",
        ),
        _row(launch_method="codex-config", result="lost", lint="PC018", evidence=HOSTILE),
        _row(adapter="codex app-server", adapter_version="0.171.0", launch_method="app-server -c"),
        _row(
            adapter="codex app-server",
            adapter_version="0.171.0",
            launch_method="app-server -c",
            session_event="legacy-sandboxPolicy",
            result="lost",
            lint="PC023",
            evidence="marker reached the model",
        ),
        _row(
            adapter="codex app-server",
            adapter_version="0.171.0",
            launch_method="codex-home",
            result="error",
            evidence="probe did not run: timeout",
        ),
        _row(
            adapter=ZED,
            adapter_version="0.16.0",
            codex_version="embedded",
            launch_method="codex-config",
            result="not-supported",
            evidence="reads neither CODEX_CONFIG nor INITIAL_AGENT_MODE",
        ),
    ]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    doc = {"schema_version": 1, "rows": rows}
    validate("compat-matrix.schema.json", doc)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


class _Table(HTMLParser):
    """Cells of one table (by id), the tags seen, and the text of an element id."""

    def __init__(self, table_id: str) -> None:
        super().__init__()
        self.table_id = table_id
        self.tags: list[str] = []
        self.rows: list[list[tuple[str, str]]] = []  # (class, text) per cell
        self.items: list[str] = []  # <li> texts of #launcher-summary
        self.text: list[str] = []
        self._in_table = False
        self._in_list = False
        self._cell: list[str] | None = None
        self._cls = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        a = dict(attrs)
        if tag == "table":
            self._in_table = a.get("id") == self.table_id
        elif tag == "ul":
            self._in_list = a.get("id") == "launcher-summary"
        elif self._in_list and tag == "li":
            self.items.append("")
        elif self._in_table and tag == "tr":
            self.rows.append([])
        elif self._in_table and tag in ("td", "th"):
            self._cell, self._cls = [], a.get("class") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_table = False
        elif tag == "ul":
            self._in_list = False
        elif self._cell is not None and tag in ("td", "th"):
            self.rows[-1].append((self._cls, "".join(self._cell)))
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._in_list and self.items:
            self.items[-1] += data


def _unescaped_pipes(line: str) -> int:
    n, i = 0, 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        n += line[i] == "|"
        i += 1
    return n


def _md_section(text: str) -> list[str]:
    lines = text.split("\n")
    start = lines.index("## Launchers (end-to-end)")
    return lines[start:]


def _md_table(section: list[str]) -> tuple[str, list[str]]:
    i = next(k for k, x in enumerate(section) if x.startswith("|---"))
    body = []
    for x in section[i + 1 :]:
        if not x.startswith("|"):
            break
        body.append(x)
    return section[i - 1], body


def _md_cells(line: str) -> list[str]:
    """Split a table row on unescaped pipes."""
    cells, cur, i = [], "", 0
    while i < len(line):
        if line[i] == "\\":
            cur += line[i : i + 2]
            i += 2
            continue
        if line[i] == "|":
            cells.append(cur.strip())
            cur = ""
        else:
            cur += line[i]
        i += 1
    return cells[1:]


@pytest.fixture
def flags(tmp_path: Path) -> list[str]:
    return setup(tmp_path / "l")[1]


def test_markdown_launcher_section_escapes_evidence_and_shows_losses(
    tmp_path: Path, flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    m = _write(tmp_path / "m.json", _rows())
    rc, out, err = run(capsys, "audit", *flags, "--e2e-matrix", str(m), "--now", "0")
    assert rc == 0, err
    assert NOT_TESTED_E2E not in out and md_escape(NOT_TESTED_E2E) not in out
    section = _md_section(out)
    header, body = _md_table(section)
    assert header.startswith("| adapter | adapter version | codex | launch method |")
    assert len(body) == len(_rows())
    for line in body:  # no evidence string adds or removes a column
        assert _unescaped_pipes(line) == _unescaped_pipes(header), line
    for line in section:  # no raw tag, no code span opened by the evidence
        assert "<script>" not in line
        assert all(line[i - 1] == "\\" for i, ch in enumerate(line) if ch == "`"), line
    assert md_escape(HOSTILE) in out
    cells = {(c[3], c[4]): c for c in (_md_cells(x) for x in body) if c[0] == md_escape(TS)}
    lost = cells[("codex-config", "new")]
    assert lost[5] == "**lost**" and lost[6] == "PC018"
    assert cells[("codex-home+initial-mode", "mode:agent")][5:7] == ["**lost**", "PC023"]
    assert cells[("c-overrides", "new")][5:7] == ["held", "-"]
    summary = [x for x in section if x.startswith("- **")]
    assert len(summary) == 3  # one line per adapter build
    ts = next(x for x in summary if x.startswith(f"- **{md_escape(TS)} 2.6.0"))
    assert "Held for every session event: c-overrides." in ts
    assert (
        "Held unless the launcher switches to a built-in mode or sends a legacy "
        "sandboxPolicy: codex-home+initial-mode (avoid mode:agent)." in ts
    )
    assert "Did not hold: codex-config (lost: new (PC018))." in ts
    assert "Reviewed method (profiles/adapters.toml): codex-home+initial-mode" in ts
    assert "DISAGREES" not in ts  # mode:agent is one of the catalog's blocked modes
    app = next(x for x in summary if "codex app-server" in x)
    assert "Held for every session event: no launch method" in app
    assert "sandboxPolicy: app-server -c (avoid legacy-sandboxPolicy)." in app
    assert "Did not hold: codex-home (error: new)." in app
    assert "not in profiles/adapters.toml" in app
    zed = next(x for x in summary if md_escape(ZED) in x)
    assert "Not supported: codex-config" in zed and "DISAGREES" not in zed
    assert (
        "Reviewed method (profiles/adapters.toml): c-overrides+non-root, with modes auto, "
        "full-access not forwarded (not tested in this matrix)." in zed
    )


def test_html_launcher_section_escapes_evidence_and_shows_losses(
    tmp_path: Path, flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    m = _write(tmp_path / "m.json", _rows())
    rc, out, err = run(
        capsys, "audit", *flags, "--e2e-matrix", str(m), "--format", "html", "--now", "0"
    )
    assert rc == 0, err
    p = _Table("launchers")
    p.feed(out)
    assert "script" not in p.tags and "link" not in p.tags
    header, *rows = p.rows
    assert [t for _, t in header] == [
        "adapter",
        "adapter version",
        "codex",
        "launch method",
        "session event",
        "result",
        "lint",
        "evidence",
        "why",
    ]
    assert len(rows) == len(_rows()) and {len(r) for r in rows} == {9}
    by = {(r[0][1], r[3][1], r[4][1]): r for r in rows}
    lost = by[(TS, "codex-config", "new")]
    # Not the reviewed method: a loss explained in words, grey, not red.
    assert lost[5] == ("ctl", "lost") and lost[6][1] == "PC018"
    assert lost[8][1] == "lost: expected, not the reviewed launch method (codex-home+initial-mode)"
    assert lost[7][1] == HOSTILE  # shown as itself, as text
    assert by[(TS, "c-overrides", "new")][5] == ("ok", "held")
    assert by[("codex app-server", "codex-home", "new")][5] == ("ctl", "error")
    assert by[(ZED, "codex-config", "new")][5] == ("muted", "not-supported")
    assert len(p.items) == 3
    assert any(
        i.startswith(f"{TS} 2.6.0 (codex 0.171.0): Held for every session event: c-overrides.")
        for i in p.items
    )
    low = out.lower()
    for bad in ("<script", "<link", "src=", "http://", "https://", "url(", "@import"):
        assert bad not in low, bad


def test_the_checks_catch_an_unescaped_or_mislabelled_rendering(
    tmp_path: Path,
    flags: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Negative controls: the assertions above fail when escaping or the result is broken."""
    import profilec.audit.report_html as report_html
    import profilec.audit.report_md as report_md

    m = _write(tmp_path / "m.json", _rows())
    monkeypatch.setattr(report_md, "md", lambda s: s)
    _, out, _ = run(capsys, "audit", *flags, "--e2e-matrix", str(m), "--now", "0")
    header, body = _md_table(_md_section(out))
    assert any(_unescaped_pipes(x) != _unescaped_pipes(header) for x in body)
    monkeypatch.setattr(report_html, "e", str)
    _, out, _ = run(capsys, "audit", *flags, "--e2e-matrix", str(m), "--format", "html")
    p = _Table("launchers")
    p.feed(out)
    assert "script" in p.tags
    monkeypatch.undo()
    # A lost row mislabelled as held (the bug the test guards against) is visible as such.
    rows = [
        r
        if r["session_event"] != "new" or r["launch_method"] != "codex-config"
        else {**r, "result": "held", "lint": None}
        for r in _rows()
    ]
    _, out, _ = run(
        capsys,
        "audit",
        *flags,
        "--e2e-matrix",
        str(_write(tmp_path / "h.json", rows)),
        "--now",
        "0",
    )
    _, body = _md_table(_md_section(out))
    cell = next(
        c for c in map(_md_cells, body) if c[3] == "codex-config" and c[0] != md_escape(ZED)
    )
    assert cell[5] != "**lost**"


def test_absent_matrix_says_so_plainly(
    flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = run(capsys, "audit", *flags, "--now", "0")
    assert rc == 0, err
    assert "## Launchers (end-to-end)" in out
    assert f"Launchers: {md_escape(NOT_TESTED_E2E)}." in out
    rc, out, err = run(capsys, "audit", *flags, "--format", "html", "--now", "0")
    assert rc == 0, err
    p = _Table("launchers")
    p.feed(out)
    # html sets the `quoted` command as <code>: the text is the same without the backticks
    assert f"Launchers: {NOT_TESTED_E2E.replace('`', '')}." in "".join(p.text)
    assert "<code>profilec e2e --out matrix.json</code>" in out
    assert p.rows == [] and '<h2 id="launchers-section">Launchers (end-to-end)</h2>' in out


def test_launcher_section_is_deterministic_whatever_the_row_order(
    tmp_path: Path, flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    a = _write(tmp_path / "a.json", _rows())
    b = _write(tmp_path / "b.json", list(reversed(_rows())))
    for fmt in ("md", "html"):
        _, x, _ = run(
            capsys, "audit", *flags, "--e2e-matrix", str(a), "--format", fmt, "--now", "0"
        )
        _, y, _ = run(
            capsys, "audit", *flags, "--e2e-matrix", str(b), "--format", fmt, "--now", "0"
        )
        assert x == y
    canonical = matrix_json(CompatibilityMatrix(rows=[MatrixRow(**r) for r in _rows()]))
    import hashlib

    assert "sha256:" + hashlib.sha256(canonical.encode()).hexdigest() in x


def test_a_reviewed_method_the_matrix_contradicts_is_flagged(
    tmp_path: Path, flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        _row(
            launch_method="codex-home+initial-mode",
            session_event="resumed",
            result="lost",
            evidence="marker reached the model",
        )
    ]
    m = _write(tmp_path / "m.json", rows)
    rc, out, err = run(capsys, "audit", *flags, "--e2e-matrix", str(m), "--now", "0")
    # The contradiction fails the verdict: the banner names it and audit exits 1.
    assert rc == 1 and err == "profilec: audit: FAIL: 1 items at or above error\n"
    assert out.split("\n")[2] == "## FAIL"
    assert (
        "1. error: launcher @agentclientprotocol/codex-acp 2.6.0: codex-home+initial-mode "
        "here: lost: resumed ([launchers-end-to-end](#launchers-end-to-end))" in out
    )
    line = next(x for x in out.split("\n") if x.startswith(f"- **{md_escape(TS)}"))
    assert "Held for every session event: no launch method" in line
    assert "THIS MATRIX DISAGREES: codex-home+initial-mode here: lost: resumed" in line
    assert "Held unless" not in line  # a lost resumed session is no launcher's choice


def test_held_unless_needs_every_other_event_held_and_no_error() -> None:
    from profilec.audit.launchers import launcher_section

    rows = [
        _row(launch_method="a"),
        _row(launch_method="a", session_event="mode:agent", result="lost"),
        _row(launch_method="b"),
        _row(launch_method="b", session_event="mode:agent", result="error"),
        _row(launch_method="c"),
        _row(launch_method="c", session_event="resumed", result="lost"),
        _row(launch_method="d"),
        _row(launch_method="d", session_event="mode:permission-profile:x", result="lost"),
        _row(launch_method="e", result="not-supported"),
    ]
    m = CompatibilityMatrix(rows=[MatrixRow(**r) for r in rows])
    (s,) = launcher_section(m, None).summaries
    assert s.held_every_event == ()
    assert s.held_unless == (("a", ("mode:agent",)),)
    assert [x for x, _ in s.not_holding] == ["b", "c", "d"]
    assert s.not_supported == ("e",) and s.reviewed is None


@pytest.mark.parametrize(
    ("content", "expect"),
    [
        ("| adapter | result |\n|---|---|\n", "not valid JSON"),
        ("[]", "must be a JSON object"),
        (json.dumps({"schema_version": 1, "rows": [_row(result="maybe")]}), "rows/0/result"),
        (json.dumps({"schema_version": 1, "rows": [_row(evidence="a\nb")]}), "rows/0/evidence"),
        (json.dumps({"schema_version": 2, "rows": []}), "schema_version"),
        (json.dumps({"rows": [{k: v for k, v in _row().items() if k != "adapter"}]}), "rows/0"),
        (json.dumps({"schema_version": 1, "rows": [_row(lint="E1")]}), "rows/0/lint"),
    ],
)
def test_a_bad_matrix_is_exit_2_with_one_line_and_nothing_written(
    tmp_path: Path,
    flags: list[str],
    capsys: pytest.CaptureFixture[str],
    content: str,
    expect: str,
) -> None:
    m = tmp_path / "bad.json"
    m.write_text(content, encoding="utf-8")
    out_file = tmp_path / "report.md"
    rc, out, err = run(capsys, "audit", *flags, "--e2e-matrix", str(m), "--out", str(out_file))
    assert rc == 2 and out == ""
    assert not out_file.exists()
    lines = err.strip().split("\n")
    assert len(lines) == 1, err
    assert expect in lines[0] and "Traceback" not in err
    rc, _, err = run(capsys, "audit", *flags, "--e2e-matrix", str(tmp_path / "nope.json"))
    assert rc == 2 and "does not exist" in err
