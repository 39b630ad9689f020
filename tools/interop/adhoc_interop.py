#!/usr/bin/env python3
"""Service administration interop check of swiftletd with slixmpp's
XEP-0050 (ad-hoc commands) and XEP-0133 plugins, against a running server
(loopback only) whose `admins` setting names ADMIN:
  1. ADMIN registers in-band (XEP-0077) and logs in over STARTTLS,
  2. it lists the server's commands (disco#items of the commands node):
     the XEP-0133 ones are there,
  3. it runs add-user through slixmpp's command workflow: the form, then
     complete with accountjid, password and password-verify,
  4. the new user logs in, and sees no commands itself,
  5. the admin gets the online users (form with max_items, then complete)
     and their number: the new user is online,
  6. the admin changes the new user's password: the user's stream ends;
     the new password logs in,
  7. the admin deletes the user: the user's stream ends, and the password
     no longer logs in; the registered users number is back to one.
Prints one line per step and exits non-zero on the first failure. Every
step has a deadline, so the script always ends by itself.

Usage: adhoc_interop.py HOST PORT DOMAIN CA_CERTIFICATE ADMIN
(CA_CERTIFICATE: the server's local CA root, which slixmpp is
told to trust, so TLS is verified for real; ADMIN: a localpart the
server's `admins` names, not registered yet.)
"""
import asyncio
import logging
import secrets
import sys

from slixmpp.plugins.xep_0004 import Form

from slixmpp_account import Records, make_client, register, require, step

STEP_TIMEOUT = 20
ADMIN = "http://jabber.org/protocol/admin"
PLUGINS = ("xep_0030", "xep_0004", "xep_0050", "xep_0133")


class User(Records):
    """An account with one client at a time, which records how its streams
    end."""

    def __init__(self, server, user, password):
        super().__init__()
        self.server = server
        self.jid = f"{user}@{server['domain']}"
        self.user = user
        self.password = password
        self.client = None
        self.ended = 0

    async def register(self):
        client = make_client(self.jid, self.password, self.server["ca"], ("xep_0077",))
        await register(client, self.server["host"], self.server["port"], self.user, self.password, STEP_TIMEOUT)

    async def login(self, password=None):
        """Logs in with `password` (default: the account's); returns True,
        or False when the server refuses the credentials."""
        client = make_client(f"{self.jid}/adhoc", password or self.password, self.server["ca"], PLUGINS)
        outcome = asyncio.get_running_loop().create_future()

        def settle(value):
            if not outcome.done():
                outcome.set_result(value)

        def on_disconnected(_event):
            self.ended += 1
            self.changed()

        client.add_event_handler("session_start", lambda _e: settle(True))
        client.add_event_handler("failed_all_auth", lambda _e: settle(False))
        client.add_event_handler("disconnected", on_disconnected)
        client.connect(host=self.server["host"], port=self.server["port"])
        if await outcome:
            self.client = client
            return True
        await client.disconnect()
        return False


async def run_command(client, name, values=None):
    """Runs the XEP-0133 command `name` with slixmpp's workflow
    (`xep_0133.<name>` starts it, `xep_0050.complete_command` submits):
    a form it answers with is filled with `values` (var: value) and
    completed. Returns the completing `<command/>`."""
    done = asyncio.get_running_loop().create_future()
    commands = client.plugin["xep_0050"]

    def on_next(iq, session):
        try:
            answer(iq, session)
        except Exception as error:  # a check failed inside slixmpp's callback
            done.set_exception(error)

    def answer(iq, session):
        command = iq["command"]
        if command["status"] == "completed":
            return done.set_result(command)
        require(command["status"] == "executing", f"{name}: status {command['status']}")
        require(command["sessionid"], f"{name}: no sessionid")
        offered = command["form"]
        require(offered["type"] == "form", f"{name}: expected a form, got {command}")
        # slixmpp reads a hidden field as a list of values.
        require(offered.get_values().get("FORM_TYPE") in (ADMIN, [ADMIN]), f"{name}: FORM_TYPE {offered.get_values()}")
        submitted = Form()
        submitted["type"] = "submit"
        submitted.add_field(var="FORM_TYPE", ftype="hidden", value=ADMIN)
        for var, value in (values or {}).items():
            require(var in offered.get_fields(), f"{name}: the form has no field {var}")
            submitted.add_field(var=var, ftype=offered.get_fields()[var]["type"], value=value)
        session["payload"] = submitted
        commands.complete_command(session)

    def on_error(iq, _session):
        done.set_exception(AssertionError(f"{name}: {iq['error']['condition']} {iq['error']['text']}"))

    getattr(client.plugin["xep_0133"], name.replace("-", "_"))(session={"next": on_next, "error": on_error})
    return await done


