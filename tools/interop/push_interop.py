#!/usr/bin/env python3
"""Push notification interop check of swiftletd with slixmpp (XEP-0357,
with the push service an XEP-0114 component and XEP-0198 resumption).

slixmpp's ComponentXMPP connects to the component listener of a running
server (loopback only) as COMPONENT_DOMAIN, the push service: it records
every pubsub publish the server sends it (node, the summary form, the
publish options) and answers each with a result. Two slixmpp clients with
fresh accounts, romeo (with stream management) and juliet, then:
  1. the push service connects with its handshake,
  2. romeo and juliet register and log in; romeo's stream management is
     enabled with resumption, and his account advertises urn:xmpp:push:0,
  3. romeo enables push at the service with a publish-options form that
     holds a secret, and gets a result,
  4. a message juliet sends while romeo is connected is delivered, and
     announced to nobody,
  5. romeo's connection is cut (no </stream:stream>: his session waits,
     detached); juliet's message to him makes the server publish exactly
     one notification to the service: the node, message-count 1,
     last-message-sender juliet's full JID, no body, the secret echoed in
     the publish options,
  6. romeo connects again and resumes; he has juliet's message once,
  7. romeo disables push and gets a result; his connection is cut again
     and juliet's next message is announced to nobody within 3 seconds.
Prints one line per step and exits non-zero on the first failure. Every
step has a deadline, so the script always ends by itself.

COMPAT: slixmpp (1.17) has no XEP-0357 plugin (nor have aioxmpp and
nbxmpp), so `<enable/>` and `<disable/>` are slixmpp stanza classes
defined here, the publish options a form of slixmpp's XEP-0004 plugin.

Usage: push_interop.py HOST PORT DOMAIN CA_CERTIFICATE COMPONENT_PORT COMPONENT_DOMAIN SECRET
"""
import asyncio
import logging
import secrets
import sys

import slixmpp
from slixmpp.plugins.xep_0004 import Form
from slixmpp.xmlstream import ElementBase, register_stanza_plugin
from slixmpp.xmlstream.handler import Callback
from slixmpp.xmlstream.matcher import MatchXPath

import slixmpp_account
from slixmpp_account import require, step

STEP_TIMEOUT = 20
# How long a message that must not be announced is given to be.
QUIET_WAIT = 3

NS_PUSH = "urn:xmpp:push:0"
NS_PUBSUB = "http://jabber.org/protocol/pubsub"
NS_DATA = "jabber:x:data"
PUBLISH_OPTIONS = "http://jabber.org/protocol/pubsub#publish-options"
PUSH_SUMMARY = "urn:xmpp:push:summary"


class EnablePush(ElementBase):
    """XEP-0357 §5 `<enable jid='…' node='…'>`, with the publish options
    as its `form` plugin."""
    name = "enable"
    namespace = NS_PUSH
    plugin_attrib = "push_enable"
    interfaces = {"jid", "node"}


class DisablePush(ElementBase):
    """XEP-0357 §6 `<disable jid='…' node='…'/>`."""
    name = "disable"
    namespace = NS_PUSH
    plugin_attrib = "push_disable"
    interfaces = {"jid", "node"}


register_stanza_plugin(EnablePush, Form)
register_stanza_plugin(slixmpp.Iq, EnablePush)
register_stanza_plugin(slixmpp.Iq, DisablePush)


def form_values(element):
    """The fields of the data form `element` (var: value) as slixmpp's
    XEP-0004 plugin reads them, or None without a form."""
    if element is None:
        return None
    values = dict(Form(xml=element).get_values())
    # COMPAT: slixmpp 1.17 counts `hidden` among the multi-value field
    # types, so a hidden FORM_TYPE reads as a list of its one value.
    if isinstance(values.get("FORM_TYPE"), list) and len(values["FORM_TYPE"]) == 1:
        values["FORM_TYPE"] = values["FORM_TYPE"][0]
    return values


