#!/usr/bin/env python3
"""HTTP file upload (XEP-0363): swiftletd and Prosody's mod_http_file_share
on this machine, in one run, over loopback without TLS.

For each server, in rounds (swiftletd, Prosody, swiftletd, …), each round
on a freshly started process: one user logs in over XMPP, then `--files`
times asks the upload service for a slot (urn:xmpp:http:upload:0), PUTs a
file of `--size` MiB to the slot's URL (with the headers the slot names),
and GETs it back, checking every byte. Reports MB/s for PUT (request sent
to 201 received) and GET (request sent to last byte read), the slot
request's round trip, and the server's CPU time per MiB moved (utime +
stime from /proc). Medians over the rounds are printed as Markdown (JSON
with --json).

Usage: upload.py --swiftletd PATH [options]   (see --help)
"""
import argparse
import asyncio
import hashlib
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from xml.sax.saxutils import unescape

import servers
import xmpp_load

PASSWORD = "bench-password"
USER = "uploader"
SLOT_REPLY = re.compile(rb"<iq\b[^>]*\bid=['\"]slot\d+['\"][^>]*?(?:/>|>.*?</iq>)", re.S)
URL = re.compile(r"<(put|get)\b[^>]*\burl=['\"]([^'\"]+)['\"]")
HEADER = re.compile(r"<header\b[^>]*\bname=['\"]([^'\"]+)['\"][^>]*>([^<]*)</header>")
SERVER_NAMES = ("swiftletd", "prosody")


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--swiftletd", required=True, help="the swiftletd binary (a release build)")
    parser.add_argument("--servers", default=",".join(SERVER_NAMES), help="servers to run, in this order")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over all servers (medians are reported)")
    parser.add_argument("--files", type=int, default=10, help="files uploaded and downloaded per round")
    parser.add_argument("--size", type=int, default=10, help="file size in MiB")
    parser.add_argument("--prosody-read-size", type=int,
                        help="Prosody's network_settings.read_size in bytes (default: Prosody's own, 8192)")
    parser.add_argument("--revision", default="unknown", help="swiftletd's source revision, for the report")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (server logs)")
    arguments = parser.parse_args()
    arguments.server_names = [name for name in arguments.servers.split(",") if name]
    for name in arguments.server_names:
        if name not in SERVER_NAMES:
            parser.error(f"unknown server {name!r}; choose from {', '.join(SERVER_NAMES)}")
    return arguments


class UploadSwiftletd(servers.Swiftletd):
    """swiftletd as in servers.py, with its HTTP listener on a port of
    its own and limits that fit the run."""

    service = "upload.localhost"

    def __init__(self, directory, binary, size_mib, files):
        super().__init__(directory, binary)
        self.http_port = servers.free_port()
        self.config_path = os.path.join(directory, "swiftletd.conf")
        with open(self.config_path, "w") as config:
            config.write(
                f"upload_max_size = {max(size_mib, 1)}MiB\n"
                f"upload_quota = {max(size_mib * files * 2, 1024)}MiB\n")

    def command(self):
        return [self.binary, "--config", self.config_path, "--listen", f"127.0.0.1:{self.port}",
                "--http-listen", f"127.0.0.1:{self.http_port}", "--data-dir", self.data_dir]


PROSODY_UPLOAD_COMPONENT = """\
Component "upload.{domain}" "http_file_share"
    http_file_share_size_limit = {size_limit}
    http_file_share_daily_quota = {quota}
    http_file_share_global_quota = {quota}
"""


class UploadProsody(servers.Prosody):
    """Prosody as in servers.py (0.12 from the system package), plus its
    own XEP-0363 service: the http_file_share component, served by
    mod_http on a loopback port."""

    service = "upload.localhost"

    def __init__(self, directory, size_mib, files, read_size=None):
        super().__init__(directory)
        self.http_port = servers.free_port()
        with open(self.config_path) as config:
            text = config.read()
        listener = f'http_ports = {{ {self.http_port} }}\nhttp_interfaces = {{ "127.0.0.1" }}\n'
        if read_size:
            text = text.replace("network_settings = { nagle = false }",
                                f"network_settings = {{ nagle = false, read_size = {read_size} }}")
        limit = max(size_mib, 1) << 20
        text = text.replace("http_ports = {}\n", listener) + PROSODY_UPLOAD_COMPONENT.format(
            domain=servers.DOMAIN, size_limit=limit, quota=limit * files * 4)
        with open(self.config_path, "w") as config:
            config.write(text)


def http_exchange(port, method, url, body=None, headers=None):
    """One request on a new loopback connection to `port` (the URL's host
    is sent as Host, not resolved); returns (status, body, seconds)."""
    parsed = urllib.parse.urlsplit(url)
    target = parsed.path + (f"?{parsed.query}" if parsed.query else "")
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    fields = {"Host": parsed.netloc}
    fields.update(headers or {})
    started = time.perf_counter()
    try:
        connection.request(method, target, body=body, headers=fields)
        response = connection.getresponse()
        data = response.read()
        return response.status, data, time.perf_counter() - started
    finally:
        connection.close()


