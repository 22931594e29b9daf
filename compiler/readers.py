"""Reading daemon-owned TOML: the trust check on the open file, the parse, the manifest model.

`read_trusted_bytes` checks owner, mode and every directory above before it reads;
`parse_toml` and `validation_message` turn a parse or pydantic failure into one line naming the
file; `load_manifest` validates the roots manifest. Every input profilec trusts is read here.
"""

from __future__ import annotations

import difflib
import os
import shlex
import stat
import tomllib
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from .errors import InputError, TrustError
from .models.roots import RootsManifest
from .paths import check_absolute, parent


def _check_dir_chain(path: str, *, where: str) -> None:
    """Every ancestor directory must be owned by root/us and not writable by others."""
    uid = os.getuid()
    real = os.path.realpath(parent(path))
    cur = real
    while True:
        try:
            st = os.lstat(cur)
        except OSError as exc:
            raise TrustError(
                f"cannot inspect parent directory {cur}: {exc.strerror}", where=where
            ) from None
        sticky = bool(st.st_mode & stat.S_ISVTX)
        shown = shlex.quote(cur)
        if st.st_uid not in (0, uid):
            raise TrustError(
                f"parent directory {cur} is owned by uid {st.st_uid}, not root or uid {uid}",
                where=where,
                hint=f"`chown root {shown}` (or `chown {uid} {shown}`), or keep the file in a "
                "directory only root or you own",
            )
        if not sticky and st.st_mode & stat.S_IWOTH:
            raise TrustError(
                f"parent directory {cur} is world-writable",
                where=where,
                hint=f"`chmod o-w {shown}`, or keep the file in a directory only its owner writes",
            )
        if not sticky and st.st_mode & stat.S_IWGRP and st.st_gid != 0:
            raise TrustError(
                f"parent directory {cur} is writable by group {st.st_gid}",
                where=where,
                hint=f"`chmod g-w {shown}` (or `chgrp root {shown}`)",
            )
        if cur == "/":
            return
        cur = parent(cur)


def read_trusted_bytes(path: str) -> bytes:
    """Read a daemon-owned file after checking it cannot have been planted or edited by others.

    The file must be a regular file reached without following a final symlink, owned by root or
    the invoking uid, not group- or world-writable, and no parent directory writable by others.
    Checks run on the open descriptor, so the file read is the file checked.
    """
    where = path
    abspath = os.path.abspath(path)
    try:
        st_link = os.lstat(abspath)
    except FileNotFoundError:
        raise InputError("file does not exist", where=where) from None
    except OSError as exc:
        raise TrustError(f"cannot inspect: {exc.strerror}", where=where) from None
    shown = shlex.quote(path)
    if stat.S_ISLNK(st_link.st_mode):
        raise TrustError(
            "is a symlink; a daemon-owned file must be a regular file",
            where=where,
            hint=f"name the file itself (`readlink -f {shown}` prints it)",
        )
    if not stat.S_ISREG(st_link.st_mode):
        raise TrustError("is not a regular file", where=where, hint="name a regular file")
    _check_dir_chain(abspath, where=where)
    try:
        fd = os.open(abspath, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise TrustError(f"cannot open: {exc.strerror}", where=where) from None
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (st_link.st_dev, st_link.st_ino):
            raise TrustError("changed while being checked", where=where)
        if st.st_uid not in (0, os.getuid()):
            raise TrustError(
                f"owned by uid {st.st_uid}, not root or uid {os.getuid()}",
                where=where,
                hint=f"`chown root {shown}` (or `chown {os.getuid()} {shown}`)",
            )
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise TrustError(
                f"mode {stat.S_IMODE(st.st_mode):04o} is group- or world-writable",
                where=where,
                hint=f"`chmod go-w {shown}`",
            )
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def parse_toml(data: bytes, *, where: str) -> dict[str, Any]:
    """Parse TOML bytes; one clear line on any error."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 at byte {exc.start}", where=where) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"malformed TOML: {exc}", where=where) from None


def validation_message(exc: ValidationError, model: type[BaseModel] | None = None) -> str:
    """The first pydantic error as `key.path: message`, plus a count of the rest. An unknown
    key comes first (a misspelled `[[rots]]` is the cause of the `roots` it leaves missing),
    with the closest key `model` (the model validated) takes there."""
    errors = sorted(exc.errors(), key=lambda e: e.get("type") != "extra_forbidden")
    first = errors[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
    msg = f"{loc}: {first['msg']}"
    if first.get("type") == "extra_forbidden":
        msg = f"unknown key `{loc}`"
        close = difflib.get_close_matches(
            str(first["loc"][-1]), _keys_at(model, first["loc"][:-1]), n=1
        )
        if close:
            msg += f" (did you mean `{'.'.join([*map(str, first['loc'][:-1]), close[0]])}`?)"
    if len(errors) > 1:
        msg += f" (and {len(errors) - 1} more)"
    return msg


def _keys_at(model: Any, loc: tuple[int | str, ...]) -> list[str]:
    """The keys the model at `loc` inside `model` takes (its fields and their aliases), or
    none when `loc` leads to no model."""
    current = model
    for part in (*loc, None):
        current = _model_in(current)
        if current is None:
            return []
        if part is None:
            break
        if isinstance(part, int):
            continue
        fields = {**current.model_fields, **_aliases(current)}
        if part not in fields:
            return []
        current = fields[part].annotation
    return sorted({*current.model_fields, *_aliases(current)})


def _aliases(model: type[BaseModel]) -> dict[str, Any]:
    return {f.alias: f for f in model.model_fields.values() if f.alias}


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model an annotation holds: itself, or inside a list, tuple, dict value or union."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (list, tuple, dict, typing.Union, types.UnionType):
        for arg in reversed(typing.get_args(annotation)):
            found = _model_in(arg)
            if found is not None:
                return found
    return None


def _validate_manifest(data: dict[str, Any], path: str) -> RootsManifest:
    try:
        return RootsManifest.model_validate(data)
    except ValidationError as exc:
        raise InputError(
            f"schema violation: {validation_message(exc, RootsManifest)}", where=path
        ) from None


def load_manifest(path: str, *, data: bytes) -> RootsManifest:
    """Parse and validate the roots manifest: `data` is the manifest as compiler/inputs.py read
    it (trust-checked there: Inputs.manifest)."""
    doc = parse_toml(data, where=path)
    manifest = _validate_manifest(doc, path)
    seen: set[str] = set()
    for i, root in enumerate(manifest.roots):
        where = f"{path}: roots[{i}]"
        if root.id in seen:
            raise InputError(f"duplicate root id {root.id!r}", where=where)
        seen.add(root.id)
        check_absolute(root.path, what=f"root {root.id!r} path", error=InputError)
    return manifest
