/*
 * The emulator's chat page. A real client of the emulated service: REST under /api/v2 with the
 * chosen user's token, and socket.io (the vendored socket.io-client, websocket transport only).
 * The control plane (/_emulator) is used only for the user list ("who are you") and for the
 * "as admin" actions. Every piece of user text reaches the DOM through textContent, never HTML,
 * and is bidi-isolated (a <bdi>, or FSI...PDI in attributes), so that right-to-left marks or
 * overrides in a name cannot turn the page's own words around.
 */
"use strict";

(function () {
  const API = "/api/v2";
  const CONTROL = "/_emulator";
  const SEND_TIMEOUT_MS = 10000;      // a send with no echo in this time was refused or lost
  const TYPING_EVERY_MS = 3000;       // typing:start at most this often while typing
  const TYPING_IDLE_MS = 4000;        // typing:stop after this long without a key
  const TYPER_EXPIRES_MS = 8000;      // forget someone else's typing:start after this long
  const HISTORY_LIMIT = 50;
  const EVENT_LOG_SIZE = 200;
  const QUICK_EMOJIS = ["\u{1F44D}", "\u2764\uFE0F", "\u{1F602}", "\u{1F389}", "\u{1F440}"];
  const DM_VIEW = "@dm";

  const $ = (id) => document.getElementById(id);

  /** Everything the page knows; reset when the user changes. */
  const S = {
    userList: [],          // [{user, token}] from the control plane
    generation: 0,         // bumped on every user switch; stale async results are dropped
    token: null,
    me: null,
    socket: null,
    everConnected: false,
    reconnectTimer: null,
    servers: new Map(),    // server id -> Server
    server: null,          // selected server id, or DM_VIEW
    channels: new Map(),   // channel id -> Channel or DM channel {publicId, name, type, serverPublicId}
    listing: [],           // channel ids of the selected server, listing order
    dms: new Map(),        // DM channel id -> DM record
    channel: null,         // selected channel id
    channelGen: 0,
    msgs: new Map(),       // message id -> Message (selected channel)
    reactions: new Map(),  // message id -> reaction list (the message:reaction snapshot)
    users: new Map(),      // user id -> User (presence follows presence:update)
    members: new Map(),    // user id -> Member (selected server)
    unread: new Map(),     // channel id with unseen messages -> its server id (DM_VIEW for a DM)
    pending: new Map(),    // nonce -> {timer, node, text}
    typers: new Map(),     // user id -> {name, channel, timer}
    typingSentAt: 0,
    typingChannel: null,
    typingTimer: null,
    replyTo: null,
    membersTimer: null,
    listingTimer: null,
  };

  // ------------------------------------------------------------------ small helpers
  /**
   * An element with a class and content: a string (always as text, never HTML), a node, or an
   * array of both (strings become text nodes).
   */
  function el(tag, cls, content) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (Array.isArray(content)) node.append(...content.map((part) => (part instanceof Node ? part : String(part))));
    else if (content instanceof Node) node.append(content);
    else if (content !== undefined && content !== null) node.textContent = String(content);
    return node;
  }

  /**
   * Text someone else chose (a name, a message, an error's detail) as an isolated run: a <bdi>,
   * inside which right-to-left marks and overrides stay, whatever page text comes around it.
   */
  function bdi(text) {
    return el("bdi", null, text === undefined || text === null ? "" : String(text));
  }

  /** The same for attributes (title, placeholder), where no markup goes: FSI ... PDI around it. */
  function isolated(text) {
    return "\u2068" + String(text) + "\u2069";
  }

  /** Bidi control characters, shown escaped in the event log (which shows JSON as it came). */
  const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

  function showControls(text) {
    return text.replace(BIDI_CONTROLS, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
  }

  /** The service stores content with &, < and > escaped; decode exactly those, in one pass. */
  function decodeContent(text) {
    return String(text == null ? "" : text).replace(/&(lt|gt|amp);/g, (m, name) =>
      ({ lt: "<", gt: ">", amp: "&" })[name]);
  }

  function compareIds(a, b) {
    if (a.length !== b.length) return a.length - b.length;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  function newNonce() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function shortTime(iso) {
    const d = new Date(iso);
    return isNaN(d) ? "" : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }

  function userName(user) {
    return user && user.name ? user.name : "(unknown)";
  }

  // ------------------------------------------------------------------ notices
  /**
   * Show a visible notice. kind: "error" | "warn" | "info". Errors stay until closed; others
   * fade after a while. A notice with a key replaces the previous notice with the same key.
   */
  function notice(kind, text, key) {
    const box = $("notices");
    if (key) {
      const old = box.querySelector(`[data-key="${key}"]`);
      if (old) old.remove();
    }
    const node = el("div", `notice notice-${kind}`);
    node.setAttribute("role", kind === "error" ? "alert" : "status");
    if (key) node.dataset.key = key;
    node.append(el("span", "notice-text", text));
    const close = el("button", "notice-close", "\u00D7");
    close.type = "button";
    close.title = "Dismiss";
    close.addEventListener("click", () => node.remove());
    node.append(close);
    box.append(node);
    while (box.children.length > 8) box.firstElementChild.remove();
    if (kind !== "error") setTimeout(() => node.remove(), kind === "warn" ? 15000 : 8000);
    return node;
  }

  /** An error notice: ``what`` (text, or parts with isolated names) failed, and why. */
  function failed(what, err) {
    const status = err && err.status;
    const prefix = status === 403 ? "Forbidden (403)" : status ? `Error ${status}` : "Error";
    notice("error", [].concat(what, `: ${prefix}: `, bdi(err && err.detail ? err.detail : err)));
  }

  // ------------------------------------------------------------------ HTTP
  class HttpError extends Error {
    constructor(status, detail, method, path) {
      super(`${method} ${path} answered ${status}: ${detail}`);
      this.status = status;
      this.detail = detail;
    }
  }

  async function http(base, method, path, body, token) {
    const headers = { "Content-Type": "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    let res;
    try {
      res = await fetch(base + path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new HttpError(0, `network error (${err.message})`, method, base + path);
    }
    const text = await res.text();
    let data = null;
    if (text) {
      try { data = JSON.parse(text); } catch (e) { data = null; }
    }
    if (!res.ok) {
      const detail = (data && (data.error || data.message)) || text.slice(0, 200) || res.statusText;
      throw new HttpError(res.status, detail, method, base + path);
    }
    return data;
  }

  const api = (method, path, body) => http(API, method, path, body, S.token);
  const control = (method, path, body) => http(CONTROL, method, path, body, null);
  const enc = encodeURIComponent;

  // ------------------------------------------------------------------ connection state
  function setConnection(state, text) {
    const node = $("connection");
    node.className = `conn conn-${state}`;
    node.textContent = text;
  }

  function connect() {
    const gen = S.generation;
    const socket = io(location.origin, {
      transports: ["websocket"],
      auth: { token: S.token },
      reconnectionDelay: 1000,
      reconnectionDelayMax: 30000,
      randomizationFactor: 0.5,
    });
    S.socket = socket;
    setConnection("wait", "connecting\u2026");
    socket.on("connect", () => {
      if (gen !== S.generation) return;
      setConnection("on", "connected");
      goOnline(gen);
      if (S.everConnected) {
        notice("info", "Reconnected. The service does not replay missed events: channels, members " +
          "and history were reloaded.", "conn");
        resync();
      }
      S.everConnected = true;
    });
    socket.on("disconnect", (reason) => {
      if (gen !== S.generation || reason === "io client disconnect") return;
      setConnection("off", `disconnected (${reason}), reconnecting\u2026`);
      notice("error", `Connection lost (${reason}). Reconnecting\u2026 Messages sent meanwhile ` +
        "are not delivered.", "conn");
      if (reason === "io server disconnect") {
        // socket.io does not reconnect by itself after a server-side disconnect: never stay offline.
        clearTimeout(S.reconnectTimer);
        S.reconnectTimer = setTimeout(() => {
          if (gen === S.generation && !socket.connected) socket.connect();
        }, 1000);
      }
    });
    socket.on("connect_error", (err) => {
      if (gen !== S.generation) return;
      if (!socket.active) {  // refused by the service (bad or revoked token): final
        setConnection("off", "refused");
        notice("error", `The service refused the connection: ${err.message}. Not retrying; ` +
          "pick the user again once its token is valid.", "conn");
      } else {
        setConnection("off", "cannot connect, retrying\u2026");
        notice("warn", `Cannot connect (${err.message}); retrying\u2026`, "conn");
      }
    });
    socket.onAny((event, payload) => {
      if (gen !== S.generation) return;
      logEvent(event, payload);
      const handler = HANDLERS[event];
      if (!handler) return;
      try {
        handler(payload);
      } catch (err) {
        notice("error", ["Could not handle ", bdi(event), `: ${err.message}`]);
      }
    });
  }

  /** Opening the page makes its user appear online, as a chat app does (unless a status was chosen). */
  async function goOnline(gen) {
    const me = S.me && S.users.get(S.me.publicId);
    if (!me || (me.status && me.status !== "offline")) return;
    try {
      await api("PATCH", "/users/settings", { status: "online" });
    } catch (err) {
      if (gen === S.generation) failed("Going online", err);
      return;
    }
    if (gen !== S.generation) return;
    S.users.set(S.me.publicId, Object.assign({}, S.users.get(S.me.publicId), { status: "online" }));
    refreshDots(S.me.publicId);
  }

  function resync() {
    if (S.server && S.server !== DM_VIEW) {
      loadListing(S.server);
      loadMembers(S.server);
    }
    if (S.channel) loadHistory(S.channel);
  }

  // ------------------------------------------------------------------ event log
  function logEvent(event, payload) {
    const list = $("events");
    const item = el("li", "event");
    item.dataset.event = event;
    item.append(el("code", "event-name", bdi(showControls(event))));
    let text = "";
    try { text = JSON.stringify(payload); } catch (e) { text = String(payload); }
    if (text && text.length > 300) text = text.slice(0, 300) + "\u2026";
    item.append(el("span", "event-payload", [" ", bdi(showControls(text || ""))]));
    list.prepend(item);
    while (list.children.length > EVENT_LOG_SIZE) list.lastElementChild.remove();
  }

  // ------------------------------------------------------------------ who are you
  async function loadUsers(selectId) {
    let data;
    try {
      data = await control("GET", "/users");
    } catch (err) {
      failed("Listing the emulator's users", err);
      return;
    }
    S.userList = data.users || [];
    const who = $("who");
    who.replaceChildren(el("option", null, "(pick a user)"));
    who.firstElementChild.value = "";
    userOptions(who, S.userList, true);
    for (const entry of S.userList) {
      S.users.set(entry.user.publicId, Object.assign({}, S.users.get(entry.user.publicId), entry.user));
    }
    if (selectId) who.value = selectId;
    fillUserSelects();
  }

  /**
   * One option per user, labelled with the name alone (an option takes no markup to isolate a
   * name from words after it), under the groups "people" and "bots", and with ``revoked``
   * "token revoked" (disabled options).
   */
  function userOptions(select, entries, revoked) {
    const groups = new Map();
    for (const entry of entries) {
      const label = revoked && !entry.token ? "token revoked" : entry.user.isBot ? "bots" : "people";
      if (!groups.has(label)) {
        groups.set(label, document.createElement("optgroup"));
        groups.get(label).label = label;
      }
      const opt = el("option", null, userName(entry.user));
      opt.value = entry.user.publicId;
      opt.disabled = revoked && !entry.token;
      groups.get(label).append(opt);
    }
    for (const label of ["people", "bots", "token revoked"]) if (groups.has(label)) select.append(groups.get(label));
  }

  function fillUserSelects() {
    const me = S.me ? S.me.publicId : null;
    for (const id of ["dm-user", "admin-member-user"]) {
      const select = $(id);
      const keep = select.value;
      select.replaceChildren();
      userOptions(select, S.userList.filter((e) => id !== "dm-user" || e.user.publicId !== me), false);
      if (keep && [...select.options].some((o) => o.value === keep)) select.value = keep;
    }
  }

  function logout() {
    S.generation += 1;
    if (S.socket) {
      S.socket.offAny();
      S.socket.disconnect();
      S.socket = null;
    }
    clearTimeout(S.reconnectTimer);
    for (const p of S.pending.values()) clearTimeout(p.timer);
    for (const t of S.typers.values()) clearTimeout(t.timer);
    Object.assign(S, {
      token: null, me: null, everConnected: false, server: null, channel: null, listing: [],
      replyTo: null, typingSentAt: 0, typingChannel: null,
    });
    for (const key of ["servers", "channels", "dms", "msgs", "reactions", "members", "pending", "typers"]) {
      S[key].clear();
    }
    S.unread.clear();
    $("rail").replaceChildren();
    $("channels").replaceChildren();
    $("messages").replaceChildren();
    $("pending").replaceChildren();
    $("members").replaceChildren();
    $("typing").textContent = "";
    $("server-name").textContent = "\u00A0";
    $("channel-name").textContent = "Pick who you are, then a channel.";
    $("composer").disabled = true;
    $("dm-tools").hidden = true;
    document.body.classList.remove("logged-in");
    setConnection("off", "not connected");
  }

  async function login(userId) {
    logout();
    if (!userId) return;
    const entry = S.userList.find((e) => e.user.publicId === userId);
    if (!entry || !entry.token) {
      notice("error", "That user has no valid token (revoked?).");
      return;
    }
    const gen = S.generation;
    S.token = entry.token;
    try {
      const me = (await api("GET", "/auth/me")).user;
      const servers = (await api("GET", "/servers")).servers || [];
      if (gen !== S.generation) return;
      S.me = me;
      S.users.set(me.publicId, me);
      for (const server of servers) S.servers.set(server.publicId, server);
    } catch (err) {
      if (gen === S.generation) failed("Signing in", err);
      return;
    }
    sessionStorage.setItem("sc-emulator-user", userId);
    document.body.classList.add("logged-in");
    $("status").value = S.me.status === "offline" ? "online" : S.me.status;
    fillUserSelects();
    connect();
    await restoreDMs(gen);
    if (gen !== S.generation) return;
    renderRail();
    const first = S.servers.keys().next();
    await selectServer(first.done ? DM_VIEW : first.value);
  }

  // ------------------------------------------------------------------ servers (rail)
  function initials(name) {
    const words = String(name || "?").split(/\s+/).filter(Boolean);
    return words.slice(0, 2).map((w) => w[0].toUpperCase()).join("") || "?";
  }

  function serverUnread(sid) {
    for (const where of S.unread.values()) if (where === sid) return true;
    return false;
  }

  function renderRail() {
    const rail = $("rail");
    rail.replaceChildren();
    const entries = [[DM_VIEW, { name: "Direct messages" }], ...S.servers.entries()];
    for (const [sid, server] of entries) {
      const btn = el("button", "server-btn", sid === DM_VIEW ? "DM" : bdi(initials(server.name)));
      btn.type = "button";
      btn.dataset.id = sid;
      btn.title = server.name;
      btn.setAttribute("aria-label", server.name);
      if (sid === S.server) btn.classList.add("active");
      if (serverUnread(sid)) btn.classList.add("unread");
      btn.addEventListener("click", () => selectServer(sid));
      rail.append(btn);
    }
  }

  async function selectServer(sid) {
    S.server = sid;
    renderRail();
    $("channels").replaceChildren();
    $("members").replaceChildren();
    if (sid === DM_VIEW) {
      $("server-name").textContent = "Direct messages";
      $("dm-tools").hidden = false;
      renderDMList();
      $("members").append(el("p", "hint", "DMs have no member list."));
      const first = S.dms.keys().next();
      if (!first.done && !(S.channel && S.dms.has(S.channel))) await selectChannel(first.value);
      return;
    }
    $("dm-tools").hidden = true;
    const server = S.servers.get(sid);
    $("server-name").replaceChildren(bdi(server ? server.name : sid));
    await Promise.all([loadListing(sid), loadMembers(sid)]);
    if (S.server !== sid) return;
    const current = S.channels.get(S.channel);
    if (!current || current.serverPublicId !== sid) {
      const firstText = S.listing.find((cid) => S.channels.get(cid).type === "TEXT");
      if (firstText) await selectChannel(firstText);
      else clearChat("No text channel you can see here.");
    }
  }

  function removeServer(sid, why) {
    const server = S.servers.get(sid);
    if (!server) return;
    S.servers.delete(sid);
    notice("warn", ["You are no longer in ", bdi(server.name), ` (${why}).`]);
    if (S.server === sid) {
      S.server = null;
      clearChat("");
      const first = S.servers.keys().next();
      selectServer(first.done ? DM_VIEW : first.value);
    } else {
      renderRail();
    }
  }

  // ------------------------------------------------------------------ channels
  async function loadListing(sid) {
    const gen = S.generation;
    let data;
    try {
      data = await api("GET", `/servers/${enc(sid)}/categories`);
    } catch (err) {
      if (gen === S.generation && S.server === sid) failed("Listing the channels", err);
      return;
    }
    if (gen !== S.generation || S.server !== sid) return;
    const groups = (data.categories || []).map((cat) => ({ name: cat.name, isPrivate: cat.isPrivate,
                                                          channels: cat.channels || [] }));
    if ((data.uncategorizedChannels || []).length) {
      groups.unshift({ name: null, channels: data.uncategorizedChannels });
    }
    S.listing = [];
    for (const [cid, ch] of [...S.channels]) if (ch.serverPublicId === sid) S.channels.delete(cid);
    const box = $("channels");
    box.replaceChildren();
    for (const group of groups) {
      if (group.name !== null) {
        box.append(el("div", "category", [group.isPrivate ? "\u{1F512} " : "", bdi(group.name)]));
      }
      for (const raw of group.channels) {
        const ch = Object.assign({}, raw, { serverPublicId: sid });
        S.channels.set(ch.publicId, ch);
        S.listing.push(ch.publicId);
        box.append(channelButton(ch));
      }
    }
    if (S.channel && S.channels.get(S.channel) === undefined && !S.dms.has(S.channel)) {
      notice("warn", "The channel you were reading is gone or no longer visible to you.");
      clearChat("");
    }
  }

  function channelButton(ch) {
    const voice = ch.type === "VOICE";
    const btn = el("button", "channel" + (voice ? " voice" : ""));
    btn.type = "button";
    btn.dataset.id = ch.publicId;
    btn.dataset.name = ch.name;
    btn.append(el("span", "channel-prefix", voice ? "\u{1F50A}" : "#"), el("span", "channel-label", bdi(ch.name)));
    if (ch.isPrivate) btn.append(el("span", "channel-lock", "\u{1F512}"));
    if (voice) {
      btn.disabled = true;
      btn.title = "Voice channel: the page does no voice";
    }
    if (ch.publicId === S.channel) btn.classList.add("active");
    if (S.unread.has(ch.publicId)) btn.classList.add("unread");
    btn.addEventListener("click", () => selectChannel(ch.publicId));
    return btn;
  }

  function markChannels() {
    for (const btn of document.querySelectorAll("#channels .channel")) {
      btn.classList.toggle("active", btn.dataset.id === S.channel);
      btn.classList.toggle("unread", S.unread.has(btn.dataset.id));
    }
    renderRail();
  }

  function clearChat(text) {
    S.channel = null;
    S.msgs.clear();
    S.reactions.clear();
    $("messages").replaceChildren();
    $("channel-name").textContent = text || "Pick a channel.";
    $("composer").disabled = true;
    setReply(null);
    renderTyping();
  }

  async function selectChannel(cid) {
    const ch = S.channels.get(cid);
    if (!ch) return;
    stopTyping();
    S.channel = cid;
    S.unread.delete(cid);
    markChannels();
    const sigil = ch.type === "DM" ? "@" : "#";
    $("channel-name").replaceChildren(sigil, bdi(ch.name));
    const composer = $("composer");
    composer.disabled = false;
    composer.placeholder = `Message ${sigil}${isolated(ch.name)} (Enter sends, Shift+Enter: new line)`;
    setReply(null);
    renderTyping();
    await loadHistory(cid);
  }

  async function loadHistory(cid) {
    const gen = ++S.channelGen;
    S.msgs.clear();
    S.reactions.clear();
    $("messages").replaceChildren();
    let data;
    try {
      data = await api("GET", `/chat/${enc(cid)}?limit=${HISTORY_LIMIT}`);
    } catch (err) {
      if (gen !== S.channelGen) return;
      $("messages").append(el("p", "chat-error", [`You cannot read this channel: ${err.status} `, bdi(err.detail)]));
      failed("Reading the channel", err);
      return;
    }
    if (gen !== S.channelGen || S.channel !== cid) return;
    for (const msg of data.messages || []) upsertMessage(msg, false);
    scrollToEnd(true);
  }

  // ------------------------------------------------------------------ DMs
  function dmKey() {
    return "sc-emulator-dms:" + (S.me ? S.me.publicId : "");
  }

  function addDM(record, persist) {
    const recipient = record.recipient || {};
    const name = recipient.name || record.name || "DM";
    S.dms.set(record.publicId, record);
    S.channels.set(record.publicId, { publicId: record.publicId, name, type: "DM", serverPublicId: null,
                                       recipientId: recipient.publicId });
    if (recipient.publicId) S.users.set(recipient.publicId, Object.assign({}, S.users.get(recipient.publicId), recipient));
    if (persist) localStorage.setItem(dmKey(), JSON.stringify([...S.dms.keys()]));
    if (S.server === DM_VIEW) renderDMList();
    renderRail();
  }

  async function restoreDMs(gen) {
    let ids = [];
    try { ids = JSON.parse(localStorage.getItem(dmKey()) || "[]"); } catch (e) { ids = []; }
    for (const cid of ids) {
      try {
        const record = await api("GET", `/channels/${enc(cid)}`);
        if (gen !== S.generation) return;
        if (record && record.type === "DM") addDM(record, false);
      } catch (err) {
        console.warn("a remembered DM is gone", cid, err);  // the emulator was reset: forget it
      }
    }
    if (gen === S.generation) localStorage.setItem(dmKey(), JSON.stringify([...S.dms.keys()]));
  }

  function renderDMList() {
    const box = $("channels");
    box.replaceChildren();
    if (!S.dms.size) box.append(el("p", "hint", "No DMs yet: open one below, or click an author's name."));
    for (const cid of S.dms.keys()) {
      const ch = S.channels.get(cid);
      const btn = el("button", "channel dm");
      btn.type = "button";
      btn.dataset.id = cid;
      btn.dataset.name = ch.name;
      const dot = el("span", "dot");
      dot.dataset.user = ch.recipientId || "";
      setDot(dot, ch.recipientId);
      btn.append(dot, el("span", "channel-label", bdi(ch.name)));
      if (cid === S.channel) btn.classList.add("active");
      if (S.unread.has(cid)) btn.classList.add("unread");
      btn.addEventListener("click", () => selectChannel(cid));
      box.append(btn);
    }
  }

  async function openDM(userId) {
    if (!userId || (S.me && userId === S.me.publicId)) return;
    let record;
    try {
      record = await api("GET", `/channels/dm/${enc(userId)}`);
    } catch (err) {
      failed("Opening the DM", err);
      return;
    }
    addDM(record, true);
    if (S.server !== DM_VIEW) await selectServer(DM_VIEW);
    await selectChannel(record.publicId);
  }

  async function learnChannel(cid) {
    const gen = S.generation;
    try {
      const record = await api("GET", `/channels/${enc(cid)}`);
      if (gen === S.generation && record && record.type === "DM") addDM(record, true);
    } catch (err) {
      console.warn("could not look up channel", cid, err);
    }
  }

  // ------------------------------------------------------------------ members and presence
  async function loadMembers(sid) {
    const gen = S.generation;
    let data;
    try {
      data = await api("GET", `/servers/${enc(sid)}/members`);
    } catch (err) {
      if (gen !== S.generation || S.server !== sid) return;
      S.members.clear();
      $("members").replaceChildren(el("p", "members-error",
        [`You may not list this server's members (${err.status}: `, bdi(err.detail), ")."]));
      return;
    }
    if (gen !== S.generation || S.server !== sid) return;
    const list = Array.isArray(data) ? data : data.members || [];
    S.members.clear();
    for (const m of list) {
      const user = m.user || m;
      const uid = m.userId || user.publicId;
      S.members.set(uid, Object.assign({}, m, { user }));
      S.users.set(uid, Object.assign({}, S.users.get(uid), user));
    }
    renderMembers();
  }

  function renderMembers() {
    const box = $("members");
    box.replaceChildren();
    const order = (m) => (m.user.status && m.user.status !== "offline" ? 0 : 1);
    const list = [...S.members.values()].sort((a, b) =>
      order(a) - order(b) || userName(a.user).localeCompare(userName(b.user)));
    for (const m of list) {
      const uid = m.userId || m.user.publicId;
      const row = el("div", "member");
      row.dataset.user = uid;
      const dot = el("span", "dot");
      dot.dataset.user = uid;
      setDot(dot, uid);
      row.append(dot, el("span", "member-name", bdi(m.nickname || userName(m.user))));
      if (m.user.isBot) row.append(el("span", "badge", "BOT"));
      if (m.isOwner) row.append(el("span", "owner", "\u{1F451}"));
      if (!S.me || uid !== S.me.publicId) {
        const dm = el("button", "member-dm", "DM");
        dm.type = "button";
        dm.title = "Open a DM with " + isolated(userName(m.user));
        dm.addEventListener("click", () => openDM(uid));
        row.append(dm);
      }
      box.append(row);
    }
  }

  function statusOf(uid) {
    const user = S.users.get(uid);
    const status = user && user.status ? user.status : "offline";
    return status === "invisible" ? "offline" : status;
  }

  function setDot(dot, uid) {
    const status = statusOf(uid);
    dot.className = `dot status-${status}`;
    dot.title = status;
  }

  function refreshDots(uid) {
    for (const dot of document.querySelectorAll(`.dot[data-user="${CSS.escape(uid)}"]`)) setDot(dot, uid);
  }

  function later(timerKey, fn) {
    clearTimeout(S[timerKey]);
    S[timerKey] = setTimeout(fn, 150);  // a burst of events causes one reload
  }

  // ------------------------------------------------------------------ messages
  function scrollToEnd(force) {
    const box = $("messages");
    const near = box.scrollHeight - box.scrollTop - box.clientHeight < 120;
    if (force || near) box.scrollTop = box.scrollHeight;
  }

  function upsertMessage(msg, live) {
    if (!msg || !msg.publicId) return;
    if (msg.author && msg.author.publicId) {
      S.users.set(msg.author.publicId, Object.assign({}, S.users.get(msg.author.publicId), msg.author));
    }
    const box = $("messages");
    const node = renderMessage(msg);
    const old = box.querySelector(`.msg[data-id="${CSS.escape(msg.publicId)}"]`);
    S.msgs.set(msg.publicId, msg);
    if (old) {
      old.replaceWith(node);
    } else {
      let before = null;
      for (let i = box.children.length - 1; i >= 0; i -= 1) {
        const other = box.children[i];
        if (!other.dataset.id || compareIds(other.dataset.id, msg.publicId) < 0) break;
        before = other;
      }
      box.insertBefore(node, before);
    }
    for (const reply of box.querySelectorAll(`.msg[data-reply-to="${CSS.escape(msg.publicId)}"]`)) {
      const again = S.msgs.get(reply.dataset.id);
      if (again) reply.replaceWith(renderMessage(again));
    }
    if (live) scrollToEnd(false);
  }

  function renderMessage(msg) {
    const author = msg.author;
    const mine = author && S.me && author.publicId === S.me.publicId;
    const node = el("article", "msg" + (mine ? " mine" : ""));
    node.dataset.id = msg.publicId;
    if (author) node.dataset.author = author.publicId;
    if (msg.replyToId) {
      node.dataset.replyTo = msg.replyToId;
      const target = S.msgs.get(msg.replyToId);
      const ref = el("div", "reply-ref");
      ref.append(el("span", "reply-arrow", "\u21AA "));
      if (target) {
        ref.append(el("span", "reply-author", bdi(userName(target.author))),
                   el("span", "reply-snippet", [" ", bdi(decodeContent(target.content).slice(0, 80))]));
      } else {
        ref.append(el("span", "reply-snippet", "a reply to an earlier message"));
      }
      node.append(ref);
    }
    const head = el("div", "head");
    const name = el("button", "author", author ? bdi(userName(author)) : "(system)");
    name.type = "button";
    if (author && !mine) {
      name.title = "Open a DM with " + isolated(userName(author));
      name.addEventListener("click", () => openDM(author.publicId));
    } else {
      name.disabled = true;
    }
    head.append(name);
    if (author && author.isBot) head.append(el("span", "badge", "BOT"));
    const time = el("time", "time", shortTime(msg.createdAt));
    time.dateTime = msg.createdAt || "";
    head.append(time);
    if (msg.editedAt) head.append(el("span", "edited", "(edited)"));
    head.append(messageActions(msg, mine));
    node.append(head);
    const content = decodeContent(msg.content);
    if (content) node.append(el("div", "content", bdi(content)));
    for (const embed of msg.embeds || []) {
      if (embed && typeof embed === "object") node.append(renderEmbed(embed));
    }
    node.append(renderReactions(msg.publicId));
    return node;
  }

  function messageActions(msg, mine) {
    const bar = el("span", "actions");
    const reply = el("button", "act act-reply", "Reply");
    reply.type = "button";
    reply.addEventListener("click", () => setReply(msg.publicId));
    bar.append(reply);
    for (const emoji of QUICK_EMOJIS) {
      const b = el("button", "act act-react", emoji);
      b.type = "button";
      b.dataset.emoji = emoji;
      b.title = "React with " + emoji;
      b.addEventListener("click", () => react(msg.publicId, emoji));
      bar.append(b);
    }
    if (mine) {
      const edit = el("button", "act act-edit", "Edit");
      edit.type = "button";
      edit.addEventListener("click", () => editMessage(msg));
      const del = el("button", "act act-delete", "Delete");
      del.type = "button";
      del.addEventListener("click", () => deleteMessage(msg));
      bar.append(edit, del);
    }
    return bar;
  }

  function renderEmbed(embed) {
    const box = el("div", "embed");
    if (Number.isInteger(embed.color)) {
      box.style.borderLeftColor = "#" + (embed.color & 0xffffff).toString(16).padStart(6, "0");
    }
    if (embed.author && embed.author.name) box.append(el("div", "embed-author", bdi(embed.author.name)));
    if (embed.title) {
      const safeUrl = typeof embed.url === "string" && /^https?:\/\//i.test(embed.url);
      const title = el(safeUrl ? "a" : "div", "embed-title", bdi(embed.title));
      if (safeUrl) {
        title.href = embed.url;
        title.target = "_blank";
        title.rel = "noopener noreferrer";
      }
      box.append(title);
    }
    if (embed.description) box.append(el("div", "embed-description", bdi(embed.description)));
    if (Array.isArray(embed.fields) && embed.fields.length) {
      const fields = el("div", "embed-fields");
      for (const f of embed.fields) {
        if (!f || typeof f !== "object") continue;
        const field = el("div", "embed-field" + (f.inline ? " inline" : ""));
        field.append(el("div", "embed-field-name", bdi(f.name)), el("div", "embed-field-value", bdi(f.value)));
        fields.append(field);
      }
      box.append(fields);
    }
    const footer = [];
    if (embed.footer && embed.footer.text) footer.push(bdi(embed.footer.text));
    if (embed.timestamp) footer.push((footer.length ? " \u2022 " : "") + new Date(embed.timestamp).toLocaleString());
    if (footer.length) box.append(el("div", "embed-footer", footer));
    return box;
  }

  function renderReactions(mid) {
    const bar = el("div", "reactions");
    const list = S.reactions.get(mid) || [];
    const groups = new Map();
    for (const r of list) {
      if (!groups.has(r.emoji)) groups.set(r.emoji, []);
      groups.get(r.emoji).push(r);
    }
    for (const [emoji, entries] of groups) {
      const mine = S.me && entries.some((r) => r.userPublicId === S.me.publicId);
      const chip = el("button", "reaction" + (mine ? " mine" : ""));
      chip.type = "button";
      chip.dataset.emoji = emoji;
      chip.title = entries.map((r) => isolated(r.userName || r.userPublicId)).join(", ");
      chip.append(el("span", "reaction-emoji", bdi(emoji)), el("span", "reaction-count", entries.length));
      chip.addEventListener("click", () => react(mid, emoji));
      bar.append(chip);
    }
    return bar;
  }

  function refreshReactions(mid) {
    const node = $("messages").querySelector(`.msg[data-id="${CSS.escape(mid)}"]`);
    if (!node) return;
    node.querySelector(".reactions").replaceWith(renderReactions(mid));
  }

  function needSocket(what) {
    if (S.socket && S.socket.connected) return true;
    notice("error", `${what}: not connected to the service (reconnecting). Nothing was sent.`);
    return false;
  }

  function react(mid, emoji) {
    if (needSocket("Reacting")) S.socket.emit("message:react", { messagePublicId: mid, emoji });
  }

  function editMessage(msg) {
    const text = window.prompt("Edit the message", decodeContent(msg.content));
    if (text === null || text === decodeContent(msg.content)) return;
    if (needSocket("Editing")) {
      S.socket.emit("message:edit", { messagePublicId: msg.publicId, content: text, embeds: msg.embeds || [] });
    }
  }

  function deleteMessage(msg) {
    if (!window.confirm("Delete this message?")) return;
    if (needSocket("Deleting")) S.socket.emit("message:delete", { messagePublicId: msg.publicId });
  }

  function setReply(mid) {
    S.replyTo = mid;
    const bar = $("reply-bar");
    if (!mid) {
      bar.hidden = true;
      return;
    }
    const target = S.msgs.get(mid);
    $("reply-text").replaceChildren("Replying to ", ...(target ? [bdi(userName(target.author)), ": ",
      bdi(decodeContent(target.content).slice(0, 60))] : ["a message"]));
    bar.hidden = false;
    $("composer").focus();
  }

  // ------------------------------------------------------------------ sending and typing
  function send() {
    const composer = $("composer");
    const text = composer.value;
    const cid = S.channel;
    if (!cid || !text.trim()) return;
    if (!needSocket("Not sent")) return;  // the text stays in the box
    const nonce = newNonce();
    const payload = { channelPublicId: cid, content: text, embeds: [], nonce };
    if (S.replyTo) payload.replyToId = S.replyTo;
    S.socket.emit("message:send", payload);
    composer.value = "";
    setReply(null);
    stopTyping();
    const node = el("div", "pending-item", ["Sending: ", bdi(text.slice(0, 80))]);
    $("pending").append(node);
    const timer = setTimeout(() => {
      S.pending.delete(nonce);
      node.className = "pending-item failed";
      node.replaceChildren("Not delivered: ", bdi(text.slice(0, 80)));
      setTimeout(() => node.remove(), 15000);
      notice("error", `Your message was not delivered: the service sent no echo within ` +
        `${SEND_TIMEOUT_MS / 1000} s. It refuses sends silently, for example where you may not send.`);
    }, SEND_TIMEOUT_MS);
    S.pending.set(nonce, { timer, node, text });
  }

  function settlePending(nonce) {
    const entry = S.pending.get(nonce);
    if (!entry) return;
    clearTimeout(entry.timer);
    entry.node.remove();
    S.pending.delete(nonce);
  }

  function onComposerInput() {
    const cid = S.channel;
    if (!cid || !S.socket || !S.socket.connected) return;
    const now = Date.now();
    if (S.typingChannel !== cid || now - S.typingSentAt > TYPING_EVERY_MS) {
      if (S.typingChannel && S.typingChannel !== cid) stopTyping();
      S.socket.emit("typing:start", cid);
      S.typingSentAt = now;
      S.typingChannel = cid;
    }
    clearTimeout(S.typingTimer);
    S.typingTimer = setTimeout(stopTyping, TYPING_IDLE_MS);
  }

  function stopTyping() {
    clearTimeout(S.typingTimer);
    if (S.typingChannel && S.socket && S.socket.connected) S.socket.emit("typing:stop", S.typingChannel);
    S.typingChannel = null;
    S.typingSentAt = 0;
  }

  function dropTyper(uid) {
    const typer = S.typers.get(uid);
    if (!typer) return;
    clearTimeout(typer.timer);
    S.typers.delete(uid);
    renderTyping();
  }

  function renderTyping() {
    const names = [...S.typers.values()].filter((t) => t.channel === S.channel).map((t) => t.name);
    const parts = [];
    names.forEach((name, i) => parts.push(...(i ? [", "] : []), bdi(name)));
    if (names.length) parts.push(names.length === 1 ? " is typing\u2026" : " are typing\u2026");
    $("typing").replaceChildren(...parts);
  }

  // ------------------------------------------------------------------ socket event handlers
  const HANDLERS = {
    "message:new": (msg) => {
      if (msg.nonce) settlePending(msg.nonce);
      if (msg.author) dropTyper(msg.author.publicId);
      const cid = msg.channelPublicId;
      if (cid === S.channel) {
        upsertMessage(msg, true);
        return;
      }
      if (!S.channels.has(cid) && !msg.serverPublicId) learnChannel(cid);
      S.unread.set(cid, msg.serverPublicId || DM_VIEW);
      markChannels();
      if (S.server === DM_VIEW) renderDMList();
    },
    "message:updated": (msg) => {
      if (msg.channelPublicId === S.channel && S.msgs.has(msg.publicId)) upsertMessage(msg, false);
    },
    "message:deleted": (data) => {
      const mid = data.publicId || data.messagePublicId;
      S.msgs.delete(mid);
      S.reactions.delete(mid);
      const node = $("messages").querySelector(`.msg[data-id="${CSS.escape(mid)}"]`);
      if (node) node.remove();
    },
    "message:reaction": (data) => {
      S.reactions.set(data.messagePublicId, data.reactions || []);
      refreshReactions(data.messagePublicId);
    },
    "message:reaction_clear": (data) => {
      S.reactions.delete(data.messagePublicId);
      refreshReactions(data.messagePublicId);
    },
    "message:error": (data) => {
      const entry = S.pending.get(data.nonce);
      settlePending(data.nonce);
      notice("error", ["The service refused your message", ...(entry ? [' "', bdi(entry.text.slice(0, 40)), '"'] : []),
        ": ", bdi(data.error)]);
    },
    "typing:start": (data) => {
      const uid = data.userPublicId;
      const old = S.typers.get(uid);
      if (old) clearTimeout(old.timer);
      S.typers.set(uid, { name: data.userName || uid, channel: data.channelPublicId,
                          timer: setTimeout(() => dropTyper(uid), TYPER_EXPIRES_MS) });
      renderTyping();
    },
    "typing:stop": (data) => dropTyper(data.userPublicId),
    "presence:update": (data) => {
      const uid = data.userPublicId;
      S.users.set(uid, Object.assign({}, S.users.get(uid), { status: data.status }));
      const member = S.members.get(uid);
      if (member) member.user = Object.assign({}, member.user, { status: data.status });
      refreshDots(uid);
    },
    "user:update": (data) => {
      const uid = data.userPublicId;
      const patch = {};
      for (const key of ["name", "tag", "image"]) if (key in data) patch[key] = data[key];
      S.users.set(uid, Object.assign({}, S.users.get(uid), patch));
      if (S.server && S.server !== DM_VIEW) later("membersTimer", () => loadMembers(S.server));
    },
    "server:joined": (server) => {
      S.servers.set(server.publicId, server);
      renderRail();
      notice("info", ["You joined ", bdi(server.name), "."]);
    },
    "server:updated": (data) => {
      const server = S.servers.get(data.serverPublicId);
      if (!server) return;
      if ("name" in data) server.name = data.name;
      if ("imageUrl" in data) server.imageUrl = data.imageUrl;
      renderRail();
      if (S.server === data.serverPublicId) $("server-name").replaceChildren(bdi(server.name));
    },
    "server:deleted": (data) => removeServer(data.serverPublicId, "the server was deleted"),
    "server:you_removed": (data) => removeServer(data.serverPublicId, "you were removed"),
    "server:you_left": (data) => removeServer(data.serverPublicId, "you left"),
    "server:member_add": (data) => membersChanged(data),
    "server:member_remove": (data) => membersChanged(data),
    "server:member_removed": (data) => membersChanged(data),
    "server:member_update": (data) => membersChanged(data),
    "server:channels_updated": (data) => listingChanged(data),
    "server:categories_updated": (data) => listingChanged(data),
    "dm:new": (record) => {
      if (record && record.publicId && !S.dms.has(record.publicId)) {
        addDM(record, true);
        notice("info", ["New DM with ", bdi((record.recipient && record.recipient.name) || "someone"), "."]);
      }
    },
  };

  function membersChanged(data) {
    if (data.serverPublicId === S.server) later("membersTimer", () => loadMembers(S.server));
  }

  function listingChanged(data) {
    if (data.serverPublicId === S.server) later("listingTimer", () => loadListing(S.server));
  }

  // ------------------------------------------------------------------ as admin (control plane)
  function adminServer() {
    if (!S.server || S.server === DM_VIEW) {
      notice("error", "Pick a server first: the admin actions act on the selected server.");
      return null;
    }
    return S.server;
  }

  async function adminCreateChannel(event) {
    event.preventDefault();
    const sid = adminServer();
    if (!sid) return;
    const name = $("admin-channel-name").value.trim();
    const body = { name, type: $("admin-channel-type").value };
    if ($("admin-channel-private").checked) body.isPrivate = true;
    try {
      const data = await control("POST", `/servers/${enc(sid)}/channels`, body);
      notice("info", ["Created #", bdi(data.channel.name), " through the control plane."]);
      $("admin-channel-name").value = "";
    } catch (err) {
      failed("Creating the channel", err);
    }
  }

  async function adminMember(add) {
    const sid = adminServer();
    const uid = $("admin-member-user").value;
    if (!sid || !uid) return;
    const who = userName((S.userList.find((e) => e.user.publicId === uid) || {}).user);
    try {
      if (add) await control("POST", `/servers/${enc(sid)}/members`, { userId: uid });
      else await control("DELETE", `/servers/${enc(sid)}/members/${enc(uid)}`);
      notice("info", [add ? "Added " : "Kicked ", bdi(who), " through the control plane."]);
    } catch (err) {
      failed([add ? "Adding " : "Kicking ", bdi(who)], err);
    }
  }

  async function setStatus() {
    const status = $("status").value;
    try {
      await api("PATCH", "/users/settings", { status });
      S.users.set(S.me.publicId, Object.assign({}, S.users.get(S.me.publicId), { status }));
      refreshDots(S.me.publicId);
    } catch (err) {
      failed("Changing your status", err);
    }
  }

  // ------------------------------------------------------------------ wiring
  function wire() {
    if (typeof io !== "function") {
      notice("error", "The socket.io client did not load: the page cannot connect.");
      return;
    }
    $("who").addEventListener("change", (e) => login(e.target.value));
    $("status").addEventListener("change", setStatus);
    const composer = $("composer");
    composer.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        send();
      }
    });
    composer.addEventListener("input", onComposerInput);
    composer.addEventListener("blur", stopTyping);
    $("reply-cancel").addEventListener("click", () => setReply(null));
    $("dm-open").addEventListener("click", () => openDM($("dm-user").value));
    // users created since the page loaded show up in the pickers as soon as one is opened
    for (const id of ["dm-user", "admin-member-user"]) {
      $(id).addEventListener("focus", () => loadUsers($("who").value));
    }
    $("admin-channel").addEventListener("submit", adminCreateChannel);
    $("admin-member").addEventListener("submit", (e) => { e.preventDefault(); adminMember(true); });
    $("admin-kick").addEventListener("click", () => adminMember(false));
    window.addEventListener("error", (e) => notice("error", "Page error: " + e.message));
    window.addEventListener("unhandledrejection", (e) =>
      notice("error", "Page error: " + (e.reason && e.reason.message ? e.reason.message : e.reason)));
    const remembered = sessionStorage.getItem("sc-emulator-user");
    loadUsers(null).then(() => {
      if (remembered && S.userList.some((e) => e.user.publicId === remembered && e.token)) {
        $("who").value = remembered;
        login(remembered);
      }
    });
  }

  wire();
})();
