"""Build the full bundle document from the same inputs `compile` takes (edge + pure compile).

Adds to `compile_bundle` what only the edge knows: the policy and manifest lines behind every
entry, the sha256 of each input file (of the bytes compiled: compiler/inputs.py reads each once),
and (with a plan layout) the outer mount plan. Also reads a bundle back (a bundle document or a
lock file) into a CompiledBundle for explain/diff/audit.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from ..bundle.document import bundle_document, content_hash
from ..compiled import Compiled, compile_step
from ..errors import InputError
from ..flags import CompileFlags
from ..inputs import Inputs
from ..models.compiled import CompiledBundle
from ..readers import validation_message
from .provenance import bundle_provenance
from .sources import sources_of


#: The compile flags and the files they name, each read once (compiler/inputs.py): a test's
#: spelling, `CompileInputs(roots=..., workspace_roots=..., ...)`, the flags as text.
def CompileInputs(**flags: Any) -> Inputs:
    """The read edge over compile flags given as text (`CompileFlags.from_text`)."""
    return Inputs.of(CompileFlags.from_text(**flags))


def document_of(compiled: Compiled) -> dict[str, Any]:
    """The full bundle document of a compile (hash included): the bundle, the provenance lines
    and hashes and the mount plan all come from the bytes its edge read once, so the hashes
    name exactly what was compiled."""
    inp = compiled.inputs
    plan: dict[str, Any] | None = None
    if compiled.layout is not None:
        from ..mounts.api import plan_inputs

        plan = plan_inputs(inp, compiled.layout).model_dump(mode="json")
    return bundle_document(
        compiled.bundle,
        provenance=bundle_provenance(compiled.bundle, sources_of(inp)).model_dump(mode="json"),
        mount_plan=plan,
    )


def compile_document(inp: Inputs) -> tuple[CompiledBundle, dict[str, Any]]:
    """Compile and return the bundle with its full document (`compile_step`, `document_of`)."""
    compiled = compile_step(inp)
    return compiled.bundle, document_of(compiled)


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
