"""The provider config of `profilec run` (schemas/provider-config.schema.json): the model and
model provider the launcher chooses, a daemon-owned TOML passed to the adapter as the
`model`, `model_provider` and `model_providers` keys of `CODEX_CONFIG` (compiler/run/session.py
reads it). Nothing else: every other key is refused, so the file cannot widen a profile.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints, model_validator

from .base import Frozen

#: A provider id: a bare TOML key (Codex splits `-c` keys on `.`).
_Id = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
_Key = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")]
_OneLine = Annotated[str, StringConstraints(pattern=r"^[^\n\r\x00]*$", min_length=1)]
#: One value of a provider table, as Codex reads it: text, a number, a switch, or a table of
#: text (`http_headers`, `query_params`, `env_http_headers`).
ProviderValue = str | int | bool | dict[str, str]
#: The providers Codex knows without a `model_providers` entry.
BUILT_IN_PROVIDERS = ("openai", "oss", "ollama", "lmstudio")


class ProviderConfig(Frozen):
    """The launcher's model and model provider for `profilec run --provider-config`: never
    from the ACP client or the agent's session config."""

    model: _OneLine | None = Field(default=None, description="The model to use.")
    model_provider: _Id | None = Field(
        default=None,
        description="The provider id: a key of `model_providers`, or one Codex knows "
        f"({', '.join(BUILT_IN_PROVIDERS)}).",
    )
    model_providers: dict[_Id, dict[_Key, ProviderValue]] = Field(
        default_factory=dict,
        description="Provider tables (Codex's `model_providers.<id>`: name, base_url, "
        "wire_api, env_key, ...).",
    )

    @model_validator(mode="after")
    def _provider_known(self) -> ProviderConfig:
        chosen = self.model_provider
        known = (*self.model_providers, *BUILT_IN_PROVIDERS)
        if chosen is not None and chosen not in known:
            raise ValueError(
                f"model_provider {chosen!r} is neither a model_providers key nor one of "
                f"{', '.join(BUILT_IN_PROVIDERS)}"
            )
        return self

    def codex_config(self) -> dict[str, object]:
        """The keys as the adapter's `CODEX_CONFIG` JSON carries them (unset keys left out)."""
        return self.model_dump(mode="json", exclude_defaults=True)
