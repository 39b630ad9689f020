// The web chat's page: login and registration, contacts and rooms, the
// open conversation. Talks XMPP through `ChatClient` (client.js); every
// text from the network goes into the page as text, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);

/** Links whose path ends like this are shown as images. */
const imagePath = /\.(png|jpe?g|gif|webp|avif|bmp)$/i;

const page = {
  config: null,
  client: null,
  /** Conversations by bare JID: {messages, keys, loaded, first, complete, unread}. */
  chats: new Map(),
  open: null,
};

function setStatus(text, isError = false) {
  const status = $("status");
  status.textContent = text;
  status.classList.toggle("error", isError);
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function chat(peer) {
  if (!page.chats.has(peer)) {
    page.chats.set(peer, { messages: [], keys: new Set(), loaded: false, first: null, complete: false, unread: 0 });
  }
  return page.chats.get(peer);
}

/** The http(s) URL in `text`, when `text` is just a link. */
function linkIn(text) {
  try {
    const url = new URL(text.trim());
    return url.protocol === "https:" || url.protocol === "http:" ? url : null;
  } catch {
    return null;
  }
}

// MARK: Login

function showLogin() {
  $("app-view").hidden = true;
  $("login-view").hidden = false;
  $("logout").hidden = true;
  $("whoami").textContent = "";
}

async function login(jid, password) {
  setBusy(true);
  page.chats.clear();
  page.open = null;
  const client = new ChatClient(page.config);
  client.onStatus = setStatus;
  client.onRoster = renderContacts;
  client.onPresence = renderContacts;
  client.onRooms = () => {
    renderRooms();
    if (page.open) loadFirstPage(page.open);
  };
  client.onSubscriptionRequest = addRequest;
  client.onMessage = (message) => {
    addMessages(message.peer, [message]);
    if (message.peer !== page.open) {
      chat(message.peer).unread += 1;
      renderContacts();
      renderRooms();
    }
  };
  try {
    await client.connect(jid, password);
  } catch (error) {
    client.disconnect();
    setStatus(error.message, true);
    setBusy(false);
    return;
  }
  page.client = client;
  $("password").value = "";
  $("login-view").hidden = true;
  $("app-view").hidden = false;
  $("logout").hidden = false;
  $("whoami").textContent = client.ownBare;
  $("room-nick").value = Strophe.getNodeFromJid(client.jid);
  setStatus("Online");
  setBusy(false);
  renderContacts();
  renderRooms();
  renderChat();
}

function setBusy(busy) {
  for (const id of ["login", "register"]) $(id).disabled = busy;
  for (const button of $("demo-users").children) button.disabled = busy;
}

async function register() {
  const form = $("login-form");
  if (!form.reportValidity()) return;
  const username = $("jid").value.trim();
  if (username.includes("@") && !username.endsWith(`@${page.config.domain}`)) {
    return setStatus(`Accounts here end with @${page.config.domain}`, true);
  }
  setBusy(true);
  setStatus("Registering…");
  try {
    await new ChatClient(page.config).register(username.split("@")[0], $("password").value);
  } catch (error) {
    setBusy(false);
    return setStatus(error.message, true);
  }
  setStatus("Registered; logging in…");
  await login(username, $("password").value);
}

// MARK: Contacts, requests, rooms

function renderContacts() {
  const client = page.client;
  if (!client) return;
  const list = $("contacts");
  list.replaceChildren();
  const contacts = [...client.roster.values()].sort((a, b) => (a.name ?? a.jid).localeCompare(b.name ?? b.jid));
  for (const contact of contacts) {
    const show = client.show(contact.jid);
    const detail = contact.subscription === "both" || contact.subscription === "to" ? show
      : contact.ask === "subscribe" ? "awaiting approval" : "not sharing presence";
    list.append(sidebarEntry("contact", contact.jid, show, contact.name ?? contact.jid, detail));
  }
  $("no-contacts").hidden = contacts.length > 0;
}

function addRequest(bare) {
  const list = $("requests");
  if (list.querySelector(`li[data-jid="${CSS.escape(bare)}"]`)) return;
  const item = element("li", "request");
  item.dataset.jid = bare;
  item.append(element("span", "name", `${bare} wants to be your contact`));
  const accept = element("button", "accept", "Accept");
  const reject = element("button", "reject secondary", "Reject");
  const done = () => {
    item.remove();
    $("requests-section").hidden = list.children.length === 0;
  };
  accept.type = reject.type = "button";
  accept.addEventListener("click", () => { page.client.accept(bare); done(); });
  reject.addEventListener("click", () => { page.client.reject(bare); done(); });
  item.append(accept, reject);
  list.append(item);
  $("requests-section").hidden = false;
}

function renderRooms() {
  const client = page.client;
  if (!client) return;
  const list = $("rooms");
  list.replaceChildren();
  for (const room of client.rooms.values()) {
    const name = Strophe.getNodeFromJid(room.jid);
    list.append(sidebarEntry("room", room.jid, room.joined ? "online" : "offline", name, room.joined ? `as ${room.nick}` : "joining…"));
  }
}

/** A contact's or a room's line in the sidebar, which opens its conversation. */
function sidebarEntry(kind, jid, show, name, detail) {
  const item = element("li", kind);
  item.dataset.jid = jid;
  item.classList.toggle("active", page.open === jid);
  const button = element("button", "entry");
  button.type = "button";
  button.append(element("span", `dot ${show}`), element("span", "name", name), element("span", "detail", detail));
  const unread = page.chats.get(jid)?.unread;
  if (unread) button.append(element("span", "badge", String(unread)));
  button.addEventListener("click", () => openChat(jid));
  item.append(button);
  return item;
}

// MARK: The conversation

/** Opens the conversation with `peer`, loading its latest archive page the first time. */
async function openChat(peer) {
  page.open = peer;
  chat(peer).unread = 0;
  $("app-view").classList.add("show-chat");
  renderContacts();
  renderRooms();
  renderChat();
  $("message").focus();
  await loadFirstPage(peer);
}

/** Loads the latest archive page of `peer` once; a room's once joined (its archive is for occupants). */
async function loadFirstPage(peer) {
  const entry = chat(peer);
  const room = page.client.rooms.get(peer);
  if (entry.loaded || (room && !room.joined)) return;
  entry.loaded = true;
  await loadHistory(peer);
}

/** Loads the archive page before the earliest one shown (the latest, first). */
async function loadHistory(peer) {
  const entry = chat(peer);
  try {
    const result = await page.client.history(peer, entry.first ?? "");
    entry.first = result.first ?? entry.first;
    entry.complete = result.complete || result.messages.length === 0;
    addMessages(peer, result.messages);
  } catch (error) {
    setStatus(`History unavailable: ${error.message}`, true);
  }
}

/** Adds messages to `peer`'s conversation, once each, in time order. */
function addMessages(peer, messages) {
  const entry = chat(peer);
  for (const message of messages) {
    const keys = message.keys;
    if (keys.some((key) => entry.keys.has(key))) continue;
    for (const key of keys) entry.keys.add(key);
    entry.messages.push(message);
  }
  entry.messages.sort((a, b) => a.time - b.time);
  if (peer === page.open) renderChat();
}

function renderChat() {
  const peer = page.open;
  const client = page.client;
  const isRoom = peer && client.rooms.has(peer);
  $("chat-title").textContent = peer ? (client.roster.get(peer)?.name ?? peer) : "No conversation open";
  $("send-form").hidden = !peer;
  $("chat-hint").hidden = !!peer;
  const entry = peer ? chat(peer) : null;
  $("earlier").hidden = !entry || !entry.loaded || entry.complete;
  const list = $("messages");
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.replaceChildren();
  for (const message of entry?.messages ?? []) list.append(renderMessage(message, isRoom));
  if (atBottom || !list.dataset.peer || list.dataset.peer !== peer) list.scrollTop = list.scrollHeight;
  list.dataset.peer = peer ?? "";
}

function renderMessage(message, isRoom) {
  const item = element("li", `message ${message.outgoing ? "out" : "in"}`);
  if (isRoom && !message.outgoing) item.append(element("span", "nick", message.nick ?? ""));
  const link = linkIn(message.url ?? message.body);
  const body = element("div", "body");
  if (link && link.href === linkIn(message.body)?.href) {
    // A shared file: its name links to it; an image is shown too.
    const name = fileName(link);
    const anchor = element("a", "link", imagePath.test(link.pathname) ? name : message.body);
    anchor.href = link.href;
    anchor.target = "_blank";
    anchor.rel = "noopener noreferrer";
    if (imagePath.test(link.pathname)) {
      const image = element("img", "preview");
      image.src = link.href;
      image.alt = name;
      image.addEventListener("load", () => { if (message.peer === page.open) keepBottom(); });
      const frame = element("a", "preview-link");
      frame.href = link.href;
      frame.target = "_blank";
      frame.rel = "noopener noreferrer";
      frame.append(image);
      body.append(frame);
    }
    body.append(anchor);
  } else {
    body.textContent = message.body;
  }
  item.append(body);
  const time = element("time", "time", message.time.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }));
  time.dateTime = message.time.toISOString();
  item.append(time);
  return item;
}

