// The web chat's XMPP side, on Strophe.js (global `Strophe`, `$iq`, `$msg`,
// `$pres`): registration, login, roster and subscriptions, presence, chat
// with history from the server's archive, file upload and group chat.
// The page (chat.js) sets the `on…` callbacks and calls the methods; no
// DOM here.
"use strict";

const NS = {
  framing: "urn:ietf:params:xml:ns:xmpp-framing",
  register: "jabber:iq:register",
  registerFeature: "http://jabber.org/features/iq-register",
  roster: "jabber:iq:roster",
  discoInfo: "http://jabber.org/protocol/disco#info",
  discoItems: "http://jabber.org/protocol/disco#items",
  mam: "urn:xmpp:mam:2",
  rsm: "http://jabber.org/protocol/rsm",
  forward: "urn:xmpp:forward:0",
  delay: "urn:xmpp:delay",
  sid: "urn:xmpp:sid:0",
  upload: "urn:xmpp:http:upload:0",
  oob: "jabber:x:oob",
  data: "jabber:x:data",
  muc: "http://jabber.org/protocol/muc",
  mucUser: "http://jabber.org/protocol/muc#user",
  mucOwner: "http://jabber.org/protocol/muc#owner",
  stanzas: "urn:ietf:params:xml:ns:xmpp-stanzas",
};

/** The first child element of `parent` named `name` in `ns`, or null. */
function child(parent, name, ns) {
  for (const node of parent.children) {
    if (node.localName === name && (!ns || node.namespaceURI === ns)) return node;
  }
  return null;
}

/** The text of `parent`'s child `name` in `ns`, or null. */
function childText(parent, name, ns) {
  const found = child(parent, name, ns);
  return found ? found.textContent : null;
}

/** What an error stanza says: its text, else its condition. */
function errorText(stanza) {
  const error = child(stanza, "error");
  if (!error) return "no answer";
  const text = childText(error, "text", NS.stanzas);
  if (text) return text;
  const condition = [...error.children].find((node) => node.namespaceURI === NS.stanzas);
  return condition ? condition.localName : "error";
}

/** Escapes text for XML we write by hand (registration only). */
function xmlEscape(text) {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c]);
}

/** Sends `iq` and resolves with the result stanza; rejects with the error's text. */
function request(connection, iq, timeout = 20000) {
  return new Promise((resolve, reject) => {
    connection.sendIQ(iq, resolve, (stanza) => reject(new Error(stanza ? errorText(stanza) : "no answer in time")), timeout);
  });
}

/**
 * Creates `username` with `password` by XEP-0077 on a stream of its own,
 * before any login: Strophe only opens streams that authenticate, so this
 * speaks RFC 7395 framing on a plain WebSocket.
 */
function registerAccount(url, domain, username, password) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, "xmpp");
    let settled = false;
    const finish = (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (socket.readyState === WebSocket.OPEN) {
        // Close the stream, then the socket once the server has closed its
        // stream too (RFC 7395 §3.6), or after a second at most.
        socket.send(`<close xmlns="${NS.framing}"/>`);
        socket.onmessage = (event) => { if (event.data.startsWith("<close")) socket.close(); };
        setTimeout(() => socket.close(), 1000);
      }
      if (error) reject(error); else resolve();
    };
    const timer = setTimeout(() => finish(new Error("the server did not answer in time")), 20000);
    socket.onopen = () => socket.send(`<open xmlns="${NS.framing}" to="${xmlEscape(domain)}" version="1.0"/>`);
    socket.onerror = () => finish(new Error("cannot reach the server"));
    socket.onclose = () => finish(new Error("the server closed the connection"));
    socket.onmessage = (event) => {
      const element = new DOMParser().parseFromString(event.data, "text/xml").documentElement;
      switch (element.localName) {
        case "features":
          if (!child(element, "register", NS.registerFeature)) {
            return finish(new Error("this server does not let new users register here"));
          }
          socket.send(
            `<iq xmlns="jabber:client" type="set" id="register-1"><query xmlns="${NS.register}">` +
            `<username>${xmlEscape(username)}</username><password>${xmlEscape(password)}</password></query></iq>`);
          break;
        case "iq":
          if (element.getAttribute("type") === "result") finish();
          else finish(new Error(`registration refused: ${errorText(element)}`));
          break;
        case "error":
          finish(new Error(`the server ended the stream: ${element.firstElementChild?.localName ?? "error"}`));
          break;
      }
    };
  });
}

