"""The HTML audit report in a real headless Chromium: it loads, the matrix is there, a PNG.

The screenshot lands in artifacts/ (gitignored) as a test artifact. With `--e2e-matrix` the
launcher table renders too, its hostile evidence as text. Chromium comes from
.ci/tools.d/chromium.sh; with CI=true a missing browser fails the test, elsewhere it skips.
"""

from __future__ import annotations

import os
import shutil
import signal
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from profilec.cli import main
from tests.audit_helpers import setup
from tests.integration.conftest import missing

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
WIDTH, HEIGHT = 1280, 1600


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    missing("chromium is not installed (apt-get install chromium; see .ci/tools.d/chromium.sh)")


def _run(argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run chromium in its own process group; on timeout end that group (its own pid)."""
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"chromium did not finish within {timeout} s")
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


class _Rows(HTMLParser):
    def __init__(self, table_id: str = "coverage-matrix") -> None:
        super().__init__()
        self.table_id = table_id
        self.in_matrix = False
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and ("id", self.table_id) in attrs:
            self.in_matrix = True
        elif self.in_matrix and tag == "tr":
            self.rows.append([])
        elif self.in_matrix and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.in_matrix = False
        elif self._cell is not None and tag in ("td", "th"):
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_report_renders_in_headless_chromium_with_the_matrix_and_a_screenshot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    browser = _chromium()
    lay, flags = setup(tmp_path / "l")
    html = tmp_path / "audit.html"
    assert main(["audit", *flags, "--format", "html", "--now", "0", "--out", str(html)]) == 0
    capsys.readouterr()
    common = [
        browser,
        "--headless",
        "--no-sandbox",  # root in CI; the page is our own file with no script
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--window-size={WIDTH},{HEIGHT}",
    ]
    dom = _run([*common, "--dump-dom", html.as_uri()])
    assert dom.returncode == 0, dom.stderr[-2000:]
    rows = _Rows()
    rows.feed(dom.stdout)
    header, *cells = rows.rows
    assert header == [
        "mode",
        "root",
        "kind",
        "spelling",
        "real path",
        "access",
        "winner",
        "enforced by",
        "ok",
    ]
    modes = {"read-only", "agent", "agent-full-access"}
    assert {c[0] for c in cells} == modes
    # Every mode has a row for the link, the middle-link spelling and the target; all denied.
    for mode in modes:
        spellings = {c[3] for c in cells if c[0] == mode}
        assert {str(lay.link), str(lay.host_target)} <= spellings
    assert all(c[5] == "deny" and c[8] == "ok" for c in cells)
    # Every credential cell is held by the managed requirements as well as the mode's profile.
    assert {c[7] for c in cells} == {"managed requirements + profile"}
    assert lay.marker not in dom.stdout

    ARTIFACTS.mkdir(exist_ok=True)
    png = ARTIFACTS / "audit-report.png"
    if png.exists():
        png.unlink()
    shot = _run([*common, f"--screenshot={png}", html.as_uri()])
    assert shot.returncode == 0, shot.stderr[-2000:]
    data = png.read_bytes()
    assert _png_size(data) == (WIDTH, HEIGHT)
    assert len(data) > 20_000  # a rendered page, not a blank image


HOSTILE_EVIDENCE = "cat: a<b>x</b>|`c`&amp; **held**"


def _e2e_row(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "adapter": "@agentclientprotocol/codex-acp",
        "adapter_version": "2.6.0",
        "codex_version": "0.171.0",
        "launch_method": "codex-home+initial-mode",
        "session_event": "new",
        "result": "held",
        "evidence": "cat: Permission denied",
        "lint": None,
    }
    base.update(kw)
    return base


def test_launcher_table_renders_in_headless_chromium(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    browser = _chromium()
    _, flags = setup(tmp_path / "l")
    rows = [
        _e2e_row(),
        _e2e_row(session_event="resumed"),
        _e2e_row(
            launch_method="codex-config", result="lost", lint="PC018", evidence=HOSTILE_EVIDENCE
        ),
    ]
    matrix = tmp_path / "matrix.json"
    matrix.write_text(json.dumps({"schema_version": 1, "rows": rows}), encoding="utf-8")
    html = tmp_path / "audit.html"
    argv = ["audit", *flags, "--e2e-matrix", str(matrix), "--format", "html", "--now", "0"]
    assert main([*argv, "--out", str(html)]) == 0
    capsys.readouterr()
    dom = _run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            html.as_uri(),
        ]
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    parsed = _Rows("launchers")
    parsed.feed(dom.stdout)
    assert parsed.rows, "no launcher table in the rendered DOM"
    header, *cells = parsed.rows
    assert header == [
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
    assert len(cells) == 3 and {len(c) for c in cells} == {9}
    lost = next(c for c in cells if c[3] == "codex-config")
    assert lost[5] == "lost" and lost[6] == "PC018"
    assert lost[7] == HOSTILE_EVIDENCE  # the browser made no element of it
    assert "<b>x</b>" not in dom.stdout
    assert {c[5] for c in cells if c[3] == "codex-home+initial-mode"} == {"held"}
    assert "not tested end-to-end" not in dom.stdout


def _png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB bytes) of an 8-bit RGB/RGBA non-interlaced PNG."""
    import zlib

    width, height = _png_size(data)
    depth, ctype, _, _, interlace = data[24:29]
    assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
    bpp = 3 if ctype == 2 else 4
    pos, idat = 8, b""
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        if data[pos + 4 : pos + 8] == b"IDAT":
            idat += data[pos + 8 : pos + 8 + n]
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(x for j in range(0, stride, bpp) for x in line[j : j + 3]))
        prev = line
    return width, height, rows


