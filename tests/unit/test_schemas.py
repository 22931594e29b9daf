"""schemas/ is the contract: regenerated == committed, and schemas agree with the models."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

from profilec.models import ModeMap, ModeProfilePolicy, RootsManifest
from profilec.schemagen import all_names, render

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
PROFILES = Path(__file__).resolve().parents[2] / "profiles"


@pytest.mark.parametrize("name", all_names())
def test_committed_schema_matches_the_models(name: str) -> None:
    assert (SCHEMAS / name).read_text(encoding="utf-8") == render(name), (
        f"schemas/{name} is stale: run python -m profilec.schemagen"
    )


@pytest.mark.parametrize("name", sorted(p.name for p in SCHEMAS.glob("*.json")))
def test_every_schema_is_valid_draft_2020_12(name: str) -> None:
    doc = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(doc)


def _schema(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads((SCHEMAS / name).read_text(encoding="utf-8")))


MANIFESTS: list[tuple[dict[str, Any], bool]] = [
    ({"schema_version": 1, "roots": [{"id": "a", "path": "/x"}]}, True),
    (
        {
            "schema_version": 1,
            "roots": [
                {
                    "id": "a-b",
                    "path": "/x",
                    "backend": "codex",
                    "description": "d",
                    "allow_missing": True,
                }
            ],
        },
        True,
    ),
    ({"schema_version": 2, "roots": [{"id": "a", "path": "/x"}]}, False),
    ({"schema_version": 1, "roots": []}, False),
    ({"schema_version": 1, "roots": [{"id": "A", "path": "/x"}]}, False),
    ({"schema_version": 1, "roots": [{"id": "a", "path": "x"}]}, False),
    ({"schema_version": 1, "roots": [{"id": "a", "path": "/x", "extra": 1}]}, False),
    ({"schema_version": 1, "roots": [{"id": "a"}]}, False),
    ({"schema_version": 1, "roots": [{"id": "a", "path": "/x", "allow_missing": "yes"}]}, False),
    ({"roots": [{"id": "a", "path": "/x"}]}, False),
]


@pytest.mark.parametrize(("doc", "valid"), MANIFESTS)
def test_manifest_schema_and_model_agree(doc: dict[str, Any], valid: bool) -> None:
    schema_ok = _schema("roots-manifest.schema.json").is_valid(doc)
    try:
        RootsManifest.model_validate(doc)
        model_ok = True
    except ValidationError:
        model_ok = False
    assert schema_ok == model_ok == valid


def test_shipped_policy_validates_against_its_schemas() -> None:
    mm = tomllib.loads((PROFILES / "modes.toml").read_text(encoding="utf-8"))
    _schema("mode-map.schema.json").validate(mm)
    ModeMap.model_validate(mm)
    for entry in mm["modes"].values():
        doc = tomllib.loads((PROFILES / entry["base"]).read_text(encoding="utf-8"))
        _schema("policy-profile.schema.json").validate(doc)
        ModeProfilePolicy.model_validate(doc)


POLICIES: list[tuple[dict[str, Any], bool]] = [
    (
        {
            "schema_version": 1,
            "mode": "m",
            "description": "d",
            "rationale": "r",
        },
        True,
    ),
    (
        {
            "schema_version": 1,
            "mode": "m",
            "description": "d",
            "rationale": "r",
            "extends": ":danger-full-access",
        },
        False,
    ),
    (
        {
            "schema_version": 1,
            "mode": "m",
            "description": "d",
            "rationale": "r",
            "filesystem": {":root": "hide"},
        },
        False,
    ),
    (
        {
            "schema_version": 1,
            "mode": "m",
            "description": "d",
            "rationale": "r",
            "filesystem": {":workspace_roots": {".": "write"}},
        },
        True,
    ),
    (
        {
            "schema_version": 1,
            "mode": "m",
            "description": "d",
            "rationale": "r",
            "glob_scan_max_depth": 0,
        },
        False,
    ),
]


@pytest.mark.parametrize(("doc", "valid"), POLICIES)
def test_policy_schema_and_model_agree(doc: dict[str, Any], valid: bool) -> None:
    schema_ok = _schema("policy-profile.schema.json").is_valid(doc)
    try:
        ModeProfilePolicy.model_validate(doc)
        model_ok = True
    except ValidationError:
        model_ok = False
    assert schema_ok == model_ok == valid


def test_emitted_outputs_validate_against_their_schemas(tmp_path: Path) -> None:
    from profilec.api import load_and_compile
    from profilec.formats import renderer
    from profilec.resources import validator
    from tests.helpers import make_layout

    lay = make_layout(tmp_path / "l", hop_dir=True)
    bundle = load_and_compile(str(lay.manifest), workspace_roots=[str(lay.workspace)])

    def validate(name: str, instance: Any) -> None:
        validator(name).validate(instance)

    doc = json.loads(renderer("bundle")(bundle))
    validate("bundle.schema.json", doc)
    validate("acp-launch.schema.json", json.loads(renderer("acp-json")(bundle)))
    validate("overrides.schema.json", renderer("overrides")(bundle).split("\n")[:-1])
    assert renderer("bundle")(bundle) == renderer("bundle")(
        load_and_compile(str(lay.manifest), workspace_roots=[str(lay.workspace)])
    )
    assert lay.marker not in renderer("bundle")(bundle)
