#!/usr/bin/env python3
"""Interop check of swiftletd with the terminal client profanity (0.13),
driven through tmux, against a running server (loopback only). alice is
an existing account (ALICE_PASSWORD); bob, a fresh random account that
registers in-band (XEP-0077), is a slixmpp client in this script.
  1. login    profanity logs in as alice over STARTTLS with `tls force`,
              the server's certificate verified through the local CA that
              `/tls certpath set` names (a directory holding the CA under
              its OpenSSL hash name); before that, without the certpath,
              it shows its trust prompt and is denied, so the CA is what
              makes the difference,
  2. roster   bob asks for alice's presence, profanity shows the request
              and alice allows it, then asks back and bob accepts; bob's
              roster says "both", and so does profanity's `/roster`,
  3. chat     `/msg` reaches bob; bob's reply shows in profanity,
  4. offline  after `/disconnect` bob writes to alice; profanity shows the
              message once connected again,
  5. upload   `/sendfile` in the chat with bob (XEP-0363): bob receives an
              https:// URL, which this script downloads trusting only the
              CA, and gets the bytes of the file,
  6. avatar   `/avatar set` on a small PNG (XEP-0084): bob reads alice's
              avatar metadata and data from PEP and finds that they match;
              the content type profanity declares is printed, not checked
              (0.13 declares img/png),
  7. mam      profanity quits; a second one with a fresh home directory (no
              local history) and `/mam on` logs in, opens the chat with bob
              and shows alice's first message to him, which only the
              server's archive (XEP-0313) can have provided,
  8. quit     `/quit` ends profanity, and with it its tmux session.
Profanity runs in a tmux server of its own, with HOME and the XDG
directories in a temporary directory and an empty system trust store; the
script types into it and reads the screen, waiting for what each step
expects. Prints one line per step and exits non-zero on the first failure,
after printing the screen. Every wait has a deadline, so the script always
ends by itself.

Usage: profanity_interop.py HOST PORT DOMAIN CA_CERTIFICATE ALICE_PASSWORD
(CA_CERTIFICATE: the root of the server's local CA, which both profanity
and slixmpp are told to trust, so TLS is verified for real.)
"""
import asyncio
import base64
import hashlib
import logging
import os
import re
import secrets
import shutil
import signal
import ssl
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
import xml.etree.ElementTree as ElementTree
import zlib

from slixmpp.exceptions import IqError

import slixmpp_account

STEP_TIMEOUT = 20
# How often the screen is read while waiting.
POLL = 0.2
BOB_RESOURCE = "interop"
BOB_PLUGINS = ("xep_0030", "xep_0060", "xep_0066", "xep_0199")
AVATAR_METADATA = "urn:xmpp:avatar:metadata"
AVATAR_DATA = "urn:xmpp:avatar:data"
UPLOAD_SIZE = 50_000
# profanity's wording.
TRUST_PROMPT = "Use '/tls allow' to accept this certificate."
LOGGED_IN = "logged in successfully"
FAILED = "Login failed."


class Failure(Exception):
    """A step's check did not hold."""


def require(condition, what):
    if not condition:
        raise Failure(what)


