"""One error hierarchy for profilec; every class carries the exit code the CLI returns.

    ProfilecError                     (exit 2, generic input problem)
    ├── UsageError                    (exit 2) bad flags, unknown format
    ├── InputError                    (exit 2) malformed TOML/JSON, schema violation, bad path
    │   ├── PolicyError               (exit 2) profiles/ invalid (extends cycle, bad mode map)
    │   └── LayoutError               (exit 2) launch/plan layout invalid, traversal, overlap
    ├── TrustError                    (exit 3) daemon-owned file fails the owner/mode check
    ├── RootChainError                (exit 4) loop, over-long or dangling link chain, not-a-dir hop
    ├── UnsafeRootError               (exit 5) a root cannot be protected safely under some mode
    ├── OutputError                   (exit 6) the artifact could not be written (nothing was)
    ├── EnvironmentMissingError       (exit 7) docker engine / codex / bwrap needed but absent
    ├── CanaryMismatchError           (exit 8) canary observation disagrees with the static matrix
    ├── LockDriftError                (exit 9) recompiled bundle differs from the lock; watch drift
    └── SandboxRefusesError           (exit 10) the sandbox would not start a compiled profile

Exit code 1 (EXIT_FOUND) is reserved for "the command ran and found what it looks for":
findings at or above --fail-on, a widening diff, an audit that says FAIL, a failed canary probe,
a catalog disagreement. It is not an exception class because findings are data, not failures
of the tool. Two more codes are the CLI's own, for what is no ProfilecError: EXIT_ABORTED (130,
click's Abort) and EXIT_INTERNAL (70, a bug: one line, never a traceback).
"""

from __future__ import annotations

#: The command ran and found nothing at or above its threshold.
EXIT_CLEAN = 0
#: The command ran and found what it looks for (see above); the run's outcome says so.
EXIT_FOUND = 1
#: The run was aborted (click's Abort: Ctrl-C at a prompt), as a shell reports SIGINT (128 + 2).
EXIT_ABORTED = 130
#: profilec itself failed: an exception that is no ProfilecError (a bug; EX_SOFTWARE).
EXIT_INTERNAL = 70


class ProfilecError(Exception):
    """Base class: a one-line, user-facing message and an exit code."""

    exit_code: int = 2
    kind: str = "error"

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None) -> None:
        self.message = message
        self.where = where
        self.hint = hint
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """The single line the CLI prints: what, where, what to do."""
        parts = [f"profilec: {self.kind}:"]
        if self.where:
            parts.append(f"{self.where}:")
        parts.append(self.message)
        line = " ".join(parts)
        if self.hint:
            line += f" ({self.hint})"
        # One line, whatever a path or message carried.
        return line.replace("\n", "\\n").replace("\r", "\\r")


class UsageError(ProfilecError):
    exit_code = 2
    kind = "usage"


class InputError(ProfilecError):
    exit_code = 2
    kind = "input"


class PolicyError(InputError):
    kind = "policy"


class LayoutError(InputError):
    kind = "layout"


class TrustError(ProfilecError):
    exit_code = 3
    kind = "untrusted"


class RootChainError(ProfilecError):
    exit_code = 4
    kind = "root-chain"


class UnsafeRootError(ProfilecError):
    exit_code = 5
    kind = "unsafe-root"


class OutputError(ProfilecError):
    exit_code = 6
    kind = "output"


class EnvironmentMissingError(ProfilecError):
    exit_code = 7
    kind = "environment"


class CanaryMismatchError(ProfilecError):
    exit_code = 8
    kind = "canary-mismatch"


class LockDriftError(ProfilecError):
    exit_code = 9
    kind = "lock-drift"


class SandboxRefusesError(ProfilecError):
    exit_code = 10
    kind = "sandbox-refuses"


#: The exit-code table the README documents (kept here so a test can compare them).
EXIT_CODES: dict[int, str] = {
    EXIT_CLEAN: "clean: compiled, or check found nothing at or above --fail-on",
    EXIT_FOUND: "check found findings at or above --fail-on",
    2: "usage or input error (bad flag, malformed TOML/JSON, schema violation, bad path, policy)",
    3: "a daemon-owned input failed the trust check (owner, mode, symlink, writable parent)",
    4: "a root's link chain is a loop, too long, dangling, or crosses a non-directory",
    5: "a root cannot be protected safely under some mode",
    6: "the output could not be written (nothing was written)",
    7: "a required engine or tool is missing (docker, codex, bwrap)",
    8: "canary observation disagrees with the static prediction",
    9: "the recompiled bundle differs from the lock file, or `watch` saw the chain go stale",
    10: "the sandbox would refuse to start a compiled profile on this filesystem (nothing written)",
}
