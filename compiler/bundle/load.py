"""Build the full bundle document from the same inputs `compile` takes (edge + pure compile).

Adds to `compile_bundle` what only the edge knows: the policy and manifest lines behind every
entry, the sha256 of each input file (of the bytes compiled: compiler/inputs.py reads each once),
and (with a plan layout) the outer mount plan. Also reads a bundle back (a bundle document or a
lock file) into a CompiledBundle for explain/diff/audit.
"""

from __future__ import annotations

import json
import os
from typing import Any

from pydantic import ValidationError

from ..bundle.document import bundle_document, content_hash
from ..errors import InputError, UsageError
from ..inputs import Inputs
from ..models.compiled import CompiledBundle
from ..pipeline import compile_inputs
from ..readers import validation_message
from .provenance import bundle_provenance
from .sources import sources_of

#: The compile flags and the files they name, each read once (compiler/inputs.py).
CompileInputs = Inputs


def compile_document(inp: Inputs) -> tuple[CompiledBundle, dict[str, Any]]:
    """Compile and return the bundle with its full document (hash included).

    The bundle, the provenance lines and hashes and the mount plan all come from the bytes
    `inp` read once, so the hashes name exactly what was compiled.
    """
    if inp.plan_layout:
        session_dirs_from_plan(inp, inp.plan_layout)
    bundle = compile_inputs(inp)
    sources = sources_of(inp)
    plan: dict[str, Any] | None = None
    if inp.plan_layout:
        from ..mounts.api import plan_inputs

        plan = plan_inputs(inp, inp.plan_layout).model_dump(mode="json")
    doc = bundle_document(
        bundle,
        provenance=bundle_provenance(bundle, sources).model_dump(mode="json"),
        mount_plan=plan,
    )
    return bundle, doc


def session_dirs_from_plan(inp: Inputs, layout_path: str) -> None:
    """The profiles take HOME and TMPDIR from the plan (`mounts.plan.session_dirs`, the one
    source the plan's env and the launch document use too): a flag left out is filled in, one
    that names another directory is refused, so the bundle's profiles and its plan never
    disagree on the directories `~` and `:tmpdir` expand to."""
    from ..mounts.api import layout_of
    from ..mounts.plan import session_dirs

    dirs = session_dirs(layout_of(inp, layout_path))
    for flag, given, planned in (
        ("--home", inp.home, dirs.home),
        ("--tmpdir", inp.tmpdir, dirs.tmpdir),
    ):
        if given is not None and os.path.normpath(given) != planned:
            raise UsageError(
                f"{flag} {given} is not the session's {flag[2:].upper()} under --plan-layout "
                f"{layout_path} ({planned}): pass {flag} {planned} or leave it out"
            )
    if inp.tmpdir is None and not os.path.isdir(dirs.tmpdir):
        raise UsageError(
            f"the session's TMPDIR under --plan-layout {layout_path}, {dirs.tmpdir}, does not "
            "exist: create it (0700, owned by the run-as user; the plan lists it in "
            "`directories`) before compiling"
        )
    inp.home = inp.home or dirs.home
    inp.tmpdir = inp.tmpdir or dirs.tmpdir


def unwrap(doc: dict[str, Any], where: str) -> dict[str, Any]:
    """The bundle document inside a lock file, or the document itself; its hash verified."""
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
    try:
        return CompiledBundle.model_validate_json(json.dumps(doc["compiled"]))
    except ValidationError as exc:
        raise InputError(
            f"bundle schema violation: {validation_message(exc)}", where=where
        ) from None


def load_bundle(path: str, inp: Inputs) -> tuple[CompiledBundle, dict[str, Any]]:
    """A bundle document or lock file read through the run's edge, hash-checked."""
    doc = unwrap(inp.json_object(path, "bundle"), path)
    return bundle_from_document(doc, path), doc
