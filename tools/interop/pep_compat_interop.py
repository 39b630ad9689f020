#!/usr/bin/env python3
"""PEP interop check of swiftletd for what OMEMO, bookmarks and avatars
need, across two third-party libraries (slixmpp and aioxmpp), against a
running server (loopback only). Alice is logged in with both libraries
(two resources of one account); Bob, on aioxmpp, is not her contact.
  1. both register in-band (XEP-0077) over STARTTLS and log in,
  2. OMEMO-style keys: Alice on slixmpp publishes a device list and a
     bundle with publish-options access_model=open (XEP-0060 §7.1.5,
     XEP-0384's nodes); Bob on aioxmpp, a stranger, fetches both,
  3. a publish whose options contradict the node's configuration is
     refused with conflict + precondition-not-met,
  4. bookmarks: Alice on slixmpp stores XEP-0048 bookmarks in private XML
     storage (XEP-0049); Alice on aioxmpp reads them as XEP-0402 items
     of urn:xmpp:bookmarks:1, one per room, id the room's JID,
  5. and the reverse: Alice on aioxmpp publishes an XEP-0402 bookmark
     (with the publish-options XEP-0402 asks for); Alice on slixmpp reads
     it through XEP-0049 as an XEP-0048 conference,
  6. avatars: Alice on aioxmpp sets a vCard photo (XEP-0054); Alice on
     slixmpp reads the XEP-0084 metadata and data from PEP, the id the
     SHA-1 of the image (XEP-0398),
  7. and the reverse: Alice on slixmpp publishes an XEP-0084 avatar;
     Alice on aioxmpp reads her vCard and finds that image in PHOTO.
Prints one line per step and exits non-zero on the first failure. Every
step has a deadline, so the script always ends by itself.

Usage: pep_compat_interop.py HOST PORT DOMAIN CA_CERTIFICATE
(CA_CERTIFICATE: the server's local CA root, which both libraries
are told to trust, so TLS is verified for real.)
"""
import asyncio
import base64
import hashlib
import logging
import secrets
import sys
import xml.etree.ElementTree as ET

import aioxmpp
import aioxmpp.forms
import aioxmpp.pubsub
import aioxmpp.vcard
import aioxmpp.xso
from slixmpp.exceptions import IqError
from slixmpp.plugins.xep_0048 import Bookmarks

import im_interop
import slixmpp_account
from slixmpp_account import require

STEP_TIMEOUT = im_interop.STEP_TIMEOUT
OMEMO = "eu.siacs.conversations.axolotl"
BOOKMARKS = "urn:xmpp:bookmarks:1"
PUBSUB_ERRORS = "http://jabber.org/protocol/pubsub#errors"
AVATAR_DATA = "urn:xmpp:avatar:data"
AVATAR_METADATA = "urn:xmpp:avatar:metadata"


@aioxmpp.pubsub.xso.as_payload_class
class Conference(aioxmpp.xso.XSO):
    """An XEP-0402 bookmark, the payload of an urn:xmpp:bookmarks:1 item."""
    TAG = (BOOKMARKS, "conference")
    name = aioxmpp.xso.Attr("name", default=None)
    autojoin = aioxmpp.xso.Attr("autojoin", type_=aioxmpp.xso.Bool(), default=False)
    nick = aioxmpp.xso.ChildText((BOOKMARKS, "nick"), default=None)


class SlixmppPeer(im_interop.SlixmppPeer):
    """im_interop's slixmpp peer with the plugins for private storage,
    bookmarks and vCards too."""

    def _client(self, jid, register=False):
        client = super()._client(jid, register)
        for plugin in ("xep_0004", "xep_0048", "xep_0049", "xep_0054"):
            client.register_plugin(plugin)
        return client


def publish_options(fields):
    """A slixmpp `pubsub#publish-options` form with `fields` (var: value)."""
    return slixmpp_account.submit_form("http://jabber.org/protocol/pubsub#publish-options", fields)


def element(text):
    return ET.fromstring(text)