class PushService(slixmpp.ComponentXMPP, slixmpp_account.Records):
    """The push service: records each pubsub publish it gets, as a dict
    (from, to, node, summary, options), and answers it with a result."""

    def __init__(self, domain, secret, host, port):
        slixmpp.ComponentXMPP.__init__(self, domain, secret, host, port)
        slixmpp_account.Records.__init__(self)
        self.register_plugin("xep_0030")
        self.register_plugin("xep_0004")
        self.publishes = []
        self.started = False
        self.add_event_handler("session_start", self._on_start)
        self.register_handler(Callback(
            "push publish", MatchXPath(f"{{{self.default_ns}}}iq/{{{NS_PUBSUB}}}pubsub"), self._on_pubsub))

    def _on_start(self, _event):
        self.started = True
        self.changed()

    def _on_pubsub(self, iq):
        if iq["type"] != "set":
            return
        pubsub = iq.xml.find(f"{{{NS_PUBSUB}}}pubsub")
        publish = pubsub.find(f"{{{NS_PUBSUB}}}publish")
        notification = None if publish is None else publish.find(f"{{{NS_PUBSUB}}}item/{{{NS_PUSH}}}notification")
        self.publishes.append({
            "from": str(iq["from"]),
            "to": str(iq["to"]),
            "node": None if publish is None else publish.get("node"),
            "summary": form_values(None if notification is None else notification.find(f"{{{NS_DATA}}}x")),
            "options": form_values(pubsub.find(f"{{{NS_PUBSUB}}}publish-options/{{{NS_DATA}}}x")),
        })
        iq.reply(clear=True).send()
        self.changed()


class Romeo(slixmpp_account.Records):
    """romeo's one client, with stream management: the messages he gets
    (from, body) and the events of his connection's life."""

    def __init__(self, server, user, password):
        super().__init__()
        self.server = server
        self.full_jid = f"{user}@{server['domain']}/phone"
        self.client = slixmpp_account.make_client(
            self.full_jid, password, server["ca"], ("xep_0030", "xep_0199", "xep_0004", "xep_0198"))
        self.messages = []
        self.events = []
        self.client.add_event_handler("message", self._on_message)
        for event in ("session_start", "session_resumed", "sm_enabled", "sm_failed", "disconnected", "failed_auth"):
            self.client.add_event_handler(event, lambda payload, event=event: self._on_event(event, payload))
        self.client.add_event_handler("session_start", lambda _event: self.client.send_presence())

    def _on_message(self, message):
        if message["type"] in ("chat", "normal") and message["body"]:
            self.messages.append((str(message["from"]), message["body"]))
            self.changed()

    def _on_event(self, name, payload):
        self.events.append((name, payload))
        self.changed()

    def count(self, name):
        return sum(1 for event, _ in self.events if event == name)

    def connect(self):
        self.client.connect(host=self.server["host"], port=self.server["port"])

    async def cut(self):
        """Closes the socket under slixmpp, without </stream:stream> nor a
        TLS close_notify, as when a phone loses its network."""
        disconnects = self.count("disconnected")
        self.client.transport.abort()
        await self.until(lambda: self.count("disconnected") > disconnects)

    async def ping(self):
        await self.client.plugin["xep_0199"].ping(jid=self.server["domain"], timeout=STEP_TIMEOUT)


