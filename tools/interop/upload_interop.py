#!/usr/bin/env python3
"""HTTP file upload interop check of swiftletd with slixmpp's XEP-0363
plugin, against a running server (loopback only) whose upload service
hands out SCHEME URLs and takes files of at most MAX_SIZE bytes:
  1. alice and bob, fresh random accounts, register in-band (XEP-0077)
     over STARTTLS and log in; bob is available,
  2. alice's upload_file finds the service by disco (upload.DOMAIN, with
     max-file-size MAX_SIZE in its form), asks for a slot and PUTs a file
     of 1 MiB random bytes with aiohttp, over http or https as the server
     says (https: verified against the server's local CA root),
  3. alice sends bob the GET URL in a chat message, in the body and in a
     XEP-0066 <x xmlns='jabber:x:oob'><url/></x>,
  4. bob gets the message, downloads the URL with aiohttp and finds the
     same bytes (SHA-256), with the content type of the upload,
  5. the Openfire-style address httpfileupload.DOMAIN hands out slots too,
  6. a file over MAX_SIZE: upload_file refuses it from the disco limit
     (FileTooBig), and a slot request sent anyway gets not-acceptable with
     <file-too-large><max-file-size>MAX_SIZE</max-file-size></file-too-large>.
Prints one line per step and exits non-zero on the first failure. Every
step has a deadline, so the script always ends by itself.

Usage: upload_interop.py HOST PORT DOMAIN CA_CERTIFICATE SCHEME MAX_SIZE
(CA_CERTIFICATE: the server's local CA root, trusted for XMPP's
STARTTLS and for HTTPS; SCHEME: http or https, what the slot URLs must use.)
"""
import os
import sys

# slixmpp's upload_file PUTs through aiohttp's default TLS context, which
# aiohttp builds from the default trust store when it is imported, before
# any code here could add a certificate. OpenSSL reads that store from
# SSL_CERT_FILE: point it at the server's certificate before the import.
if len(sys.argv) > 4:
    os.environ["SSL_CERT_FILE"] = sys.argv[4]

import asyncio  # noqa: E402
import hashlib  # noqa: E402
import io  # noqa: E402
import logging  # noqa: E402
import ssl  # noqa: E402
import xml.etree.ElementTree as ElementTree  # noqa: E402

import aiohttp  # noqa: E402
import slixmpp  # noqa: E402
from slixmpp.exceptions import IqError  # noqa: E402
from slixmpp.plugins.xep_0363.http_upload import FileTooBig  # noqa: E402

import slixmpp_account  # noqa: E402

STEP_TIMEOUT = 20
FILE_SIZE = 1 << 20
CONTENT_TYPE = "application/octet-stream"
UPLOAD = "urn:xmpp:http:upload:0"
STANZAS = "urn:ietf:params:xml:ns:xmpp-stanzas"
PLUGINS = ("xep_0030", "xep_0066", "xep_0128", "xep_0199", "xep_0363")


class Peer(slixmpp_account.Peer):
    """One slixmpp account: its connection and the messages it received,
    as (from, body, oob url)."""

    def __init__(self, server, name):
        super().__init__(server, name, PLUGINS, "upload", self._record, STEP_TIMEOUT)

    @staticmethod
    def _record(message):
        return str(message["from"]), message["body"], message["oob"]["url"]

    @property
    def upload(self):
        return self.client.plugin["xep_0363"]


require = slixmpp_account.require


async def step(name, coroutine):
    await slixmpp_account.step(name, coroutine, STEP_TIMEOUT)


async def download(url, ca_certificate):
    """The body and content type of a GET of `url`, the server's
    certificate trusted explicitly (not through SSL_CERT_FILE)."""
    context = ssl.create_default_context(cafile=ca_certificate)
    async with aiohttp.ClientSession() as session:
        async with session.get(url, ssl=context) as response:
            require(response.status == 200, f"GET {url}: {response.status}")
            return await response.read(), response.headers.get("Content-Type")