#: The banner backgrounds (compiler/audit/report_html.py _CSS).
PASS_BG, FAIL_BG = bytes.fromhex("e6f4ea"), bytes.fromhex("fde8e8")


def _count(rows: list[bytes], colour: bytes) -> int:
    return sum(r[i : i + 3] == colour for r in rows for i in range(0, len(r), 3))


def _canary_report(flags: list[str], ok: bool) -> dict[str, Any]:
    from tests.audit_helpers import bound_canary

    probe = {
        "name": "tar-codex-auth",
        "kind": "model",
        "command": ["tar"],
        "exit_code": 0,
        "output": "",
        "expected": "deny",
        "predicted": None,
        "observed": "allow" if not ok else "deny",
        "ok": ok,
        "failures": [] if ok else ["leak"],
    }
    doc = {
        "run_id": "r1",
        "passed": ok,
        "failures": [] if ok else ["leak"],
        "seconds": 1.0,
        "image": "profilec-canary:test",
        "modes": [
            {
                "mode": "agent",
                "profile_id": "profilec-agent",
                "passed": ok,
                "failures": [] if ok else ["leak"],
                "seconds": 0.5,
                "error": None,
                "probes": [probe],
            }
        ],
    }
    return bound_canary(doc, flags)


@pytest.mark.parametrize("width,height", [(390, 844), (1400, 900)])
def test_a_failing_and_a_passing_report_differ_in_the_first_screen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], width: int, height: int
) -> None:
    """Screenshots of the first viewport at phone and desktop width: the banner says it."""
    import json

    browser = _chromium()
    _, flags = setup(tmp_path / "l")
    shots: dict[str, list[bytes]] = {}
    ARTIFACTS.mkdir(exist_ok=True)
    for verdict, ok in (("pass", True), ("fail", False)):
        cj = tmp_path / f"{verdict}.json"
        cj.write_text(json.dumps(_canary_report(flags, ok)), encoding="utf-8")
        html = tmp_path / f"{verdict}.html"
        rc = main(
            [
                "audit",
                *flags,
                "--canary-json",
                str(cj),
                "--format",
                "html",
                "--now",
                "0",
                "--out",
                str(html),
            ]
        )
        assert rc == (0 if ok else 1)
        capsys.readouterr()
        png = ARTIFACTS / f"audit-first-screen-{verdict}-{width}.png"
        if png.exists():
            png.unlink()
        shot = _run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--hide-scrollbars",
                f"--user-data-dir={tmp_path / 'profile'}",
                f"--window-size={width},{height}",
                f"--screenshot={png}",
                html.as_uri(),
            ]
        )
        assert shot.returncode == 0, shot.stderr[-2000:]
        w, h, rows = _png_pixels(png.read_bytes())
        assert (w, h) == (width, height)
        shots[verdict] = rows
    area = width * height
    # The banner fills a visible share of the first screen, in its own colour only.
    assert _count(shots["pass"], PASS_BG) > area // 100
    assert _count(shots["pass"], FAIL_BG) == 0
    assert _count(shots["fail"], FAIL_BG) > area // 100
    assert _count(shots["fail"], PASS_BG) == 0
