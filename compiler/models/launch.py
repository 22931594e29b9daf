"""The launch document's models (schemas/launch.schema.json) and the adapters catalog it is
built from (`profiles/adapters.toml`, schemas/adapters-catalog.schema.json).

The builders in compiler/emit/launch.py read the catalog through `AdapterCatalog` and write plain
dicts; tests/unit/test_schemas.py validates what they write against both the launch models and
the generated schema.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints
from pydantic.json_schema import SkipJsonSchema

from .base import AbsPath, Frozen

#: A launch method: the catalog (compiler/emit/launch.py) names one per adapter build.
Method = Literal[
    "c-overrides",
    "codex-home",
    "codex-config",
    "codex-home+initial-mode",
    # The same, with the adapter run as a non-root user (required where, as root, a model
    # command can unmount the sandbox's deny mask).
    "c-overrides+non-root",
    "codex-home+non-root",
    "codex-config+non-root",
    "codex-home+initial-mode+non-root",
]

_Strings = dict[str, str]


class LaunchFile(Frozen):
    """A file the launcher writes before the launch."""

    path: str
    mode: Annotated[str, StringConstraints(pattern="^0[0-7]{3}$")]
    content: str
    if_exists: Literal["keep"] | SkipJsonSchema[None] = Field(
        default=None,
        description="`keep`: create the file only when the path is missing (O_CREAT|O_EXCL, "
        "never through a link) and leave an existing regular file as it is (Codex may hold "
        "the writer's lock right now); absent: write it (atomically) every launch.",
    )


#: An argv element is either literal or one `${NAME}` token naming a launcher_supplies key.
_COMMAND = (
    "The argv that starts it: `args` after the program; each `${NAME}` element is the value "
    "launcher_supplies[NAME] describes."
)
_MODE_IDS = (
    "Mode name -> the ACP session mode id of its profile (`permission-profile:<profile id>`)."
)


class Requirements(Frozen):
    """The managed requirements the session must run under."""

    path: Literal["/etc/codex/requirements.toml"]
    digest: Annotated[str, StringConstraints(pattern="^sha256:[0-9a-f]{64}$")] = Field(
        description="sha256 of the text `profilec compile --format requirements` prints (with "
        "the same flags)."
    )
    install_argv: Annotated[
        list[str],
        Field(
            min_length=6,
            description="Absolute: this interpreter, `-P -m profilec requirements install` and "
            "the compile's flags; run it as root before the session starts.",
            json_schema_extra={"prefixItems": [{"type": "string", "pattern": "^/"}]},
        ),
    ]
    install_env: _Strings
    statement: str


class ModeApproval(Frozen):
    """One mode's approvals: policy and reviewer, whether they were seen holding, what to do."""

    approval_policy: str | SkipJsonSchema[None] = None
    approvals_reviewer: str | SkipJsonSchema[None] = None
    holds: bool | None
    statement: str


class Approvals(Frozen):
    """Per mode: the approval policy and reviewer from profiles/modes.toml, whether the
    approvals e2e saw it hold (null: not measured), and what a launcher must do."""

    measured: bool
    evidence: str | None
    modes: dict[str, ModeApproval]


class ModeMethod(Frozen):
    """One ACP request that switches a session's mode, and where it carries the mode id."""

    method: Literal["session/set_mode", "session/set_config_option"]
    match: dict[str, str] = Field(
        description="Params that make a request of `method` a mode switch (empty: every one)."
    )
    id_param: Literal["modeId", "value"] = Field(
        description="The param holding the mode id: forward the request only when it is one "
        "of forward_mode_ids."
    )


class AdapterLaunch(Frozen):
    """One ACP adapter build: the launch method that holds for it, or why none does."""

    package: str
    version: str
    codex_version: str
    codex_source: Literal["CODEX_PATH", "bundled", "embedded"]
    holds: bool
    launch_method: Method | None
    reason: str
    evidence: str
    command: list[str] = Field(description=_COMMAND + " Empty when nothing holds.")
    env: _Strings
    args: list[str]
    files: list[LaunchFile]
    mode_ids: dict[str, str] = Field(description=_MODE_IDS)
    blocked_modes: list[str] = Field(
        description="Built-in modes a launcher must never offer: without the managed "
        "requirements each drops the credential deny."
    )
    enforced_by: Literal["managed-requirements", "launcher"] = Field(
        description="What stops blocked_modes: `managed-requirements` (measured on this Codex: "
        "such a mode cannot run a turn once `requirements` is installed) or only the launcher."
    )
    forward_mode_ids: list[str] = Field(
        description="The allow-list: the only mode ids a launcher forwards, by any of "
        "mode_methods (empty: forward none)."
    )
    mode_methods: list[ModeMethod] = Field(
        description="Every ACP request that switches the session's mode (codex-acp 2.6.0 takes "
        'session/set_mode and session/set_config_option with configId "mode"): refuse one '
        "whose id is not in forward_mode_ids, by every method."
    )
    requirements: Requirements
    launcher_supplies: _Strings = Field(
        description="Values only the launcher knows (a binary's path, HOME or TMPDIR when not "
        "compiled in), with what each must be: set it in the env, or substitute it for its "
        "`${NAME}` token in command."
    )
    run_as: str
    non_root_required: bool = Field(
        description="The matrix saw this build keep the deny only when not root; every holding "
        "entry runs as run_as (never root) anyway."
    )
    statement: str
    approvals: Approvals


