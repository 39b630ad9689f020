"""What the nbxmpp interop scripts share: an nbxmpp client set up for a
test server on loopback, over STARTTLS with the server's local CA as the
trust store, recording what it sends and receives."""
import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio  # noqa: E402

from nbxmpp.client import Client  # noqa: E402
from nbxmpp.const import ConnectionProtocol, ConnectionType  # noqa: E402


def starttls_client(host, port, domain, ca_certificate, sent, received):
    """A client for `domain` at `host`:`port` (STARTTLS only, verifying the
    server's certificate against the CA at `ca_certificate`, which becomes
    GLib's default trust store as the system's would be) that appends each
    stanza it sends to `sent` and each it receives to `received`, as text."""
    Gio.TlsBackend.get_default().set_default_database(Gio.TlsFileDatabase.new(ca_certificate))
    client = Client()
    client.set_domain(domain)
    client.set_custom_host(f"{host}:{port}", ConnectionProtocol.TCP, ConnectionType.START_TLS)
    client.set_connection_types([ConnectionType.START_TLS])
    client.subscribe("stanza-sent", lambda _client, _signal, data: sent.append(str(data)))
    client.subscribe("stanza-received", lambda _client, _signal, data: received.append(str(data)))
    return client
