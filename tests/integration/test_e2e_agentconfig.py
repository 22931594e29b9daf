"""Real `codex app-server`: an agent's session config cannot run programs or redirect the token.

The agent config adds an MCP server whose command copies the credential, a `notify` program and
a `chatgpt_base_url` pointing at a loopback listener (compiler/e2e/agentconfig.py). Through
profilec (the session config it emits) none of them acts and the launcher-vouched MCP server
runs; the control passes the agent's raw config and every probe fires, so each can fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from profilec.compat_matrix import matrix_json
from profilec.e2e.agentconfig import AgentConfigOutcome, run_agent_config
from profilec.models.compat import CompatibilityMatrix

pytestmark = [pytest.mark.e2e, pytest.mark.codex]

AGENT_EVENTS = ("agent-config:mcp-server", "agent-config:notify", "agent-config:chatgpt_base_url")


@pytest.fixture(scope="module")
def fixed(codex_bin: Path) -> AgentConfigOutcome:
    return run_agent_config(codex_bin, strip=True)


@pytest.fixture(scope="module")
def control(codex_bin: Path) -> AgentConfigOutcome:
    return run_agent_config(codex_bin, strip=False)


@pytest.mark.parametrize("event", AGENT_EVENTS)
def test_the_agents_programs_and_url_never_act_through_profilec(
    fixed: AgentConfigOutcome, event: str
) -> None:
    assert fixed.results[event][0] == "held", fixed.results


def test_the_launchers_url_got_the_token_so_the_url_probe_was_live(
    fixed: AgentConfigOutcome,
) -> None:
    assert "the launcher's got" in fixed.results["agent-config:chatgpt_base_url"][1]


def test_the_vouched_server_runs_and_the_probe_turn_holds(fixed: AgentConfigOutcome) -> None:
    assert fixed.results["vouched-mcp"][0] == "held", fixed.results
    assert fixed.results["agent-config:probe"][0] == "held", fixed.results


@pytest.mark.parametrize("event", AGENT_EVENTS)
def test_control_raw_agent_config_fires_every_probe(
    control: AgentConfigOutcome, event: str
) -> None:
    assert control.results[event][0] == "lost", control.results


def test_control_the_agents_mcp_server_copied_the_marker(control: AgentConfigOutcome) -> None:
    assert "copied <marker>" in control.results["agent-config:mcp-server"][1]
    assert (
        "with the credential's bearer token" in control.results["agent-config:chatgpt_base_url"][1]
    )


def test_rows_are_marker_free_and_valid(
    fixed: AgentConfigOutcome, control: AgentConfigOutcome
) -> None:
    text = matrix_json(CompatibilityMatrix(rows=[*fixed.rows(), *control.rows()]))
    assert "PROFILEC-E2E-SECRET" not in text
    assert '"vouched-mcp"' in text


def test_ts_adapter_codex_config_route(codex_bin: Path) -> None:
    """@agentclientprotocol/codex-acp passes CODEX_CONFIG as the thread config: through profilec
    the agent's MCP server and notify never run and the vouched server does; raw, both run."""
    from profilec.e2e.adapters import ts_adapter
    from profilec.e2e.agentconfig import run_ts_agent_config
    from tests.integration.conftest import missing

    ad = ts_adapter()
    if ad.missing is not None:
        missing(f"{ad.package} {ad.version}: {ad.missing} (run .ci/tools.d/acp.sh)")
    fixed = run_ts_agent_config(strip=True)
    assert fixed.results["agent-config:mcp-server"][0] == "held", fixed.results
    assert fixed.results["agent-config:notify"][0] == "held", fixed.results
    assert fixed.results["vouched-mcp"][0] == "held", fixed.results
    control = run_ts_agent_config(strip=False)
    assert "copied <marker>" in control.results["agent-config:mcp-server"][1], control.results
    assert control.results["agent-config:notify"][0] == "lost", control.results
