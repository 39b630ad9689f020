#!/usr/bin/env python3
"""XMPP over WebSocket (RFC 7395) interop check of swiftletd, written over
the `websockets` package (a WebSocket client that knows nothing of XMPP),
against a running server on loopback:
  1. XEP-0156: /.well-known/host-meta.json lists the ws:// endpoint,
  2. alice and bob, fresh random accounts, register in-band (XEP-0077)
     before logging in, each over its own WebSocket,
  3. alice logs in over ws:// (plain HTTP on loopback) with SCRAM-SHA-1,
     as Strophe.js does, and PLAIN is not offered there; bob logs in over
     wss:// (HTTPS, the server's certificate verified) with PLAIN,
  4. both bind, fetch their rosters, enable stream management and send
     presence; alice's message reaches bob, each server message being one
     whole element that declares its namespace,
  5. bob finds the message in his archive (XEP-0313),
  6. edge cases of browser clients: a whitespace-only message and a
     WebSocket ping keep the stream; two elements in one message end it
     with bad-format; <close/> with see-other-uri (as Converse.js may send
     it) is answered with <close/> and a normal WebSocket close.
Prints one line per step and exits non-zero on the first failure; every
step has a deadline.

Usage: websocket_interop.py HOST PORT DOMAIN CA_CERTIFICATE HTTP_PORT HTTPS_PORT
"""
import asyncio
import base64
import hashlib
import hmac
import json
import os
import ssl
import sys
import urllib.request
import uuid
import xml.etree.ElementTree as ET

import websockets

HOST, _PORT, DOMAIN, CA = sys.argv[1:5]
HTTP_PORT, HTTPS_PORT = sys.argv[5], sys.argv[6]
WS = f"ws://{HOST}:{HTTP_PORT}/xmpp-websocket"
WSS = f"wss://{DOMAIN}:{HTTPS_PORT}/xmpp-websocket"
STEP_TIMEOUT = 20

FRAMING = "urn:ietf:params:xml:ns:xmpp-framing"
STREAMS = "http://etherx.jabber.org/streams"
SASL = "urn:ietf:params:xml:ns:xmpp-sasl"
CLIENT = "jabber:client"


def ok(text):
    print(f"ok   {text}", flush=True)


def fail(text):
    print(f"FAIL {text}", flush=True)
    sys.exit(1)


def check(condition, text):
    if not condition:
        fail(text)


class Stream:
    """One XMPP stream over a WebSocket: each message sent is one element,
    each message received is parsed by itself (so a message that is not
    one whole element fails the check)."""

    def __init__(self, ws):
        self.ws = ws

    async def send(self, xml):
        await self.ws.send(xml)

    async def receive(self):
        message = await asyncio.wait_for(self.ws.recv(), STEP_TIMEOUT)
        check(isinstance(message, str), f"a text message, got {message!r}")
        try:
            return ET.fromstring(message)
        except ET.ParseError as error:
            fail(f"a message that is not one element ({error}): {message!r}")

    async def open(self):
        await self.send(f"<open xmlns='{FRAMING}' to='{DOMAIN}' version='1.0'/>")
        opened = await self.receive()
        check(opened.tag == f"{{{FRAMING}}}open" and opened.get("version") == "1.0", f"<open/>, got {ET.tostring(opened)}")
        features = await self.receive()
        check(features.tag == f"{{{STREAMS}}}features", f"features, got {ET.tostring(features)}")
        return features

    async def iq(self, xml, expect="result"):
        """Sends an iq; returns its reply, keeping what came before it in
        `passed`."""
        await self.send(xml)
        self.passed = []
        while True:
            reply = await self.receive()
            if reply.tag == f"{{{CLIENT}}}iq":
                check(reply.get("type") == expect, f"iq {expect}, got {ET.tostring(reply)}")
                return reply
            self.passed.append(reply)


def mechanisms(features):
    return [m.text for m in features.iter(f"{{{SASL}}}mechanism")]


