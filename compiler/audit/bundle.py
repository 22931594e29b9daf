"""Build the full bundle document from the same inputs `compile` takes (edge + pure compile).

Adds to `compile_bundle` what only the edge knows: the policy and manifest lines behind every
entry, the sha256 of each input file, and (with a plan layout) the outer mount plan. Also reads
a bundle back (a bundle document or a lock file) into a CompiledBundle for explain/diff/audit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..models import CompiledBundle


@dataclass(frozen=True, slots=True)
class CompileInputs:
    """The compile flags, as given on the command line."""

    roots: str
    profiles: str | None = None
    workspace_roots: tuple[str, ...] = ()
    codex_home: str | None = None
    session_config: str | None = None
    plan_layout: str | None = None
    tmpdir: str | None = None
    home: str | None = None
    vouched_mcp: str | None = None


def compile_document(inp: CompileInputs) -> tuple[CompiledBundle, dict[str, Any]]:
    """Compile and return the bundle with its full document (hash included)."""
    from ..api import load_and_compile
    from ..emit.bundle import bundle_document
    from .provenance import bundle_provenance
    from .sources import load_sources

    bundle = load_and_compile(
        inp.roots,
        profiles_dir=inp.profiles,
        workspace_roots=inp.workspace_roots,
        codex_home=inp.codex_home,
        session_config_path=inp.session_config,
        tmpdir=inp.tmpdir,
        home=inp.home,
        vouched_mcp_path=inp.vouched_mcp,
    )
    sources = load_sources(inp.roots, inp.profiles)
    plan: dict[str, Any] | None = None
    if inp.plan_layout:
        from ..mounts.api import load_and_plan

        plan = load_and_plan(inp.roots, inp.plan_layout).model_dump(mode="json")
    doc = bundle_document(
        bundle,
        provenance=bundle_provenance(bundle, sources).model_dump(mode="json"),
        mount_plan=plan,
    )
    return bundle, doc


def read_json(path: str, what: str) -> dict[str, Any]:
    """A JSON object from `path`, one clear line on any error."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise InputError(f"{what} does not exist", where=path) from None
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror}", where=path) from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{what} is not valid JSON: {exc}", where=path) from None
    if not isinstance(data, dict):
        raise InputError(f"{what} must be a JSON object", where=path)
    return data


def unwrap(doc: dict[str, Any], where: str) -> dict[str, Any]:
    """The bundle document inside a lock file, or the document itself; its hash verified."""
    from ..emit.bundle import content_hash

    if doc.get("kind") == "profilec-lock":
        inner = doc.get("bundle")
        if not isinstance(inner, dict):
            raise InputError("lock file has no bundle object", where=where)
        if doc.get("content_hash") != inner.get("content_hash"):
            raise InputError("lock file hash does not match its bundle", where=where)
        doc = inner
    if doc.get("schema_version") != 1 or not isinstance(doc.get("compiled"), dict):
        raise InputError("not a profilec bundle (schema_version 1 with `compiled`)", where=where)
    if doc.get("content_hash") != content_hash(doc):
        raise InputError(
            "bundle content hash does not match its content (edited by hand?)", where=where
        )
    return doc


def bundle_from_document(doc: dict[str, Any], where: str) -> CompiledBundle:
    """Validate the `compiled` member back into a CompiledBundle."""
    from pydantic import ValidationError

    from ..roots import validation_message

    try:
        return CompiledBundle.model_validate_json(json.dumps(doc["compiled"]))
    except ValidationError as exc:
        raise InputError(
            f"bundle schema violation: {validation_message(exc)}", where=where
        ) from None


def load_bundle(path: str) -> tuple[CompiledBundle, dict[str, Any]]:
    """A bundle document or lock file from disk, hash-checked."""
    doc = unwrap(read_json(path, "bundle"), path)
    return bundle_from_document(doc, path), doc
