#!/usr/bin/env python3
"""External component interop check of swiftletd with slixmpp (XEP-0114).

slixmpp's ComponentXMPP connects to the component listener of a running
server (loopback only) as COMPONENT_DOMAIN and echoes every chat message;
a slixmpp client with a fresh account then talks to it:
  1. the component connects and its handshake is accepted,
  2. a wrong secret is refused with the not-authorized stream error,
  3. the user sends a message to echo@COMPONENT_DOMAIN and gets the echo
     back from that address, the user's full JID having reached the
     component as the sender,
  4. an IQ from the user to the component (disco#info, which slixmpp's
     XEP-0030 plugin answers with the component's identity) comes back
     as a result,
  5. an IQ from the component to the user (an XEP-0199 ping) comes back
     as a result,
  6. the server's disco#items lists the connected component.
Prints one line per step and exits non-zero on the first failure. Every
step has a deadline, so the script always ends by itself.

Usage: component_interop.py HOST PORT DOMAIN CA_CERTIFICATE COMPONENT_PORT COMPONENT_DOMAIN SECRET
"""
import asyncio
import logging
import sys

import slixmpp

import slixmpp_account
from slixmpp_account import require, step

STEP_TIMEOUT = 20


class EchoComponent(slixmpp.ComponentXMPP, slixmpp_account.Records):
    """A component that answers each chat message with `echo: BODY`, from
    the address it was sent to, and records the senders it saw."""

    def __init__(self, domain, secret, host, port):
        slixmpp.ComponentXMPP.__init__(self, domain, secret, host, port)
        slixmpp_account.Records.__init__(self)
        self.register_plugin("xep_0030")
        self.register_plugin("xep_0199")
        self.plugin["xep_0030"].add_identity(category="gateway", itype="echo", name="Echo", jid=domain)
        self.senders = []
        self.stream_errors = []
        self.started = False
        self.add_event_handler("session_start", self._on_start)
        self.add_event_handler("message", self._on_message)
        self.add_event_handler("stream_error", self._on_stream_error)
        self.add_event_handler("disconnected", lambda _event: self.changed())

    def _on_start(self, _event):
        self.started = True
        self.changed()

    def _on_message(self, message):
        if message["type"] in ("chat", "normal") and message["body"]:
            self.senders.append(str(message["from"]))
            self.send_message(mto=message["from"], mfrom=message["to"], mbody="echo: " + message["body"], mtype="chat")
            self.changed()

    def _on_stream_error(self, error):
        self.stream_errors.append(error["condition"])
        self.changed()


async def main():
    host, port, domain, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    component_port, component_domain, secret = int(sys.argv[5]), sys.argv[6], sys.argv[7]
    server = {"host": host, "port": port, "domain": domain, "ca": ca}

    component = EchoComponent(component_domain, secret, host, component_port)

    async def connect_component():
        component.connect()
        await component.until(lambda: component.started)
        return f"{component_domain} on port {component_port}"

    await step("the component connects with its handshake", connect_component(), STEP_TIMEOUT)

    async def wrong_secret():
        intruder = EchoComponent(component_domain, secret + "-wrong", host, component_port)
        intruder.connect()
        await intruder.until(lambda: intruder.stream_errors, poll=0.1)
        require(not intruder.started, "a wrong secret was accepted")
        require(intruder.stream_errors == ["not-authorized"], f"stream errors: {intruder.stream_errors}")
        await intruder.disconnect()
        return "not-authorized"

    await step("a wrong secret is refused", wrong_secret(), STEP_TIMEOUT)

    user = slixmpp_account.Peer(
        server, "comp", ("xep_0030", "xep_0199"), "interop", lambda message: (str(message["from"]), message["body"]),
        STEP_TIMEOUT)

    async def log_in():
        await user.register()
        await user.login()
        return str(user.client.boundjid)

    await step("a user registers and logs in", log_in(), STEP_TIMEOUT)

    echo_address = f"echo@{component_domain}"

    async def echo():
        user.client.send_message(mto=echo_address, mbody="hello component", mtype="chat")
        await user.until(lambda: user.messages)
        require(user.messages == [(echo_address, "echo: hello component")], f"got {user.messages}")
        require(component.senders == [str(user.client.boundjid)], f"the component saw {component.senders}")
        return f"from {user.messages[0][0]}"

    await step("a message to the component is echoed", echo(), STEP_TIMEOUT)

    async def iq_to_component():
        info = await user.client.plugin["xep_0030"].get_info(jid=component_domain, timeout=STEP_TIMEOUT)
        require(info["type"] == "result", f"got {info}")
        identities = [(category, kind) for category, kind, _lang, _name in info["disco_info"]["identities"]]
        require(("gateway", "echo") in identities, f"identities: {identities}")
        return f"identities {identities}"

    await step("an IQ to the component is answered", iq_to_component(), STEP_TIMEOUT)

    async def iq_from_component():
        result = await component.plugin["xep_0199"].send_ping(
            user.client.boundjid, ifrom=component_domain, timeout=STEP_TIMEOUT)
        require(result["type"] == "result", f"got {result}")
        return f"ping to {user.client.boundjid} answered"

    await step("an IQ from the component is answered", iq_from_component(), STEP_TIMEOUT)

    async def listed():
        items = await user.client.plugin["xep_0030"].get_items(jid=domain, timeout=STEP_TIMEOUT)
        jids = [str(item[0]) for item in items["disco_items"]["items"]]
        require(component_domain in jids, f"items: {jids}")
        return f"items {jids}"

    await step("the server's disco#items lists the component", listed(), STEP_TIMEOUT)

    await user.logout()
    await component.disconnect()
    print("ok   all component interop steps passed")


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(main())