/** A message as the page shows it. */
class ChatMessage {
  constructor({ peer, from, outgoing, body, url, id, stanzaId, time, nick }) {
    Object.assign(this, { peer, from, outgoing, body, url, id, stanzaId, time, nick });
  }

  /** The keys that tell a message seen live from its copy in the archive. */
  get keys() {
    const keys = [];
    if (this.stanzaId) keys.push(`sid:${this.stanzaId}`);
    if (this.id) keys.push(`id:${this.outgoing ? "out" : "in"}:${this.nick ?? ""}:${this.id}`);
    return keys;
  }
}

/** Reads a `<message/>` (live, or forwarded from an archive) as a `ChatMessage`. */
function readMessage(stanza, ownBare, { time, archiveId } = {}) {
  const body = childText(stanza, "body");
  if (body === null) return null;
  const from = stanza.getAttribute("from") ?? ownBare;
  const to = stanza.getAttribute("to") ?? ownBare;
  const isRoom = stanza.getAttribute("type") === "groupchat";
  const fromBare = Strophe.getBareJidFromJid(from);
  const outgoing = !isRoom && fromBare === ownBare;
  const peer = isRoom ? fromBare : Strophe.getBareJidFromJid(outgoing ? to : from);
  const delay = child(stanza, "delay", NS.delay);
  const oob = child(stanza, "x", NS.oob);
  let stanzaId = archiveId ?? null;
  for (const node of stanza.children) {
    if (!stanzaId && node.localName === "stanza-id" && node.namespaceURI === NS.sid && node.getAttribute("by") === (isRoom ? peer : ownBare)) {
      stanzaId = node.getAttribute("id");
    }
  }
  return new ChatMessage({
    peer, from, outgoing, body,
    url: oob ? childText(oob, "url") : null,
    id: stanza.getAttribute("id"),
    stanzaId,
    time: time ?? (delay ? new Date(delay.getAttribute("stamp")) : new Date()),
    nick: isRoom ? Strophe.getResourceFromJid(from) : null,
  });
}

/** A logged-in account: one Strophe connection and what the server told it. */
class ChatClient {
  constructor(config) {
    this.config = config;
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    this.url = `${scheme}//${location.host}${config.websocketPath}`;
    this.connection = null;
    this.jid = null;
    this.roster = new Map();      // bare JID → {jid, name, subscription, ask}
    this.presence = new Map();    // bare JID → Map(resource → show)
    this.rooms = new Map();       // room JID → {jid, nick, joined}
    this.uploadService = undefined;
    // Callbacks the page sets.
    this.onStatus = () => {};
    this.onRoster = () => {};
    this.onPresence = () => {};
    this.onMessage = () => {};
    this.onSubscriptionRequest = () => {};
    this.onRooms = () => {};
  }

  /** `name` as a bare JID: a bare username gets the server's domain. */
  bareJid(name) {
    const trimmed = name.trim().toLowerCase();
    return trimmed.includes("@") ? Strophe.getBareJidFromJid(trimmed) : `${trimmed}@${this.config.domain}`;
  }

  register(username, password) {
    return registerAccount(this.url, this.config.domain, username, password);
  }