def notes(command, kind):
    return [text for note_kind, text in command["notes"] if note_kind == kind]


async def scenario(server, admin_name):
    admin = User(server, admin_name, "pw-" + secrets.token_hex(6))
    newbie = User(server, "newbie" + secrets.token_hex(3), "pw-" + secrets.token_hex(6))
    domain = server["domain"]

    async def admin_logs_in():
        await admin.register()
        require(await admin.login(), "the admin could not log in")
        return admin.jid

    await step("the admin registers and logs in", admin_logs_in(), STEP_TIMEOUT)

    async def list_commands():
        items = await admin.client.plugin["xep_0133"].get_commands(timeout=STEP_TIMEOUT)
        nodes = {node for _jid, node, _name in items["disco_items"]["items"]}
        wanted = {f"{ADMIN}#{name}" for name in (
            "add-user", "delete-user", "change-user-password", "end-user-session", "get-registered-users-num",
            "get-registered-users-list", "get-online-users-num", "get-online-users-list")}
        require(wanted <= nodes, f"missing {wanted - nodes}")
        return f"{len(nodes)} commands"

    await step("the admin lists the commands", list_commands(), STEP_TIMEOUT)

    async def add_user():
        command = await run_command(admin.client, "add-user", {
            "accountjid": newbie.jid, "password": newbie.password, "password-verify": newbie.password})
        require(not notes(command, "error"), f"errors {notes(command, 'error')}")
        return "; ".join(notes(command, "info"))

    await step("the admin adds a user (form, then complete)", add_user(), STEP_TIMEOUT)

    async def newbie_logs_in():
        require(await newbie.login(), "the new user could not log in")
        items = await newbie.client.plugin["xep_0050"].get_commands(domain, timeout=STEP_TIMEOUT)
        require(not items["disco_items"]["items"], f"a non-admin sees {items['disco_items']['items']}")
        return "logged in; sees no commands"

    await step("the new user logs in", newbie_logs_in(), STEP_TIMEOUT)

    async def online_users():
        listed = await run_command(admin.client, "get-online-users-list", {"max_items": "none"})
        users = listed["form"].get_values().get("onlineuserjids")
        require(newbie.jid in users and admin.jid in users, f"online: {users}")
        counted = await run_command(admin.client, "get-online-users-num")
        number = counted["form"].get_values().get("onlineusersnum")
        require(number == "2", f"onlineusersnum {number}")
        return f"{users}, {number}"

    await step("the admin sees the user online", online_users(), STEP_TIMEOUT)

    async def change_password():
        new_password = "pw-" + secrets.token_hex(6)
        ended = newbie.ended
        command = await run_command(admin.client, "change-user-password", {
            "accountjid": newbie.jid, "password": new_password})
        require(not notes(command, "error"), f"errors {notes(command, 'error')}")
        await newbie.until(lambda: newbie.ended > ended)
        await newbie.client.disconnect()
        require(not await newbie.login(), "the old password still logs in")
        newbie.password = new_password
        require(await newbie.login(), "the new password does not log in")
        return "the user's stream ended; the new password logs in"

    await step("the admin changes the user's password", change_password(), STEP_TIMEOUT)

    async def delete_user():
        ended = newbie.ended
        command = await run_command(admin.client, "delete-user", {"accountjids": [newbie.jid]})
        require(not notes(command, "error"), f"errors {notes(command, 'error')}")
        await newbie.until(lambda: newbie.ended > ended)
        await newbie.client.disconnect()
        require(not await newbie.login(), "the deleted account still logs in")
        counted = await run_command(admin.client, "get-registered-users-num")
        number = counted["form"].get_values().get("registeredusersnum")
        require(number == "1", f"registeredusersnum {number}")
        return "; ".join(notes(command, "info")) + f"; {number} account left on {domain}"

    await step("the admin deletes the user", delete_user(), STEP_TIMEOUT)
    await admin.client.disconnect()


async def main():
    host, port, domain, ca_certificate, admin = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    await scenario({"host": host, "port": port, "domain": domain, "ca": ca_certificate}, admin)
    print("ok   all ad-hoc interop steps passed")


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(main())
