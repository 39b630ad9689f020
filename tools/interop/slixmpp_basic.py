#!/usr/bin/env python3
"""Interop check of swiftletd with slixmpp, a third-party XMPP library.

Against a running server (loopback only), with a fresh random username:
  1. in-band registration (XEP-0077) over STARTTLS,
  2. login with SCRAM-SHA-256 over STARTTLS, resource binding, XEP-0199 ping,
     XEP-0030 disco#info of the server,
  3. a login over STARTTLS with the mechanism slixmpp picks itself, where
     the server offers the -PLUS mechanisms and XEP-0440's types too,
  4. the same login with a wrong password is refused,
  5. SCRAM-SHA-1 login without TLS (allowed on a loopback-only server).
Prints one line per step and exits non-zero on the first failure. Every
step has a deadline, so the script always ends by itself.

Usage: slixmpp_basic.py HOST PORT DOMAIN CA_CERTIFICATE
(CA_CERTIFICATE: the server's local CA root, which slixmpp is
told to trust, so TLS is verified for real.)
"""
import asyncio
import logging
import secrets
import sys

import slixmpp
from slixmpp.exceptions import IqError

STEP_TIMEOUT = 20
CA_CERTIFICATE = None


class Client(slixmpp.ClientXMPP):
    """A client that records how its session went."""

    def __init__(self, jid, password, register=False, mechanism=None, tls=True):
        # slixmpp refuses SCRAM over plaintext unless told otherwise, as
        # XMPPFramework does not: that is the case this option tests.
        config = {} if tls else {"feature_mechanisms": {"unencrypted_scram": True}}
        super().__init__(jid, password, sasl_mech=mechanism, plugin_config=config)
        self.outcome = asyncio.get_event_loop().create_future()
        self.register_plugin("xep_0030")
        self.register_plugin("xep_0199")
        if register:
            self.register_plugin("xep_0077")
            self.plugin["xep_0077"].force_registration = True
            self.add_event_handler("register", self.on_register)
        self.enable_direct_tls = False
        self.ca_certs = CA_CERTIFICATE
        if not tls:
            self.enable_starttls = False
            self.enable_plaintext = True
        self.add_event_handler("session_start", self.on_start)
        self.add_event_handler("failed_auth", self.on_failed_auth)
        self.add_event_handler("disconnected", self.on_disconnected)
        self.register_only = register

    async def on_register(self, _event):
        iq = self.Iq()
        iq["type"] = "set"
        iq["register"]["username"] = self.boundjid.user
        iq["register"]["password"] = self.password
        try:
            await iq.send(timeout=STEP_TIMEOUT)
            self.finish(("registered", None))
        except IqError as error:
            self.finish(("registration-error", error.iq["error"]["condition"]))

    async def on_start(self, _event):
        try:
            details = {"jid": str(self.boundjid)}
            rtt = await self.plugin["xep_0199"].ping(jid=self.boundjid.domain, timeout=STEP_TIMEOUT)
            details["ping"] = rtt is not None
            info = await self.plugin["xep_0030"].get_info(jid=self.boundjid.domain, timeout=STEP_TIMEOUT)
            details["features"] = sorted(info["disco_info"]["features"])
            self.finish(("session", details))
        except Exception as error:  # any failure of the session steps
            self.finish(("session-error", repr(error)))

    def on_failed_auth(self, _event):
        self.finish(("auth-failed", None))

    def on_disconnected(self, _event):
        self.finish(("disconnected", None))

    def finish(self, result):
        if not self.outcome.done():
            self.outcome.set_result(result)


async def run(host, port, jid, password, **options):
    client = Client(jid, password, **options)
    client.connect(host=host, port=port)
    try:
        return await asyncio.wait_for(client.outcome, STEP_TIMEOUT)
    except asyncio.TimeoutError:
        return ("timeout", None)
    finally:
        client.disconnect()
        await asyncio.sleep(0.1)


def check(name, condition, detail):
    print(f"{'ok  ' if condition else 'FAIL'} {name}: {detail}")
    if not condition:
        sys.exit(1)


async def main():
    global CA_CERTIFICATE
    host, port, domain, CA_CERTIFICATE = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    user = "slix" + secrets.token_hex(4)
    jid, password = f"{user}@{domain}", "pw-" + secrets.token_hex(6)

    result = await run(host, port, jid, password, register=True)
    check("register over STARTTLS", result[0] == "registered", result)

    result = await run(host, port, jid + "/interop", password, mechanism="SCRAM-SHA-256")
    ok = result[0] == "session" and result[1]["ping"] and result[1]["jid"] == f"{jid}/interop"
    check("SCRAM-SHA-256 login, bind, ping, disco", ok, result)
    check("disco lists ping", "urn:xmpp:ping" in result[1]["features"], result[1]["features"])

    # slixmpp's own choice over TLS, where -PLUS and XEP-0440's types are
    # offered: it may try a channel binding we lack and fall back.
    result = await run(host, port, jid + "/own-choice", password)
    check("login with slixmpp's own choice of mechanism over STARTTLS", result[0] == "session", result)

    result = await run(host, port, jid, "wrong-password", mechanism="SCRAM-SHA-256")
    check("wrong password refused", result[0] in ("auth-failed", "disconnected"), result)

    result = await run(host, port, jid + "/plain", password, mechanism="SCRAM-SHA-1", tls=False)
    check("SCRAM-SHA-1 without TLS on loopback", result[0] == "session", result)

    result = await run(host, port, jid, password, register=True)
    check("registering a taken name is a conflict", result == ("registration-error", "conflict"), result)


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(main())