async def main():
    host, port, domain, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    component_port, component_domain, secret = int(sys.argv[5]), sys.argv[6], sys.argv[7]
    server = {"host": host, "port": port, "domain": domain, "ca": ca}
    node = "node-" + secrets.token_hex(6)
    push_secret = "push-secret-" + secrets.token_hex(8)

    service = PushService(component_domain, secret, host, component_port)

    async def connect_service():
        service.connect()
        await service.until(lambda: service.started)
        return f"{component_domain} on port {component_port}"

    await step("the push service connects as a component", connect_service(), STEP_TIMEOUT)

    juliet = slixmpp_account.Peer(
        server, "juliet", ("xep_0030", "xep_0199"), "balcony", lambda message: (str(message["from"]), message["body"]),
        STEP_TIMEOUT)
    romeo_account = slixmpp_account.Peer(server, "romeo", (), "phone", None, STEP_TIMEOUT)
    romeo = None

    async def log_in():
        nonlocal romeo
        await asyncio.gather(juliet.register(), romeo_account.register())
        await juliet.login()
        romeo = Romeo(server, romeo_account.user, romeo_account.password)
        romeo.connect()
        await romeo.until(lambda: romeo.count("sm_enabled") or romeo.count("sm_failed") or romeo.count("disconnected"))
        require(romeo.count("sm_enabled") == 1, f"stream management not enabled: {[e for e, _ in romeo.events]}")
        enabled = next(payload for event, payload in romeo.events if event == "sm_enabled")
        require(enabled["resume"] is True and enabled["id"], f"<enabled/> without resumption: {enabled}")
        info = await romeo.client.plugin["xep_0030"].get_info(jid=romeo_account.jid, timeout=STEP_TIMEOUT)
        features = info["disco_info"]["features"]
        require(NS_PUSH in features, f"romeo's account features: {features}")
        return f"{romeo.full_jid} (resumable), {juliet.client.boundjid}; the account advertises {NS_PUSH}"

    await step("romeo (stream management, resumable) and juliet log in", log_in(), STEP_TIMEOUT)

    async def push_request(name, form=None):
        """Sends romeo's <enable/> or <disable/> for the node; requires a result."""
        iq = romeo.client.Iq()
        iq["type"] = "set"
        iq[name]["jid"] = component_domain
        iq[name]["node"] = node
        if form is not None:
            iq[name].append(form)
        result = await iq.send(timeout=STEP_TIMEOUT)
        require(result["type"] == "result", f"got {result}")

    async def enable():
        await push_request("push_enable", slixmpp_account.submit_form(PUBLISH_OPTIONS, {"secret": push_secret}))
        return f"node {node} at {component_domain}"

    await step("romeo enables push with publish options", enable(), STEP_TIMEOUT)

    juliet_jid = str(juliet.client.boundjid)

    async def while_online():
        juliet.client.send_message(mto=romeo_account.jid, mbody="are you there?", mtype="chat")
        await romeo.until(lambda: romeo.messages)
        # A round trip for each: what the server did about the message is done.
        await asyncio.gather(romeo.ping(), juliet.client.plugin["xep_0199"].ping(jid=domain, timeout=STEP_TIMEOUT))
        require(romeo.messages == [(juliet_jid, "are you there?")], f"romeo has {romeo.messages}")
        require(not service.publishes, f"the service got {service.publishes}")
        return "delivered, not announced"

    await step("a message while romeo is connected is not announced", while_online(), STEP_TIMEOUT)

    async def announced():
        await romeo.cut()
        # The server must see the connection gone before the message comes.
        await asyncio.sleep(0.5)
        juliet.client.send_message(mto=romeo_account.jid, mbody="wherefore art thou", mtype="chat")
        await service.until(lambda: service.publishes)
        # Given time for a second, wrong, notification to come.
        await juliet.client.plugin["xep_0199"].ping(jid=domain, timeout=STEP_TIMEOUT)
        await asyncio.sleep(0.5)
        require(len(service.publishes) == 1, f"the service got {service.publishes}")
        publish = service.publishes[0]
        require(publish["from"] == domain and publish["to"] == component_domain,
                f"from {publish['from']} to {publish['to']}")
        require(publish["node"] == node, f"node {publish['node']!r}")
        summary = publish["summary"]
        require(summary is not None and summary.get("FORM_TYPE") == PUSH_SUMMARY, f"summary {summary}")
        require(str(summary.get("message-count")) == "1", f"message-count {summary.get('message-count')!r}")
        require(summary.get("last-message-sender") == juliet_jid,
                f"last-message-sender {summary.get('last-message-sender')!r}, juliet is {juliet_jid}")
        require("last-message-body" not in summary, f"the body was sent: {summary}")
        options = publish["options"]
        require(options is not None and options.get("FORM_TYPE") == PUBLISH_OPTIONS, f"publish options {options}")
        require(options.get("secret") == push_secret, f"secret {options.get('secret')!r}")
        return f"node {publish['node']}, summary {summary}, publish options with the secret"

    await step("romeo's connection is cut; juliet's message is announced once to the service", announced(),
               STEP_TIMEOUT)

    async def resume():
        romeo.connect()
        await romeo.until(lambda: romeo.count("session_resumed") or romeo.count("sm_failed")
                          or romeo.count("disconnected") > 1)
        require(romeo.count("session_resumed") == 1, f"no resumption: {[e for e, _ in romeo.events]}")
        require(romeo.count("session_start") == 1, "a new session started instead")
        await romeo.until(lambda: len(romeo.messages) >= 2)
        await romeo.ping()
        require(romeo.messages == [(juliet_jid, "are you there?"), (juliet_jid, "wherefore art thou")],
                f"romeo has {romeo.messages}")
        require(len(service.publishes) == 1, f"the service got {service.publishes}")
        return f"romeo has {[body for _, body in romeo.messages]}"

    await step("romeo connects again and resumes; he has juliet's message once", resume(), STEP_TIMEOUT)

    async def disable():
        await push_request("push_disable")
        return f"node {node}"

    await step("romeo disables push", disable(), STEP_TIMEOUT)

    async def quiet():
        await romeo.cut()
        await asyncio.sleep(0.5)
        juliet.client.send_message(mto=romeo_account.jid, mbody="good night", mtype="chat")
        await juliet.client.plugin["xep_0199"].ping(jid=domain, timeout=STEP_TIMEOUT)
        await asyncio.sleep(QUIET_WAIT)
        require(len(service.publishes) == 1, f"the service got {service.publishes}")
        return f"nothing within {QUIET_WAIT} s"

    await step("romeo's connection is cut again; juliet's message is not announced", quiet(), STEP_TIMEOUT)

    await juliet.logout()
    await service.disconnect()
    print("ok   all push interop steps passed")


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(main())
