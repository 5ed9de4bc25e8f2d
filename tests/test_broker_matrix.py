"""The shipped broker configuration (systemd/mosquitto/) in a real mosquitto, listener by
listener: who may connect where, who may read and write what, and that nobody can take
the controller's client id. Issue 14, finding 1: the old config let anybody claim any
user on the WebSockets listener and kick the daemon off with its client id."""

from __future__ import annotations

import re
import socket
import ssl
import time

import pytest

from tests.support.example_broker import EXAMPLES, USERS, Client, ExampleBroker, have_tools

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not have_tools(), reason="needs openssl and mosquitto_passwd"),
]

LISTENERS = ("local", "tls", "ws")
#: the one listener each user may log in on (its own password file)
HOME = {"shoe-controller": "local", "casino": "tls", "display": "ws"}
T = "shoe/T1"
#: every topic the controller publishes (retained where the controller retains them)
DAEMON_TOPICS = {
    f"{T}/status": True,
    f"{T}/display/state": True,
    f"{T}/casino/head": True,
    f"{T}/casino/events": False,
    f"{T}/casino/replay/response/casino-1": False,
}
PUBLIC = {f"{T}/status", f"{T}/display/state"}
CASINO_ONLY = set(DAEMON_TOPICS) - PUBLIC


@pytest.fixture(scope="module")
def eb():
    with ExampleBroker() as b:
        yield b


def connect(eb: ExampleBroker, where: str, user: str | None, **kw) -> Client:
    return Client(**eb.listener(where), user=user, **kw)


def refused(c: Client) -> bool:
    """The broker answered and did not let the client in."""
    time.sleep(0.05)
    ok = c.answered.is_set() and not c.connected.is_set()
    c.close()
    return ok


def daemon(eb: ExampleBroker, client_id: str = "shoe-controller-T1") -> Client:
    d = connect(eb, "local", "shoe-controller", client_id=client_id)
    assert d.connected.is_set(), d.connect_reason
    return d


def test_every_listener_refuses_a_claimed_user_without_its_password(eb):
    for where in LISTENERS:
        assert refused(connect(eb, where, None)), f"anonymous on {where}"
        for user in USERS:
            for pw in ("", "wrong", USERS["casino"][1] if user != "casino" else "x"):
                assert refused(connect(eb, where, user, password=pw)), \
                    f"{user} with password {pw!r} on {where}"


def test_each_user_logs_in_on_its_own_listener_only(eb):
    for where in LISTENERS:
        for user in USERS:
            c = connect(eb, where, user)
            if HOME[user] == where:
                assert c.connected.is_set(), f"{user} on {where}: {c.connect_reason}"
                c.close()
            else:
                assert refused(c), f"{user} with its right password on {where}"


def test_display_reads_the_public_topics_only_and_publishes_nothing(eb):
    # on the other listeners the display user cannot even log in (test above); on its
    # own, it asks for everything and gets the public topics only
    display = connect(eb, "ws", "display")
    for topic in ("#", f"{T}/casino/#", f"{T}/casino/events", f"{T}/casino/head"):
        display.subscribe(topic)
    casino = connect(eb, "tls", "casino")  # the control: what a casino user gets
    casino.subscribe("#")
    d = daemon(eb)
    for topic, retain in DAEMON_TOPICS.items():
        assert d.publish(topic, b'{"from":"daemon"}', retain=retain), topic
    deadline = time.monotonic() + 5
    while casino.topics() != set(DAEMON_TOPICS) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert casino.topics() == set(DAEMON_TOPICS)
    time.sleep(0.3)  # a leak, if any, would have come with the rest
    assert display.topics() == PUBLIC
    for topic in [*DAEMON_TOPICS, f"{T}/casino/replay", "shoe/T1/anything", "x"]:
        assert not display.publish(topic, b'{"forged":true}', retain=True), topic
    assert display.connected.is_set() and display.disconnects == 0
    time.sleep(0.2)
    assert not any(b"forged" in p for _, p, _ in casino.messages)
    display.close()
    # a display that comes later gets the retained public state, not the retained head
    late = connect(eb, "ws", "display")
    late.subscribe("#")
    time.sleep(0.3)
    assert late.topics() == PUBLIC
    assert all(p == b'{"from":"daemon"}' for _, p, _ in late.messages)
    for c in (late, casino, d):
        c.close()


def test_nobody_but_the_daemon_publishes_on_daemon_topics(eb):
    watcher = connect(eb, "tls", "casino", client_id="watcher")
    watcher.subscribe("#")
    d = daemon(eb)
    d.subscribe(f"{T}/casino/replay")
    others = [connect(eb, "tls", "casino"), connect(eb, "ws", "display")]
    for other in others:
        assert other.connected.is_set(), other.connect_reason
        for topic, retain in DAEMON_TOPICS.items():
            assert not other.publish(topic, b'{"forged":true}', retain=retain), \
                f"{other.c._username!r} published {topic}"
    # what casino users may write: a replay request, which reaches the daemon
    assert others[0].publish(f"{T}/casino/replay", b'{"from_seq":1}')
    deadline = time.monotonic() + 5
    while not d.messages and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [t for t, _, _ in d.messages] == [f"{T}/casino/replay"]
    time.sleep(0.2)
    assert not any(b"forged" in p for _, p, _ in watcher.messages)
    assert f"{T}/casino/replay" not in watcher.topics()  # requests are not casino-readable
    for c in (*others, watcher, d):
        c.close()


