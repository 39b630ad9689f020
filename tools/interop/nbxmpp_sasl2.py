#!/usr/bin/env python3
"""XEP-0388 (SASL2) login with nbxmpp, Gajim's XMPP library, against a
running swiftletd (loopback only).

nbxmpp 7 authenticates with SASL2 whenever the stream offers it, with
SCRAM (its channel binding is switched off, so no -PLUS), then binds a
resource the RFC 6120 way and enables stream management (it has no Bind
2). Over STARTTLS, with the server's certificate verified against its
local CA:
  1. nbxmpp logs in: it sends <authenticate xmlns='urn:xmpp:sasl:2'/>,
     gets <success xmlns='urn:xmpp:sasl:2'/>, and reports the connection
     with a bound full JID,
  2. an XEP-0199 ping to the server is answered,
  3. a message to the account's own full JID comes back.
Prints one line per step and exits non-zero on the first failure. Every
step has a deadline, so the script always ends by itself.

Usage: nbxmpp_sasl2.py HOST PORT DOMAIN CA_CERTIFICATE USERNAME PASSWORD
(the account exists already; CA_CERTIFICATE is the server's local CA root,
GLib's trust store for the run.)
"""
import re
import sys

import gi

gi.require_version("GLib", "2.0")
from gi.repository import GLib  # noqa: E402

import nbxmpp_support  # noqa: E402
from nbxmpp.namespaces import Namespace  # noqa: E402
from nbxmpp.protocol import Iq, Message  # noqa: E402
from nbxmpp.structs import StanzaHandler  # noqa: E402

STEP_TIMEOUT = 20
SASL2 = "urn:xmpp:sasl:2"


class Run:
    """One login and what came of it, step by step on the GLib loop."""

    def __init__(self, host, port, domain, ca_certificate, username, password):
        self.loop = GLib.MainLoop()
        self.failure = None
        self.sent = []
        self.received = []
        self.body = "hello from nbxmpp"
        client = nbxmpp_support.starttls_client(host, port, domain, ca_certificate, self.sent, self.received)
        client.set_username(username)
        client.set_password(password)
        client.set_resource("nbxmpp")
        client.subscribe("connected", self.on_connected)
        client.subscribe("connection-failed", self.on_failed)
        client.subscribe("disconnected", self.on_disconnected)
        client.register_handler(StanzaHandler(name="message", callback=self.on_message))
        self.client = client
        self.timer = None

    def run(self):
        """Runs the loop until the steps end or `STEP_TIMEOUT` passes
        without progress."""
        self.arm("connecting and logging in")
        self.client.connect()
        self.loop.run()
        return self.failure

    def arm(self, what):
        if self.timer is not None:
            GLib.source_remove(self.timer)
        self.timer = GLib.timeout_add_seconds(STEP_TIMEOUT, self.fail, f"timed out {what}")

    def fail(self, why):
        self.failure = why
        self.timer = None
        self.finish()
        return GLib.SOURCE_REMOVE

    def finish(self):
        if self.timer is not None:
            GLib.source_remove(self.timer)
            self.timer = None
        self.client.disconnect(immediate=True)
        GLib.idle_add(self.loop.quit)

    def on_failed(self, client, _signal):
        self.fail(f"connection failed: {client.get_error()}")

    def on_disconnected(self, client, _signal):
        if self.timer is not None:
            self.fail(f"disconnected: {client.get_error()}")

    def on_connected(self, client, _signal):
        authenticate = [data for data in self.sent if "<authenticate" in data and SASL2 in data]
        if not authenticate:
            return self.fail(f"nbxmpp did not use SASL2; it sent: {self.sent}")
        if not any("<success" in data and SASL2 in data for data in self.received):
            return self.fail("no SASL2 <success/> among what nbxmpp received")
        jid = client.get_bound_jid()
        if jid is None or str(jid.bare) != f"{client.username}@{client.domain}" or not jid.resource:
            return self.fail(f"bound as {jid}")
        mechanism = re.search(r"mechanism=[\"']([^\"']+)", authenticate[0]).group(1)
        print(f"ok   nbxmpp logged in with SASL2 ({mechanism}) over STARTTLS and bound {jid}", flush=True)
        self.jid = jid
        self.arm("for the ping's answer")
        ping = Iq(typ="get", to=client.domain)
        ping.addChild(name="ping", namespace=Namespace.PING)
        client.send_stanza(ping, callback=self.on_pong)

    def on_pong(self, _client, stanza):
        if stanza.getType() != "result":
            return self.fail(f"ping answered {stanza}")
        print("ok   ping answered", flush=True)
        self.arm("for the message to come back")
        self.client.send_stanza(Message(to=self.jid, body=self.body, typ="chat"))

    def on_message(self, _client, stanza, _properties):
        if stanza.getBody() != self.body:
            return
        print("ok   a message to the own full JID came back", flush=True)
        self.finish()


def main():
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    failure = Run(*sys.argv[1:]).run()
    if failure:
        print(f"FAIL {failure}", flush=True)
        sys.exit(1)
    print("ok   all nbxmpp SASL2 steps passed", flush=True)


if __name__ == "__main__":
    main()
