"""Boundary IV, a network grant is a network fact: a command granted one host reaches that host
through the harness's proxy and nothing else, whatever options it passes and whether or not it
uses the proxy at all. Real runners on both backends (and as an ordinary user); every claim is
checked from the HOST afterwards: the granted listener's request lines, an unserved listener's
accept queue, a UDP socket's receive queue. Never from what the command printed."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cerveau_tui.sandbox.base import Grant
from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner, find_bwrap
from cerveau_tui.sandbox.command import CommandSpec
from cerveau_tui.sandbox.landlock import LandlockRunner, landlock_abi
from cerveau_tui.sandbox.netproxy import NetProxy
from cerveau_tui.sandbox.none import NoSandbox
from cerveau_tui.testing.listeners import Datagrams, Listener, Quiet

from .conftest import ordinary_user

BACKENDS = [
    *(["bubblewrap"] if find_bwrap() else []),
    *(["landlock"] if landlock_abi() >= 4 else []),
]
PY = "/usr/bin/python3"
CURL = "curl -sS -m 5"


class Names:
    """The proxy's resolver in these probes: names point at host listeners, and each lookup is
    recorded (the proof that the proxy, not the command, resolved it)."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.asked: list[str] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        if host not in self.table:
            raise OSError(f"{host}: no such name")
        return self.table[host]


class Net:
    def __init__(self, backend: str, ws: Path) -> None:
        self.ws = ws
        self.ok, self.quiet, self.udp = Listener(), Quiet(), Datagrams()
        self.names = Names({"rebind.test": ["127.0.0.1"], "localhost": ["127.0.0.1"]})
        proxy = NetProxy(resolve=self.names)
        self.runner = (
            BubblewrapRunner(proxy=proxy)
            if backend == "bubblewrap"
            else LandlockRunner(proxy=proxy)
        )
        self.granted = Grant(network=True, hosts=(f"127.0.0.1:{self.ok.port}",))

    def run(self, command: str, grant: Grant | None = None):  # type: ignore[no-untyped-def]
        return self.runner.run(
            CommandSpec(command, workspace=self.ws, grant=grant or self.granted, timeout=30)
        )

    def close(self) -> None:
        self.runner.kill_background()
        self.ok.close()
        for s in (self.quiet.sock, self.udp.sock):
            s.close()


@pytest.fixture(params=BACKENDS)
def net(request: pytest.FixtureRequest) -> Iterator[Net]:
    root = Path(tempfile.mkdtemp(prefix="cerveau-net-", dir="/var/tmp"))
    (root / "ws").mkdir()
    n = Net(request.param, root / "ws")
    yield n
    n.close()
    shutil.rmtree(root, ignore_errors=True)


def test_curl_reaches_the_granted_host_through_the_proxy(net: Net) -> None:
    a = net.run(f"{CURL} http://127.0.0.1:{net.ok.port}/granted")
    b = net.run(f"{CURL} -p http://127.0.0.1:{net.ok.port}/tunnelled")  # CONNECT
    assert net.ok.lines == ["GET /granted HTTP/1.1", "GET /tunnelled HTTP/1.1"], (a, b)


def test_curl_to_another_port_is_refused_and_the_result_says_so(net: Net) -> None:
    res = net.run(f"{CURL} http://127.0.0.1:{net.quiet.port}/other")
    assert not net.quiet.reached()
    assert f"network: refused 127.0.0.1:{net.quiet.port} (not granted)" in res.notes


def test_an_approved_any_host_reaches_the_address_it_named_and_no_other_of_the_host(
    net: Net,
) -> None:
    # The grant a yes gives to `curl http://127.0.0.1:PORT/` (policy: any_host_plus_named).
    both = Grant(network=True, hosts=("*", f"127.0.0.1:{net.ok.port}"))
    net.run(f"{CURL} http://127.0.0.1:{net.ok.port}/named", both)
    res = net.run(f"{CURL} http://127.0.0.1:{net.quiet.port}/unnamed", both)
    assert net.ok.lines == ["GET /named HTTP/1.1"]
    assert not net.quiet.reached()
    assert any(f"127.0.0.1:{net.quiet.port}" in n for n in res.notes)