def test_the_daemons_client_id_cannot_be_taken_over(eb):
    d = daemon(eb)
    attempts = 0
    for where in LISTENERS:
        for cid in ("shoe-controller-T1", "shoe-controller"):
            for user, pw in ((None, None), ("shoe-controller", ""), ("casino", None),
                             ("display", None)):
                c = connect(eb, where, user, password=pw, client_id=cid)
                attempts += 1
                time.sleep(0.05)
                c.close()
    time.sleep(0.3)
    assert attempts == 24
    assert d.connected.is_set() and d.disconnects == 0
    # and it still works: its publication arrives
    casino = connect(eb, "tls", "casino")
    casino.subscribe(f"{T}/casino/events")
    assert d.publish(f"{T}/casino/events", b"still here")
    deadline = time.monotonic() + 5
    while not casino.messages and time.monotonic() < deadline:
        time.sleep(0.02)
    assert casino.messages and casino.messages[0][1] == b"still here"
    casino.close()
    d.close()


def _handshake(port: int, *, version: ssl.TLSVersion, ciphers: str, ca) -> str | None:
    """None when a TLS handshake with exactly this version and these ciphers succeeds,
    else the error."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(str(ca))
    ctx.minimum_version = ctx.maximum_version = version
    ctx.set_ciphers(ciphers + ":@SECLEVEL=0")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
                ctx.wrap_socket(raw, server_hostname="localhost") as tls:
            return None if tls.version() else "no version"
    except (ssl.SSLError, OSError) as exc:
        return str(exc)


CBC = "ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA384"


def test_tls_listener_takes_tls12_aead_and_nothing_weaker(eb):
    tls12 = ssl.TLSVersion.TLSv1_2
    assert _handshake(eb.tls, version=tls12, ciphers="ECDHE-ECDSA-AES128-GCM-SHA256",
                      ca=eb.ca) is None
    assert _handshake(eb.tls, version=tls12, ciphers="ECDHE-ECDSA-CHACHA20-POLY1305",
                      ca=eb.ca) is None
    assert _handshake(eb.tls, version=ssl.TLSVersion.TLSv1_3, ciphers="DEFAULT",
                      ca=eb.ca) is None
    for cipher in CBC.split(":"):
        assert _handshake(eb.tls, version=tls12, ciphers=cipher, ca=eb.ca) is not None, cipher
    for old in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
        assert _handshake(eb.tls, version=old, ciphers="ALL", ca=eb.ca) is not None, old


def test_the_cipher_check_can_fail():
    """The control for the test above: without the shipped `ciphers` line the same
    client gets a CBC cipher."""
    def no_ciphers(conf: str) -> str:
        return re.sub(r"(?m)^ciphers .*$", "", conf)

    with ExampleBroker(edit=no_ciphers) as eb:
        assert _handshake(eb.tls, version=ssl.TLSVersion.TLSv1_2,
                          ciphers="ECDHE-ECDSA-AES128-SHA256", ca=eb.ca) is None


def test_secrets_stay_0640_through_the_documented_commands(eb):
    for file, _ in USERS.values():
        assert (eb.dir / file).stat().st_mode & 0o777 == 0o640, file
    assert (eb.dir / "certs" / "server.key").stat().st_mode & 0o777 == 0o640


def _settings(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_the_shipped_files_hold_no_secret_and_bound_what_the_broker_keeps():
    bridge = _settings((EXAMPLES / "bridge.conf").read_text())
    assert not [s for s in bridge if s[0] == "remote_password"]
    assert ["bridge_certfile", "/etc/mosquitto/certs/bridge.crt"] in bridge
    conf = _settings((EXAMPLES / "shoe-controller.conf").read_text())
    keys = {s[0]: s[1:] for s in conf}
    assert int(keys["max_queued_bytes"][0]) > 0
    assert re.fullmatch(r"\d+[hdwmy]", keys["persistent_client_expiration"][0])
    # per listener: anonymous off, a password file, ids bound to users
    blocks: list[dict[str, list[str]]] = []
    for s in conf:
        if s[0] == "listener":
            blocks.append({})
        elif blocks:
            blocks[-1][s[0]] = s[1:]
    assert len(blocks) == 3
    for block in blocks:
        assert block["allow_anonymous"] == ["false"]
        assert "password_file" in block and "acl_file" in block
        assert block["use_username_as_clientid"] == ["true"]
