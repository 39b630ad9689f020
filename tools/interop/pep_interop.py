#!/usr/bin/env python3
"""Personal eventing (XEP-0163) interop check of swiftletd with slixmpp's
XEP-0084, XEP-0163 and XEP-0115 plugins, against a running server
(loopback only):
  1. alice, bob and carol, fresh random accounts, register in-band
     (XEP-0077) over STARTTLS and log in; alice and bob become contacts
     (subscription both), carol shares presence with no one,
  2. disco#info of alice's bare JID, asked by alice and by bob, shows the
     pubsub/pep identity and pubsub#publish; carol gets
     service-unavailable,
  3. alice publishes an avatar (XEP-0084): the image to urn:xmpp:avatar:data,
     then its metadata to urn:xmpp:avatar:metadata, item ids the SHA-1,
  4. bob, whose caps (XEP-0115) announce urn:xmpp:avatar:metadata+notify,
     gets the metadata notification from alice's bare JID, with the id,
     size and type; so does alice's own resource,
  5. bob fetches the data item by that id and gets the same bytes,
  6. a second resource of bob logs in and gets the last published
     metadata at once (XEP-0163 §4.3.4); all resources announce the same
     caps, and the server does not ask the new one (it verified the hash
     of an earlier answer and cached the ver),
  7. carol asking for alice's avatar gets not-authorized with
     presence-subscription-required,
  8. carol asks to subscribe to alice, alice's client approves, and
     carol's resource gets the last published metadata at once, without
     logging in again (XEP-0163 §4.3.4).
Prints one line per step and exits non-zero on the first failure. Every
step has a deadline, so the script always ends by itself.

Usage: pep_interop.py HOST PORT DOMAIN CA_CERTIFICATE
(CA_CERTIFICATE: the server's local CA root, which slixmpp is
told to trust, so TLS is verified for real.)
"""
import asyncio
import hashlib
import logging
import secrets
import sys

from slixmpp.exceptions import IqError

import slixmpp_account

STEP_TIMEOUT = 20
PLUGINS = ("xep_0030", "xep_0060", "xep_0084", "xep_0115", "xep_0163", "xep_0199")
METADATA = "urn:xmpp:avatar:metadata"
PUBSUB_ERRORS = "http://jabber.org/protocol/pubsub#errors"


class Peer(slixmpp_account.Records):
    """One slixmpp account: its connections and the avatar metadata
    notifications they received."""

    def __init__(self, server, name):
        super().__init__()
        self.server = server
        self.user = name + secrets.token_hex(4)
        self.jid = f"{self.user}@{server['domain']}"
        self.password = "pw-" + secrets.token_hex(6)
        self.client = None
        # (receiving resource, from, item id, [(info id, bytes, type)]), in order of arrival.
        self.metadata = []
        # Resource -> the server's disco#info queries for its caps' node#ver.
        self.caps_queries = {}

    def _client(self, jid, register=False):
        plugins = PLUGINS + (("xep_0077",) if register else ())
        return slixmpp_account.make_client(jid, self.password, self.server["ca"], plugins)

    async def register(self):
        await slixmpp_account.register(
            self._client(self.jid, register=True), self.server["host"], self.server["port"], self.user,
            self.password, STEP_TIMEOUT)

    async def login(self, resource="pep"):
        """Connects `resource`, fetches the roster and sends presence (with
        caps, added by slixmpp's XEP-0115 plugin); returns the client."""
        client = self._client(f"{self.jid}/{resource}")
        started = asyncio.get_running_loop().create_future()

        async def on_start(_event):
            await client.get_roster(timeout=STEP_TIMEOUT)
            client.send_presence()
            started.set_result(None)

        def on_metadata(message):
            item = message["pubsub_event"]["items"]["item"]
            infos = [
                (info.get("id"), info.get("bytes"), info.get("type"))
                for info in item.xml.iter(f"{{{METADATA}}}info")
            ]
            self.metadata.append((resource, str(message["from"]), item["id"], infos))
            self.changed()

        def count_caps_query(stanza):
            # Asked by a PEP service: the account's or a contact's bare JID.
            sender = stanza["from"]
            if (stanza.name == "iq" and stanza["type"] == "get" and sender.domain == self.server["domain"]
                    and not sender.resource and "#" in stanza["disco_info"]["node"]):
                self.caps_queries[resource] = self.caps_queries.get(resource, 0) + 1
            return stanza

        client.add_filter("in", count_caps_query)
        client.add_event_handler("session_start", on_start)
        client.add_event_handler("avatar_metadata_publish", on_metadata)
        client.add_event_handler("roster_update", lambda _iq: self.changed())
        client.add_event_handler("presence_subscribed", lambda _p: self.changed())
        if self.client is None:
            self.client = client
        client.connect(host=self.server["host"], port=self.server["port"])
        await started
        return client

    def subscription(self, contact):
        return self.client.client_roster[contact.jid]["subscription"]


def require(condition, detail):
    if not condition:
        raise AssertionError(detail)


async def step(name, coroutine):
    try:
        detail = await asyncio.wait_for(coroutine, STEP_TIMEOUT)
    except Exception as error:  # any failure ends the run with the step's name
        print(f"FAIL {name}: {error!r}")
        sys.exit(1)
    print(f"ok   {name}" + (f": {detail}" if detail else ""))


