"""ejabberd from the Debian package, run in the foreground as a child of
this tool with a config, spool, log dir and Erlang node of its own.

`ejabberdctl foreground-quiet` (it logs to its file only), run as root,
starts the Erlang VM as the `ejabberd` user through `su`, so the process
measured and signalled is the VM (`beam.smp`), found among the descendants
of the `ejabberdctl` started here.
Erlang distribution listens on 127.0.0.1 at a port of its own
(ERL_DIST_PORT), so no epmd daemon is started; accounts are made by
in-band registration (XEP-0077) from loopback, which this config allows.
"""
import os
import pwd
import shutil
import signal
import subprocess
import time

import servers
import xmpp_load

EJABBERD_USER = "ejabberd"

CONFIG = """\
# Written by tools/benchmark: a foreground ejabberd on loopback only.
loglevel: info  # the default, as swiftletd's and Prosody's
log_rotate_count: 0
hosts:
  - {domain}
auth_method: internal
auth_password_format: scram  # SCRAM-SHA-1, 4096 iterations: as the others
registration_timeout: infinity  # many in-band registrations from 127.0.0.1
listen:
  -
    port: {port}
    ip: "127.0.0.1"
    module: ejabberd_c2s
    max_stanza_size: 1048576  # swiftletd's default
    starttls_required: false
    access: c2s{listener_options}
    # No shaper: Debian's config limits c2s to 3000 B/s; the others have
    # no rate limit.
acl:
  loopback:
    ip:
      - 127.0.0.0/8
access_rules:
  c2s:
    allow: all
  register:
    allow: all
  register_from:
    allow: loopback
shaper_rules:
  max_user_sessions: {max_user_sessions}
  max_user_offline_messages: 1000000
{certfiles}modules:
  mod_disco: {{}}
  mod_offline:
    access_max_user_messages: max_user_offline_messages
  mod_ping: {{}}
  mod_register:
    access: register
    ip_access: register_from
    welcome_message: {{subject: "", body: ""}}
  mod_roster: {{}}
"""

# Sourced by ejabberdctl after its defaults; everything points into our dir.
CTL_CONFIG = """\
ERL={dir}/erl
ERL_OPTIONS="-env ERL_CRASH_DUMP_BYTES 0 -setcookie swiftlet-benchmark"
ERL_DIST_PORT={dist_port}
INET_DIST_INTERFACE=127.0.0.1
EJABBERD_PID_PATH={dir}/ejabberd.pid
CONTRIB_MODULES_PATH={dir}/contrib
CONTRIB_MODULES_CONF_DIR={dir}/contrib
"""

# The VM runs through `su`, which leaves it the default soft limit of
# 1,024 open files: too few for thousands of idle sessions.
ERL_WRAPPER = """\
#!/bin/sh
# Written by tools/benchmark: erl with the open-files limit raised to the hard one.
ulimit -n "$(ulimit -Hn)"
exec /usr/bin/erl "$@"
"""

INETRC = """\
{lookup,["file","native"]}.
{host,{127,0,0,1}, ["localhost"]}.
"""


