"""The two servers under test, each run as a child process of this tool.

Each server gets its own directory under the run's temp dir, a free port on
127.0.0.1 and the same accounts. Only the PIDs started here are ever
signalled. CPU time and memory are read from /proc/PID.
"""
import os
import random
import socket
import subprocess
import time

DOMAIN = "localhost"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port():
    """A TCP port on 127.0.0.1 that nothing uses right now, below the
    kernel's range of ephemeral ports when there is room: a port from that
    range can be taken by a client connection (of a benchmark with many
    sessions) between now and the moment the server binds it."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as ports:
        ephemeral_start = int(ports.read().split()[0])
    candidates = random.sample(range(10000, ephemeral_start), min(50, max(0, ephemeral_start - 10000)))
    for port in candidates + [0]:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return probe.getsockname()[1]
    raise RuntimeError("no free TCP port on 127.0.0.1")


def make_certificate(directory):
    """A self-signed ECDSA P-256 certificate for DOMAIN (the key type
    swiftletd generates), made with openssl: returns the paths of
    DIRECTORY/localhost.crt and DIRECTORY/localhost.key."""
    certificate, key = os.path.join(directory, "localhost.crt"), os.path.join(directory, "localhost.key")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "2", "-subj", f"/CN={DOMAIN}", "-addext", f"subjectAltName=DNS:{DOMAIN}",
         "-keyout", key, "-out", certificate],
        check=True, capture_output=True, timeout=60)
    return certificate, key


class ServerProcess:
    """A server child process: start, wait until it accepts, measure, stop."""

    name = "server"
    #: CPUs the server is pinned to (as `taskset -c` takes them), or None.
    cpus = None

    def __init__(self, directory):
        self.directory = directory
        self.port = free_port()
        self.process = None
        self.log_path = os.path.join(directory, "server.log")
        os.makedirs(directory, exist_ok=True)

    def command(self):
        raise NotImplementedError

    def start(self, timeout=30.0):
        """Starts the server and returns once its port accepts connections."""
        with open(self.log_path, "ab") as log:
            pinning = ["taskset", "-c", self.cpus] if self.cpus else []
            self.process = subprocess.Popen(
                pinning + self.command(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}; see {self.log_path}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.name} did not listen on port {self.port} within {timeout}s")

    def stop(self):
        """SIGTERM, then SIGKILL after 10 s; only our own child."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)

    @property
    def pid(self):
        return self.process.pid

    def cpu_seconds(self):
        """User + system CPU time of the server process, all threads
        (fields utime and stime of /proc/PID/stat)."""
        with open(f"/proc/{self.pid}/stat") as stat:
            # The command name (field 2) may hold spaces: split after its ')'.
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS

    def thread_cpu_seconds(self):
        """{thread id: (thread name, utime + stime)} from /proc/PID/task;
        threads that end in between are missing."""
        threads = {}
        for tid in os.listdir(f"/proc/{self.pid}/task"):
            try:
                with open(f"/proc/{self.pid}/task/{tid}/stat") as stat:
                    text = stat.read()
            except FileNotFoundError:
                continue
            name = text[text.index("(") + 1:text.rindex(")")]
            fields = text.rsplit(")", 1)[1].split()
            threads[int(tid)] = (name, (int(fields[11]) + int(fields[12])) / CLOCK_TICKS)
        return threads

    def memory_kib(self):
        """(VmRSS, RssAnon) of /proc/PID/status, in KiB: all resident
        pages, and those not backed by a file (heap and stacks, as opposed
        to the code of the executable and its libraries)."""
        fields = {}
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                name, _, value = line.partition(":")
                if name in ("VmRSS", "RssAnon"):
                    fields[name] = int(value.split()[0])
        return fields["VmRSS"], fields["RssAnon"]


class Swiftletd(ServerProcess):
    """swiftletd with its built-in defaults: TLS policy `auto` (optional on
    a loopback-only listener), its self-signed ECDSA P-256 certificate,
    SQLite storage, SCRAM credentials with 4096 iterations, log level info
    (to a file)."""

    name = "swiftletd"

    def __init__(self, directory, binary):
        super().__init__(directory)
        self.binary = binary
        self.data_dir = os.path.join(directory, "data")

    def command(self):
        return [self.binary, "--listen", f"127.0.0.1:{self.port}", "--http-listen", "127.0.0.1:0",
                "--data-dir", self.data_dir]

    def add_user(self, user, password):
        subprocess.run(
            [self.binary, "adduser", user, "--data-dir", self.data_dir],
            input=password.encode(), check=True, capture_output=True, timeout=60)

    def version(self):
        return subprocess.run([self.binary, "--version"], capture_output=True, text=True).stdout.strip()


PROSODY_CONFIG = """\
-- Written by tools/benchmark: a foreground Prosody on loopback only.
run_as_root = true  -- only matters when the benchmark runs as root
pidfile = "{dir}/prosody.pid"
data_path = "{dir}/data"
plugin_paths = {{}}
log = {{ info = "{dir}/prosody.log" }}  -- the default level, as swiftletd's
certificates = "{dir}"
interfaces = {{ "127.0.0.1" }}
c2s_ports = {{ {port} }}
c2s_direct_tls_ports = {{}}
legacy_ssl_ports = {{}}
s2s_ports = {{}}
component_ports = {{}}
http_ports = {{}}
https_ports = {{}}
modules_enabled = {{ {modules} }}
modules_disabled = {{ "s2s" }}
authentication = "internal_hashed"
default_iteration_count = 4096  -- as swiftletd's default
c2s_require_encryption = false  -- the no-TLS variant; TLS clients use STARTTLS
allow_registration = false
-- TCP_NODELAY, as swiftletd sets it. With Nagle left on (Prosody's default)
-- the features after a TLS 1.3 handshake wait ~40 ms for a delayed ACK.
network_settings = {{ nagle = false }}
ssl = {{ certificate = "{dir}/localhost.crt", key = "{dir}/localhost.key" }}
VirtualHost "{domain}"
"""


class Prosody(ServerProcess):
    """Prosody from the system package, run in the foreground (`-F`) with a
    config of its own: internal_hashed storage, STARTTLS optional, a
    self-signed ECDSA P-256 certificate made with openssl (the key type
    swiftletd generates), TCP_NODELAY, logging at info (its default) to a
    file."""

    name = "prosody"
    #: The modules loaded besides those Prosody always loads.
    modules = ("roster", "saslauth", "tls", "disco", "ping")

    def __init__(self, directory):
        super().__init__(directory)
        self.config_path = os.path.join(directory, "prosody.cfg.lua")
        os.makedirs(os.path.join(directory, "data"), exist_ok=True)
        make_certificate(directory)
        with open(self.config_path, "w") as config:
            config.write(PROSODY_CONFIG.format(
                dir=directory, port=self.port, domain=DOMAIN,
                modules=", ".join(f'"{module}"' for module in self.modules)))

    def command(self):
        return ["prosody", "--config", self.config_path, "-F"]

    def add_user(self, user, password):
        subprocess.run(
            ["prosodyctl", "--config", self.config_path, "register", user, DOMAIN, password],
            check=True, capture_output=True, timeout=60)

    def version(self):
        about = subprocess.run(
            ["prosodyctl", "--config", self.config_path, "about"], capture_output=True, text=True).stdout
        for line in about.splitlines():
            if line.startswith("Prosody"):
                return line.strip()
        return "prosody (version unknown)"
