"""The backend catalog's writer patterns: codex measured, the others marked unverified."""

from __future__ import annotations

from pathlib import Path

import pytest

from profilec.errors import PolicyError
from profilec.mounts.backends import default_catalog_path, load_catalog, parse_catalog


def test_codex_writer_is_measured_rename_with_its_temp_and_lock_files() -> None:
    w = load_catalog().backends["codex"].writer
    assert w is not None
    assert (w.status, w.save, w.follows_links) == ("measured", "rename", True)
    assert {(f.name, f.where, f.role) for f in w.files} == {
        (".auth-XXXXXX", "vault", "temp"),
        ("auth.json.lock", "vault", "lock"),
        ("auth.lock", "home", "lock"),
    }
    assert "strace" in w.evidence and "rename(" in w.evidence


@pytest.mark.parametrize("name", ["opencode", "cursor", "claude"])
def test_other_backends_are_marked_unverified(name: str) -> None:
    w = load_catalog().backends[name].writer
    assert w is not None and w.status == "unverified"


def _with_codex_writer(block: str) -> bytes:
    text = Path(default_catalog_path()).read_text(encoding="utf-8")
    head, _, tail = text.partition("[backends.codex.writer]")
    rest = tail[tail.index("[backends.opencode]") :]
    return (head + block + "\n" + rest).encode()


@pytest.mark.parametrize(
    ("block", "needle"),
    [
        (
            '[backends.codex.writer]\nstatus = "measured"\nsave = "unknown"\nevidence = "x"\n',
            "names its save kind",
        ),
        (
            '[backends.codex.writer]\nstatus = "measured"\nsave = "rename"\nevidence = " "\n',
            "names its save kind and its evidence",
        ),
        (
            '[backends.codex.writer]\nstatus = "unverified"\nsave = "rename"\nevidence = "x"\n'
            '[[backends.codex.writer.files]]\nname = ".."\nwhere = "vault"\nrole = "temp"\n'
            'note = "x"\n',
            "writer.files",
        ),
        (
            '[backends.codex.writer]\nstatus = "unverified"\nsave = "rename"\nevidence = "x"\n'
            '[[backends.codex.writer.files]]\nname = "a"\nwhere = "vault"\nrole = "temp"\n'
            'note = "x"\n[[backends.codex.writer.files]]\nname = "a"\nwhere = "home"\n'
            'role = "lock"\nnote = "x"\n',
            "listed twice",
        ),
        (
            '[backends.codex.writer]\nstatus = "guessed"\nsave = "rename"\nevidence = "x"\n',
            "schema violation",
        ),
    ],
)
def test_bad_writer_patterns_are_policy_errors(block: str, needle: str) -> None:
    with pytest.raises(PolicyError, match=needle):
        parse_catalog(_with_codex_writer(block), where="backends.toml")
