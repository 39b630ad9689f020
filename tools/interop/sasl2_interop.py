#!/usr/bin/env python3
"""Modern login (SCRAM-PLUS, XEP-0388 SASL2, XEP-0386 Bind 2, XEP-0484
FAST, XEP-0440 channel-binding types, XEP-0474 downgrade protection)
checked against a running swiftletd (loopback only) by a client written
here from the RFCs and XEPs alone: its own XML stream, SCRAM (RFC 5802),
channel bindings (RFC 9266 tls-exporter through pyOpenSSL's keying
material export, RFC 5929 tls-server-end-point from the certificate) and
Hashed Token proofs, sharing no code with the server.

With two fresh accounts registered in-band over STARTTLS:
  1. RFC 6120 SASL, SCRAM-SHA-256-PLUS bound to tls-exporter (TLS 1.3 and
     TLS 1.2), SCRAM-SHA-1-PLUS bound to tls-server-end-point: the
     server's signature and its XEP-0474 h= over the <mechanisms/> and
     <sasl-channel-binding/> it advertised are checked, then the stream
     restarts and a resource is bound,
  2. SASL2 with SCRAM-SHA-256-PLUS, Bind 2 (a tag, carbons, stream
     management with resumption) and a request for an HT-SHA-256-EXPR
     token: a full JID under the tag, <enabled/> in <bound/>, a <token/>;
     then a ping and a message to the user's own JID are answered with no
     further negotiation,
  3. FAST logins with HT-SHA-256-EXPR, -ENDP and -NONE tokens: the
     server's Responder proof is checked, and the login takes one round
     trip after TLS (the stream header and <authenticate/> in one write),
  4. inline resumption: a session is dropped, the other account sends it
     a message, and a SASL2 login with <resume/> gets <resumed/> and then
     the message,
  5. refusals: a wrong FAST token is not-authorized; a token used with
     <fast invalidate='true'/> logs in once, then is credentials-expired;
     a GS2 'y' header over TLS, where -PLUS was offered, is not-authorized
     in both profiles.
Prints one `ok   ...` or `FAIL ...` line per step and exits non-zero on
the first failure. Every read has a deadline, so the script always ends
by itself.

Usage: sasl2_interop.py HOST PORT DOMAIN CA_CERTIFICATE
(CA_CERTIFICATE: the server's local CA root, trusted as the
root, so TLS is verified for real.)
"""
import base64
import hashlib
import hmac
import select
import socket
import sys
import time
import uuid
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape, quoteattr

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.serialization import Encoding
from OpenSSL import SSL

STEP_TIMEOUT = 20

STREAMS = "http://etherx.jabber.org/streams"
TLS = "urn:ietf:params:xml:ns:xmpp-tls"
SASL = "urn:ietf:params:xml:ns:xmpp-sasl"
SASL2 = "urn:xmpp:sasl:2"
BIND = "urn:ietf:params:xml:ns:xmpp-bind"
BIND2 = "urn:xmpp:bind:0"
FAST = "urn:xmpp:fast:0"
SM = "urn:xmpp:sm:3"
CB = "urn:xmpp:sasl-cb:0"
CARBONS = "urn:xmpp:carbons:2"
REGISTER = "jabber:iq:register"
PING = "urn:xmpp:ping"
STANZAS = ("message", "presence", "iq")


class Failure(Exception):
    """A step's check failed; the message says which."""


def require(condition, what):
    if not condition:
        raise Failure(what)


def b64(data):
    return base64.b64encode(data).decode()


def unb64(text):
    return base64.b64decode((text or "").strip(), validate=True)


def tag(namespace, name):
    return f"{{{namespace}}}{name}"


def child(element, namespace, name):
    return None if element is None else element.find(tag(namespace, name))


def text_of(element, namespace, name):
    found = child(element, namespace, name)
    return None if found is None else (found.text or "")


def show(element):
    return ET.tostring(element, encoding="unicode") if element is not None else "(nothing)"


