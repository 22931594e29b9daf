"""The Codex wing: everything profilec knows about how Codex reads and enforces a profile.

`vocabulary` (specials, built-ins, keys, versions), `resolve` (profile resolution, pure),
`globs` (the deny-glob language), `fsview` (the filesystem at sandbox start: the only I/O),
`enforced` + `enforce` (what the sandbox mounts and what a command gets) and `refusals` (the
start-up failures, one function per class). Facts measured on the real binaries; see
docs/codex-semantics.md.
"""