BYPASSES = {
    "proxy option at the other port": "{curl} -x http://127.0.0.1:{q} http://127.0.0.1:{q}/",
    "attached proxy option": "{curl} -xhttp://127.0.0.1:{q} http://127.0.0.1:{q}/",
    "no proxy for anything": "{curl} --noproxy '*' http://127.0.0.1:{q}/",
    "proxy variables unset": "env -u http_proxy -u HTTP_PROXY -u ALL_PROXY -u all_proxy "
    "{curl} http://127.0.0.1:{q}/",
    "ALL_PROXY at the other port": "ALL_PROXY=socks5://127.0.0.1:{q} {curl} --noproxy '' "
    "--proxy '' --socks5 127.0.0.1:{q} http://example.com/",
    "python raw socket": "{py} -c \"import socket; socket.create_connection(('127.0.0.1', {q}), 3)\"",
    "bash /dev/tcp": "bash -c 'echo hi > /dev/tcp/127.0.0.1/{q}'",
    "ipv6 loopback": "{py} -c \"import socket; socket.create_connection(('::1', {q}), 3)\"",
    # MPTCP falls back to TCP against a plain listener; it is outside what TCP rules may see.
    "mptcp socket": '{py} -c "import socket; s = socket.socket(socket.AF_INET, '
    "socket.SOCK_STREAM, 262); s.settimeout(3); s.connect(('127.0.0.1', {q}))\"",
}


@pytest.mark.parametrize("how", sorted(BYPASSES))
def test_a_client_that_goes_around_the_proxy_reaches_nothing(net: Net, how: str) -> None:
    command = BYPASSES[how].format(curl=CURL, q=net.quiet.port, py=PY)
    net.run(command)
    assert not net.quiet.reached(), command


def test_the_granted_host_itself_is_not_reached_around_the_proxy(net: Net) -> None:
    net.run(f"{CURL} --noproxy '*' http://127.0.0.1:{net.ok.port}/around")
    net.run(f"{PY} -c \"import socket; socket.create_connection(('127.0.0.1', {net.ok.port}), 3)\"")
    assert net.ok.lines == []


def test_the_bypass_probes_can_fail_unconfined(tmp_path: Path) -> None:
    # The control: with no sandbox the same raw socket reaches the listener, so "not reached"
    # above is the sandbox's doing, not a broken probe.
    quiet = Quiet()
    NoSandbox().run(
        CommandSpec(
            BYPASSES["python raw socket"].format(curl=CURL, q=quiet.port, py=PY),
            workspace=tmp_path,
            timeout=30,
        )
    )
    assert quiet.reached()
    quiet.sock.close()


DATAGRAMS = [
    '{py} -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)'
    ".sendto(b'x', ('127.0.0.1', {u}))\"",
    "bash -c 'echo x > /dev/udp/127.0.0.1/{u}'",
]


@pytest.mark.parametrize("command", DATAGRAMS)
def test_no_datagram_leaves_a_granted_command(net: Net, command: str) -> None:
    net.run(command.format(py=PY, u=net.udp.port))
    assert not net.udp.received()


def test_a_name_is_resolved_by_the_proxy(net: Net) -> None:
    grant = Grant(network=True, hosts=(f"localhost:{net.ok.port}",))
    net.run(f'{CURL} --proxy "$ALL_PROXY" http://localhost:{net.ok.port}/by-name', grant)
    assert net.ok.lines == ["GET /by-name HTTP/1.1"] and "localhost" in net.names.asked


def test_a_granted_name_that_resolves_to_the_hosts_loopback_is_refused(net: Net) -> None:
    grant = Grant(network=True, hosts=(f"rebind.test:{net.ok.port}",))
    res = net.run(f"{CURL} http://rebind.test:{net.ok.port}/rebind", grant)
    assert net.ok.lines == [] and "rebind.test" in net.names.asked
    assert any(n.startswith(f"network: refused rebind.test:{net.ok.port}") for n in res.notes)