class Profanity:
    """profanity in a detached tmux session, 200 by 50, of a tmux server of
    its own (`-S`, no configuration file), with `home` as HOME and XDG
    directories and `trust_store` (file, directory) as what OpenSSL takes
    for the system's trusted roots (SSL_CERT_FILE, SSL_CERT_DIR)."""

    def __init__(self, home, trust_store):
        self.home = home
        self.trust_store = trust_store
        # The tmux server's socket, in the home directory: removed with it.
        self.socket = os.path.join(home, "tmux")
        self.session = "profanity"
        # The process id of profanity, once started.
        self.pid = None

    def _tmux(self, *arguments, check=True):
        return subprocess.run(
            ["tmux", "-S", self.socket, *arguments], capture_output=True, text=True, timeout=10, check=check)

    def start(self):
        environment = {key: value for key, value in os.environ.items() if not key.startswith("TMUX")}
        environment.update(
            HOME=self.home, XDG_CONFIG_HOME=os.path.join(self.home, ".config"),
            XDG_DATA_HOME=os.path.join(self.home, ".local", "share"),
            SSL_CERT_FILE=self.trust_store[0], SSL_CERT_DIR=self.trust_store[1])
        subprocess.run(
            ["tmux", "-S", self.socket, "-f", os.devnull, "new-session", "-d", "-s", self.session,
             "-x", "200", "-y", "50", "profanity"],
            env=environment, capture_output=True, text=True, timeout=10, check=True)
        self.pid = int(self._tmux("display-message", "-p", "-t", self.session, "#{pane_pid}").stdout)

    def type(self, text):
        """Types `text`, then Enter."""
        self._tmux("send-keys", "-t", self.session, "-l", text)
        self._tmux("send-keys", "-t", self.session, "Enter")

    def screen(self):
        """What the terminal shows (the current window), wrapped lines
        joined; "" once the session is gone."""
        result = self._tmux("capture-pane", "-p", "-J", "-t", self.session, "-S", "-200", check=False)
        return result.stdout if result.returncode == 0 else ""

    def running(self):
        return self._tmux("has-session", "-t", self.session, check=False).returncode == 0

    async def until(self, predicate, what, timeout=STEP_TIMEOUT):
        """Returns the screen once `predicate(screen)` holds; raises
        `Failure` naming `what` after `timeout` seconds."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            screen = self.screen()
            if predicate(screen):
                return screen
            if asyncio.get_running_loop().time() > deadline:
                raise Failure(f"no {what} on the screen within {timeout} s")
            await asyncio.sleep(POLL)

    async def shows(self, text, what=None):
        """Waits until the screen contains `text`."""
        return await self.until(lambda screen: text in screen, what or repr(text))

    def stop(self):
        """Ends the tmux server, whose end hangs up on profanity; kills
        profanity if it is still there a few seconds later."""
        self._tmux("kill-server", check=False)
        if self.pid is None:
            return
        for _ in range(30):
            if not process_exists(self.pid):
                return
            time.sleep(0.1)
        os.kill(self.pid, signal.SIGKILL)


def process_exists(pid):
    """Whether process `pid` exists and has not ended (a zombie waiting for
    its parent has)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:  # no /proc here
        return True


class Bob(slixmpp_account.Peer):
    """bob: a fresh account, logged in with slixmpp; records (from, body,
    oob url) of the chat messages it receives and the presence of his
    contacts, and accepts a subscription request without asking back."""

    def __init__(self, server):
        super().__init__(
            server, "bob", BOB_PLUGINS, BOB_RESOURCE,
            lambda message: (str(message["from"]), message["body"], message["oob"]["url"]), STEP_TIMEOUT)
        # Bare JID -> "available" or "unavailable", the latest presence.
        self.presence = {}

    def _client(self, jid, register=False):
        client = super()._client(jid, register)
        client.auto_authorize = True
        client.auto_subscribe = False

        def on_presence(presence, kind):
            self.presence[presence["from"].bare] = kind
            self.changed()

        client.add_event_handler("presence_available", lambda p: on_presence(p, "available"))
        client.add_event_handler("presence_unavailable", lambda p: on_presence(p, "unavailable"))
        client.add_event_handler("roster_update", lambda _: self.changed())
        return client

    async def login(self):
        await super().login()
        await self.client.get_roster(timeout=STEP_TIMEOUT)

    def subscription(self, jid):
        roster = self.client.client_roster
        return roster[jid]["subscription"] if jid in roster else None

    def send_chat(self, to, body):
        self.client.make_message(mto=to, mbody=body, mtype="chat").send()

    async def items(self, jid, node, tag):
        """The first `tag` element (Clark notation) of the items of PEP
        node `node` of `jid`, or None, also when there is no such node."""
        try:
            reply = await self.client.plugin["xep_0060"].get_items(jid, node, timeout=STEP_TIMEOUT)
        except IqError as error:
            if error.iq["error"]["condition"] == "item-not-found":
                return None
            raise
        return ElementTree.fromstring(str(reply)).find(f".//{tag}")