  /** Logs in; resolves once connected, rejects with a reason otherwise. */
  connect(jid, password) {
    return new Promise((resolve, reject) => {
      const connection = new Strophe.Connection(this.url);
      this.connection = connection;
      let connected = false;
      connection.connect(`${this.bareJid(jid)}/web-${Math.random().toString(36).slice(2, 8)}`, password, (status, condition) => {
        const S = Strophe.Status;
        if (status === S.CONNECTING) this.onStatus("Connecting…");
        else if (status === S.AUTHENTICATING) this.onStatus("Logging in…");
        else if (status === S.CONNECTED) {
          connected = true;
          this.jid = connection.jid;
          this.started().then(resolve, reject);
        } else if (status === S.AUTHFAIL) {
          reject(new Error("wrong username or password"));
        } else if (status === S.CONNFAIL) {
          if (connected) this.onStatus(`Connection lost${condition ? `: ${condition}` : ""}`, true);
          else reject(new Error(condition ? `cannot connect: ${condition}` : "cannot connect"));
        } else if (status === S.DISCONNECTED) {
          if (connected) this.onStatus("Disconnected", true);
          else reject(new Error("the server closed the connection"));
          connected = false;
        }
      });
    });
  }

  disconnect() {
    if (this.connection) this.connection.disconnect();
  }

  get ownBare() {
    return Strophe.getBareJidFromJid(this.jid);
  }

  /** After login: handlers, the roster, then available presence. */
  async started() {
    const c = this.connection;
    c.addHandler((stanza) => this.receivedMessage(stanza), null, "message");
    c.addHandler((stanza) => this.receivedPresence(stanza), null, "presence");
    c.addHandler((stanza) => this.rosterPush(stanza), NS.roster, "iq", "set");
    const result = await request(c, $iq({ type: "get" }).c("query", { xmlns: NS.roster }));
    for (const item of child(result, "query", NS.roster).children) this.rosterItem(item);
    this.onRoster();
    c.send($pres());
  }

  rosterItem(item) {
    const jid = item.getAttribute("jid");
    if (item.getAttribute("subscription") === "remove") this.roster.delete(jid);
    else {
      this.roster.set(jid, {
        jid,
        name: item.getAttribute("name"),
        subscription: item.getAttribute("subscription") ?? "none",
        ask: item.getAttribute("ask"),
      });
    }
  }

  rosterPush(stanza) {
    const from = stanza.getAttribute("from");
    if (from && from !== this.ownBare) return true;  // only our own server pushes (RFC 6121 §2.1.6)
    const query = child(stanza, "query", NS.roster);
    for (const item of query.children) this.rosterItem(item);
    this.connection.send($iq({ type: "result", id: stanza.getAttribute("id") }));
    this.onRoster();
    return true;
  }

  receivedPresence(stanza) {
    const from = stanza.getAttribute("from");
    const bare = Strophe.getBareJidFromJid(from);
    const type = stanza.getAttribute("type");
    if (this.rooms.has(bare)) {
      this.roomPresence(stanza, bare, type);
      return true;
    }
    if (type === "subscribe") {
      // A contact we asked first (or already share with) is accepted at once.
      const item = this.roster.get(bare);
      if (item && (item.ask === "subscribe" || item.subscription === "to")) this.accept(bare);
      else this.onSubscriptionRequest(bare);
    } else if (type === null || type === "unavailable") {
      const resources = this.presence.get(bare) ?? new Map();
      const resource = Strophe.getResourceFromJid(from) ?? "";
      if (type === "unavailable") resources.delete(resource);
      else resources.set(resource, childText(stanza, "show") ?? "online");
      this.presence.set(bare, resources);
      this.onPresence(bare);
    }
    return true;
  }

  /** How `bare` is: `online`, `away`, `dnd`, … or `offline`. */
  show(bare) {
    const resources = this.presence.get(bare);
    if (!resources || resources.size === 0) return "offline";
    const shows = [...resources.values()];
    for (const best of ["chat", "online", "away", "xa", "dnd"]) if (shows.includes(best)) return best;
    return "online";
  }

