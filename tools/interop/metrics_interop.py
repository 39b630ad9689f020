#!/usr/bin/env python3
"""OpenMetrics check of swiftletd's /metrics with the reference parser of
the Prometheus Python client (prometheus_client.openmetrics.parser), which
refuses anything the format does not allow: a missing # EOF, a family's
samples apart, a histogram without +Inf or with decreasing buckets, a
unit that does not end the name, a counter without _total.

Run twice around a scenario, against a server with metrics = yes and
metrics_token = TOKEN listening for HTTP on 127.0.0.1:HTTP_PORT:
  before  1. /metrics without the token and with a wrong one: 401,
          2. with the token: 200, the OpenMetrics content type, and text
             the parser takes whole; the counts are saved to STATE_FILE,
  after   3. the same scrape, until every expectation holds (storage
             jobs of the scenario may finish after it) or 10 s passed:
             - logins{SCRAM-SHA-256} went up by at least LOGINS,
             - login_failures{SCRAM-SHA-256} by at least FAILURES,
             - stanzas_received{message} by at least MESSAGES, and
               stanzas_sent{message} by at least DELIVERED,
             - sessions{tcp, tls=yes} is SESSIONS now,
             - the routing histogram counted at least MESSAGES stanzas more,
               its buckets cumulative up to +Inf = _count,
             - the storage job histogram counted more jobs,
             - offline_messages went up by OFFLINE, archived_messages by at
               least MESSAGES,
             - uptime and the start time are plausible.
Prints one line per step and exits non-zero on the first failure.

Usage: metrics_interop.py HOST PORT DOMAIN CA_CERTIFICATE HTTP_PORT TOKEN
       STATE_FILE before
       metrics_interop.py HOST PORT DOMAIN CA_CERTIFICATE HTTP_PORT TOKEN
       STATE_FILE after LOGINS FAILURES MESSAGES DELIVERED SESSIONS OFFLINE
(HOST, PORT, DOMAIN and CA_CERTIFICATE are the XMPP listener's, as for
every interop script; /metrics is read from HTTP_PORT on HOST.)
"""
import json
import sys
import time
import urllib.error
import urllib.request

from prometheus_client.openmetrics.parser import text_string_to_metric_families

CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"


def fail(message):
    print(f"FAIL {message}")
    sys.exit(1)


def fetch(url, token):
    """The status, content type and body of GET url, with the token if any."""
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("Content-Type"), response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type"), error.read().decode("utf-8", "replace")


def scrape(url, token):
    """The parsed families of one scrape, as {sample name: {labels: value}},
    and the families' types and units."""
    status, content_type, body = fetch(url, token)
    if status != 200:
        fail(f"/metrics with the token answered {status}: {body}")
    if content_type != CONTENT_TYPE:
        fail(f"Content-Type is {content_type!r}, not {CONTENT_TYPE!r}")
    try:
        families = list(text_string_to_metric_families(body))
    except ValueError as error:
        fail(f"the parser refused the exposition: {error}\n{body}")
    samples, kinds = {}, {}
    for family in families:
        kinds[family.name] = (family.type, family.unit)
        for sample in family.samples:
            key = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            samples.setdefault(sample.name, {})[key] = sample.value
    return samples, kinds


def value(samples, name, labels=""):
    try:
        return samples[name][labels]
    except KeyError:
        fail(f"no sample {name}{{{labels}}}")


def check_histogram(samples, name):
    """Buckets cumulative and ending with +Inf = _count (the parser checks
    it too); returns _count."""
    buckets = sorted(
        ((float(key.split("le=")[1]), count) for key, count in samples[name + "_bucket"].items()),
        key=lambda pair: pair[0])
    counts = [count for _, count in buckets]
    if counts != sorted(counts) or buckets[-1][0] != float("inf"):
        fail(f"{name} buckets are not cumulative up to +Inf: {buckets}")
    if buckets[-1][1] != value(samples, name + "_count"):
        fail(f"{name}: +Inf bucket {buckets[-1][1]} != _count")
    return value(samples, name + "_count")


