"""schemas/ is the contract: regenerated == committed, and schemas agree with the models."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

from profilec.errors import ProfilecError
from profilec.models.policy import ModeMap, ModeProfilePolicy
from profilec.models.roots import RootsManifest
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
    from profilec.formats import COMPILE_FORMATS
    from profilec.models.acp import AcpLaunchConfig
    from profilec.models.bundle import BundleDocument
    from profilec.models.launch import LaunchDocument

    renderer = COMPILE_FORMATS.renderer
    from profilec.models.overrides import CodexOverrideLines
    from profilec.resources import validator
    from tests.helpers import make_layout

    lay = make_layout(tmp_path / "l", hop_dir=True)
    bundle = load_and_compile(str(lay.manifest), workspace_roots=[str(lay.workspace)])

    def validate(name: str, instance: Any) -> None:
        validator(name).validate(instance)

    doc = json.loads(renderer("bundle")(bundle))
    validate("bundle.schema.json", doc)
    BundleDocument.model_validate(doc)
    acp = json.loads(renderer("acp-json")(bundle))
    validate("acp-launch.schema.json", acp)
    AcpLaunchConfig.model_validate(acp, strict=False)
    lines = renderer("overrides")(bundle).split("\n")[:-1]
    validate("overrides.schema.json", lines)
    CodexOverrideLines.model_validate(lines)
    validate("session-config.schema.json", json.loads(renderer("session-config")(bundle)))
    import tomllib

    from profilec.models.requirements import ManagedRequirements

    req = tomllib.loads(renderer("requirements")(bundle))
    validate("requirements.schema.json", req)
    ManagedRequirements.model_validate(req)
    launch = json.loads(renderer("launch")(bundle))
    validate("launch.schema.json", launch)
    LaunchDocument.model_validate(launch, strict=False)
    assert renderer("bundle")(bundle) == renderer("bundle")(
        load_and_compile(str(lay.manifest), workspace_roots=[str(lay.workspace)])
    )
    assert lay.marker not in renderer("bundle")(bundle)


# ---------------------------------------------------------------------------------------------
# Formats read by hand (no validator on the compile path): schema, model and parser agree.


def _accepts(fn: Any, doc: Any) -> bool:
    try:
        fn(doc)
    except (ValidationError, ProfilecError):
        return False
    return True


_SRV = {"command": "/bin/true", "cwd": "/srv/mcp"}
VOUCHED: list[tuple[dict[str, Any], bool]] = [
    ({"schema_version": 2, "codex": "/usr/bin/codex", "servers": {}}, True),
    (
        {
            "schema_version": 2,
            "codex": "/usr/bin/codex",
            "servers": {
                "bridge": {
                    "command": "/usr/bin/env",
                    "args": ["true"],
                    "cwd": "/srv/mcp/bridge",
                    "env": {"MODE": "x"},
                    "credential": "launch-secret",
                },
                "plain": _SRV,
            },
        },
        True,
    ),
    ({"schema_version": 1, "codex": "/usr/bin/codex", "servers": {}}, False),
    ({"schema_version": 2, "servers": {}}, False),
    ({"schema_version": 2, "codex": "codex", "servers": {}}, False),
    ({"schema_version": 2, "codex": "/usr/bin/codex"}, False),
    ({"schema_version": 2, "codex": "/usr/bin/codex", "servers": {}, "x": 1}, False),
    ({"schema_version": 2, "codex": "/c", "servers": {"x": {**_SRV, "command": "rel"}}}, False),
    ({"schema_version": 2, "codex": "/c", "servers": {"x": {**_SRV, "url": "http://x"}}}, False),
    ({"schema_version": 2, "codex": "/c", "servers": {"a.b": _SRV}}, False),
    ({"schema_version": 2, "codex": "/c", "servers": {"x": {**_SRV, "env": {"1A": "v"}}}}, False),
    ({"schema_version": 2, "codex": "/c", "servers": {"x": {**_SRV, "credential": ""}}}, False),
    ({"schema_version": 2, "codex": "/c", "servers": {"x": {"command": "/bin/true"}}}, False),
    ({"schema_version": 2, "codex": "/c", "servers": {"x": {**_SRV, "cwd": "rel"}}}, False),
    ({"schema_version": 2, "codex": "/c", "servers": {"x": {**_SRV, "args": ["a\nb"]}}}, False),
]


@pytest.mark.parametrize(("doc", "valid"), VOUCHED)
def test_vouched_mcp_schema_and_model_agree(doc: dict[str, Any], valid: bool) -> None:
    from profilec.mcp import load_vouched

    schema_ok = _schema("vouched-mcp.schema.json").is_valid(doc)
    model_ok = _accepts(lambda d: load_vouched(d, where="t"), doc)
    assert schema_ok == model_ok == valid


def test_a_bad_vouched_file_is_one_line_naming_file_and_key() -> None:
    from profilec.mcp import load_vouched

    doc = {"schema_version": 2, "codex": "/c", "servers": {"x": {**_SRV, "cwd": "rel"}}}
    with pytest.raises(ProfilecError) as err:
        load_vouched(doc, where="/etc/agentd/mcp.toml")
    text = str(err.value)
    assert "\n" not in text and "/etc/agentd/mcp.toml" in text and "servers.x.cwd" in text


ALLOWLISTS: list[tuple[dict[str, Any], bool]] = [
    (
        {
            "schema_version": 1,
            "codex_version": "0.1.2",
            "allowed": {"model": {"type": "string", "reason": "names a model"}},
        },
        True,
    ),
    ({"schema_version": 1, "codex_version": "0.1.2", "allowed": {}, "x": 1}, False),
    ({"schema_version": 2, "codex_version": "0.1.2", "allowed": {}}, False),
    ({"schema_version": 1, "allowed": {}}, False),
    (
        {
            "schema_version": 1,
            "codex_version": "0.1.2",
            "allowed": {"model": {"type": "float", "reason": "r"}},
        },
        False,
    ),
    (
        {
            "schema_version": 1,
            "codex_version": "0.1.2",
            "allowed": {"model": {"type": "string", "reason": "two\nlines"}},
        },
        False,
    ),
    (
        {
            "schema_version": 1,
            "codex_version": "0.1.2",
            "allowed": {"model": {"type": "string", "reason": " \t "}},
        },
        False,
    ),
    (
        {
            "schema_version": 1,
            "codex_version": "0.1.2",
            "allowed": {"model": {"type": "string", "reason": "r", "x": 1}},
        },
        False,
    ),
]


@pytest.mark.parametrize(("doc", "valid"), ALLOWLISTS)
def test_allowlist_schema_model_and_parser_agree(doc: dict[str, Any], valid: bool) -> None:
    from profilec.models.session import SessionAllowList
    from profilec.session import parse_allowlist

    schema_ok = _schema("session-allowlist.schema.json").is_valid(doc)
    model_ok = _accepts(lambda d: SessionAllowList.model_validate(d, strict=False), doc)
    parser_ok = _accepts(lambda d: parse_allowlist(d, where="t"), doc)
    assert schema_ok == model_ok == parser_ok == valid


def test_shipped_inputs_validate_against_their_generated_schemas() -> None:
    from profilec.models.session import SessionAllowList

    doc = tomllib.loads((PROFILES / "session-allowlist.toml").read_text(encoding="utf-8"))
    _schema("session-allowlist.schema.json").validate(doc)
    SessionAllowList.model_validate(doc, strict=False)


# ---------------------------------------------------------------------------------------------
# Emitted documents validate against their generated schemas and models.


def _canary_doc(tmp_path: Path) -> dict[str, Any]:
    from datetime import UTC, datetime

    from profilec.audit.evidence import bind
    from profilec.models.canary import CanaryMode, CanaryReport, ControlOutcome, Kind, Probe

    def probe(name: str, kind: Kind, rc: int, out: str, **kw: Any) -> Probe:
        common = {
            "expected": "deny",
            "predicted": "deny",
            "observed": "deny",
            "ok": True,
            "failures": (),
        }
        return Probe(
            name=name, kind=kind, command=("sh",), exit_code=rc, output=out, **{**common, **kw}
        )

    plain = probe("read", "model", 1, "denied")
    timed = probe("p", "parent", 0, "", predicted=None, ok=False, failures=("error",), seconds=0.5)
    ctl = ControlOutcome(observed="allow", ok=True, output="leaked", seconds=2.0)
    control = probe("c", "parent", 0, "", failures=(), seconds=1.0, control=ctl)
    modes = (
        CanaryMode.of("agent", "p-agent", (plain, timed, control), 1.5),
        CanaryMode.of("read-only", "p-ro", (), 0.25, error="docker went away"),
    )
    report = CanaryReport.of("run-1", modes, 2.0, "img:1")
    bundle = {"content_hash": "sha256:" + "1" * 64, "compiled": {}, "codex_version": "0.1.0"}
    doc: dict[str, Any] = json.loads(
        json.dumps(bind(report.model_dump(mode="json"), bundle, datetime.now(UTC)))
    )
    return doc


def test_a_canary_report_validates_against_its_schema_and_model(tmp_path: Path) -> None:
    from profilec.models.canary import CanaryReportDocument

    doc = _canary_doc(tmp_path)
    _schema("canary-report.schema.json").validate(doc)
    CanaryReportDocument.model_validate(doc, strict=False)
    for bad in (
        {**doc, "evidence": {**doc["evidence"], "finished": "yesterday"}},
        {**doc, "modes": [{**doc["modes"][0], "error": 1}]},
        {**doc, "extra": 1},
    ):
        assert not _schema("canary-report.schema.json").is_valid(bad)
        assert not _accepts(lambda d: CanaryReportDocument.model_validate(d, strict=False), bad)


PROJECT_CONFIGS: list[tuple[dict[str, Any], bool]] = [
    ({}, True),
    ({"waiver": []}, True),
    (
        {
            "waiver": [
                {"rule": "PC044", "reason": "reviewed"},
                {
                    "rule": "PC031",
                    "reason": "until the fix ships",
                    "expires": "2027-01-31",
                    "path": "/usr",
                    "mode": "agent-full-access",
                },
            ]
        },
        True,
    ),
    ({"waivers": []}, False),
    ({"waiver": {"rule": "PC025", "reason": "r"}}, False),
    ({"waiver": [{"rule": "PC25", "reason": "r"}]}, False),
    ({"waiver": [{"rule": "PC025"}]}, False),
    ({"waiver": [{"rule": "PC025", "reason": "  "}]}, False),
    ({"waiver": [{"rule": "PC025", "reason": "r", "expires": "soon"}]}, False),
    ({"waiver": [{"rule": "PC025", "reason": "r", "path": "usr"}]}, False),
    ({"waiver": [{"rule": "PC025", "reason": "r", "mode": 1}]}, False),
    ({"waiver": [{"rule": "PC025", "reason": "r", "why": "x"}]}, False),
]


@pytest.mark.parametrize(("doc", "valid"), PROJECT_CONFIGS)
def test_project_config_schema_model_and_parser_agree(doc: dict[str, Any], valid: bool) -> None:
    from profilec.check.waivers import config_waivers
    from profilec.models.profilec_config import ProfilecConfig

    schema = json.loads((SCHEMAS / "profilec-config.schema.json").read_text(encoding="utf-8"))
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER  # `expires` is a date
    schema_ok = jsonschema.Draft202012Validator(schema, format_checker=checker).is_valid(doc)
    model_ok = _accepts(lambda d: ProfilecConfig.model_validate(d, strict=False), doc)
    parser_ok = _accepts(lambda d: config_waivers(d, "t"), doc)
    assert schema_ok == model_ok == parser_ok == valid