/** The last segment of `url`'s path, decoded. */
function fileName(url) {
  const last = url.pathname.split("/").pop();
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

function keepBottom() {
  const list = $("messages");
  list.scrollTop = list.scrollHeight;
}

// MARK: Wiring

function wire() {
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    login($("jid").value, $("password").value);
  });
  $("register").addEventListener("click", register);
  $("logout").addEventListener("click", () => {
    page.client?.disconnect();
    page.client = null;
    setStatus("Logged out");
    showLogin();
  });
  $("add-contact-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const bare = page.client.bareJid($("add-contact").value);
    if (bare === page.client.ownBare) return setStatus("That is you", true);
    try {
      await page.client.addContact(bare);
      $("add-contact").value = "";
      setStatus(`Asked ${bare} to share presence`);
    } catch (error) {
      setStatus(`Cannot add ${bare}: ${error.message}`, true);
    }
  });
  $("join-room-form").addEventListener("submit", (event) => {
    event.preventDefault();
    try {
      const room = page.client.joinRoom($("room-name").value, $("room-nick").value.trim());
      $("room-name").value = "";
      openChat(room);
    } catch (error) {
      setStatus(error.message, true);
    }
  });
  $("send-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("message").value;
    if (!text.trim() || !page.open) return;
    page.client.send(page.open, text);
    $("message").value = "";
  });
  $("file").addEventListener("change", async () => {
    const file = $("file").files[0];
    $("file").value = "";
    if (!file || !page.open) return;
    setStatus(`Uploading ${file.name}…`);
    try {
      await page.client.sendFile(page.open, file);
      setStatus(`Shared ${file.name}`);
    } catch (error) {
      setStatus(`Cannot share ${file.name}: ${error.message}`, true);
    }
  });
  $("earlier").addEventListener("click", () => loadHistory(page.open));
  $("back").addEventListener("click", () => $("app-view").classList.remove("show-chat"));
}

async function start() {
  wire();
  try {
    const response = await fetch("/chat/config.json", { cache: "no-cache" });
    page.config = await response.json();
  } catch (error) {
    setStatus(`Cannot load the chat's settings: ${error.message}`, true);
    return;
  }
  $("domain").textContent = page.config.domain;
  const demo = page.config.demo;
  if (demo) {
    $("demo").hidden = false;
    for (const user of demo.users) {
      const button = element("button", "secondary demo-user", user);
      button.type = "button";
      button.dataset.user = user;
      button.addEventListener("click", () => {
        $("jid").value = user;
        login(user, demo.password);
      });
      $("demo-users").append(button);
    }
  }
  showLogin();
  setStatus("Not connected");
}

document.addEventListener("DOMContentLoaded", start);