async def request_slot(conn, service, number, size):
    """A slot for `size` bytes: (put URL, put headers, get URL, seconds)."""
    started = time.perf_counter()
    conn.send(
        f"<iq type='get' id='slot{number}' to='{service}'><request xmlns='urn:xmpp:http:upload:0' "
        f"filename='bench {number}.bin' size='{size}' content-type='application/octet-stream'/></iq>")
    reply = (await conn.expect(SLOT_REPLY)).group(0).decode()
    elapsed = time.perf_counter() - started
    urls = {kind: unescape(url, {"&apos;": "'", "&quot;": '"'}) for kind, url in URL.findall(reply)}
    if "put" not in urls or "get" not in urls:
        raise RuntimeError(f"no slot: {reply[:300]}")
    headers = {name: unescape(value) for name, value in HEADER.findall(reply)}
    return urls["put"], headers, urls["get"], elapsed


async def measure(server, arguments):
    """One round on a started server: `--files` slots, PUTs and GETs."""
    size = arguments.size << 20
    payload = os.urandom(size)
    digest = hashlib.sha256(payload).digest()
    target = xmpp_load.Target("127.0.0.1", server.port, servers.DOMAIN, use_tls=False)
    conn = await xmpp_load.open_session(target, USER, PASSWORD, "bench")
    figures = {"slot_ms": [], "put_mb_s": [], "get_mb_s": []}
    cpu_before = server.cpu_seconds()
    for number in range(arguments.files):
        put_url, put_headers, get_url, slot_seconds = await request_slot(conn, server.service, number, size)
        headers = {"Content-Type": "application/octet-stream", "Content-Length": str(size)}
        headers.update(put_headers)
        status, _, put_seconds = http_exchange(server.http_port, "PUT", put_url, payload, headers)
        if status not in (200, 201):
            raise RuntimeError(f"{server.name}: PUT answered {status}")
        status, data, get_seconds = http_exchange(server.http_port, "GET", get_url)
        if status != 200 or hashlib.sha256(data).digest() != digest:
            raise RuntimeError(f"{server.name}: GET answered {status} with {len(data)} bytes")
        figures["slot_ms"].append(slot_seconds * 1000)
        figures["put_mb_s"].append(size / 1e6 / put_seconds)
        figures["get_mb_s"].append(size / 1e6 / get_seconds)
    cpu = server.cpu_seconds() - cpu_before
    conn.abort()
    result = {key: statistics.median(values) for key, values in figures.items()}
    result["cpu_ms_per_mib"] = cpu * 1000 / (2 * arguments.size * arguments.files)
    return result


def make_server(name, directory, arguments):
    if name == "swiftletd":
        return UploadSwiftletd(directory, arguments.swiftletd, arguments.size, arguments.files)
    return UploadProsody(directory, arguments.size, arguments.files, arguments.prosody_read_size)


def run(arguments, workdir):
    results = {name: [] for name in arguments.server_names}
    versions = {}
    for round_number in range(arguments.rounds):
        for name in arguments.server_names:
            directory = os.path.join(workdir, f"{name}-{round_number}")
            server = make_server(name, directory, arguments)
            server.add_user(USER, PASSWORD)
            versions[name] = server.version()
            server.start()
            try:
                result = asyncio.run(measure(server, arguments))
            finally:
                server.stop()
            print(f"round {round_number + 1} {name}: " + ", ".join(f"{k} {v:.1f}" for k, v in result.items()),
                  file=sys.stderr)
            results[name].append(result)
    return results, versions


def report(results, versions, arguments):
    names = list(results)
    medians = {name: {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
               for name, rounds in results.items()}
    lines = [
        f"Upload and download of {arguments.files} files of {arguments.size} MiB per round, "
        f"{arguments.rounds} rounds, medians; loopback, plain HTTP, one client; "
        + "; ".join(versions[name] for name in names) + f"; swiftletd revision {arguments.revision}.",
        "",
        "| server | PUT MB/s | GET MB/s | slot request ms | server CPU ms per MiB |",
        "|---|---|---|---|---|",
    ]
    for name in names:
        m = medians[name]
        lines.append(f"| {name} | {m['put_mb_s']:.0f} | {m['get_mb_s']:.0f} | {m['slot_ms']:.2f} | "
                     f"{m['cpu_ms_per_mib']:.2f} |")
    if "swiftletd" in medians and "prosody" in medians:
        ours, theirs = medians["swiftletd"], medians["prosody"]
        lines += ["", f"swiftletd / prosody: PUT ×{ours['put_mb_s'] / theirs['put_mb_s']:.2f}, "
                      f"GET ×{ours['get_mb_s'] / theirs['get_mb_s']:.2f}, CPU per MiB "
                      f"×{ours['cpu_ms_per_mib'] / theirs['cpu_ms_per_mib']:.2f}"]
    return "\n".join(lines), medians


def main():
    arguments = parse_arguments()
    if "prosody" in arguments.server_names and shutil.which("prosody") is None:
        print("upload.py: prosody not installed (apt-get install prosody); measuring swiftletd alone",
              file=sys.stderr)
        arguments.server_names.remove("prosody")
    workdir = tempfile.mkdtemp(prefix="swiftlet-upload-bench-")
    try:
        results, versions = run(arguments, workdir)
        text, medians = report(results, versions, arguments)
        print(text)
        if arguments.json:
            with open(arguments.json, "w") as output:
                json.dump({"medians": medians, "rounds": results, "versions": versions}, output, indent=2)
    finally:
        if arguments.keep:
            print(f"kept {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