class Ejabberd(servers.ServerProcess):
    """ejabberd 23.01 (Debian bookworm) with Mnesia storage, no TLS, no
    shaper, and the modules a plain chat client needs: roster, disco,
    ping, offline storage and in-band registration (no MAM, carbons,
    stream management, privacy or blocking). Subclasses change the class
    attributes below for STARTTLS, scheduler busy-waiting, sessions per
    account and the open-files limit."""

    name = "ejabberd"
    #: Lines added to the c2s listener's options (each starting with "\n    ").
    listener_options = ""
    #: STARTTLS offered, with a self-signed ECDSA P-256 certificate as the
    #: others use.
    starttls = False
    #: Whether idle Erlang schedulers busy-wait (the VM's default); without
    #: it, the VM's CPU time counts work rather than spinning between bursts.
    busy_wait = True
    #: Resources one account may have at once.
    max_user_sessions = 10

    def __init__(self, directory):
        bundle = self._make_certificate_bundle(directory) if self.starttls else None
        super().__init__(directory)
        self.spool = os.path.join(directory, "spool")
        self.logs = os.path.join(directory, "logs")
        for path in (self.spool, self.logs, os.path.join(directory, "contrib")):
            os.makedirs(path, exist_ok=True)
        files = {
            "ejabberd.yml": CONFIG.format(
                domain=servers.DOMAIN, port=self.port, max_user_sessions=self.max_user_sessions,
                certfiles=f"certfiles:\n  - \"{bundle}\"\n" if bundle else "",
                listener_options=self.listener_options + ("\n    starttls: true" if self.starttls else "")),
            "ejabberdctl.cfg": CTL_CONFIG.format(dist_port=servers.free_port(), dir=directory),
            "inetrc": INETRC,
            "erl": ERL_WRAPPER,
        }
        if not self.busy_wait:
            files["ejabberdctl.cfg"] += 'ERL_OPTIONS="$ERL_OPTIONS +sbwt none +sbwtdcpu none +sbwtdio none"\n'
        for name, text in files.items():
            with open(os.path.join(directory, name), "w") as file:
                file.write(text)
        os.chmod(os.path.join(directory, "erl"), 0o755)
        # The VM runs as the ejabberd user: it must reach and own its dir.
        account = pwd.getpwnam(EJABBERD_USER)
        for root, dirs, names in os.walk(directory):
            for path in [root] + [os.path.join(root, name) for name in dirs + names]:
                os.chown(path, account.pw_uid, account.pw_gid)
        parent = os.path.dirname(directory)
        os.chmod(parent, os.stat(parent).st_mode | 0o111)
        self.vm_pid = None

    @staticmethod
    def _make_certificate_bundle(directory):
        """The certificate and key in one PEM file, made before the base
        class gives the directory to the ejabberd user; returns its path."""
        os.makedirs(directory, exist_ok=True)
        bundle = os.path.join(directory, "localhost.pem")
        with open(bundle, "w") as pem:
            for path in servers.make_certificate(directory):
                with open(path) as part:
                    pem.write(part.read())
        return bundle

    def command(self):
        return [shutil.which("ejabberdctl"), "--config-dir", self.directory,
                          "--ctl-config", os.path.join(self.directory, "ejabberdctl.cfg"),
                          "--spool", self.spool, "--logs", self.logs,
                          "--node", "swiftletbench@localhost", "foreground-quiet"]

    def start(self, timeout=60.0):
        super().start(timeout)
        self.vm_pid = self._find_vm()

    def _find_vm(self):
        """The beam.smp process below our ejabberdctl (through su)."""
        children = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as stat:
                        name_end = stat.read().rsplit(")", 1)
                    parent = int(name_end[1].split()[1])
                    children.setdefault(parent, []).append(int(entry))
                except (OSError, IndexError, ValueError):
                    continue  # gone meanwhile
        pending = [self.process.pid]
        while pending:
            pid = pending.pop()
            for child in children.get(pid, []):
                try:
                    with open(f"/proc/{child}/comm") as comm:
                        if comm.read().strip() == "beam.smp":
                            return child
                except OSError:
                    continue
                pending.append(child)
        raise RuntimeError("ejabberd started but no beam.smp process was found below it")

    @property
    def pid(self):
        return self.vm_pid

    def stop(self):
        """SIGTERM to the VM (Erlang stops cleanly on it), SIGKILL after
        15 s; then waits for the ejabberdctl we started."""
        if self.process is None or self.process.poll() is not None:
            return
        if self.vm_pid is not None:
            try:
                os.kill(self.vm_pid, signal.SIGTERM)
                deadline = time.monotonic() + 15
                while os.path.exists(f"/proc/{self.vm_pid}") and time.monotonic() < deadline:
                    time.sleep(0.1)
                if os.path.exists(f"/proc/{self.vm_pid}"):
                    os.kill(self.vm_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            super().stop()

    #: Registrations per unauthenticated stream: ejabberd ends one that
    #: has not authenticated within its negotiation timeout.
    REGISTRATIONS_PER_STREAM = 100

    async def register(self, accounts):
        """Creates the accounts [(user, password)] by in-band registration
        (XEP-0077 §3.1), on unauthenticated streams of
        REGISTRATIONS_PER_STREAM accounts each."""
        for first in range(0, len(accounts), self.REGISTRATIONS_PER_STREAM):
            await xmpp_load.register_accounts(
                self.port, servers.DOMAIN, accounts[first:first + self.REGISTRATIONS_PER_STREAM])

    def version(self):
        status = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "ejabberd"],
                                capture_output=True, text=True)
        return f"ejabberd {status.stdout.strip() or '(version unknown)'}"


class StartTLSEjabberd(Ejabberd):
    """ejabberd as above with STARTTLS offered and the Erlang VM's
    schedulers not busy-waiting when idle: the login, memory and reconnect
    benchmarks' ejabberd."""

    starttls = True
    busy_wait = False


def available():
    """Whether the ejabberd package and its user are installed."""
    try:
        pwd.getpwnam(EJABBERD_USER)
    except KeyError:
        return False
    return shutil.which("ejabberdctl") is not None
