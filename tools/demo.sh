#!/usr/bin/env bash
# Swiftlet in a minute: starts swiftletd on a free loopback port with a
# temporary data directory, then uses the swiftlet CLI as alice and bob:
# register, become friends, message each other live and offline, talk in
# a group chat room, read the history. Builds first (debug; the scratch directory is .build unless
# SWIFTLET_SCRATCH says otherwise). Everything lives in a temporary
# directory, removed at the end after the server is stopped; the script
# exits non-zero as soon as a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${SWIFTLET_SCRATCH:-.build}"
command -v openssl >/dev/null || { echo "demo.sh: openssl not found (apt-get install openssl)" >&2; exit 69; }

step() { printf '\n== %s\n' "$*"; }
fail() { echo "demo.sh: $*" >&2; exit 1; }

step "Building swiftletd and swiftlet"
swift build --scratch-path "$scratch" --product swiftletd
swift build --scratch-path "$scratch" --product swiftlet
bin="$(swift build --scratch-path "$scratch" --show-bin-path)"

work="$(mktemp -d "${TMPDIR:-/tmp}/swiftlet-demo.XXXXXX")"
server_pid=""
listener_pid=""
cleanup() {
    for pid in $listener_pid $server_pid; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

# The arguments as a shell would take them back: quoted when needed.
quoted() {
    local words=() word
    for word in "$@"; do
        if [[ "$word" =~ ^[A-Za-z0-9@._:/,=+-]+$ ]]; then words+=("$word"); else words+=("'${word//\'/\'\\\'\'}'"); fi
    done
    echo "${words[*]}"
}

# `as USER ARGS…` shows and runs swiftlet for USER, whose accounts and
# archive are in a home directory of their own; `fed USER INPUT ARGS…`
# does the same with INPUT as a line on standard input.
as() {
    local user="$1"
    shift
    echo "$user\$ swiftlet $(quoted "$@")"
    SWIFTLET_HOME="$work/$user" "$bin/swiftlet" "$@"
}
fed() {
    local user="$1" input="$2"
    shift 2
    echo "$user\$ echo $(quoted "$input") | swiftlet $(quoted "$@")"
    echo "$input" | SWIFTLET_HOME="$work/$user" "$bin/swiftlet" "$@"
}

step "Starting swiftletd on a free port of 127.0.0.1"
"$bin/swiftletd" --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 --data-dir "$work/server" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 300); do
    grep -q 'listening on 127.0.0.1:' "$work/server.log" && break
    kill -0 "$server_pid" 2>/dev/null || fail "swiftletd exited: $(cat "$work/server.log")"
    sleep 0.1
done
port="$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/server.log" | head -n 1)"
[ -n "$port" ] || fail "swiftletd did not start listening: $(cat "$work/server.log")"
# Its certificate is self-signed: the clients pin its SHA-256 fingerprint.
fingerprint="$(openssl x509 -in "$work/server/tls/localhost.crt" -noout -fingerprint -sha256 | cut -d= -f2)"
echo "swiftletd (pid $server_pid) listens on 127.0.0.1:$port; certificate SHA-256 $fingerprint"
server=(--server "127.0.0.1:$port" --tls "pin:$fingerprint")

step "Registering alice and bob (the password comes on standard input; the login is saved)"
fed alice alice-secret register alice@localhost "${server[@]}"
fed bob bob-secret register bob@localhost "${server[@]}"

step "Making them friends: alice asks, bob accepts and asks back, alice accepts"
as alice roster add bob@localhost --name Bob --group Friends
as bob roster accept alice@localhost
as alice roster accept bob@localhost
as alice roster list
as bob roster list

step "bob listens in the background while alice writes"
echo "bob\$ swiftlet listen --only connection,message --count 4 --timeout 20 &"
SWIFTLET_HOME="$work/bob" "$bin/swiftlet" listen --only connection,message --count 4 --timeout 20 >"$work/bob.out" &
listener_pid=$!
for _ in $(seq 100); do
    grep -q '^connection connected' "$work/bob.out" && break
    sleep 0.1
done
grep -q '^connection connected' "$work/bob.out" || fail "bob's listen did not connect: $(cat "$work/bob.out")"
as alice send bob@localhost "Hi Bob!"
fed alice "Lunch at noon?" chat bob@localhost
wait "$listener_pid" || fail "bob's listen failed"
listener_pid=""
echo "bob's listen printed:"
sed 's/^/  /' "$work/bob.out"

step "bob is offline: alice's message waits on the server until bob listens again"
as alice send bob@localhost "See you there."
as bob listen --json --only message --count 1 --timeout 10

step "A group chat room: alice creates a persistent one and invites bob; he joins and says hello; alice reads the room's archive"
room=garden@conference.localhost
as alice room create "$room" --name Garden --persistent
as alice room invite "$room" bob@localhost --reason "Come to the garden"
fed bob "Hello, garden!" room join "$room" --timeout 10
as alice room history "$room" --from-server

step "History and conversations, from each one's local archive"
as bob recent
as bob history alice@localhost
as bob recent
as alice history bob@localhost --json --limit 1

step "Done: stopping swiftletd and removing $work"