def tiny_png(width=16, height=16):
    """A valid PNG: RGB, 8 bits a sample, a colour gradient."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"".join(bytes((x * 16, y * 16, 128)) for x in range(width)) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


def download(url, ca_certificate):
    """The body of a GET of `url`, trusting `ca_certificate` only."""
    context = ssl.create_default_context(cafile=ca_certificate)
    with urllib.request.urlopen(url, context=context, timeout=STEP_TIMEOUT) as response:
        require(response.status == 200, f"GET {url}: {response.status}")
        return response.read()


class Run:
    """The steps, and what they share."""

    def __init__(self, server, alice_password, directory):
        self.server = server
        self.alice = f"alice@{server['domain']}"
        self.alice_password = alice_password
        self.directory = directory
        # The CA under its OpenSSL hash name, for `/tls certpath set`.
        self.certificates = os.path.join(directory, "certificates")
        # An empty store in place of the system's trusted roots, so that
        # the certpath is all profanity trusts (libstrophe and libcurl add
        # it to OpenSSL's default store), whatever this machine's store
        # holds.
        self.trust_store = (os.path.join(directory, "no-roots.pem"), os.path.join(directory, "no-roots"))
        self.bob = Bob(server)
        self.profanity = None
        # In every message, so that no text on the screen can be left from
        # anything else.
        self.tag = secrets.token_hex(3)

    def text(self, name):
        """The text of message `name`, unique to this run."""
        return f"{name} {self.tag}"

    def from_bob(self, name):
        """How profanity shows bob's message `name` in the chat window."""
        return f"{self.bob.jid}/{BOB_RESOURCE}: {self.text(name)}"

    async def step(self, name, coroutine):
        """Runs one step: prints `ok` with what it returned, or `FAIL` with
        the reason and profanity's screen, then exits with status 1."""
        try:
            detail = await asyncio.wait_for(coroutine, 2 * STEP_TIMEOUT)
        except Exception as error:  # any failure ends the run with the step's name
            reason = f"no result within {2 * STEP_TIMEOUT} s" if isinstance(error, asyncio.TimeoutError) else (
                str(error) or repr(error))
            print(f"FAIL {name}: {reason}", flush=True)
            if self.profanity is not None:
                print("---- profanity's screen ----", flush=True)
                print(self.profanity.screen().rstrip(), flush=True)
            sys.exit(1)
        print(f"ok   {name}" + (f": {detail}" if detail else ""), flush=True)

    async def start_profanity(self, name):
        """Starts profanity with home directory `name` (in the temporary
        directory) and waits for its welcome text."""
        home = os.path.join(self.directory, name)
        os.makedirs(home)
        self.profanity = Profanity(home, self.trust_store)
        self.profanity.start()
        await self.profanity.shows("Type '/help' to show complete help.")

    def set_certpath(self):
        self.profanity.type(f"/tls certpath set {self.certificates}")
        return self.profanity.shows(f"Certificate path set to: {self.certificates}")

    async def connect(self):
        """`/connect`s as alice, types the password at the prompt and waits
        until profanity says it is logged in or asks whether to trust the
        certificate. Returns whether it logged in, and the line that says
        so; raises `Failure` if the login fails otherwise."""
        p = self.profanity
        logged_in = re.compile(re.escape(self.alice) + r"/\S+ " + LOGGED_IN)
        before = p.screen()
        logins, prompts, failures = len(logged_in.findall(before)), before.count(TRUST_PROMPT), before.count(FAILED)
        p.type(f"/connect {self.alice} server {self.server['host']} port {self.server['port']} tls force")
        await p.shows("Enter password:", "password prompt")
        p.type(self.alice_password)
        screen = await p.until(
            lambda s: len(logged_in.findall(s)) > logins or s.count(TRUST_PROMPT) > prompts
            or s.count(FAILED) > failures, "login")
        if screen.count(TRUST_PROMPT) > prompts:
            return False, TRUST_PROMPT
        require(screen.count(FAILED) == failures, f"profanity says '{FAILED}'")
        return True, logged_in.findall(screen)[-1]

    async def quit(self):
        """`/quit`, then waits for profanity and its tmux session to end."""
        p = self.profanity
        p.type("/quit")
        deadline = asyncio.get_running_loop().time() + STEP_TIMEOUT
        while p.running() or process_exists(p.pid):
            require(asyncio.get_running_loop().time() < deadline, "profanity still runs after /quit")
            await asyncio.sleep(POLL)
        self.profanity = None

    # MARK: - The steps

    async def login(self):
        os.makedirs(self.certificates)
        shutil.copy(self.server["ca"], os.path.join(self.certificates, "swiftlet-ca.pem"))
        subprocess.run(["openssl", "rehash", self.certificates], check=True, capture_output=True, timeout=10)
        hashed = [name for name in os.listdir(self.certificates) if re.fullmatch(r"[0-9a-f]{8}\.0", name)]
        require(hashed, f"openssl rehash made no hash link in {self.certificates}")
        open(self.trust_store[0], "w").close()
        os.makedirs(self.trust_store[1])
        await self.start_profanity("home")
        p = self.profanity
        # With its default certpath, the system's (/etc/ssl/certs), which
        # does not have this CA, profanity cannot verify the certificate
        # and asks; denying ends the attempt.
        logged_in, said = await self.connect()
        require(not logged_in, f"logged in with no CA to trust: {said}")
        p.type("/tls deny")
        await p.shows(FAILED)
        await self.set_certpath()
        logged_in, said = await self.connect()
        require(logged_in, "profanity asks whether to trust the certificate verified through the CA")
        await p.shows("[TLS]", "[TLS] in the title bar")
        return f"'{said}', [TLS] (CA as {hashed[0]}; without it: trust prompt, denied)"

    async def roster(self):
        p, bob = self.profanity, self.bob
        await bob.register()
        await bob.login()
        bob.client.send_presence(pto=self.alice, ptype="subscribe")
        await p.shows(f"Received authorization request from {bob.jid}")
        p.type(f"/sub allow {bob.jid}")
        await bob.until(lambda: bob.subscription(self.alice) == "to")
        p.type(f"/sub request {bob.jid}")
        await p.shows(f"Sent subscription request to {bob.jid}.")
        await bob.until(lambda: bob.subscription(self.alice) == "both")
        p.type("/roster")
        await p.shows(f"  {bob.jid} - both", "bob with subscription both in /roster")
        return f"'Received authorization request from {bob.jid}', allowed, asked back; both rosters say both"

    async def chat(self):
        p, bob = self.profanity, self.bob
        await bob.until(lambda: bob.presence.get(self.alice) == "available")
        p.type(f"/msg {bob.jid} {self.text('hello bob')}")
        await bob.until(lambda: any(body == self.text("hello bob") for _, body, _ in bob.messages))
        sender = next(sender for sender, body, _ in bob.messages if body == self.text("hello bob"))
        require(sender.startswith(self.alice + "/"), f"from {sender}")
        bob.send_chat(self.alice, self.text("hello alice"))
        await p.shows(self.from_bob("hello alice"))
        return f"bob got it from {sender}; profanity shows '{self.from_bob('hello alice')}'"

    async def offline(self):
        p, bob = self.profanity, self.bob
        p.type("/disconnect")
        await p.shows(f"{self.alice} logged out successfully.")
        await bob.until(lambda: bob.presence.get(self.alice) == "unavailable")
        bob.send_chat(self.alice, self.text("while you were away"))
        # The server has the message when it answers a later ping.
        await bob.client.plugin["xep_0199"].ping(jid=self.server["domain"], timeout=STEP_TIMEOUT)
        logged_in, said = await self.connect()
        require(logged_in, "profanity asks whether to trust the certificate")
        # `/disconnect` closed the chat window; the message opens it again
        # in the background, and this brings it up.
        p.type(f"/msg {bob.jid}")
        await p.shows(self.from_bob("while you were away"))
        return f"shown after '{said}'"

    async def upload(self):
        p, bob = self.profanity, self.bob
        data = os.urandom(UPLOAD_SIZE)
        path = os.path.join(self.directory, f"notes-{self.tag}.bin")
        with open(path, "wb") as file:
            file.write(data)
        count = len(bob.messages)
        p.type(f"/sendfile {path}")
        await bob.until(lambda: len(bob.messages) > count)
        sender, body, oob = bob.messages[-1]
        require(sender.startswith(self.alice + "/"), f"from {sender}")
        require(body.startswith("https://"), f"body {body!r}")
        await p.shows(f"Uploading '{path}': 100%")
        downloaded = await asyncio.to_thread(download, body, self.server["ca"])
        require(downloaded == data, f"{len(downloaded)} bytes downloaded, not the {len(data)} uploaded")
        return f"{len(data)} bytes, {body}" + (" (XEP-0066 url too)" if oob == body else "")

    async def avatar(self):
        bob = self.bob
        path = os.path.join(self.directory, "avatar.png")
        with open(path, "wb") as file:
            file.write(tiny_png())
        self.profanity.type(f"/avatar set {path}")
        deadline = asyncio.get_running_loop().time() + STEP_TIMEOUT
        while (info := await bob.items(self.alice, AVATAR_METADATA, f"{{{AVATAR_METADATA}}}info")) is None:
            require(asyncio.get_running_loop().time() < deadline, "no avatar metadata from alice")
            await asyncio.sleep(POLL)
        data = await bob.items(self.alice, AVATAR_DATA, f"{{{AVATAR_DATA}}}data")
        require(data is not None and data.text, "no avatar data")
        image = base64.b64decode(data.text)
        digest = hashlib.sha1(image).hexdigest()
        require(digest == info.get("id"), f"the data's SHA-1 is {digest}, the metadata's id {info.get('id')}")
        require(str(len(image)) == info.get("bytes"), f"{len(image)} bytes, metadata says {info.get('bytes')}")
        require(image.startswith(b"\x89PNG\r\n\x1a\n"), "the avatar is not a PNG")
        return (f"PNG of {len(image)} bytes, {info.get('width')}x{info.get('height')}, id {digest[:12]}…; "
                f"declared type {info.get('type')!r}")

    async def mam(self):
        bob = self.bob
        await self.quit()
        await bob.until(lambda: bob.presence.get(self.alice) == "unavailable")
        await self.start_profanity("fresh-home")
        p = self.profanity
        await self.set_certpath()
        p.type("/mam on")
        await p.shows("Message Archive Management enabled.")
        logged_in, said = await self.connect()
        require(logged_in, "profanity asks whether to trust the certificate")
        p.type(f"/msg {bob.jid}")
        # alice's own message: not an offline message, and not in a local
        # history, which this profanity does not have.
        mine = f"me: {self.text('hello bob')}"
        await p.shows(mine)
        await p.shows(self.from_bob("hello alice"))
        return f"fresh profanity, after '{said}': '{mine}' and bob's reply"

    async def final_quit(self):
        pid = self.profanity.pid
        await self.quit()
        return f"profanity (pid {pid}) ended, and its tmux session"


async def main():
    host, port, domain, ca_certificate = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    alice_password = sys.argv[5]
    directory = tempfile.mkdtemp(prefix="swiftlet-profanity-")
    run = Run({"host": host, "port": port, "domain": domain, "ca": ca_certificate}, alice_password, directory)
    try:
        await run.step("login", run.login())
        await run.step("roster", run.roster())
        await run.step("chat", run.chat())
        await run.step("offline", run.offline())
        await run.step("upload", run.upload())
        await run.step("avatar", run.avatar())
        await run.step("mam", run.mam())
        await run.step("quit", run.final_quit())
    finally:
        if run.profanity is not None:
            run.profanity.stop()
        await run.bob.logout()
        shutil.rmtree(directory, ignore_errors=True)
    print("ok   all profanity steps passed")


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(main())