class Stream:
    """One client connection: a socket, TLS through pyOpenSSL once
    STARTTLS succeeds, and an incremental parser that hands out the
    stream's top-level elements one at a time."""

    def __init__(self, server):
        self.server = server
        self.sock = socket.create_connection((server.host, server.port), timeout=STEP_TIMEOUT)
        self.sock.setblocking(False)
        self.tls = None
        self.features = None
        self.writes = 0
        self.inbound = 0  # stanzas received since stream management was enabled
        self.counting = False
        self._ready = []
        self._new_parser()

    def _new_parser(self):
        self._parser = ET.XMLPullParser(events=("start", "end"))
        self._depth = 0
        self._root = None
        self.closed = False

    # -- bytes ----------------------------------------------------------

    def _wait(self, readable, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise Failure("timed out waiting for the server")
        if readable:
            ready = select.select([self.sock], [], [], remaining)[0]
        else:
            ready = select.select([], [self.sock], [], remaining)[1]
        if not ready:
            raise Failure("timed out waiting for the server")

    def write(self, text, counted=True):
        """Sends `text`; `writes` counts the client's own turns (acks to
        the server's <r/> are not turns)."""
        data = text.encode()
        deadline = time.monotonic() + STEP_TIMEOUT
        self.writes += counted
        while data:
            try:
                sent = (self.tls or self.sock).send(data)
                data = data[sent:]
            except (SSL.WantWriteError, BlockingIOError):
                self._wait(False, deadline)
            except SSL.WantReadError:
                self._wait(True, deadline)

    def _read(self, deadline):
        while True:
            try:
                data = (self.tls or self.sock).recv(65536)
            except (SSL.WantReadError, BlockingIOError):
                self._wait(True, deadline)
                continue
            except SSL.ZeroReturnError:
                data = b""
            except (SSL.SysCallError, ConnectionError):
                data = b""
            return data

    def drop(self):
        """Ends the TCP connection without closing the stream or TLS."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    # -- elements -------------------------------------------------------

    def receive(self, timeout=STEP_TIMEOUT):
        """The next top-level element; raises on a stream error, the end of
        the stream or the deadline. Answers the server's <r/> itself."""
        deadline = time.monotonic() + timeout
        while True:
            while self._ready:
                element = self._ready.pop(0)
                if element.tag == tag(STREAMS, "error"):
                    raise Failure(f"stream error: {show(element)}")
                if element.tag == tag(SM, "r"):
                    self.write(f"<a xmlns='{SM}' h='{self.inbound}'/>", counted=False)
                    continue
                if self.counting and element.tag.split("}")[-1] in STANZAS:
                    self.inbound += 1
                return element
            if self.closed:
                raise Failure("the server closed the stream")
            data = self._read(deadline)
            if not data:
                raise Failure("the server closed the connection")
            self._parser.feed(data)
            for event, element in self._parser.read_events():
                if event == "start":
                    self._depth += 1
                    if self._depth == 1:
                        self._root = element
                else:
                    self._depth -= 1
                    if self._depth == 1:
                        self._ready.append(element)
                        self._root.remove(element)
                    elif self._depth == 0:
                        self.closed = True

    def receive_named(self, namespace, name, timeout=STEP_TIMEOUT):
        """Skips anything else until `name` in `namespace` comes."""
        deadline = time.monotonic() + timeout
        while True:
            element = self.receive(max(0.01, deadline - time.monotonic()))
            if element.tag == tag(namespace, name):
                return element

    def header(self):
        return (
            "<?xml version='1.0'?><stream:stream xmlns='jabber:client' "
            f"xmlns:stream='{STREAMS}' to='{self.server.domain}' version='1.0'>"
        )

    def open(self, also=""):
        """Opens (or restarts) the stream, with `also` in the same write;
        returns the features."""
        self._new_parser()
        self.write(self.header() + also)
        self.features = self.receive()
        require(self.features.tag == tag(STREAMS, "features"), f"expected features, got {show(self.features)}")
        return self.features

    def request_tls(self):
        """Opens the stream and asks for STARTTLS, up to <proceed/>."""
        features = self.open()
        require(child(features, TLS, "starttls") is not None, f"no STARTTLS offered: {show(features)}")
        self.write(f"<starttls xmlns='{TLS}'/>")
        proceed = self.receive()
        require(proceed.tag == tag(TLS, "proceed"), f"STARTTLS refused: {show(proceed)}")

    def secure(self, version=SSL.TLS1_3_VERSION):
        """The TLS handshake, TLS 1.2 up to `version`, the certificate
        verified against the CA file and for the domain; counting of
        writes starts again after it."""
        context = SSL.Context(SSL.TLS_CLIENT_METHOD)
        context.set_min_proto_version(SSL.TLS1_2_VERSION)
        context.set_max_proto_version(version)
        context.load_verify_locations(self.server.ca_certificate)
        context.set_verify(SSL.VERIFY_PEER, lambda _conn, _cert, _errno, _depth, ok: bool(ok))
        self.tls = SSL.Connection(context, self.sock)
        self.tls.set_tlsext_host_name(self.server.domain.encode())
        self.tls.set_connect_state()
        deadline = time.monotonic() + STEP_TIMEOUT
        while True:
            try:
                self.tls.do_handshake()
                break
            except SSL.WantReadError:
                self._wait(True, deadline)
            except SSL.WantWriteError:
                self._wait(False, deadline)
        names = self.certificate().extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        require(self.server.domain in names.get_values_for_type(x509.DNSName), "certificate does not name the domain")
        self.writes = 0

    def starttls(self, version=SSL.TLS1_3_VERSION):
        """STARTTLS, then the new stream; returns its features."""
        self.request_tls()
        self.secure(version)
        return self.open()

    def certificate(self):
        return self.tls.get_peer_certificate().to_cryptography()

    # -- channel bindings -----------------------------------------------

    def channel_binding(self, kind):
        """RFC 9266 tls-exporter: 32 bytes exported with its label and an
        empty context. RFC 5929 tls-server-end-point: the server
        certificate hashed with its signature's hash, SHA-256 in place
        of MD5 and SHA-1."""
        if kind == "tls-exporter":
            return self.tls.export_keying_material(b"EXPORTER-Channel-Binding", 32, b"")
        if kind == "tls-server-end-point":
            certificate = self.certificate()
            algorithm = certificate.signature_hash_algorithm
            if algorithm is None or isinstance(algorithm, (hashes.MD5, hashes.SHA1)):
                algorithm = hashes.SHA256()
            digest = hashes.Hash(algorithm)
            digest.update(certificate.public_bytes(Encoding.DER))
            return digest.finalize()
        raise ValueError(kind)

    def tls_version(self):
        return self.tls.get_protocol_version_name()


# -- SCRAM (RFC 5802) and XEP-0474 --------------------------------------

SCRAM_HASHES = {"SCRAM-SHA-1": "sha1", "SCRAM-SHA-256": "sha256"}


def downgrade_hash(hash_name, mechanisms, channel_bindings):
    """XEP-0474: the mechanisms sorted by octets and joined by 0x1E, then
    0x1F and the channel-binding types likewise, hashed and in base64."""
    text = b"\x1e".join(sorted(m.encode() for m in mechanisms))
    if channel_bindings is not None:
        text += b"\x1f" + b"\x1e".join(sorted(c.encode() for c in channel_bindings))
    return b64(hashlib.new(hash_name, text).digest())


def advertised(features, sasl2):
    """The mechanisms of the profile in use and the XEP-0440 types."""
    holder = child(features, SASL2, "authentication") if sasl2 else child(features, SASL, "mechanisms")
    namespace = SASL2 if sasl2 else SASL
    mechanisms = [m.text for m in holder.findall(tag(namespace, "mechanism"))] if holder is not None else []
    types = child(features, CB, "sasl-channel-binding")
    bindings = None if types is None else [c.get("type") for c in types.findall(tag(CB, "channel-binding"))]
    return mechanisms, bindings


class Scram:
    """The client side of one SCRAM exchange."""

    def __init__(self, mechanism, username, password, gs2="n,,", binding=b""):
        self.mechanism = mechanism
        self.hash = SCRAM_HASHES[mechanism.removesuffix("-PLUS")]
        self.password = password.encode()
        self.gs2 = gs2
        self.binding = binding
        self.nonce = b64(uuid.uuid4().bytes + uuid.uuid4().bytes).rstrip("=")
        name = username.replace("=", "=3D").replace(",", "=2C")
        self.first_bare = f"n={name},r={self.nonce}"
        self.server_key = self.auth_message = None
        self.attributes = {}

    def client_first(self):
        return (self.gs2 + self.first_bare).encode()

    def _hmac(self, key, message):
        return hmac.new(key, message, self.hash).digest()

    def client_final(self, server_first):
        server_first = server_first.decode()
        self.attributes = dict(part.split("=", 1) for part in server_first.split(","))
        nonce = self.attributes["r"]
        require(nonce.startswith(self.nonce) and len(nonce) > len(self.nonce), "server nonce does not extend ours")
        salted = hashlib.pbkdf2_hmac(self.hash, self.password, unb64(self.attributes["s"]), int(self.attributes["i"]))
        client_key = self._hmac(salted, b"Client Key")
        stored_key = hashlib.new(self.hash, client_key).digest()
        self.server_key = self._hmac(salted, b"Server Key")
        without_proof = f"c={b64(self.gs2.encode() + self.binding)},r={nonce}"
        self.auth_message = f"{self.first_bare},{server_first},{without_proof}".encode()
        signature = self._hmac(stored_key, self.auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        return f"{without_proof},p={b64(proof)}".encode()

    def check_server_final(self, server_final):
        expected = "v=" + b64(self._hmac(self.server_key, self.auth_message))
        require(server_final.decode() == expected, f"server signature {server_final!r} is not {expected!r}")

    def check_downgrade_hash(self, mechanisms, bindings):
        expected = downgrade_hash(self.hash, mechanisms, bindings)
        require(self.attributes.get("h") == expected, f"h={self.attributes.get('h')} is not {expected}")


def gs2_for(kind):
    return f"p={kind},," if kind else "n,,"


# -- Hashed Token (XEP-0484) ---------------------------------------------

FAST_BINDINGS = {"HT-SHA-256-EXPR": "tls-exporter", "HT-SHA-256-ENDP": "tls-server-end-point", "HT-SHA-256-NONE": None}


def fast_binding(stream, mechanism):
    kind = FAST_BINDINGS[mechanism]
    return stream.channel_binding(kind) if kind else b""


def token_proof(token, label, binding):
    return hmac.new(token.encode(), label + binding, "sha256").digest()


# -- the server and its accounts -----------------------------------------


class Server:
    def __init__(self, host, port, domain, ca_certificate):
        self.host, self.port, self.domain, self.ca_certificate = host, int(port), domain, ca_certificate

    def register(self, username, password):
        stream = Stream(self)
        stream.starttls()
        stream.write(
            f"<iq type='set' id='reg'><query xmlns='{REGISTER}'><username>{escape(username)}</username>"
            f"<password>{escape(password)}</password></query></iq>"
        )
        reply = stream.receive_named("jabber:client", "iq")
        require(reply.get("type") == "result", f"registration of {username} failed: {show(reply)}")
        stream.drop()


def user_agent(agent_id):
    return f"<user-agent id={quoteattr(agent_id)}><software>sasl2_interop.py</software><device>loopback</device></user-agent>"


BIND_REQUEST = (
    f"<bind xmlns='{BIND2}'><tag>Interop</tag><enable xmlns='{CARBONS}'/>"
    f"<enable xmlns='{SM}' resume='true'/></bind>"
)


def legacy_scram(server, username, password, mechanism, kind, tls_version=SSL.TLS1_3_VERSION):
    """RFC 6120 SASL with `mechanism` bound to `kind`; then the restart
    and a bound resource. Returns the stream's TLS version."""
    stream = Stream(server)
    features = stream.starttls(tls_version)
    bindings = advertised(features, sasl2=False)[1]
    require(kind in (bindings or []), f"{kind} is not among the channel-binding types {bindings}")
    scram_exchange(stream, username, password, mechanism, kind, sasl2=False)
    features = stream.open()
    require(child(features, BIND, "bind") is not None, f"no <bind/> after the restart: {show(features)}")
    stream.write(f"<iq type='set' id='b1'><bind xmlns='{BIND}'><resource>legacy</resource></bind></iq>")
    bound = stream.receive_named("jabber:client", "iq")
    jid = text_of(child(bound, BIND, "bind"), BIND, "jid")
    require(jid == f"{username}@{server.domain}/legacy", f"bound {jid}: {show(bound)}")
    version = stream.tls_version()
    stream.drop()
    return version


def scram_exchange(stream, username, password, mechanism, kind, sasl2, inline=""):
    """A SCRAM exchange on a secured stream, in RFC 6120's profile or in
    SASL2's with `inline` in <authenticate/>; returns <success/>, the
    server's signature and h= checked."""
    mechanisms, bindings = advertised(stream.features, sasl2)
    require(mechanism in mechanisms, f"{mechanism} is not offered: {mechanisms}")
    binding = stream.channel_binding(kind) if kind else b""
    scram = Scram(mechanism, username, password, gs2_for(kind), binding)
    namespace = SASL2 if sasl2 else SASL
    if sasl2:
        stream.write(
            f"<authenticate xmlns='{SASL2}' mechanism='{mechanism}'><initial-response>{b64(scram.client_first())}"
            f"</initial-response>{inline}</authenticate>"
        )
    else:
        stream.write(f"<auth xmlns='{SASL}' mechanism='{mechanism}'>{b64(scram.client_first())}</auth>")
    challenge = stream.receive()
    require(challenge.tag == tag(namespace, "challenge"), f"expected a challenge: {show(challenge)}")
    final = scram.client_final(unb64(challenge.text))
    scram.check_downgrade_hash(mechanisms, bindings)
    stream.write(f"<response xmlns='{namespace}'>{b64(final)}</response>")
    success = stream.receive()
    require(success.tag == tag(namespace, "success"), f"expected success: {show(success)}")
    scram.check_server_final(unb64(text_of(success, SASL2, "additional-data") if sasl2 else success.text))
    return success


def sasl2_scram(stream, username, password, inline, mechanism="SCRAM-SHA-256-PLUS", kind="tls-exporter"):
    """SASL2 SCRAM, bound to tls-exporter unless told otherwise."""
    return scram_exchange(stream, username, password, mechanism, kind, sasl2=True, inline=inline)


def fast_login(server, username, token, mechanism, agent, extra=""):
    """A FAST login on a new connection: after STARTTLS, the new stream's
    header and <authenticate/> go in one write. Returns the stream, the
    answer, the channel binding used and the round trips after TLS."""
    stream = Stream(server)
    stream.request_tls()
    stream.secure()
    binding = fast_binding(stream, mechanism)
    initiator = username.encode() + b"\0" + token_proof(token, b"Initiator", binding)
    stream._new_parser()
    stream.write(
        stream.header() + f"<authenticate xmlns='{SASL2}' mechanism='{mechanism}'><initial-response>{b64(initiator)}"
        f"</initial-response>{user_agent(agent)}<fast xmlns='{FAST}'{extra}/>{BIND_REQUEST}</authenticate>"
    )
    stream.features = stream.receive()
    offered = child(child(child(stream.features, SASL2, "authentication"), SASL2, "inline"), FAST, "fast")
    require(offered is not None and mechanism in [m.text for m in offered], f"{mechanism} not offered: {show(offered)}")
    answer = stream.receive()
    return stream, answer, binding, stream.writes


def request_token(server, username, password, mechanism, agent):
    """A SASL2 SCRAM-SHA-256-PLUS login asking for a `mechanism` token for
    the client `agent`; returns the token."""
    stream = Stream(server)
    stream.starttls()
    success = sasl2_scram(
        stream, username, password, user_agent(agent) + f"<request-token xmlns='{FAST}' mechanism='{mechanism}'/>"
    )
    token = child(success, FAST, "token")
    require(token is not None and token.get("token") and token.get("expiry"), f"no token: {show(success)}")
    stream.drop()
    return token.get("token")


def failure_condition(answer, namespace):
    require(answer.tag == tag(namespace, "failure"), f"expected a failure: {show(answer)}")
    return [c.tag.split("}")[-1] for c in answer if c.tag.startswith("{" + SASL + "}")]


# -- the steps ------------------------------------------------------------


def step_legacy_plus(server, user, password):
    for mechanism, kind, version in [
        ("SCRAM-SHA-256-PLUS", "tls-exporter", SSL.TLS1_3_VERSION),
        ("SCRAM-SHA-256-PLUS", "tls-exporter", SSL.TLS1_2_VERSION),
        ("SCRAM-SHA-1-PLUS", "tls-server-end-point", SSL.TLS1_3_VERSION),
    ]:
        tls = legacy_scram(server, user, password, mechanism, kind, version)
        ok(f"RFC 6120 {mechanism} bound to {kind} over {tls}: server signature and XEP-0474 h= match, bound")


def step_sasl2_bind2(server, user, password):
    """Returns the token and the stream, still open, with its session's
    full JID and stream management id."""
    stream = Stream(server)
    features = stream.starttls()
    authentication = child(features, SASL2, "authentication")
    require(authentication is not None, f"no SASL2 offered: {show(features)}")
    inline = child(authentication, SASL2, "inline")
    require(child(inline, BIND2, "bind") is not None, f"no Bind 2 inline: {show(authentication)}")
    agent = str(uuid.uuid4())
    success = sasl2_scram(
        stream, user, password,
        user_agent(agent) + BIND_REQUEST + f"<request-token xmlns='{FAST}' mechanism='HT-SHA-256-EXPR'/>",
    )
    full = text_of(success, SASL2, "authorization-identifier") or ""
    require(full.startswith(f"{user}@{server.domain}/Interop"), f"authorization-identifier {full!r}")
    enabled = child(child(success, BIND2, "bound"), SM, "enabled")
    require(enabled is not None and enabled.get("resume") in ("true", "1") and enabled.get("id"), f"no <enabled/>: {show(success)}")
    token = child(success, FAST, "token")
    require(token is not None and token.get("token"), f"no <token/>: {show(success)}")
    stream.counting = True
    after = stream.receive()
    require(after.tag == tag(STREAMS, "features") and child(after, BIND, "bind") is None, f"then {show(after)}")
    stream.writes = 0
    stream.write(f"<iq type='get' id='p1'><ping xmlns='{PING}'/></iq>")
    pong = stream.receive_named("jabber:client", "iq")
    require(pong.get("type") == "result" and pong.get("id") == "p1", f"ping answered {show(pong)}")
    stream.write(f"<message to={quoteattr(full)} type='chat' id='self1'><body>to myself</body></message>")
    echo = stream.receive_named("jabber:client", "message")
    require(text_of(echo, "jabber:client", "body") == "to myself", f"got {show(echo)}")
    require(stream.writes == 2, f"{stream.writes} writes for a ping and a message")
    ok(f"SASL2 SCRAM-SHA-256-PLUS with Bind 2: {full}, carbons and <enabled resume/>, a token; ping and self-message answered at once")
    return agent, token.get("token"), stream, full, enabled.get("id")


def step_fast(server, user, password, agent, token):
    """Logs in with the token of step 2 (HT-SHA-256-EXPR), and with a
    token of each other mechanism for a client of its own."""
    for mechanism in FAST_BINDINGS:
        if mechanism != "HT-SHA-256-EXPR":
            agent = str(uuid.uuid4())
            token = request_token(server, user, password, mechanism, agent)
        stream, answer, binding, round_trips = fast_login(server, user, token, mechanism, agent)
        require(answer.tag == tag(SASL2, "success"), f"{mechanism} login refused: {show(answer)}")
        responder = unb64(text_of(answer, SASL2, "additional-data"))
        require(hmac.compare_digest(responder, token_proof(token, b"Responder", binding)), "wrong Responder proof")
        require(round_trips == 1, f"{round_trips} round trips after TLS")
        require(child(answer, BIND2, "bound") is not None, f"not bound: {show(answer)}")
        stream.drop()
        ok(f"FAST {mechanism}: one round trip after TLS, the server's Responder proof matches")


def step_resumption(server, user, password, other, other_password, stream, full, previd):
    """Drops the session of step 2; `other` writes to it; the resumed
    session gets the message after <resumed/>."""
    handled = stream.inbound
    stream.drop()
    sender = Stream(server)
    sender.starttls()
    sasl2_scram(sender, other, other_password, user_agent(str(uuid.uuid4())) + BIND_REQUEST)
    sender.receive()  # the features
    sender.write(f"<message to={quoteattr(full)} type='chat' id='while-away'><body>while you were away</body></message>")
    sender.write(f"<iq type='get' id='p2'><ping xmlns='{PING}'/></iq>")
    sender.receive_named("jabber:client", "iq")  # the message went before the ping's answer
    back = Stream(server)
    back.starttls()
    success = sasl2_scram(
        back, user, password, user_agent(str(uuid.uuid4())) + f"<resume xmlns='{SM}' previd={quoteattr(previd)} h='{handled}'/>" + BIND_REQUEST
    )
    resumed = child(success, SM, "resumed")
    require(resumed is not None and resumed.get("previd") == previd, f"not resumed: {show(success)}")
    require(text_of(success, SASL2, "authorization-identifier") == full, f"resumed as {show(success)}")
    message = back.receive_named("jabber:client", "message")
    require(text_of(message, "jabber:client", "body") == "while you were away", f"got {show(message)}")
    back.drop()
    sender.drop()
    ok("inline resumption in SASL2: <resumed/>, then the message sent while detached")


def step_refusals(server, user, password):
    agent = str(uuid.uuid4())
    token = request_token(server, user, password, "HT-SHA-256-EXPR", agent)
    stream, answer, _, _ = fast_login(server, user, token[:-2] + ("AA" if token[-2:] != "AA" else "BB"), "HT-SHA-256-EXPR", agent)
    require(failure_condition(answer, SASL2) == ["not-authorized"], f"wrong token: {show(answer)}")
    stream.drop()
    ok("a wrong FAST token is not-authorized")
    stream, answer, _, _ = fast_login(server, user, token, "HT-SHA-256-EXPR", agent, extra=" invalidate='true'")
    require(answer.tag == tag(SASL2, "success"), f"the invalidating login failed: {show(answer)}")
    stream.drop()
    stream, answer, _, _ = fast_login(server, user, token, "HT-SHA-256-EXPR", agent)
    require(failure_condition(answer, SASL2) == ["credentials-expired"], f"invalidated token: {show(answer)}")
    stream.drop()
    ok("a token used with <fast invalidate='true'/> logs in once, then is credentials-expired")
    # RFC 5802 §6: 'y' says the client could bind but saw no -PLUS; the
    # server did offer them, so someone took them out of the list.
    stream = Stream(server)
    stream.starttls()
    scram = Scram("SCRAM-SHA-256", user, password, gs2="y,,")
    stream.write(f"<auth xmlns='{SASL}' mechanism='SCRAM-SHA-256'>{b64(scram.client_first())}</auth>")
    answer = stream.receive()
    require(failure_condition(answer, SASL) == ["not-authorized"], f"GS2 'y' in RFC 6120 SASL: {show(answer)}")
    stream.write(
        f"<authenticate xmlns='{SASL2}' mechanism='SCRAM-SHA-256'><initial-response>{b64(scram.client_first())}"
        "</initial-response></authenticate>"
    )
    answer = stream.receive()
    require(failure_condition(answer, SASL2) == ["not-authorized"], f"GS2 'y' in SASL2: {show(answer)}")
    stream.drop()
    ok("a GS2 'y' header over TLS, with -PLUS offered, is not-authorized in both profiles")


def ok(what):
    print(f"ok   {what}", flush=True)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    server = Server(*sys.argv[1:])
    suffix = uuid.uuid4().hex[:8]
    user, password = f"modern{suffix}", f"pässwörd-{suffix}"
    other, other_password = f"sender{suffix}", f"other-{suffix}"
    steps = 0
    try:
        server.register(user, password)
        server.register(other, other_password)
        ok(f"registered {user} and {other} in-band over STARTTLS")
        step_legacy_plus(server, user, password)
        agent, token, stream, full, previd = step_sasl2_bind2(server, user, password)
        step_resumption(server, user, password, other, other_password, stream, full, previd)
        # After the resumption: a FAST login of the same client with the
        # same tag gets the same resource, and replaces that session.
        step_fast(server, user, password, agent, token)
        step_refusals(server, user, password)
    except (Failure, SSL.Error, OSError) as failure:
        print(f"FAIL {type(failure).__name__}: {failure}", flush=True)
        sys.exit(1)
    ok("all modern login interop steps passed")


if __name__ == "__main__":
    main()