async def scram_sha1(stream, username, password):
    nonce = base64.b64encode(os.urandom(18)).decode()
    first_bare = f"n={username},r={nonce}"
    await stream.send(f"<auth xmlns='{SASL}' mechanism='SCRAM-SHA-1'>{base64.b64encode(('n,,' + first_bare).encode()).decode()}</auth>")
    challenge = await stream.receive()
    check(challenge.tag == f"{{{SASL}}}challenge", f"a challenge, got {ET.tostring(challenge)}")
    server_first = base64.b64decode(challenge.text).decode()
    fields = dict(part.split("=", 1) for part in server_first.split(","))
    check(fields["r"].startswith(nonce), "the server's nonce extends ours")
    salted = hashlib.pbkdf2_hmac("sha1", password.encode(), base64.b64decode(fields["s"]), int(fields["i"]))
    client_key = hmac.new(salted, b"Client Key", hashlib.sha1).digest()
    without_proof = f"c=biws,r={fields['r']}"
    auth_message = f"{first_bare},{server_first},{without_proof}".encode()
    signature = hmac.new(hashlib.sha1(client_key).digest(), auth_message, hashlib.sha1).digest()
    proof = bytes(a ^ b for a, b in zip(client_key, signature))
    final = f"{without_proof},p={base64.b64encode(proof).decode()}"
    await stream.send(f"<response xmlns='{SASL}'>{base64.b64encode(final.encode()).decode()}</response>")
    success = await stream.receive()
    check(success.tag == f"{{{SASL}}}success", f"success, got {ET.tostring(success)}")
    server_key = hmac.new(salted, b"Server Key", hashlib.sha1).digest()
    expected = "v=" + base64.b64encode(hmac.new(server_key, auth_message, hashlib.sha1).digest()).decode()
    check(base64.b64decode(success.text).decode() == expected, "the server proved it knows the password")


async def plain(stream, username, password):
    token = base64.b64encode(f"\0{username}\0{password}".encode()).decode()
    await stream.send(f"<auth xmlns='{SASL}' mechanism='PLAIN'>{token}</auth>")
    success = await stream.receive()
    check(success.tag == f"{{{SASL}}}success", f"success, got {ET.tostring(success)}")


async def register(url, username, password, **options):
    async with websockets.connect(url, subprotocols=["xmpp"], **options) as ws:
        stream = Stream(ws)
        await stream.open()
        await stream.iq(
            f"<iq xmlns='{CLIENT}' type='set' id='reg'><query xmlns='jabber:iq:register'>"
            f"<username>{username}</username><password>{password}</password></query></iq>")


async def bind(stream, resource):
    reply = await stream.iq(
        f"<iq xmlns='{CLIENT}' type='set' id='bind'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'>"
        f"<resource>{resource}</resource></bind></iq>")
    return reply.find(".//{urn:ietf:params:xml:ns:xmpp-bind}jid").text


async def start_session(stream):
    await stream.iq(f"<iq xmlns='{CLIENT}' type='get' id='roster'><query xmlns='jabber:iq:roster'/></iq>")
    await stream.send("<enable xmlns='urn:xmpp:sm:3' resume='true'/>")
    enabled = await stream.receive()
    check(enabled.tag == "{urn:xmpp:sm:3}enabled" and enabled.get("id"), f"<enabled/>, got {ET.tostring(enabled)}")
    await stream.send(f"<presence xmlns='{CLIENT}'/>")