  receivedMessage(stanza) {
    if (child(stanza, "result", NS.mam)) return true;  // archive pages: `history` reads them
    const type = stanza.getAttribute("type");
    if (type === "error") {
      this.onStatus(`A message was not delivered: ${errorText(stanza)}`, true);
      return true;
    }
    if (type === "groupchat") {
      const room = this.rooms.get(Strophe.getBareJidFromJid(stanza.getAttribute("from")));
      if (!room) return true;
      const message = readMessage(stanza, this.ownBare);
      if (message) {
        message.outgoing = message.nick === room.nick;
        this.onMessage(message);
      }
      return true;
    }
    const message = readMessage(stanza, this.ownBare);
    if (message) this.onMessage(message);
    return true;
  }

  // MARK: Roster and subscriptions (RFC 6121 §2, §3)

  /** Adds `bare` to the roster and asks to see their presence. */
  async addContact(bare) {
    await request(this.connection, $iq({ type: "set" }).c("query", { xmlns: NS.roster }).c("item", { jid: bare }));
    this.connection.send($pres({ to: bare, type: "subscribe" }));
  }

  /** Lets `bare` see our presence, and asks to see theirs. */
  accept(bare) {
    this.connection.send($pres({ to: bare, type: "subscribed" }));
    const item = this.roster.get(bare);
    if (!item || (item.subscription !== "to" && item.subscription !== "both" && item.ask !== "subscribe")) {
      this.connection.send($pres({ to: bare, type: "subscribe" }));
    }
  }

  reject(bare) {
    this.connection.send($pres({ to: bare, type: "unsubscribed" }));
  }

  // MARK: Messages

  /** Sends `body` to a contact or a room; `url` adds an XEP-0066 link. */
  send(peer, body, url) {
    const isRoom = this.rooms.has(peer);
    const id = this.connection.getUniqueId("m");
    const stanza = $msg({ to: peer, type: isRoom ? "groupchat" : "chat", id }).c("body").t(body).up();
    stanza.c("origin-id", { xmlns: NS.sid, id }).up();
    if (url) stanza.c("x", { xmlns: NS.oob }).c("url").t(url).up().up();
    this.connection.send(stanza);
    if (!isRoom) {
      this.onMessage(new ChatMessage({ peer, from: this.jid, outgoing: true, body, url, id, time: new Date() }));
    }
  }

  /**
   * A page of the archive (XEP-0313 with XEP-0059): with a contact, or a
   * room's; the latest page unless `before` names an archive id.
   * Resolves with `{messages, first, complete}`.
   */
  async history(peer, before = "") {
    const isRoom = this.rooms.has(peer);
    const queryid = this.connection.getUniqueId("mam");
    const iq = $iq({ type: "set", to: isRoom ? peer : undefined }).c("query", { xmlns: NS.mam, queryid })
      .c("x", { xmlns: NS.data, type: "submit" })
      .c("field", { var: "FORM_TYPE", type: "hidden" }).c("value").t(NS.mam).up().up();
    if (!isRoom) iq.c("field", { var: "with" }).c("value").t(peer).up().up();
    iq.up().c("set", { xmlns: NS.rsm }).c("max").t("30").up().c("before").t(before);
    const messages = [];
    const handler = this.connection.addHandler((stanza) => {
      const result = child(stanza, "result", NS.mam);
      if (!result || result.getAttribute("queryid") !== queryid) return true;
      // Only the archive queried answers: the own account's, or the room's.
      const from = stanza.getAttribute("from");
      if (from && Strophe.getBareJidFromJid(from) !== (isRoom ? peer : this.ownBare)) return true;
      const forwarded = child(result, "forwarded", NS.forward);
      const delay = forwarded && child(forwarded, "delay", NS.delay);
      const inner = forwarded && child(forwarded, "message");
      const message = inner && readMessage(inner, this.ownBare, {
        time: delay ? new Date(delay.getAttribute("stamp")) : undefined,
        archiveId: result.getAttribute("id"),
      });
      if (message) {
        if (isRoom) message.outgoing = message.nick === this.rooms.get(peer).nick;
        messages.push(message);
      }
      return true;
    }, NS.mam, "message");
    try {
      const fin = child(await request(this.connection, iq), "fin", NS.mam);
      const set = fin && child(fin, "set", NS.rsm);
      return { messages, first: set ? childText(set, "first") : null, complete: fin?.getAttribute("complete") === "true" };
    } finally {
      this.connection.deleteHandler(handler);
    }
  }