class CodexModeSelect(Frozen):
    """How to select one mode's profile on plain Codex."""

    profile_id: str
    select: dict[str, Any] | list[Any]


class CodexLaunch(Frozen):
    """Plain `codex app-server` or `codex exec`: argv is [codex, *args]."""

    launcher: Literal["codex app-server", "codex exec"]
    codex_version: str
    command: Annotated[list[str], Field(min_length=2, description=_COMMAND)]
    args: Annotated[list[str], Field(min_length=1)]
    env: _Strings
    cwd: str | None
    files: list[LaunchFile]
    mode_ids: dict[str, str] = Field(description=_MODE_IDS)
    requirements: Requirements
    launcher_supplies: _Strings
    run_as: str
    non_root_required: bool
    initialize: dict[str, Any] | SkipJsonSchema[None] = None
    thread_start: dict[str, Any] | SkipJsonSchema[None] = None
    modes: dict[str, CodexModeSelect]
    never_send: list[str]
    statement: str


class WatchLaunch(Frozen):
    """Run `profilec watch` beside the session; end the session on drift."""

    argv: Annotated[
        list[str],
        Field(
            min_length=6,
            description="Absolute: this interpreter, `-P -m profilec watch` (-P: nothing "
            "is imported from the working directory) and every compile input that decides what "
            "is watched.",
            json_schema_extra={"prefixItems": [{"type": "string", "pattern": "^/"}]},
        ),
    ]
    env: _Strings = Field(
        description="Added to the watcher's environment (PYTHONPATH when profilec runs from a "
        "checkout)."
    )
    launcher_adds: str
    start: str
    on_drift: str
    on_other_exit: str
    stop: str
    drift_exit_code: Literal[9]
    event_schema: Literal["watch-event.schema.json"]


class NonRootPrerequisite(Frozen):
    """A path (from this compile) and what must hold for it before a non-root session."""

    path: str
    need: str


class TrustedParentLaunch(Frozen):
    """The uid the trusted parent runs as inside the outer plan (never root) and the vault
    directories the plan binds read-write for its saves."""

    uid: Annotated[int, Field(ge=1)]
    gid: Annotated[int, Field(ge=0)]
    never_root: Literal[True]
    run_as: str
    vaults: list[AbsPath]
    non_root_prerequisites: list[NonRootPrerequisite] = Field(
        description="Paths (from this compile) and what must hold for each before a session "
        "runs as the non-root run_as user."
    )
    statement: str


class LaunchDocument(Frozen):
    """`compile --format launch`: per ACP adapter build, the environment, arguments and files a
    launcher sets for the launch method the end-to-end matrix shows holding, the modes it must
    not forward, or a statement that no method holds."""

    schema_version: Literal[1]
    default_profile_id: str
    cwd: AbsPath | None = Field(
        description="The canonical session cwd to pass (-C, ACP session cwd); null when no "
        "workspace root was given."
    )
    workspace_roots: list[AbsPath] = Field(
        description="Canonical workspace roots (the first is the cwd). The only session cwds "
        "a launcher passes (ACP session/new, load, resume; thread/start): an adapter marks the "
        "session cwd a trusted project, so a `.codex/config.toml` the model planted in a "
        "subdirectory would load above profilec's config in a session opened there."
    )
    adapters: list[AdapterLaunch]
    codex: list[CodexLaunch] = Field(
        description="Plain `codex app-server` and `codex exec`, no adapter: argv is "
        "[codex, *args]; per mode how to select it."
    )
    watch: WatchLaunch
    trusted_parent: TrustedParentLaunch


# ---------------------------------------------------------------------------------------------
# The adapters catalog (profiles/adapters.toml, schemas/adapters-catalog.schema.json)

NpmName = Annotated[str, StringConstraints(pattern=r"^@[a-z0-9-]+/[a-z0-9-]+$")]
Version = Annotated[str, StringConstraints(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+$|^embedded$")]
ModeId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9:-]{0,80}$")]
OneLine = Annotated[str, StringConstraints(min_length=1, pattern=r"^[^\n\r]+$")]


class AdapterEntry(Frozen):
    """One adapter build and the launch method the matrix shows holding (or none)."""

    package: NpmName
    version: Version
    codex_version: Version
    #: How the Codex core is chosen: the TS adapter's CODEX_PATH, its bundled @openai/codex, or
    #: the core compiled into the adapter.
    codex_source: Literal["CODEX_PATH", "bundled", "embedded"]
    #: The chosen holding method, or "none" when no method holds (TOML has no null).
    launch_method: Method | Literal["none"]
    holding_methods: list[Method] = Field(default_factory=list)
    blocked_modes: list[ModeId] = Field(default_factory=list)
    reason: OneLine
    evidence: OneLine
    #: Modes whose approval behaviour (profiles/modes.toml) the approvals e2e observed holding,
    #: or not, under launch_method with profilec's config alone. Both empty: not measured.
    approval_modes_held: list[ModeId] = Field(default_factory=list)
    approval_modes_lost: list[ModeId] = Field(default_factory=list)
    approval_evidence: OneLine | None = None

    @property
    def method(self) -> Method | None:
        """The chosen method, None when no method holds."""
        return None if self.launch_method == "none" else self.launch_method


class AdapterCatalog(Frozen):
    """`profiles/adapters.toml`."""

    schema_version: Literal[1]
    adapters: Annotated[list[AdapterEntry], Field(min_length=1)]
