"""Schema ids: stable, offline, shipped; every validation resolves `$ref`s through the package.

Each shipped schema's `$id` is `urn:profilec:schema:<name>` (docs/schemas.md); the registry in
`profilec.resources` maps every id to the shipped file and retrieves nothing else, and the TOML
files we ship or generate carry a taplo `#:schema` hint that names a shipped schema.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import referencing.exceptions

from profilec import resources
from profilec.errors import EnvironmentMissingError

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "schemas"
NAMES = sorted(p.name for p in SCHEMAS.glob("*.schema.json"))
HINT = re.compile(r"^#:schema (\S+)$")


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


class NetworkTouched(AssertionError):
    """Raised by the patched socket layer: something tried to reach a host."""


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every way out through `socket` raises (and is recorded)."""
    tried: list[str] = []

    def refuse(*args: object, **kwargs: object) -> Any:
        tried.append(repr(args[:2]))
        raise NetworkTouched(f"network access: {args[:2]!r}")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    return tried


@pytest.mark.parametrize("name", NAMES)
def test_every_schema_carries_its_stable_urn_id(name: str) -> None:
    doc = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    assert doc["$id"] == "urn:profilec:schema:" + name.removesuffix(".schema.json")
    assert resources.schema_file(doc["$id"]).resolve() == (SCHEMAS / name).resolve()


def test_no_schema_names_a_host() -> None:
    """No `$id` or `$ref` under a host name (the old `profilec.invalid` made validators fetch)."""
    for name in NAMES:
        text = (SCHEMAS / name).read_text(encoding="utf-8")
        assert "profilec.invalid" not in text, name
        doc = json.loads(text)
        for ref in _refs(doc):
            assert ref.startswith(("#", "urn:profilec:schema:")), (name, ref)


def test_every_cross_file_ref_resolves_in_the_registry() -> None:
    registry = resources.schema_registry()
    resolver = registry.resolver()
    seen = 0
    for name in NAMES:
        for ref in _refs(json.loads((SCHEMAS / name).read_text(encoding="utf-8"))):
            if ref.startswith("urn:"):
                resolved = resolver.lookup(ref)
                assert resolved.contents["$id"] == ref
                seen += 1
    assert seen >= 6  # bundle -> 5 others, lock -> bundle


def test_validation_across_files_never_touches_the_network(
    tmp_path: Path, no_network: list[str]
) -> None:
    """A real bundle document validates through five cross-file `$ref`s with sockets refused."""
    from profilec.api import load_and_compile
    from profilec.formats import COMPILE_FORMATS

    renderer = COMPILE_FORMATS.renderer
    from tests.helpers import make_layout

    lay = make_layout(tmp_path / "l", hop_dir=True)
    bundle = load_and_compile(str(lay.manifest), workspace_roots=[str(lay.workspace)])
    doc = json.loads(renderer("bundle")(bundle))
    resources.validator("bundle.schema.json").validate(doc)
    bad = dict(doc, compiled={"nonsense": True})
    errors = list(resources.validator("bundle.schema.json").iter_errors(bad))
    assert errors, "the cross-file $ref to compiled-bundle was not followed"
    lock = {"schema_version": 1, "content_hash": doc["content_hash"], "bundle": doc}
    resources.validator("lock.schema.json").validate(lock)
    assert no_network == []


def test_an_unknown_ref_is_unresolvable_not_fetched(no_network: list[str]) -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "properties": {"x": {"$ref": "https://example.com/schemas/elsewhere.json"}},
    }
    ours = jsonschema.Draft202012Validator(schema, registry=resources.schema_registry())
    with pytest.raises(referencing.exceptions.Unresolvable):
        ours.validate({"x": 1})
    assert no_network == []


def test_control_without_the_registry_jsonschema_goes_to_the_network(
    no_network: list[str],
) -> None:
    """Negative control for the guard above: jsonschema's default registry fetches a remote
    `$ref`, and the patched socket layer catches it."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "properties": {"x": {"$ref": "https://example.com/schemas/elsewhere.json"}},
    }
    with pytest.raises(Exception):  # noqa: B017
        jsonschema.Draft202012Validator(schema).validate({"x": 1})
    assert no_network, "the control never reached the socket layer"


def test_schema_file_refuses_what_it_does_not_ship() -> None:
    for uri in (
        "urn:profilec:schema:nope",
        "urn:profilec:schema:../profiles/modes",
        "https://profilec.invalid/schemas/bundle.schema.json",
    ):
        with pytest.raises(EnvironmentMissingError) as info:
            resources.schema_file(uri)
        assert info.value.exit_code == 7


def test_a_shipped_schema_with_a_foreign_id_is_an_install_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "schemas").mkdir()
    doc = {"$id": "https://profilec.invalid/schemas/x.schema.json", "type": "object"}
    (tmp_path / "schemas" / "x.schema.json").write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setattr(resources, "data_dir", lambda: tmp_path)
    resources.schema_registry.cache_clear()
    try:
        with pytest.raises(EnvironmentMissingError):
            resources.schema_registry()
    finally:
        resources.schema_registry.cache_clear()


def test_profilec_validates_only_through_the_shipped_registry() -> None:
    """No module builds its own validator (which would resolve `$ref`s without the registry)."""
    offenders = []
    for path in sorted((REPO / "compiler").rglob("*.py")):
        if path.name == "resources.py":
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"Draft\d+Validator\(|jsonschema\.validate\(|validator_for\(", text):
            offenders.append(str(path.relative_to(REPO)))
    assert offenders == []


def _hint(path: Path) -> str:
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    match = HINT.match(first)
    assert match, f"{path}: first line is not a taplo `#:schema` hint: {first!r}"
    return match.group(1)


def _hinted_schema(toml_file: Path) -> Path:
    """The shipped schema a hint names: a URN id, or a path (relative to the TOML file)."""
    hint = _hint(toml_file)
    if hint.startswith("urn:"):
        return resources.schema_file(hint)
    target = (toml_file.parent / hint).resolve()
    assert target.parent == resources.schemas_dir().resolve(), f"{toml_file}: {hint}"
    assert target.is_file(), f"{toml_file}: {hint} does not exist"
    return target


def _check_hinted(toml_file: Path) -> str:
    schema = _hinted_schema(toml_file)
    with toml_file.open("rb") as fh:
        resources.validator(schema.name).validate(tomllib.load(fh))
    return schema.name


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "profiles").glob("*.toml")))
def test_shipped_policy_carries_a_hint_to_the_schema_it_validates_against(name: str) -> None:
    """Through the package's data dir too: `../schemas/` holds in a wheel as in a checkout."""
    assert _check_hinted(REPO / "profiles" / name).endswith(".schema.json")
    _check_hinted(resources.shipped("profiles", name))


def test_the_example_manifest_and_layout_carry_hints(tmp_path: Path) -> None:
    out = subprocess.run(
        ["bash", str(REPO / "examples" / "make-layout.sh"), str(tmp_path / "ex")],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert _check_hinted(Path(out) / "roots.toml") == "roots-manifest.schema.json"
    assert _check_hinted(Path(out) / "layout.toml") == "plan-layout.schema.json"


def test_a_urn_hint_resolves_too(tmp_path: Path) -> None:
    doc = tmp_path / "roots.toml"
    doc.write_text(
        "#:schema urn:profilec:schema:roots-manifest\nschema_version = 1\n"
        '[[roots]]\nid = "a"\npath = "/x"\n',
        encoding="utf-8",
    )
    assert _check_hinted(doc) == "roots-manifest.schema.json"