async def scenario(server):
    alice, bob = Peer(server, "upa"), Peer(server, "upb")
    domain, scheme, max_size = server["domain"], server["scheme"], server["max_size"]
    data = os.urandom(FILE_SIZE)
    uploaded = {}

    async def register_and_login():
        await alice.register()
        await bob.register()
        await alice.login()
        await bob.login()
        return f"alice={alice.jid}, bob={bob.jid}"

    await step("both register and log in", register_and_login())

    async def upload():
        url = await alice.upload.upload_file(
            "random data.bin", size=len(data), content_type=CONTENT_TYPE, input_file=io.BytesIO(data),
            timeout=STEP_TIMEOUT)
        service = str(alice.upload.upload_service)
        require(service == f"upload.{domain}", f"service found by disco: {service}")
        require(alice.upload.max_file_size == max_size, f"max-file-size from disco: {alice.upload.max_file_size}")
        require(url.startswith(f"{scheme}://"), f"GET URL {url}")
        require(url.endswith("/random%20data.bin"), f"GET URL {url}")
        uploaded["url"] = url
        return f"{len(data)} bytes via {service} (limit {max_size}), GET {url}"

    await step(f"alice uploads 1 MiB with upload_file over {scheme}", upload())

    async def send_link():
        url = uploaded["url"]
        message = alice.client.make_message(mto=bob.jid, mbody=url, mtype="chat")
        message["oob"]["url"] = url
        message.send()
        await bob.until(lambda: bob.messages)
        sender, body, oob = bob.messages[-1]
        require(sender.startswith(alice.jid + "/"), f"from {sender}")
        require(body == url and oob == url, f"body {body!r}, oob url {oob!r}")
        return "body and jabber:x:oob url"

    await step("alice sends bob the URL with XEP-0066 out-of-band data", send_link())

    async def fetch():
        body, content_type = await download(bob.messages[-1][2], server["ca"])
        require(len(body) == len(data), f"{len(body)} bytes, expected {len(data)}")
        digest = hashlib.sha256(body).hexdigest()
        require(digest == hashlib.sha256(data).hexdigest(), "the downloaded bytes differ")
        require(content_type == CONTENT_TYPE, f"Content-Type {content_type}")
        return f"sha256 {digest[:16]}…"

    await step("bob downloads the URL and gets the same bytes", fetch())

    async def openfire_address():
        reply = await alice.upload.request_slot(
            slixmpp.JID(f"httpfileupload.{domain}"), "photo.jpg", 1234, "image/jpeg", timeout=STEP_TIMEOUT)
        slot = reply["http_upload_slot"]
        put, get = slot["put"]["url"], slot["get"]["url"]
        require(put.startswith(f"{scheme}://") and get.startswith(f"{scheme}://"), f"put {put}, get {get}")
        return get

    await step(f"httpfileupload.{domain} hands out slots too", openfire_address())

    async def too_large():
        size = max_size + 1
        try:
            await alice.upload.upload_file(
                "big.bin", size=size, content_type=CONTENT_TYPE, input_file=io.BytesIO(b""), timeout=STEP_TIMEOUT)
        except FileTooBig as error:
            require(error.args == (size, max_size), f"FileTooBig{error.args}")
        else:
            raise AssertionError("upload_file took a file over the limit")
        try:
            await alice.upload.request_slot(
                slixmpp.JID(f"upload.{domain}"), "big.bin", size, CONTENT_TYPE, timeout=STEP_TIMEOUT)
        except IqError as error:
            stanza_error = error.iq["error"]
            require(stanza_error["condition"] == "not-acceptable", f"condition {stanza_error['condition']}")
            require(stanza_error["type"] == "modify", f"type {stanza_error['type']}")
            xml = ElementTree.fromstring(str(error.iq))
            limit = xml.find(f".//{{{UPLOAD}}}file-too-large/{{{UPLOAD}}}max-file-size")
            require(limit is not None and limit.text == str(max_size), f"error {error.iq}")
            return f"FileTooBig from disco; not-acceptable with max-file-size {limit.text}"
        raise AssertionError(f"a slot for {size} bytes was handed out, the limit being {max_size}")

    await step("a file over the limit is refused with the limit", too_large())

    async def log_out():
        await asyncio.gather(alice.logout(), bob.logout())

    await step("both log out", log_out())


async def main():
    host, port, domain, ca_certificate = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    scheme, max_size = sys.argv[5], int(sys.argv[6])
    if scheme not in ("http", "https"):
        sys.exit(f"SCHEME must be http or https, not {scheme}")
    await scenario({
        "host": host, "port": port, "domain": domain, "ca": ca_certificate, "scheme": scheme, "max_size": max_size})
    print(f"ok   all upload interop steps passed: {scheme}")


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(main())