async def scenario(server):
    alice, bob, carol = Peer(server, "pepa"), Peer(server, "pepb"), Peer(server, "pepc")
    image = b"\x89PNG\r\n\x1a\n" + secrets.token_bytes(20_000)
    image_id = hashlib.sha1(image).hexdigest()

    async def register_and_befriend():
        for peer in (alice, bob, carol):
            await peer.register()
            await peer.login()
        # slixmpp's defaults accept the request and ask back.
        alice.client.send_presence_subscription(pto=bob.jid)
        await alice.until(lambda: alice.subscription(bob) == "both", poll=0.1)
        await bob.until(lambda: bob.subscription(alice) == "both", poll=0.1)
        return f"alice={alice.jid}, bob={bob.jid}, carol={carol.jid}"

    await step("three register and log in; alice and bob share presence", register_and_befriend())

    async def discovery():
        for peer in (alice, bob):
            info = await peer.client.plugin["xep_0030"].get_info(jid=alice.jid, timeout=STEP_TIMEOUT)
            identities = {(category, kind) for category, kind, _lang, _name in info["disco_info"]["identities"]}
            features = info["disco_info"]["features"]
            require(("pubsub", "pep") in identities, f"{peer.user} sees identities {identities}")
            require("http://jabber.org/protocol/pubsub#publish" in features, f"{peer.user} sees {features}")
        try:
            await carol.client.plugin["xep_0030"].get_info(jid=alice.jid, timeout=STEP_TIMEOUT)
        except IqError as error:
            require(error.iq["error"]["condition"] == "service-unavailable", f"carol: {error.iq['error']}")
        else:
            raise AssertionError("carol saw alice's disco#info")
        return "pubsub/pep for alice and bob, service-unavailable for carol"

    await step("alice's bare JID is a PEP service to her and her contacts", discovery())

    async def publish():
        avatars = alice.client.plugin["xep_0084"]
        await avatars.publish_avatar(image, timeout=STEP_TIMEOUT)
        await avatars.publish_avatar_metadata(
            items=[{"id": image_id, "type": "image/png", "bytes": len(image)}], timeout=STEP_TIMEOUT)
        return f"{len(image)} bytes, id {image_id}"

    await step("alice publishes an avatar (data, then metadata)", publish())

    expected = [(image_id, str(len(image)), "image/png")]

    async def notified():
        for peer in (bob, alice):
            await peer.until(lambda: any(m[0] == "pep" for m in peer.metadata))
            resource, sender, item_id, infos = next(m for m in peer.metadata if m[0] == "pep")
            require(sender == alice.jid, f"{peer.user}: from {sender}")
            require(item_id == image_id and infos == expected, f"{peer.user}: {item_id} {infos}")
        return "bob and alice got the metadata from alice's bare JID"

    await step("bob (caps with metadata+notify) and alice are notified", notified())

    async def fetch():
        reply = await bob.client.plugin["xep_0084"].retrieve_avatar(alice.jid, image_id, timeout=STEP_TIMEOUT)
        data = reply["pubsub"]["items"]["item"]["avatar_data"]["value"]
        require(data == image, f"got {len(data)} bytes, not the {len(image)} published")
        return f"{len(data)} bytes, same SHA-1"

    await step("bob fetches the avatar data by its id", fetch())

    async def last_published():
        await bob.login(resource="later")
        await bob.until(lambda: any(m[0] == "later" for m in bob.metadata))
        _resource, sender, item_id, infos = next(m for m in bob.metadata if m[0] == "later")
        require(sender == alice.jid and item_id == image_id and infos == expected, f"{sender} {item_id} {infos}")
        # The three accounts run the same plugins, so their caps share one
        # ver: the server asked for it, verified the hash of the answer and
        # cached it, so the new resource is not asked (an unverified answer
        # would have served its sender only).
        queries = {peer.user: peer.caps_queries for peer in (alice, bob, carol)}
        require(sum(sum(counts.values()) for counts in queries.values()) >= 1, f"caps queries {queries}")
        require("later" not in bob.caps_queries, f"caps queries {queries}")
        total = sum(sum(counts.values()) for counts in queries.values())
        return f"the metadata arrived on login; {total} caps query(s) for the four resources"

    await step("a new resource of bob gets the last published metadata", last_published())

    async def stranger():
        try:
            await carol.client.plugin["xep_0084"].retrieve_avatar(alice.jid, image_id, timeout=STEP_TIMEOUT)
        except IqError as error:
            condition = error.iq["error"]["condition"]
            application = [child.tag for child in error.iq["error"].xml if child.tag.startswith(f"{{{PUBSUB_ERRORS}}}")]
            require(condition == "not-authorized", f"condition {condition}")
            require(application == [f"{{{PUBSUB_ERRORS}}}presence-subscription-required"], f"{application}")
            return "not-authorized, presence-subscription-required"
        raise AssertionError("carol got alice's avatar")

    await step("carol, no contact, may not fetch it", stranger())

    async def approved():
        carol.client.send_presence_subscription(pto=alice.jid)
        await carol.until(lambda: any(m[1] == alice.jid for m in carol.metadata))
        _resource, _sender, item_id, infos = next(m for m in carol.metadata if m[1] == alice.jid)
        require(item_id == image_id and infos == expected, f"{item_id} {infos}")
        return "the metadata arrived on approval, without a new login"

    await step("carol becomes alice's contact and gets the last metadata at once", approved())


async def main():
    host, port, domain, ca_certificate = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    await scenario({"host": host, "port": port, "domain": domain, "ca": ca_certificate})
    print("ok   all PEP interop steps passed")


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(main())
