"""`profilec audit`: one self-contained document, paths escaped, canaries shown or disclaimed."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profilec.audit.report import NOT_TESTED
from profilec.audit.report_md import md as md_escape
from tests.audit_helpers import bound_canary, run, setup, validate
from tests.helpers import marker

# No glob metacharacters (`*?[]`): Codex reads those as a glob, and compile refuses the root.
HOSTILE = "a<script>|`c`&d_e~ &amp;"


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []
        self.rows: dict[str, list[int]] = {}
        self._table: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "table":
            self._table = dict(attrs).get("id") or ""
            self.rows[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.rows[self._table].append(0)
        elif tag in ("td", "th") and self._table is not None:
            self.rows[self._table][-1] += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _canary_doc(probe_output: str) -> dict[str, object]:
    probe = {
        "name": "read-target",
        "kind": "model",
        "command": ["cat", "/x"],
        "exit_code": 1,
        "output": probe_output,
        "expected": "deny",
        "predicted": "deny",
        "observed": "deny",
        "ok": True,
        "failures": [],
    }
    return {
        "run_id": "r1",
        "passed": True,
        "failures": [],
        "seconds": 1.0,
        "image": "profilec-canary:test",
        "modes": [
            {
                "mode": m,
                "profile_id": f"profilec-{m}",
                "passed": True,
                "failures": [],
                "seconds": 0.5,
                "error": None,
                "probes": [probe],
            }
            for m in ("read-only", "agent", "agent-full-access")
        ],
    }


def _unescaped_pipes(line: str) -> int:
    n, i = 0, 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        n += line[i] == "|"
        i += 1
    return n


def test_markdown_is_deterministic_and_says_plainly_when_untested(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    rc, a, err = run(capsys, "audit", *flags, "--format", "md", "--now", "0")
    assert rc == 0, err
    _, b, _ = run(capsys, "audit", *flags, "--format", "md", "--now", "0")
    assert a == b
    assert "Generated 1970-01-01T00:00:00Z." in a
    assert f"This bundle was {NOT_TESTED}." in a
    for heading in ("## Versions and hashes", "## Modes", "## Coverage matrix", "## Lints"):
        assert heading in a
    assert "- **network:** enabled" in a and "- **network:** disabled" in a
    _, c, _ = run(capsys, "audit", *flags, "--format", "md", "--now", "none")
    assert "Generated" not in c


def test_source_date_epoch_pins_the_only_timestamp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, flags = setup(tmp_path / "l")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    _, out, _ = run(capsys, "audit", *flags, "--format", "html")
    assert "Generated 1970-01-02T00:00:00Z" in out


def test_canary_results_are_shown_as_decisions_never_their_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    mark = marker()
    cj = tmp_path / "canary.json"
    cj.write_text(json.dumps(bound_canary(_canary_doc(mark), flags)), encoding="utf-8")
    for fmt in ("md", "html"):
        rc, out, err = run(capsys, "audit", *flags, "--format", fmt, "--canary-json", str(cj))
        assert rc == 0, err
        assert NOT_TESTED not in out
        assert "read-target" in out and "r1" in out
        assert mark not in out


def test_hostile_path_characters_cannot_break_markdown_or_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / HOSTILE)
    rc, md, err = run(capsys, "audit", *flags, "--format", "md", "--now", "0")
    assert rc == 0, err
    assert "<script>" not in md and "&lt;script&gt;" in md
    assert md_escape(str(lay.host_target)) in md
    assert all(
        line[i - 1] == "\\" for line in md.split("\n") for i, ch in enumerate(line) if ch == "`"
    )
    lines = md.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("|---"):
            header = lines[i - 1]
            body = [x for x in lines[i + 1 :]]
            body = body[: next((k for k, x in enumerate(body) if not x.startswith("|")), None)]
            assert body, header
            for row in body:
                assert _unescaped_pipes(row) == _unescaped_pipes(header), row
    rc, html, err = run(capsys, "audit", *flags, "--format", "html", "--now", "0")
    assert rc == 0, err
    p = _Collect()
    p.feed(html)
    assert "script" not in p.tags and "link" not in p.tags
    assert HOSTILE in "".join(p.text)
    matrix = p.rows["coverage-matrix"]
    assert len(matrix) > 1 and set(matrix) == {9}


def test_the_escaping_test_would_catch_raw_paths(tmp_path: Path) -> None:
    # The same checks against an unescaped rendering fail: the guard is not vacuous.
    bad_row = f"| agent | {HOSTILE} | ok |"
    assert _unescaped_pipes(bad_row) != _unescaped_pipes("| a | b | c |")
    p = _Collect()
    p.feed(f"<table id='t'><tr><td>{HOSTILE}</td></tr></table>")
    assert "script" in p.tags


def test_html_is_self_contained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, flags = setup(tmp_path / "l")
    rc, html, _ = run(capsys, "audit", *flags, "--format", "html", "--now", "0")
    assert rc == 0
    low = html.lower()
    for bad in ("<script", "<link", "src=", "http://", "https://", "url(", "@import"):
        assert bad not in low, bad
    assert low.startswith("<!doctype html>") and "<style>" in low


def test_report_from_a_bundle_file_and_bad_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    bundle = tmp_path / "b.json"
    assert run(capsys, "compile", *flags, "--format", "bundle", "--out", str(bundle))[0] == 0
    _, live, _ = run(capsys, "audit", *flags, "--format", "md", "--now", "0")
    rc, offline, _ = run(capsys, "audit", "--bundle", str(bundle), "--format", "md", "--now", "0")
    assert rc == 0 and offline == live
    rc, _, err = run(capsys, "audit", *flags, "--format", "pdf")
    assert rc == 2 and "unknown --format" in err
    rc, _, err = run(capsys, "audit", "--format", "md")
    assert rc == 2 and "--roots" in err
    rc, _, err = run(capsys, "audit", *flags, "--now", "yesterday")
    assert rc == 2 and "--now" in err


def test_a_bundle_with_a_mount_plan_reports_the_outer_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.audit_helpers import plan_layout

    lay, flags = setup(tmp_path / "l")
    layout = plan_layout(lay)
    rc, md, err = run(
        capsys, "audit", *flags, "--plan-layout", str(layout), "--format", "md", "--now", "0"
    )
    assert rc == 0, err
    assert "## Outer sandbox (mount plan)" in md and "Kept out of the sandbox:" in md
    assert md_escape(str(lay.base / "daemon")) in md  # the daemon root is hidden
    _, without, _ = run(capsys, "audit", *flags, "--format", "md", "--now", "0")
    assert "No mount plan in this bundle" in without


def test_canary_json_must_match_its_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    good = bound_canary(_canary_doc("x"), flags)
    validate("canary-report.schema.json", good)
    bad = dict(good)
    del bad["modes"]
    cj = tmp_path / "bad.json"
    cj.write_text(json.dumps(bad), encoding="utf-8")
    rc, out, err = run(capsys, "audit", *flags, "--canary-json", str(cj))
    assert rc == 2 and out == ""
    assert "not a canary report" in err and "modes" in err


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_any_string_escapes_to_one_literal_line_in_markdown_and_html(s: str) -> None:
    from profilec.audit.report_html import e

    out = md_escape(s)
    assert "\n" not in out and "\r" not in out and "<" not in out
    assert _unescaped_pipes(f"| {out} |") == 2
    for i, ch in enumerate(out):
        if ch == "`":  # escaped: an odd run of backslashes right before it
            run_len = len(out[:i]) - len(out[:i].rstrip("\\"))
            assert run_len % 2 == 1, out
    p = _Collect()
    p.feed(f"<table id='t'><tr><td>{e(s)}</td></tr></table>")
    assert p.tags == ["table", "tr", "td"]
    assert "".join(p.text) == s


def test_the_roots_table_names_each_vault_and_why_it_is_denied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    _, out, _ = run(capsys, "audit", *flags, "--format", "md", "--now", "none")
    row = next(x for x in out.split("\n") if x.startswith("| codex-auth |"))
    assert row.rstrip(" |").endswith(md_escape(str(lay.host_target.parent)))
    assert "vault (denied whole: the writer renames inside it)" in out


def test_carve_out_lines_fold_to_one_per_writable_root_and_html_has_no_backticks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from profilec.audit.report import AccessItem, folded_items

    items = (
        AccessItem("/", ":root"),
        AccessItem("/w/.agents", "carve-out .agents of writable root /w"),
        AccessItem("/w/.git", "carve-out .git of writable root /w"),
        AccessItem("/w/x", "root a (vault)"),
        AccessItem("/v/.codex", ":workspace carve-out .codex"),
        AccessItem("/v/.git", "carve-out .git of writable root /elsewhere"),  # not its root
    )
    out = folded_items(items)
    assert [i.path for i in out] == ["/", "/w/{.agents,.git}", "/w/x", "/v/.codex", "/v/.git"]
    assert out[1].key == "the sandbox's read-only carve-outs of this writable root"
    _, flags = setup(tmp_path / "l")
    rc, md, err = run(capsys, "audit", *flags, "--format", "md", "--now", "0")
    assert rc == 0, err
    assert "carve-out .git of writable root" not in md
    rc, html, err = run(capsys, "audit", *flags, "--format", "html", "--now", "0")
    assert rc == 0, err
    assert "carve-out .git of writable root" not in html
    assert "`" not in html and "<code>:root</code>" in html
    folded = [x for x in html.split("\n") if "read-only carve-outs of this writable root" in x]
    assert any("{.agents,.aws,.codex,.git}</code>" in x for x in folded)
