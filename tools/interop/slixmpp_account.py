"""What the interop scripts share about slixmpp clients of a loopback
swiftletd: a client that trusts the server's certificate, and in-band
registration (XEP-0077) of a fresh account.

Imported by the scripts beside it (Python puts a script's own directory
first on its module path).
"""
import asyncio

import slixmpp
from slixmpp.exceptions import IqError


def make_client(jid, password, ca_certificate, plugins):
    """A `ClientXMPP` for `jid` that uses STARTTLS (not direct TLS),
    verifies the server against `ca_certificate`, and has `plugins`."""
    client = slixmpp.ClientXMPP(jid, password)
    client.enable_direct_tls = False
    client.ca_certs = ca_certificate
    for plugin in plugins:
        client.register_plugin(plugin)
    return client


async def register(client, host, port, username, password, timeout):
    """Creates the account `username` over `client` (which needs the
    xep_0077 plugin), then disconnects; raises if the server refuses."""
    client.plugin["xep_0077"].force_registration = True
    outcome = asyncio.get_running_loop().create_future()

    async def on_register(_event):
        iq = client.Iq()
        iq["type"] = "set"
        iq["register"]["username"] = username
        iq["register"]["password"] = password
        try:
            await iq.send(timeout=timeout)
            outcome.set_result(None)
        except IqError as error:
            outcome.set_exception(RuntimeError(f"registration refused: {error.iq['error']['condition']}"))

    client.add_event_handler("register", on_register)
    client.connect(host=host, port=port)
    try:
        await outcome
    finally:
        await client.disconnect()
