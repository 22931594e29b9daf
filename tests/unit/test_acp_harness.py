"""ACP half of the end-to-end matrix, without real adapters: probe verdicts, the permission
answer, build_launch per method, matrix -> verdicts, catalog agreement, the launch emitter."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profilec.cli import main
from profilec.e2e import acp, adapters
from profilec.e2e.acp import AcpClient, judge, probe_command, remove_layout
from profilec.e2e.adapters import Adapter
from profilec.e2e.jsonrpc import RpcError
from profilec.e2e.layout import ACP_TREE, WORKSPACE_DIRS, Layout, build_layout
from profilec.e2e.run import adapter_verdicts, catalog_disagreements
from profilec.emit.catalog import load_catalog
from profilec.emit.launch import render_launch_with
from profilec.errors import PolicyError
from profilec.models.compat import CompatibilityMatrix, MatrixRow
from profilec.models.launch import AdapterCatalog
from profilec.scripted_model import ScriptedModelServer

REPO = Path(__file__).resolve().parents[2]
#: A layout value for property tests (no files: judge only compares strings).
_LAYOUT = Layout(
    base="/nonexistent/b",
    marker="PROFILEC-CANARY-00112233445566778899aabb",
    control_marker="PROFILEC-CONTROL-0011223344556677",
    target="/nonexistent/b/host/auth.json",
    hop="/nonexistent/b/host-link/auth.json",
    link="/nonexistent/b/agent/codex-home/auth.json",
    codex_home="/nonexistent/b/agent/codex-home",
    workspace="/nonexistent/b/workspace",
    control="/nonexistent/b/workspace/README.txt",
    roots="/nonexistent/b/roots.toml",
    tmpdir="/nonexistent/b/tmp",
    home="/nonexistent/b/home",
)


@pytest.fixture
def layout() -> Any:
    lay = build_layout(ACP_TREE)
    try:
        yield lay
    finally:
        remove_layout(lay)


def _output(
    lay: Layout, tag: str, *, leak: str = "", control: bool = True, writable: str = ""
) -> str:
    """What the probe prints: sections fenced by ==<tag> name== lines."""
    denied = "cat: x: Permission denied"
    sections = {
        "link": denied,
        "hop": denied,
        "target": denied,
        "target-after-umount": "umount: must be superuser to unmount.\n" + denied,
        "control": f"control file: {lay.control_marker}" if control else denied,
    }
    for name, _ in lay.holders():
        ok = name == f"write:{writable}"
        sections[name] = "rc=0" if ok else "sh: 1: cannot create x: Read-only file system\nrc=2"
    if leak:
        sections[leak] = lay.marker
    body = "".join(f"=={tag} {name}==\n{text}\n" for name, text in sections.items())
    return body + f"=={tag} end==\n"


def test_layout_is_a_two_hop_chain_with_markers(layout: Layout) -> None:
    assert os.readlink(layout.link) == layout.hop
    assert os.path.realpath(layout.link) == os.path.realpath(layout.target)
    assert os.path.islink(os.path.join(layout.base, "host-link"))
    assert layout.control_marker in Path(layout.control).read_text()
    assert oct(os.stat(layout.target).st_mode & 0o777) == "0o600"
    for sub in WORKSPACE_DIRS:
        assert os.path.isdir(os.path.join(layout.workspace, sub))


def test_probe_reads_every_spelling_and_exits_zero(layout: Layout) -> None:
    cmd = probe_command(layout, "T1")
    for path in (layout.link, layout.hop, layout.target, layout.control):
        assert path in cmd
    assert "umount" in cmd
    for _, d in layout.holders():
        assert os.path.join(d, ".profilec-e2e-write-probe") in cmd
    assert cmd.endswith("true")
    assert layout.marker not in cmd


def test_judge_held_lost_and_error(layout: Layout) -> None:
    result, evidence = judge(_output(layout, "T"), layout, "T")
    assert result == "held"
    assert "Permission denied" in evidence
    for section in ("link", "hop", "target", "target-after-umount"):
        result, evidence = judge(_output(layout, "T", leak=section), layout, "T")
        assert result == "lost", section
        assert section in evidence
        assert layout.marker not in evidence
    result, _ = judge(_output(layout, "T", control=False), layout, "T")
    assert result == "error"  # the command did not run as written: no vacuous pass
    for holder in ("codex-home", "host", "base"):
        result, evidence = judge(_output(layout, "T", writable=holder), layout, "T")
        assert result == "lost" and holder in evidence and "re-point" in evidence
    truncated = _output(layout, "T").split("==T write:base==")[0]
    assert judge(truncated, layout, "T")[0] == "error"
    assert judge(None, layout, "T")[0] == "error"
    # A marker outside any fenced section still counts.
    assert judge("garbage " + layout.marker, layout, "T")[0] == "lost"


def test_sections_split_on_lf_only(layout: Layout) -> None:
    text = _output(layout, "T").replace("cat: x: Permission denied", "a\u2028b", 1)
    sections = acp.split_sections(text, "T")
    assert sections["link"] == "a\u2028b"


def test_permission_requests_are_rejected_never_allowed() -> None:
    client = AcpClient(argv=("true",), env={}, cwd="/")
    opts = [
        {"optionId": "allow", "kind": "allow_once", "name": "Allow"},
        {"optionId": "always", "kind": "allow_always", "name": "Always"},
        {"optionId": "no", "kind": "reject_once", "name": "Reject"},
    ]
    answer = client._on_request(
        "session/request_permission",
        {"sessionId": "s", "toolCall": {"title": "cat"}, "options": opts},
    )
    assert answer == {"outcome": {"outcome": "selected", "optionId": "no"}}
    answer = client._on_request(
        "session/request_permission", {"sessionId": "s", "options": opts[:2]}
    )
    assert answer == {"outcome": {"outcome": "cancelled"}}
    assert [p.answer for p in client.permissions] == ["rejected (no)", "cancelled"]
    with pytest.raises(RpcError):
        client._on_request("fs/read_text_file", {"path": "/etc/passwd"})


def _fake(kind: adapters.AdapterKind) -> Adapter:
    if kind == "ts":
        return Adapter(
            "ts",
            adapters.TS_PACKAGE,
            "9.9.9",
            ("node", "x.js"),
            "0.171.0",
            "/opt/codex",
            None,
            "/opt/codex",
        )
    return Adapter("zed", adapters.ZED_PACKAGE, "9.9.9", ("/opt/codex-acp",), "embedded", None)


@pytest.mark.parametrize("method", adapters.METHODS)
def test_build_launch_ts(layout: Layout, method: str) -> None:
    with ScriptedModelServer() as srv:
        launch = acp.build_launch(_fake("ts"), method, layout, srv)
    env = launch.env
    assert env["CODEX_HOME"] == layout.codex_home
    assert env["TMPDIR"] == layout.tmpdir and not env["TMPDIR"].startswith(layout.codex_home)
    assert "OPENAI_API_KEY" not in env
    config = json.loads(env["CODEX_CONFIG"])
    assert config["model_provider"] == "profilec_e2e"
    assert ("permissions" in config) == (method == "codex-config")
    has_home = os.path.exists(os.path.join(layout.codex_home, "config.toml"))
    assert has_home == method.startswith("codex-home")
    if method == "c-overrides":
        wrapper = Path(env["CODEX_PATH"]).read_text()
        assert env["CODEX_PATH"] == os.path.join(layout.codex_home, "profilec-codex-wrapper")
        assert wrapper.startswith('#!/bin/sh\nexec "$PROFILEC_REAL_CODEX" "$@" -c ')
        assert env["PROFILEC_REAL_CODEX"] == "/opt/codex"
        assert "default_permissions=" in wrapper and "permissions.profilec-agent=" in wrapper
    else:
        assert env["CODEX_PATH"] == "/opt/codex"
    assert ("INITIAL_AGENT_MODE" in env) == (method == "codex-home+initial-mode")
    if "INITIAL_AGENT_MODE" in env:
        assert env["INITIAL_AGENT_MODE"] == "permission-profile:profilec-agent"


@pytest.mark.parametrize("method", ["c-overrides", "codex-home"])
def test_build_launch_zed(layout: Layout, method: str) -> None:
    with ScriptedModelServer() as srv:
        launch = acp.build_launch(_fake("zed"), method, layout, srv)
    flags = [launch.argv[i + 1] for i, a in enumerate(launch.argv) if a == "-c"]
    assert any(f.startswith("model_provider=") for f in flags)
    assert any(f.startswith("permissions.profilec-agent=") for f in flags) == (
        method == "c-overrides"
    )
    assert "CODEX_CONFIG" not in launch.env
    assert _fake("zed").unsupported_reason("codex-config") is not None


def _row(method: str, event: str, result: str, adapter: str = "@a/codex-acp") -> MatrixRow:
    return MatrixRow(
        adapter=adapter,
        adapter_version="1.0.0",
        codex_version="0.171.0",
        launch_method=method,
        session_event=event,
        result=result,  # type: ignore[arg-type]
        evidence="x",
    )


def _good(method: str) -> list[MatrixRow]:
    return [
        _row(method, "new", "held"),
        _row(method, "loaded", "held"),
        _row(method, "resumed", "not-supported"),
        _row(method, "mode:read-only", "held"),
        _row(method, "mode:agent-full-access", "lost"),
        _row(method, "mode:permission-profile:p", "held"),
    ]


def test_verdicts_hold_with_blocked_builtin_modes() -> None:
    rows = [*_good("codex-home"), _row("none", "new", "lost")]
    (v,) = adapter_verdicts(CompatibilityMatrix(rows=rows))
    assert v.holding == ("codex-home",)
    assert v.blocked_modes == {"codex-home": ("agent-full-access",)}
    assert "none" in v.failing


@pytest.mark.parametrize(
    ("event", "result"),
    [
        ("new", "lost"),
        ("loaded", "lost"),
        ("mode:permission-profile:p", "lost"),
        ("mode:read-only", "error"),
        ("new", "not-supported"),
    ],
)
def test_verdicts_fail_on_core_loss_or_error(event: str, result: str) -> None:
    rows = [r for r in _good("m") if r.session_event != event] + [_row("m", event, result)]
    (v,) = adapter_verdicts(CompatibilityMatrix(rows=rows))
    assert v.holding == ()
    assert "m" in v.failing


def _catalog(holding: list[str], method: str, blocked: list[str]) -> AdapterCatalog:
    return AdapterCatalog.model_validate(
        {
            "schema_version": 1,
            "adapters": [
                {
                    "package": "@a/codex-acp",
                    "version": "1.0.0",
                    "codex_version": "0.171.0",
                    "codex_source": "CODEX_PATH",
                    "launch_method": method,
                    "holding_methods": holding,
                    "blocked_modes": blocked,
                    "reason": "r",
                    "evidence": "e",
                }
            ],
        }
    )


def test_catalog_agreement_and_its_failure() -> None:
    verdicts = adapter_verdicts(CompatibilityMatrix(rows=_good("codex-home")))
    good = _catalog(["codex-home"], "codex-home", ["agent-full-access"])
    assert catalog_disagreements(verdicts, good) == []
    # The same catalog against a run where the method lost a new session: caught.
    broken = [r for r in _good("codex-home") if r.session_event != "new"]
    broken.append(_row("codex-home", "new", "lost"))
    problems = catalog_disagreements(adapter_verdicts(CompatibilityMatrix(rows=broken)), good)
    assert any("did not hold" in p for p in problems)
    # A blocked mode the catalog forgot, a build the catalog lacks, a stale build it lists.
    assert catalog_disagreements(verdicts, _catalog(["codex-home"], "codex-home", []))
    extra = _row("codex-home", "new", "held", adapter="@b/codex-acp")
    other = adapter_verdicts(CompatibilityMatrix(rows=[*_good("codex-home"), extra]))
    assert any("not in the catalog" in p for p in catalog_disagreements(other, good))
    assert any("not observed" in p for p in catalog_disagreements([], good))


def test_shipped_catalog_validates_and_matches_schema() -> None:
    catalog = load_catalog()
    schema = json.loads((REPO / "schemas" / "adapters-catalog.schema.json").read_text())
    jsonschema.validate(catalog.model_dump(mode="json"), schema)
    packages = {e.package for e in catalog.adapters}
    assert packages == {adapters.TS_PACKAGE, adapters.ZED_PACKAGE}
    for e in catalog.adapters:
        assert (e.method is None) == (not e.holding_methods)


def test_catalog_rejects_a_launch_method_that_does_not_hold(tmp_path: Path) -> None:
    for name in ("modes.toml",):
        (tmp_path / name).write_text((REPO / "profiles" / name).read_text())
    text = (REPO / "profiles" / "adapters.toml").read_text()
    bad = text.replace(
        'holding_methods = ["c-overrides+non-root", "codex-home+non-root"]',
        'holding_methods = ["codex-home+non-root"]',
        1,
    )
    assert bad != text
    (tmp_path / "adapters.toml").write_text(bad)
    with pytest.raises(PolicyError, match="not in holding_methods"):
        load_catalog(str(tmp_path))


def test_pins_agree_with_tools_script() -> None:
    script = (REPO / ".ci" / "tools.d" / "acp.sh").read_text()
    ts = re.search(r"PROFILEC_ACP_TS_VERSION:-([0-9.]+)\}", script)
    zed = re.search(r"PROFILEC_ACP_ZED_VERSION:-([0-9.]+)\}", script)
    assert ts and ts.group(1) == adapters.DEFAULT_TS_VERSION
    assert zed and zed.group(1) == adapters.DEFAULT_ZED_VERSION
    entries = {(e.package, e.version) for e in load_catalog().adapters}
    assert (adapters.TS_PACKAGE, adapters.DEFAULT_TS_VERSION) in entries
    assert (adapters.ZED_PACKAGE, adapters.DEFAULT_ZED_VERSION) in entries


def _bundle(layout: Layout) -> Any:
    from profilec.api import load_and_compile

    return load_and_compile(layout.roots, workspace_roots=[layout.workspace])


def test_launch_document_per_method(layout: Layout) -> None:
    bundle = _bundle(layout)
    schema = json.loads((REPO / "schemas" / "launch.schema.json").read_text())
    for method in [*adapters.METHODS, *(m + "+non-root" for m in adapters.METHODS)]:
        for source in ("CODEX_PATH", "bundled", "embedded"):
            cat = _catalog([method], method, ["agent-full-access"])
            entry = cat.adapters[0].model_copy(update={"codex_source": source})
            doc = json.loads(
                render_launch_with(bundle, AdapterCatalog(schema_version=1, adapters=[entry]))
            )
            jsonschema.validate(doc, schema)
            (a,) = doc["adapters"]
            assert a["holds"] and a["launch_method"] == method
            assert a["non_root_required"] == method.endswith("+non-root")
            assert a["run_as"] == doc["trusted_parent"]["run_as"] and "never root" in a["run_as"]
            method = method.removesuffix("+non-root")
            assert a["env"]["CODEX_HOME"] == layout.codex_home
            assert a["blocked_modes"] == ["agent-full-access"]
            assert "agent-full-access" in a["statement"]
            paths = [f["path"] for f in a["files"]]
            assert (os.path.join(layout.codex_home, "config.toml") in paths) == (
                method.startswith("codex-home")
            )
            if method == "codex-config":
                cfg = json.loads(a["env"]["CODEX_CONFIG"])
                assert cfg["default_permissions"] == "profilec-agent"
                assert os.path.dirname(layout.target) in json.dumps(cfg)  # its vault
            if method == "c-overrides" and source == "embedded":
                assert a["args"][0] == "-c" and a["args"][1].startswith("default_permissions=")
            if method == "c-overrides" and source != "embedded":
                assert a["env"]["CODEX_PATH"] in paths
            assert layout.marker not in json.dumps(doc)


def test_launch_says_plainly_when_nothing_holds(layout: Layout) -> None:
    doc = json.loads(render_launch_with(_bundle(layout), _catalog([], "none", [])))
    (a,) = doc["adapters"]
    assert a["holds"] is False and a["launch_method"] is None
    assert a["env"] == {} and a["files"] == [] and a["args"] == []
    assert "no launch method keeps the credential deny" in a["statement"]


def test_compile_launch_cli(layout: Layout, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        [
            "compile",
            "--roots",
            layout.roots,
            "--workspace-root",
            layout.workspace,
            "--format",
            "launch",
            # A root compile of a launch names the uid Codex runs as (here root).
            *(["--run-as", "0"] if os.geteuid() == 0 else []),
        ]
    )
    out, err = capsys.readouterr()
    assert rc == 0, err
    doc = json.loads(out)
    by = {(a["package"], a["codex_version"]): a for a in doc["adapters"]}
    zed = by[(adapters.ZED_PACKAGE, "embedded")]
    assert zed["holds"] is True and zed["non_root_required"] is True
    assert zed["args"][:2] == ["-c", 'default_permissions="profilec-agent"']
    assert zed["blocked_modes"] == ["auto", "full-access"]
    ts = by[(adapters.TS_PACKAGE, "0.171.0")]
    assert ts["env"]["INITIAL_AGENT_MODE"] == "permission-profile:profilec-agent"
    # One answer for every entry: the trusted parent's non-root user (never "any user").
    assert {a["run_as"] for a in doc["adapters"]} | {c["run_as"] for c in doc["codex"]} == {
        doc["trusted_parent"]["run_as"]
    }
    assert ts["non_root_required"] is False
    assert "warning" not in err  # every catalog entry has a holding method
    assert layout.marker not in out + err


def test_e2e_cli_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["e2e", "--format", "xml"]) == 2
    assert main(["e2e", "--only", "nothing"]) == 2
    err = capsys.readouterr().err
    assert "choose one of json, md" in err and "choose all, acp or appserver" in err


def test_leftover_processes_in_the_tree_are_ended_by_pid(tmp_path: Path) -> None:
    import subprocess
    import sys

    base = str(tmp_path / "profilec-e2e-acp-test")
    os.makedirs(base)
    # A process that ignores SIGTERM, in its own session (like bwrap --new-session), whose
    # command line names the tree.
    code = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ready', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, base + "/marker-arg"],
        start_new_session=True,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert acp.tree_processes(base) == [proc.pid]
        assert acp.end_tree_processes(base, grace=0.5) == [proc.pid]
        assert proc.wait(5) == -9  # TERM was ignored, so KILL ended it
        assert other.poll() is None  # a process not naming the tree is left alone
        assert acp.tree_processes(base) == []
    finally:
        for p in (proc, other):
            if p.poll() is None:
                p.kill()
                p.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()


def test_lost_cells_name_the_check_rule() -> None:
    from profilec.e2e.run import lint_for

    def obs(method: str, event: str, result: str, adapter: str = adapters.TS_PACKAGE) -> Any:
        return _row(method, event, result, adapter)

    assert lint_for(obs("codex-config", "new", "lost")) == "PC018"
    assert lint_for(obs("codex-home", "mode:agent", "lost")) == "PC023"
    assert lint_for(obs("codex-config", "mode:workspace-write", "lost")) == "PC023"
    assert lint_for(obs("codex-home", "mode:agent", "held")) is None
    assert lint_for(obs("codex-home", "mode:permission-profile:p", "lost")) is None
    assert lint_for(obs("codex-home", "new", "lost", adapter=adapters.ZED_PACKAGE)) is None


@settings(max_examples=200, deadline=None)
@given(before=st.text(), after=st.text(), section=st.sampled_from(acp.SECTIONS))
def test_marker_anywhere_in_the_output_is_never_held(before: str, after: str, section: str) -> None:
    lay = _LAYOUT
    fence = f"==T {section}=="
    spliced = _output(lay, "T").replace(fence, f"{fence}\n{after}{lay.marker}")
    for text in (before + lay.marker + after, before + spliced + after):
        result, evidence = judge(text, lay, "T")
        assert result == "lost"
        assert lay.marker not in evidence


@pytest.mark.skipif(os.getuid() != 0, reason="handing the tree to another uid needs root")
def test_non_root_launch_hands_the_tree_over_and_drops_privileges(layout: Layout) -> None:
    launch = acp.Launch(("/opt/codex-acp", "-c", "x=1"), {"A": "b"}, ())
    out = acp.as_non_root(launch, layout, uid=adapters.NON_ROOT_UID)
    assert out.argv == (
        "setpriv",
        f"--reuid={adapters.NON_ROOT_UID}",
        f"--regid={adapters.NON_ROOT_UID}",
        "--clear-groups",
        "--",
        "/opt/codex-acp",
        "-c",
        "x=1",
    )
    for path in (layout.base, layout.codex_home, layout.link, layout.target, layout.workspace):
        assert os.lstat(path).st_uid == adapters.NON_ROOT_UID
    assert os.lstat(layout.roots).st_uid == 0
    assert adapters.split_method("codex-home+non-root") == ("codex-home", True)
    assert adapters.split_method("codex-home") == ("codex-home", False)


@pytest.mark.parametrize("method", [*adapters.METHODS, "codex-home+initial-mode+non-root"])
def test_build_launch_applies_exactly_the_launch_recipe(layout: Layout, method: str) -> None:
    """The harness runs what `compile --format launch` emits: every env value, argument and
    file (content and mode) of the adapter's recipe is in the launch, unchanged."""
    from profilec.api import load_and_compile

    if method.endswith("+non-root") and os.getuid() != 0:
        pytest.skip("as_non_root chowns the tree (root only)")
    adapter = _fake("ts")
    # As build_launch does: a non-root launch is compiled for the uid it runs as, over the tree
    # already handed to it (what Codex can hold its mount targets in depends on who runs it).
    run_as = adapters.NON_ROOT_UID if adapters.split_method(method)[1] else None
    if run_as is not None:
        acp.hand_tree(layout, run_as, base=False)
    bundle = load_and_compile(layout.roots, workspace_roots=[layout.workspace], run_as=run_as)
    rec = acp.recipe(adapter, method, bundle)
    with ScriptedModelServer() as srv:
        launch = acp.build_launch(adapter, method, layout, srv)
    for key, value in rec["env"].items():
        if key == "CODEX_CONFIG":  # the harness adds its loopback provider, nothing else
            got = json.loads(launch.env[key])
            assert {k: got[k] for k in json.loads(value)} == json.loads(value)
        else:
            assert launch.env[key] == value, key
    if rec["args"]:
        assert tuple(rec["args"]) == launch.argv[len(launch.argv) - len(rec["args"]) :]
    assert [f["path"] for f in rec["files"]] == list(launch.files)
    for f in rec["files"]:
        assert Path(f["path"]).read_text() == f["content"]
        assert oct(os.stat(f["path"]).st_mode & 0o777) == oct(int(f["mode"], 8))
    assert (launch.argv[0] == "setpriv") == method.endswith("+non-root")


def test_a_recipe_change_reaches_the_harness(
    layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Negative control: the harness has no copy of the recipe; change the emitter and the
    launch changes with it."""
    from profilec.emit import launch as emit_launch

    real = emit_launch.launch_entry

    def changed(bundle: Any, entry: Any, inputs: Any = None) -> dict[str, Any]:
        doc = real(bundle, entry, inputs)
        doc["env"] = {**doc["env"], "PROFILEC_RECIPE_PROBE": "1"}
        return doc

    monkeypatch.setattr(emit_launch, "launch_entry", changed)
    with ScriptedModelServer() as srv:
        launch = acp.build_launch(_fake("ts"), "codex-home", layout, srv)
    assert launch.env.get("PROFILEC_RECIPE_PROBE") == "1"