  // MARK: File upload (XEP-0363)

  /** The upload service's JID, found by disco once; null when there is none. */
  async findUploadService() {
    if (this.uploadService !== undefined) return this.uploadService;
    const domain = this.config.domain;
    const items = await request(this.connection, $iq({ type: "get", to: domain }).c("query", { xmlns: NS.discoItems }));
    const candidates = [domain, ...[...child(items, "query", NS.discoItems).children].map((item) => item.getAttribute("jid"))];
    this.uploadService = null;
    for (const jid of candidates) {
      const info = await request(this.connection, $iq({ type: "get", to: jid }).c("query", { xmlns: NS.discoInfo })).catch(() => null);
      const features = info ? [...child(info, "query", NS.discoInfo).children] : [];
      if (features.some((node) => node.localName === "feature" && node.getAttribute("var") === NS.upload)) {
        this.uploadService = jid;
        break;
      }
    }
    return this.uploadService;
  }

  /** Uploads `file` and sends its URL to `peer`. */
  async sendFile(peer, file) {
    const service = await this.findUploadService();
    if (!service) throw new Error("this server has no file upload service");
    const type = file.type || "application/octet-stream";
    const answer = await request(this.connection, $iq({ type: "get", to: service })
      .c("request", { xmlns: NS.upload, filename: file.name, size: String(file.size), "content-type": type }));
    const slot = child(answer, "slot", NS.upload);
    const put = child(slot, "put", NS.upload);
    const headers = { "Content-Type": type };
    for (const header of put.children) {
      const name = header.getAttribute("name");
      if (["authorization", "cookie", "expires"].includes(name?.toLowerCase())) headers[name] = header.textContent;
    }
    const response = await fetch(put.getAttribute("url"), { method: "PUT", body: file, headers });
    if (!response.ok) throw new Error(`the upload failed: ${response.status} ${(await response.text()).trim()}`);
    const url = child(slot, "get", NS.upload).getAttribute("url");
    this.send(peer, url, url);
  }

  // MARK: Group chat (XEP-0045)

  /** Joins `name` (a room name at the server's group chat service, or a room JID) as `nick`. */
  joinRoom(name, nick) {
    const service = this.config.mucService;
    if (!name.includes("@") && !service) throw new Error("this server has no group chat service");
    const jid = name.includes("@") ? Strophe.getBareJidFromJid(name.trim().toLowerCase()) : `${name.trim().toLowerCase()}@${service}`;
    this.rooms.set(jid, { jid, nick, joined: false });
    this.connection.send($pres({ to: `${jid}/${nick}` }).c("x", { xmlns: NS.muc }).c("history", { maxstanzas: "0" }));
    this.onRooms();
    return jid;
  }

  roomPresence(stanza, room, type) {
    const entry = this.rooms.get(room);
    const user = child(stanza, "x", NS.mucUser);
    const codes = user ? [...user.children].filter((n) => n.localName === "status").map((n) => n.getAttribute("code")) : [];
    if (type === "error") {
      this.rooms.delete(room);
      this.onStatus(`Cannot join ${room}: ${errorText(stanza)}`, true);
    } else if (codes.includes("110")) {
      entry.joined = type !== "unavailable";
      // A new room stays locked until its owner configures it: take the defaults.
      if (codes.includes("201")) {
        this.connection.sendIQ($iq({ type: "set", to: room }).c("query", { xmlns: NS.mucOwner }).c("x", { xmlns: NS.data, type: "submit" }));
      }
    }
    this.onRooms();
  }
}
