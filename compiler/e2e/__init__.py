"""End-to-end sessions: real `codex app-server` and ACP adapters driven by a scripted local model.

Modules: `jsonrpc` (newline-delimited JSON-RPC 2.0 client over a subprocess's stdio),
`model_server` (a loopback Responses-API server that scripts one probe tool call per turn),
`appserver` (drives `codex app-server` through new, resumed and legacy-sandboxPolicy turns),
`matrix` (the compatibility-matrix data model and its JSON / markdown renderers), and the ACP
half (`acp`, `adapters`, `run`).
"""
