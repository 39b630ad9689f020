"""What the nbxmpp interop scripts share: an nbxmpp client set up for a
test server on loopback, over STARTTLS with the server's self-signed
certificate accepted, recording what it sends and receives."""
import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio  # noqa: E402

from nbxmpp.client import Client  # noqa: E402
from nbxmpp.const import ConnectionProtocol, ConnectionType  # noqa: E402


def starttls_client(host, port, domain, ca_certificate, sent, received):
    """A client for `domain` at `host`:`port` (STARTTLS only, trusting the
    certificate at `ca_certificate`) that appends each stanza it sends to
    `sent` and each it receives to `received`, as text."""
    client = Client()
    client.set_domain(domain)
    client.set_custom_host(f"{host}:{port}", ConnectionProtocol.TCP, ConnectionType.START_TLS)
    client.set_connection_types([ConnectionType.START_TLS])
    client.set_accepted_certificates([Gio.TlsCertificate.new_from_file(ca_certificate)])
    client.subscribe("stanza-sent", lambda _client, _signal, data: sent.append(str(data)))
    client.subscribe("stanza-received", lambda _client, _signal, data: received.append(str(data)))
    return client
