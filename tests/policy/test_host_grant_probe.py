"""From the policy to the real sandbox and back on the host: a command a host-scoped grant lets
through runs held to that host by the proxy, even where the option parse misses (Boundary IV).

The failure: "curl to github.com only" let `curl -xhttp://127.0.0.1:PORT ...` reach a loopback
service. Here the shapes are switched off to stand for any future parse miss; the claim is checked
from the host afterwards (the decoy listener's accept queue, the granted listener's request lines).
"""

from __future__ import annotations

import pytest

from cerveau_tui.policy import Policy
from cerveau_tui.policy import scopes as scopes_mod
from cerveau_tui.sandbox.base import Grant
from cerveau_tui.sandbox.command import CommandSpec
from tests.probes.test_network_grant_probes import BACKENDS, CURL, Net
from tests.probes.test_network_grant_probes import net as net  # noqa: F401 (the fixture)

from .conftest import bash

pytestmark = pytest.mark.skipif(not BACKENDS, reason="no enforcing backend here")


def _held(net: Net) -> tuple[Policy, str]:
    host = f"127.0.0.1:{net.ok.port}"
    policy = Policy(net.ws, "workspace-write", "on-request", [], lambda: False, True)
    v = policy.evaluate("bash", bash(net.ws, f"{CURL} http://{host}/first", network=True))
    policy.grant_session(v.choose(f"command:curl@{host}"))
    return policy, host


def test_a_parse_miss_under_a_host_grant_reaches_only_that_host(
    net: Net, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy, host = _held(net)
    monkeypatch.setattr(scopes_mod, "fits", lambda words: True)  # the parse misses `-x`
    command = f"{CURL} -xhttp://127.0.0.1:{net.quiet.port} http://{host}/through"
    v = policy.evaluate("bash", bash(net.ws, command, network=True))
    assert v.action == "allow" and v.grant == Grant(network=True, hosts=(host,))
    net.run(command, v.grant)
    assert not net.quiet.reached()  # the host's decoy listener saw no connection


def test_a_covered_command_reaches_the_granted_host(net: Net) -> None:
    policy, host = _held(net)
    v = policy.evaluate("bash", bash(net.ws, f"{CURL} http://{host}/covered", network=True))
    assert v.action == "allow"
    net.run(f"{CURL} http://{host}/covered", v.grant)
    assert net.ok.lines == ["GET /covered HTTP/1.1"]


def test_the_decoy_check_can_fail_unconfined(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The control: with no sandbox the same curl's proxy option reaches the decoy, so "not
    # reached" above is the proxy's doing, not a deaf listener.
    from cerveau_tui.sandbox.none import NoSandbox
    from cerveau_tui.testing.listeners import Quiet

    quiet = Quiet()
    NoSandbox().run(
        CommandSpec(
            f"{CURL} -xhttp://127.0.0.1:{quiet.port} http://127.0.0.1:9/x",
            workspace=tmp_path,
            timeout=30,
        )
    )
    assert quiet.reached()
    quiet.sock.close()
