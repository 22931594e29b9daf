"""The models profilec builds itself (`models.Built`) skip pydantic's run-time validation when
constructed, and stay fully validated when read back.

Property, over random root sets (file roots behind direct, relative and directory-hop links,
directory roots, a second identity), workspaces, TMPDIR, HOME, run-as uid and session config:
every model a compile builds equals its validated copy (values, types, field order), and the
bundle survives a JSON round trip byte for byte. So building without validation produces
exactly what validation would have.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from profilec.api import load_and_compile
from profilec.models.base import Built
from profilec.models.compiled import CompiledBundle, CompiledEntry, Hop, Provenance
from tests.helpers import write_manifest

KINDS = ("direct", "relative", "hop", "dir")


def _built(value: object) -> list[Built]:
    """Every Built model reachable from `value`, `value` included."""
    out: list[Built] = []
    if isinstance(value, Built):
        out.append(value)
        for name in type(value).model_fields:
            out.extend(_built(getattr(value, name)))
    elif isinstance(value, tuple | list):
        for v in value:
            out.extend(_built(v))
    elif isinstance(value, dict):
        for v in value.values():
            out.extend(_built(v))
    return out


def _root(base: Path, i: int, kind: str) -> dict[str, object]:
    """One credential root of `kind` under base/r<i> (a random marker, never a credential)."""
    host = base / f"r{i}" / "host"
    host.mkdir(parents=True)
    home = base / f"r{i}" / "codexhome"
    home.mkdir()
    if kind == "dir":
        return {"id": f"dir-{i}", "path": str(host), "backend": "file"}
    target = host / "auth.json"
    target.write_text('{"OPENAI_API_KEY": "PROFILEC-CANARY-built"}\n', encoding="utf-8")
    os.chmod(target, 0o600)
    link = home / "auth.json"
    if kind == "hop":
        (base / f"r{i}" / "hostlink").symlink_to("host")
        link.symlink_to("../hostlink/auth.json")
    elif kind == "relative":
        link.symlink_to("../host/auth.json")
    else:
        link.symlink_to(target)
    return {"id": f"codex-{i}", "path": str(link), "backend": "codex"}


CASES = st.fixed_dictionaries(
    {
        "kinds": st.lists(st.sampled_from(KINDS), min_size=1, max_size=4),
        "workspaces": st.integers(min_value=0, max_value=2),
        "tmpdir": st.booleans(),
        "home": st.booleans(),
        "run_as": st.sampled_from([None, 65534]),
        "session": st.booleans(),
    }
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=CASES)
def test_every_built_model_equals_its_validated_copy(
    tmp_path_factory: pytest.TempPathFactory, case: dict[str, Any]
) -> None:
    base = tmp_path_factory.mktemp("built")
    os.chmod(base, 0o755)
    roots = [_root(base, i, k) for i, k in enumerate(case["kinds"])]
    manifest = write_manifest(base / "roots.toml", roots)
    options: dict[str, Any] = {"run_as": case["run_as"]}
    codex = [r for r in roots if r["backend"] == "codex"]
    if codex:
        options["codex_home"] = str(Path(str(codex[0]["path"])).parent)
    else:
        (base / "codexhome").mkdir()
        options["codex_home"] = str(base / "codexhome")
    # The writer's lock exists before launch, as a launcher makes it (PC062): without it a
    # CODEX_HOME under a writable root is a profile the sandbox refuses (exit 10, PC034).
    lock = Path(options["codex_home"]) / "auth.lock"
    lock.touch(mode=0o600)
    ws = []
    for j in range(case["workspaces"]):
        (base / f"ws{j}").mkdir(mode=0o1777)
        os.chmod(base / f"ws{j}", 0o1777)  # writable for the run-as uid, as a launcher makes it
        ws.append(str(base / f"ws{j}"))
    options["workspace_roots"] = ws
    if case["tmpdir"]:
        (base / "tmp").mkdir()
        os.chmod(base / "tmp", 0o1777)
        options["tmpdir"] = str(base / "tmp")
    if case["home"]:
        (base / "userhome").mkdir()
        options["home"] = str(base / "userhome")
    if case["session"]:
        session = base / "session.json"
        session.write_text(
            json.dumps({"model": "gpt-test", "approval_policy": "never", "notify": ["x"]}),
            encoding="utf-8",
        )
        options["session_config_path"] = str(session)
    bundle = load_and_compile(str(manifest), **options)
    models = _built(bundle)
    assert {type(m).__name__ for m in models} >= {
        "CompiledBundle",
        "CompiledProfile",
        "CompiledEntry",
        "Provenance",
        "ResolvedRoot",
    }
    for m in models:
        copy = type(m).model_validate(m.model_dump())
        assert copy == m, type(m).__name__
        assert list(copy.__dict__) == list(m.__dict__), type(m).__name__
        for name, value in m.__dict__.items():
            if not isinstance(value, BaseModel):
                assert type(copy.__dict__[name]) is type(value), (type(m).__name__, name)
    text = bundle.model_dump_json()
    again = CompiledBundle.model_validate_json(text)
    assert again == bundle
    assert again.model_dump_json() == text


def test_reading_one_back_still_validates() -> None:
    """The validator never calls Built.__init__: a bad value read back is refused."""
    good = {"index": 0, "link": "/a/l", "value": "x", "spelling": "/a/l"}
    assert Hop.model_validate(good) == Hop(index=0, link="/a/l", value="x", spelling="/a/l")
    for bad in ({**good, "link": "relative"}, {**good, "index": "0"}, {**good, "extra": 1}):
        with pytest.raises(ValidationError):
            Hop.model_validate(bad)
    with pytest.raises(ValidationError):
        CompiledEntry.model_validate_json('{"path": "/p", "access": "all", "provenance": []}')


def test_a_missing_or_unknown_field_is_still_an_error() -> None:
    with pytest.raises(TypeError, match="missing field `access`"):
        CompiledEntry(path="/p", provenance=())  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="no field named colour"):
        Provenance(reason="policy", colour="red")  # type: ignore[call-arg]


def test_defaults_are_filled_in_field_order() -> None:
    p = Provenance(detail="d", reason="policy")
    assert list(p.__dict__) == ["reason", "root_id", "hop_index", "detail"]
    assert p == Provenance.model_validate({"reason": "policy", "detail": "d"})
    assert p.model_fields_set == {"reason", "detail"}
    assert hash(p) == hash(Provenance.model_validate({"reason": "policy", "detail": "d"}))


def test_no_built_model_is_called_with_a_mapping_unpacked() -> None:
    """`Built(**fields)` would hide the field names and types from mypy, the only check a
    built model gets: every call in the package names its fields."""
    import ast

    import profilec
    from profilec.models import compiled

    names = {
        n
        for n, v in vars(compiled).items()
        if isinstance(v, type) and issubclass(v, Built) and v is not Built
    }
    assert {"CompiledBundle", "ResolvedRoot", "TrustedPath"} <= names
    package = Path(profilec.__file__).resolve().parent
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in names and any(k.arg is None for k in node.keywords):
                found.append(f"{path.relative_to(package)}:{node.lineno} {name}(**...)")
    assert found == []