def main():
    if len(sys.argv) < 9:
        fail(__doc__)
    host, _port, _domain, _ca, http_port, token, state_file, stage = sys.argv[1:9]
    url = f"http://{host}:{http_port}/metrics"

    if stage == "before":
        for sent in (None, token + "x"):
            status, _, _ = fetch(url, sent)
            if status != 401:
                fail(f"/metrics with {'no token' if sent is None else 'a wrong token'} answered {status}, not 401")
        print("ok   /metrics without the token or with a wrong one: 401")
        samples, kinds = scrape(url, token)
        expected = {
            "swiftlet_sessions": ("gauge", ""),
            "swiftlet_logins": ("counter", ""),
            "swiftlet_login_failures": ("counter", ""),
            "swiftlet_stanzas_received": ("counter", ""),
            "swiftlet_stanzas_sent": ("counter", ""),
            "swiftlet_routing_duration_seconds": ("histogram", "seconds"),
            "swiftlet_storage_queue_depth": ("gauge", ""),
            "swiftlet_storage_job_duration_seconds": ("histogram", "seconds"),
            "swiftlet_offline_messages": ("gauge", ""),
            "swiftlet_archived_messages": ("gauge", ""),
            "swiftlet_upload_received_bytes": ("counter", "bytes"),
            "swiftlet_websocket_connections": ("counter", ""),
            "swiftlet_limits_hit": ("counter", ""),
            "swiftlet_uptime_seconds": ("gauge", "seconds"),
            "process_start_time_seconds": ("gauge", "seconds"),
        }
        for name, kind in expected.items():
            if kinds.get(name) != kind:
                fail(f"family {name} is {kinds.get(name)}, expected (type, unit) {kind}")
        print(f"ok   /metrics with the token: {len(kinds)} families, parsed by prometheus_client")
        with open(state_file, "w") as file:
            json.dump(samples, file)
        return

    logins, failures, messages, delivered, sessions, offline = map(int, sys.argv[9:15])
    with open(state_file) as file:
        before = json.load(file)
    scram = "mechanism=SCRAM-SHA-256"
    checks = [
        ("logins", lambda s: value(s, "swiftlet_logins_total", scram) - value(before, "swiftlet_logins_total", scram)
         >= logins),
        ("login failures", lambda s: value(s, "swiftlet_login_failures_total", scram)
         - value(before, "swiftlet_login_failures_total", scram) >= failures),
        ("messages received", lambda s: value(s, "swiftlet_stanzas_received_total", "kind=message")
         - value(before, "swiftlet_stanzas_received_total", "kind=message") >= messages),
        ("messages sent", lambda s: value(s, "swiftlet_stanzas_sent_total", "kind=message")
         - value(before, "swiftlet_stanzas_sent_total", "kind=message") >= delivered),
        ("sessions over TCP with TLS", lambda s: value(s, "swiftlet_sessions", "tls=yes,transport=tcp") == sessions),
        ("no WebSocket sessions", lambda s: value(s, "swiftlet_sessions", "tls=no,transport=websocket") == 0),
        ("routed stanzas", lambda s: check_histogram(s, "swiftlet_routing_duration_seconds")
         - value(before, "swiftlet_routing_duration_seconds_count") >= messages),
        ("storage jobs", lambda s: check_histogram(s, "swiftlet_storage_job_duration_seconds")
         > value(before, "swiftlet_storage_job_duration_seconds_count")),
        ("offline messages", lambda s: value(s, "swiftlet_offline_messages")
         - value(before, "swiftlet_offline_messages") == offline),
        ("archived messages", lambda s: value(s, "swiftlet_archived_messages")
         - value(before, "swiftlet_archived_messages") >= messages),
        ("uptime", lambda s: 0 < value(s, "swiftlet_uptime_seconds") < 3600),
        ("start time", lambda s: abs(value(s, "process_start_time_seconds") - time.time()) < 3600),
    ]
    deadline = time.monotonic() + 10
    while True:
        samples, _ = scrape(url, token)
        failing = [name for name, check in checks if not check(samples)]
        if not failing:
            break
        if time.monotonic() > deadline:
            fail(f"after the scenario, wrong: {', '.join(failing)}\n{json.dumps(samples, indent=1)}")
        time.sleep(0.2)
    print("ok   after the scenario: " + ", ".join(name for name, _ in checks))
    print("ok   metrics interop passed")


if __name__ == "__main__":
    main()