def test_a_no_proxy_exemption_does_not_reach_the_command(net: Net) -> None:
    # Around the proxy is nowhere: an exemption handed in would only make a request fail oddly.
    res = net.runner.run(
        CommandSpec(
            f"{CURL} http://127.0.0.1:{net.ok.port}/exempt",
            workspace=net.ws,
            grant=net.granted,
            env={"NO_PROXY": "127.0.0.1", "no_proxy": "*"},
            timeout=30,
        )
    )
    assert net.ok.lines == ["GET /exempt HTTP/1.1"], res.output


def test_any_host_does_not_open_the_hosts_loopback(net: Net) -> None:
    net.run(f"{CURL} http://127.0.0.1:{net.ok.port}/any", Grant(network=True))
    assert net.ok.lines == []


# -- as an ordinary user ----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_as_an_ordinary_user_only_the_granted_host_is_reached(backend: str) -> None:
    user = ordinary_user()
    system_py = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if user is None or not system_py.exists():
        pytest.skip("needs root, runuser and the system Python of this version")
    ok, quiet, udp = Listener(), Quiet(), Datagrams()
    root = Path(tempfile.mkdtemp(prefix="cerveau-net-user-", dir="/var/tmp"))
    try:
        ws = root / "ws"
        ws.mkdir()
        pw = pwd.getpwnam(user)
        for p in (root, ws):
            os.chown(p, pw.pw_uid, pw.pw_gid)
        root.chmod(0o755)
        cls = "BubblewrapRunner" if backend == "bubblewrap" else "LandlockRunner"
        module = "bubblewrap" if backend == "bubblewrap" else "landlock"
        extra = "" if backend == "bubblewrap" else f"python={str(system_py)!r}"
        commands = [
            f"{CURL} http://127.0.0.1:{ok.port}/as-user",
            f"{CURL} http://127.0.0.1:{quiet.port}/",
            f"{CURL} --noproxy '*' http://127.0.0.1:{quiet.port}/",
            BYPASSES["python raw socket"].format(q=quiet.port, py=PY),
            *(c.format(py=PY, u=udp.port) for c in DATAGRAMS),
        ]
        script = (
            "import sys; from pathlib import Path\n"
            f"sys.path.insert(0, {str(Path(__file__).parents[2])!r})\n"
            f"from cerveau_tui.sandbox.{module} import {cls} as R\n"
            "from cerveau_tui.sandbox.base import CommandSpec, Grant\n"
            f"r = R({extra})\n"
            f"g = Grant(network=True, hosts=('127.0.0.1:{ok.port}',))\n"
            f"for c in {commands!r}:\n"
            f"    print(r.run(CommandSpec(c, Path({str(ws)!r}), grant=g, timeout=30)).output)\n"
            "r.kill_background()\n"
        )
        site = [p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)]
        res = subprocess.run(
            [shutil.which("runuser") or "runuser", "-u", user, "--", str(system_py), "-c", script],
            capture_output=True,
            text=True,
            timeout=180,
            env={
                "HOME": str(root),
                "PATH": "/usr/bin:/bin",
                "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]), *site]),
            },
        )
        if "setting up uid map" in res.stderr + res.stdout:
            pytest.skip("unprivileged user namespaces are off here")
        assert ok.lines == ["GET /as-user HTTP/1.1"], res.stdout + res.stderr  # the control
        assert not quiet.reached()
        assert not udp.received()
    finally:
        ok.close()
        quiet.sock.close()
        udp.sock.close()
        shutil.rmtree(root, ignore_errors=True)


def test_landlock_says_what_its_network_rules_cannot_hold() -> None:
    from cerveau_tui.sandbox.landlock import landlock_gaps

    assert any("proxy's port on another address" in g for g in landlock_gaps(4))
    assert any("every TCP destination" in g for g in landlock_gaps(3))