def payloads(items):
    """aioxmpp items' payloads by item id: an XSO for a registered payload
    class, else the lxml `<item>` element that holds it."""
    return {item.id_: item.registered_payload or item.unregistered_payload for item in items}


async def scenario(server):
    alice_s = SlixmppPeer(server)
    alice_a = im_interop.AioxmppPeer(server)
    alice_a.user, alice_a.jid, alice_a.password = alice_s.user, alice_s.jid, alice_s.password
    alice_a.resource = "compat"
    bob = im_interop.AioxmppPeer(server)
    peers = [alice_s, alice_a, bob]
    alice = aioxmpp.JID.fromstr(alice_s.jid)

    async def log_in():
        await alice_s.register()
        await bob.register()
        for peer in peers:
            await peer.login()
        return f"alice={alice_s.jid} (slixmpp + aioxmpp), bob={bob.jid} (aioxmpp)"

    await im_interop.step("alice and bob register and log in", log_in(), peers)

    device_id = str(secrets.randbelow(2**31 - 1) + 1)
    key = base64.b64encode(secrets.token_bytes(33)).decode()

    async def omemo_keys():
        pubsub = alice_s.client.plugin["xep_0060"]
        options = publish_options({"pubsub#access_model": "open"})
        await pubsub.publish(
            alice_s.jid, f"{OMEMO}.devicelist", id="current", options=options, timeout=STEP_TIMEOUT,
            payload=element(f"<list xmlns='{OMEMO}'><device id='{device_id}'/></list>"))
        await pubsub.publish(
            alice_s.jid, f"{OMEMO}.bundles:{device_id}", id="current", options=options, timeout=STEP_TIMEOUT,
            payload=element(f"<bundle xmlns='{OMEMO}'><identityKey>{key}</identityKey></bundle>"))
        client = bob.client.summon(aioxmpp.PubSubClient)
        devices = payloads((await client.get_items(alice, f"{OMEMO}.devicelist")).payload.items)
        ids = [device.get("id") for device in devices["current"].iter(f"{{{OMEMO}}}device")]
        require(ids == [device_id], f"bob sees the devices {ids}")
        bundles = payloads((await client.get_items(alice, f"{OMEMO}.bundles:{device_id}")).payload.items)
        seen = [key.text for key in bundles["current"].iter(f"{{{OMEMO}}}identityKey")]
        require(seen == [key], f"bob sees the identity keys {seen!r}")
        return f"device {device_id}"

    await im_interop.step("a stranger on aioxmpp fetches keys published on slixmpp as open", omemo_keys(), peers)

    async def precondition():
        try:
            await alice_s.client.plugin["xep_0060"].publish(
                alice_s.jid, f"{OMEMO}.devicelist", id="current", timeout=STEP_TIMEOUT,
                options=publish_options({"pubsub#access_model": "presence"}),
                payload=element(f"<list xmlns='{OMEMO}'/>"))
        except IqError as error:
            conditions = [child.tag for child in error.iq["error"].xml]
            require(error.iq["error"]["condition"] == "conflict", f"refused with {error.iq['error']['condition']}")
            require(f"{{{PUBSUB_ERRORS}}}precondition-not-met" in conditions, f"error children {conditions}")
            return None
        raise AssertionError("a contradicting publish-options was accepted")

    await im_interop.step("contradicting publish-options are precondition-not-met", precondition(), peers)

    async def bookmarks_from_private_storage():
        bookmarks = Bookmarks()
        bookmarks.add_conference("tea@rooms.example", "Al", name="Tea room", autojoin=True)
        await alice_s.client.plugin["xep_0048"].set_bookmarks(bookmarks, method="xep_0049", timeout=STEP_TIMEOUT)
        client = alice_a.client.summon(aioxmpp.PubSubClient)
        items = payloads((await client.get_items(alice, BOOKMARKS)).payload.items)
        conference = items.get("tea@rooms.example")
        require(isinstance(conference, Conference), f"bookmark items {items}")
        require((conference.name, conference.autojoin, conference.nick) == ("Tea room", True, "Al"),
                f"bookmark {conference.name!r} {conference.autojoin!r} {conference.nick!r}")
        return f"{len(items)} item(s)"

    await im_interop.step("XEP-0048 bookmarks stored on slixmpp read as XEP-0402 on aioxmpp",
                          bookmarks_from_private_storage(), peers)

    async def bookmarks_from_pep():
        conference = Conference()
        conference.name, conference.autojoin, conference.nick = "Coffee", False, "Alice"
        options = aioxmpp.forms.Data(aioxmpp.forms.DataType.SUBMIT)
        for var, values in (
                ("FORM_TYPE", ["http://jabber.org/protocol/pubsub#publish-options"]),
                ("pubsub#persist_items", ["true"]), ("pubsub#max_items", ["max"]),
                ("pubsub#send_last_published_item", ["never"]), ("pubsub#access_model", ["whitelist"])):
            options.fields.append(aioxmpp.forms.Field(var=var, values=values))
        await alice_a.client.summon(aioxmpp.PubSubClient).publish(
            alice, BOOKMARKS, conference, id_="coffee@rooms.example", publish_options=options)
        reply = await alice_s.client.plugin["xep_0048"].get_bookmarks(method="xep_0049", timeout=STEP_TIMEOUT)
        conferences = {str(c["jid"]): c for c in reply["private"]["bookmarks"]["conferences"]}
        require(set(conferences) == {"tea@rooms.example", "coffee@rooms.example"}, f"conferences {set(conferences)}")
        coffee = conferences["coffee@rooms.example"]
        require((coffee["name"], coffee["nick"]) == ("Coffee", "Alice"), f"bookmark {coffee}")
        return f"{len(conferences)} conference(s)"

    await im_interop.step("an XEP-0402 bookmark published on aioxmpp read as XEP-0048 on slixmpp",
                          bookmarks_from_pep(), peers)

    async def avatar_from_vcard():
        image = b"\x89PNG\r\n\x1a\n" + secrets.token_bytes(3_000)
        vcards = alice_a.client.summon(aioxmpp.vcard.VCardService)
        card = await vcards.get_vcard()
        card.set_photo_data("image/png", image)
        await vcards.set_vcard(card)
        pubsub = alice_s.client.plugin["xep_0060"]
        metadata = (await pubsub.get_items(alice_s.jid, AVATAR_METADATA, timeout=STEP_TIMEOUT))["pubsub"]["items"]
        infos = [info.attrib for item in metadata for info in item.xml.iter(f"{{{AVATAR_METADATA}}}info")]
        image_id = hashlib.sha1(image).hexdigest()
        require([(i.get("id"), i.get("type"), i.get("bytes")) for i in infos] == [(image_id, "image/png", str(len(image)))],
                f"metadata {infos}")
        data = await alice_s.client.plugin["xep_0084"].retrieve_avatar(alice_s.jid, image_id, timeout=STEP_TIMEOUT)
        require(data["pubsub"]["items"]["item"]["avatar_data"]["value"] == image, "the data item differs")
        return f"id {image_id[:12]}…"

    await im_interop.step("a vCard photo set on aioxmpp is a PEP avatar on slixmpp", avatar_from_vcard(), peers)

    async def vcard_from_avatar():
        image = b"\x89PNG\r\n\x1a\n" + secrets.token_bytes(2_000)
        await alice_s.publish_avatar(image)
        card = await alice_a.client.summon(aioxmpp.vcard.VCardService).get_vcard()
        require(card.get_photo_data() == image, "the vCard photo is not the published avatar")
        require(card.get_photo_mime_type() == "image/png", f"photo type {card.get_photo_mime_type()}")
        return None

    await im_interop.step("a PEP avatar published on slixmpp is the vCard photo on aioxmpp", vcard_from_avatar(), peers)
    for peer in peers:
        await peer.logout()


async def main():
    host, port, domain, ca_certificate = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    await scenario(im_interop.Server(host, port, domain, ca_certificate))
    print("ok   all PEP compatibility interop steps passed")


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(main())
