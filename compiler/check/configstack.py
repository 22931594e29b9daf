"""The Codex config stack a check reads: config.toml, `-c` overrides and the session config.

Layers are read as Codex reads them and deep-merged in Codex's order (config.toml, then `-c`,
then the per-thread session config). `-c` values follow codex-rs/utils/cli config_override.rs:
split on the first `=`, trim both halves, split the key on `.` with no quoting, and parse the
value as TOML via `_x_ = {raw}`, falling back to the raw string with surrounding quotes
stripped. An override file holds one value per line, split on LF only (never splitlines()).
Every loader here parses text its caller read through the run's edge (compiler/inputs.py
`Inputs.text`); none opens a file.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..codex.resolve import merge
from ..errors import InputError
from ..session import parse_session_bytes

Origin = Literal["config-toml", "cli-override", "session"]


@dataclass(frozen=True, slots=True)
class Layer:
    """One config layer: where it came from, its parsed table and its text (for line numbers)."""

    name: str
    origin: Origin
    data: Mapping[str, Any]
    file: str | None = None
    text: str | None = None

    def line_of(self, *needles: str) -> int | None:
        """The 1-based line first holding a needle (tried in order, LF-split), if any."""
        if self.text is None:
            return None
        lines = self.text.split("\n")
        for needle in needles:
            if not needle:
                continue
            for n, line in enumerate(lines, start=1):
                if needle in line:
                    return n
        return None


@dataclass(frozen=True, slots=True)
class ConfigStack:
    """Layers in Codex's precedence order (lowest first)."""

    layers: tuple[Layer, ...]

    def merged(self) -> dict[str, Any]:
        """The effective config: every layer deep-merged over the ones below it."""
        out: dict[str, Any] = {}
        for layer in self.layers:
            out = merge(out, layer.data)
        return out

    def profiles_defined_in(self, *origins: Origin) -> set[str]:
        """Profile ids some layer of the given origins defines under `permissions`."""
        found: set[str] = set()
        for layer in self.layers:
            perms = layer.data.get("permissions")
            if layer.origin in origins and isinstance(perms, Mapping):
                found.update(str(k) for k in perms)
        return found

    def layer_defining(self, profile_id: str) -> Layer | None:
        """The highest layer that defines `profile_id` (for locations)."""
        for layer in reversed(self.layers):
            perms = layer.data.get("permissions")
            if isinstance(perms, Mapping) and profile_id in perms:
                return layer
        return None


def override_value(raw: str) -> Any:
    """Parse one `-c` value the way Codex does: TOML, else the raw string unquoted."""
    try:
        return tomllib.loads(f"_x_ = {raw}")["_x_"]
    except tomllib.TOMLDecodeError:
        return raw.strip().strip("\"'")
    except RecursionError:
        raise InputError("an override value nests too deep to read") from None


def set_dotted(table: dict[str, Any], key: str, value: Any) -> None:
    """Set `a.b.c = value`, creating (or replacing non-table) intermediate tables."""
    parts = key.split(".")
    node = table
    for part in parts[:-1]:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            node[part] = nxt
        node = nxt
    node[parts[-1]] = value


def parse_override_lines(text: str, *, where: str) -> dict[str, Any]:
    """Turn `-c` values, one per LF-separated line, into the config table they form."""
    config: dict[str, Any] = {}
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep:
            raise InputError(f"line {n}: invalid override (missing '=')", where=where)
        if not key or any(not p for p in key.split(".")):
            raise InputError(f"line {n}: empty key segment in override {key!r}", where=where)
        set_dotted(config, key, override_value(value.strip()))
    return config


def load_config_toml(path: str, text: str, *, name: str = "config.toml") -> Layer:
    """A Codex config.toml handed in for review (or found in CODEX_HOME) as its text."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"malformed TOML: {exc}", where=path) from None
    except RecursionError:
        raise InputError("config nests too deep to read", where=path) from None
    return Layer(name, "config-toml", data, path, text)


def load_overrides(path: str, text: str) -> Layer:
    """An override list: one `-c` value per line."""
    return Layer("-c overrides", "cli-override", parse_override_lines(text, where=path), path, text)


def _expand_dotted(obj: Mapping[str, Any]) -> dict[str, Any]:
    """Thread config keys may be dotted (`permissions.p.filesystem`); Codex nests them."""
    out: dict[str, Any] = {}
    for k in sorted(obj):
        v = obj[k]
        value = _expand_dotted(v) if isinstance(v, Mapping) else v
        if "." in k:
            set_dotted(out, k, value)
        elif isinstance(value, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = merge(out[k], value)
        else:
            out[k] = value
    return out


def json_object_of(path: str, what: str, text: str) -> dict[str, Any]:
    """The JSON object `text` (read from `path`) holds, one clear line on any error."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{what} is not valid JSON: {exc}", where=path) from None
    except RecursionError:
        raise InputError(f"{what} nests too deep to read", where=path) from None
    if not isinstance(data, dict):
        raise InputError(f"{what} must be a JSON object", where=path)
    return data


def load_session(path: str, raw: bytes) -> tuple[Layer, dict[str, Any]]:
    """The agent session config (CODEX_CONFIG JSON) as a layer, and the raw object.

    Untrusted: `raw` is the file as compiler/inputs.py read it (bounded), parsed with
    profilec.session's bounds (size, depth, key count; exit 2 past them).
    """
    data = parse_session_bytes(raw, where=path)
    text = raw.decode("utf-8")
    return Layer("session config", "session", _expand_dotted(data), path, text), data


def session_layer(data: Mapping[str, Any], *, file: str | None, text: str | None) -> Layer:
    """A session layer from an already-read object."""
    return Layer("session config", "session", _expand_dotted(data), file, text)


def load_acp_json(path: str, text: str) -> tuple[Layer, dict[str, str]]:
    """The acp-json launch document: its overrides (sent as session config) and mode map."""
    data = json_object_of(path, "acp-json document", text)
    lines = data.get("configOverrides")
    modes = data.get("modeProfiles")
    if not isinstance(lines, list) or not all(isinstance(s, str) for s in lines):
        raise InputError("configOverrides must be a list of strings", where=path)
    if not isinstance(modes, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in modes.items()
    ):
        raise InputError("modeProfiles must map mode names to profile ids", where=path)
    for s in lines:
        if "\n" in s:
            raise InputError("a configOverrides entry holds a line feed", where=path)
    table = parse_override_lines("\n".join(lines), where=path)
    return Layer("acp-json", "session", table, path, text), dict(modes)


def load_mode_map(path: str, text: str) -> dict[str, str]:
    """`--mode-map`: JSON `{mode: id}` or acp-json, or TOML in profiles/modes.toml shape."""
    data: Any
    if path.endswith(".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"mode map is not valid JSON: {exc}", where=path) from None
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"malformed TOML: {exc}", where=path) from None
    if isinstance(data, dict) and isinstance(data.get("modeProfiles"), dict):
        data = data["modeProfiles"]
    elif isinstance(data, dict) and isinstance(data.get("modes"), dict):
        data = {
            m: e.get("profile_id") if isinstance(e, dict) else e for m, e in data["modes"].items()
        }
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise InputError("mode map must map mode names to profile ids", where=path)
    return dict(data)
