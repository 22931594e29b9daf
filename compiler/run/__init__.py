"""`profilec run`: the launcher's whole path as one supervised command (docs/run.md).

Layered top first: `session` (the check, the boundary, the adapter, the relay and supervision
of one session) > `boundary | relay | supervise` (the outer sandbox argv and environment; the
ACP relay's policy; the process tree and the session's end). The record flowing down is
`compile_step`'s `Compiled`.
"""
