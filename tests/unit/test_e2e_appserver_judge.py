"""The app-server driver's verdict and evidence, without a real Codex."""

from __future__ import annotations

from pathlib import Path

from compiler.e2e.appserver import (
    build_layout,
    compile_layout,
    drop_denies,
    entries_in_effect,
    judge,
)


def test_judge_reads_the_model_visible_text_not_the_exit_code(tmp_path: Path) -> None:
    lay = build_layout(str(tmp_path))
    ok = (f"== link\ncat: x: Permission denied\nrc=1\n== control\n{lay.control_marker}\nrc=0\n"
          "== write:codex-home\nro\nrc=1\n== write:host\nro\nrc=1\n== write:base\nro\nrc=1\n")
    assert judge(lay, ok, "", False)[0] == "held"
    # The marker anywhere the model saw it is a loss, even with every exit code non-zero.
    assert judge(lay, ok, f'{{"x": "{lay.marker}"}}', False)[0] == "lost"
    assert judge(lay, ok.replace("ro\nrc=1\n== write:host", "\nrc=0\n== write:host"), "",
                 False)[0] == "lost"
    assert judge(lay, ok.replace(lay.control_marker, "nothing"), "", False)[0] == "error"
    assert judge(lay, None, "", False)[0] == "error"


def test_layout_links_reach_the_marker_and_compile_denies_the_target(tmp_path: Path) -> None:
    lay = build_layout(str(tmp_path))
    assert Path(lay.link).is_symlink()
    assert Path(lay.link).resolve() == Path(lay.target).resolve()
    bundle = compile_layout(lay)
    entries = {(e.access, e.path) for e in bundle.profile_for(bundle.default_mode).entries}
    assert ("deny", lay.target) in entries
    assert all(e.access != "deny" for p in drop_denies(bundle).profiles for e in p.entries)


def test_entries_in_effect_counts_what_the_environment_context_shows(tmp_path: Path) -> None:
    lay = build_layout(str(tmp_path))
    bundle = compile_layout(lay)
    ctx = ('<environment_context><entry access="deny" escalatable="false"><path>'
           f"{lay.target}</path></entry></environment_context>")
    body = {"input": [{"type": "message", "content": [{"type": "input_text", "text": ctx}]}]}
    shown = entries_in_effect(bundle, [body])
    assert shown.startswith("compiled entries in effect: deny 1/1, read 0/")
    assert entries_in_effect(bundle, []) == ""
    assert entries_in_effect(None, [body]) == ""