async def main():
    with urllib.request.urlopen(f"http://{HOST}:{HTTP_PORT}/.well-known/host-meta.json", timeout=STEP_TIMEOUT) as reply:
        links = json.load(reply)["links"]
    endpoints = [link["href"] for link in links if link["rel"] == "urn:xmpp:alt-connections:websocket"]
    check(f"ws://{DOMAIN}:{HTTP_PORT}/xmpp-websocket" in endpoints, f"host-meta lists the endpoint: {endpoints}")
    check(f"wss://{DOMAIN}:{HTTPS_PORT}/xmpp-websocket" in endpoints, f"host-meta lists the TLS endpoint: {endpoints}")
    ok("host-meta.json lists ws:// and wss:// endpoints")

    tls = ssl.create_default_context(cafile=CA)
    secure = {"ssl": tls, "host": HOST}
    alice, bob, password = f"alice{uuid.uuid4().hex[:8]}", f"bob{uuid.uuid4().hex[:8]}", "correct horse"
    await register(WS, alice, password)
    await register(WSS, bob, password, **secure)
    ok("alice registered over ws://, bob over wss://")

    async with websockets.connect(WS, subprotocols=["xmpp"]) as alice_ws, \
            websockets.connect(WSS, subprotocols=["xmpp"], **secure) as bob_ws:
        check(alice_ws.subprotocol == "xmpp" and bob_ws.subprotocol == "xmpp", "the server chose the xmpp subprotocol")
        alice_stream, bob_stream = Stream(alice_ws), Stream(bob_ws)
        offered = mechanisms(await alice_stream.open())
        check("SCRAM-SHA-1" in offered and "PLAIN" not in offered, f"plain HTTP offers SCRAM, not PLAIN: {offered}")
        await scram_sha1(alice_stream, alice, password)
        await alice_stream.open()
        alice_jid = await bind(alice_stream, "browser")
        offered = mechanisms(await bob_stream.open())
        check("PLAIN" in offered, f"HTTPS offers PLAIN: {offered}")
        await plain(bob_stream, bob, password)
        await bob_stream.open()
        bob_jid = await bind(bob_stream, "browser")
        ok(f"logged in: {alice_jid} (SCRAM-SHA-1 over ws://), {bob_jid} (PLAIN over wss://)")

        await start_session(alice_stream)
        await start_session(bob_stream)
        ok("rosters fetched, stream management enabled, presence sent")

        body = f"hello over WebSocket {uuid.uuid4().hex[:6]}"
        await alice_stream.send(f"<message xmlns='{CLIENT}' to='{bob}@{DOMAIN}' type='chat' id='m1'><body>{body}</body></message>")
        while True:
            element = await bob_stream.receive()
            if element.tag == f"{{{CLIENT}}}message" and element.findtext(f"{{{CLIENT}}}body") == body:
                check(element.get("from") == alice_jid, f"from alice's full JID: {element.get('from')}")
                break
        ok("alice's message reached bob, one namespaced element per message")

        await bob_stream.iq(
            f"<iq xmlns='{CLIENT}' type='set' id='mam'><query xmlns='urn:xmpp:mam:2' queryid='q1'/></iq>")
        archived = [
            forwarded.findtext(f".//{{{CLIENT}}}body")
            for result in bob_stream.passed
            for forwarded in result.iter("{urn:xmpp:forward:0}forwarded")]
        check(body in archived, f"the message is in bob's archive: {archived}")
        ok("bob found the message in his archive (MAM)")

        await alice_ws.send(" ")
        pong = await alice_ws.ping()
        await asyncio.wait_for(pong, STEP_TIMEOUT)
        await alice_stream.iq(f"<iq xmlns='{CLIENT}' type='get' id='ping2'><ping xmlns='urn:xmpp:ping'/></iq>")
        ok("a whitespace message and a WebSocket ping keep the stream")

        await alice_stream.send(f"<close xmlns='{FRAMING}' see-other-uri='wss://elsewhere.example/xmpp-websocket'/>")
        while True:
            element = await alice_stream.receive()
            if element.tag == f"{{{FRAMING}}}close":
                break
        try:
            await asyncio.wait_for(alice_ws.recv(), STEP_TIMEOUT)
            fail("the server sent more after <close/>")
        except websockets.ConnectionClosedOK as closed:
            check(closed.rcvd is not None and closed.rcvd.code == 1000, f"a normal close: {closed.rcvd}")
        ok("<close/> with see-other-uri is answered with <close/> and close code 1000")

        await bob_stream.send(f"<iq xmlns='{CLIENT}' type='get' id='a'/><iq xmlns='{CLIENT}' type='get' id='b'/>")
        while True:
            element = await bob_stream.receive()
            if element.tag == f"{{{STREAMS}}}error":
                check(element.find("{urn:ietf:params:xml:ns:xmpp-streams}bad-format") is not None,
                      f"bad-format, got {ET.tostring(element)}")
                break
        check((await bob_stream.receive()).tag == f"{{{FRAMING}}}close", "<close/> after the stream error")
        ok("two elements in one message: bad-format, then <close/>")

    ok("all WebSocket interop steps passed")


asyncio.run(asyncio.wait_for(main(), 120))
