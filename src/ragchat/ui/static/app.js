// ragchat's chat page: wires the sidebar, the conversation pane, the composer and the panels.
// The URL hash (#/c/<id>) names the open conversation, so a reload comes back to it.
// First visit: creating a knowledge base is the first step; "Answer from" then starts on the
// person's own (remembered on the server, so any browser they sign in on starts there).

import { openAccount, openSignIn, signInForm } from "./js/account.js";
import { api, streamTurn } from "./js/api.js";
import { $, clear, h } from "./js/dom.js";
import { icon } from "./js/icons.js";
import { openKnowledgeBases } from "./js/kb.js";
import { assistantMessage, fromStored, userMessage } from "./js/messages.js";
import { createPicker, SAMPLES, startingChoice } from "./js/picker.js";
import { createSidebar, UNTITLED } from "./js/sidebar.js";
import { openSource } from "./js/source.js";
import { closePanel, errorText, panelKind, toast } from "./js/ui.js";

const EXAMPLES = [
  "What are the side effects of ibuprofen?",
  "How much sleep does a toddler need?",
  "What happens during systole and diastole?",
  "I've had a really stressful day at work",
];
const TITLE_POLL_MS = [600, 1500, 3000, 6000];

const els = {
  messages: $("#messages"),
  thread: $("#thread"),
  input: $("#composer-input"),
  form: $("#composer"),
  send: $("#send"),
  stop: $("#stop"),
  answer: $("#answer-from"),
  answerHelp: $("#answer-from-help"),
  account: $("#account"),
  title: $("#conv-title"),
  health: $("#health"),
  sidebar: $("#sidebar"),
  toggle: $("#toggle-sidebar"),
  scrim: $("#scrim"),
};

const state = {
  activeId: null,
  streaming: null, // AbortController of the reply being streamed
  stick: true, // keep the newest message in view (until the reader scrolls up)
  loadToken: 0,
  auth: { signed_in: false, user: null, sign_up: false, anonymous: true }, // GET /auth
  me: null, // GET /users/me
  choice: SAMPLES, // the person's own "Answer from" choice (a conversation may show another)
};

const picker = createPicker(els.answer, els.answerHelp, {
  onNew: () => openKb({ create: true }),
  onChange: (value) => {
    state.choice = value;
    if (!state.activeId) showWelcome();
  },
});

const sidebar = createSidebar($("#conv-groups"), {
  deleted(id) {
    if (id === state.activeId) navigate(null);
  },
  renamed(conv) {
    if (conv.id === state.activeId) setTitle(conv.title);
  },
});

function onCite(citation) {
  openSource(citation);
}

// -- layout ---------------------------------------------------------------------------------
const narrow = window.matchMedia("(max-width: 700px)");

function setSidebarOpen(open) {
  document.body.classList.toggle("sidebar-open", open);
  els.toggle.setAttribute("aria-expanded", String(open));
  els.scrim.hidden = !(open && narrow.matches);
  if (narrow.matches) els.sidebar.inert = !open;
  if (open && narrow.matches) $("#new-chat").focus();
}

function syncLayout() {
  els.sidebar.inert = narrow.matches && !document.body.classList.contains("sidebar-open");
  els.scrim.hidden = !(narrow.matches && document.body.classList.contains("sidebar-open"));
}

function setTitle(title) {
  els.title.textContent = title || UNTITLED;
  document.title = title ? `${title} · ragchat` : "ragchat";
}

function nearBottom() {
  const m = els.messages;
  return m.scrollHeight - m.scrollTop - m.clientHeight < 120;
}

function scrollToBottom(force = false) {
  if (force || state.stick) els.messages.scrollTop = els.messages.scrollHeight;
}

function autosize() {
  els.input.style.height = "auto";
  els.input.style.height = `${Math.min(els.input.scrollHeight, 240)}px`;
}

function setBusy(busy) {
  const hadFocus = document.activeElement === els.input || document.activeElement === els.stop;
  els.input.disabled = busy;
  els.send.hidden = busy;
  els.stop.hidden = !busy;
  els.form.classList.toggle("busy", busy);
  if (busy) els.stop.focus();
  else if (hadFocus || document.activeElement === document.body) els.input.focus();
}

// -- conversations --------------------------------------------------------------------------
function examples() {
  const list = h("ul", { class: "examples", "aria-label": "Example questions" });
  for (const q of EXAMPLES) {
    list.append(
      h(
        "li",
        {},
        h(
          "button",
          {
            type: "button",
            class: "example",
            onclick: () => {
              picker.set(SAMPLES);
              els.input.value = q;
              autosize();
              send();
            },
          },
          q,
        ),
      ),
    );
  }
  return list;
}

function signInNote() {
  if (state.auth.signed_in) return null;
  return h(
    "p",
    { class: "muted small welcome-signin" },
    "Have an account? ",
    h(
      "button",
      { type: "button", class: "link-btn", id: "welcome-sign-in", onclick: () => accountClicked() },
      "Sign in",
    ),
    " to see your knowledge bases and conversations on any browser.",
  );
}

/** The empty conversation: what to do first, from what the person has. */
function welcome() {
  const choice = picker.value;
  if (choice.startsWith("kb:")) {
    const name = choice.slice(3);
    return h(
      "div",
      { class: "welcome", dataset: { step: "ask" } },
      h("h2", { text: `Ask ${name}` }),
      h("p", {
        class: "muted",
        text:
          `Answers come from the documents in ${name}, each with numbered sources: ` +
          "the page, the spreadsheet row or the moment of a recording it comes from.",
      }),
      h(
        "div",
        { class: "welcome-actions" },
        h(
          "button",
          {
            type: "button",
            id: "welcome-add",
            class: "btn",
            onclick: () => openKb({ preferred: name }),
          },
          icon("upload", 18),
          "Add documents",
        ),
      ),
      signInNote(),
    );
  }
  if (!picker.ownKbs().length) {
    return h(
      "div",
      { class: "welcome", dataset: { step: "create" } },
      h("h2", { text: "Chat with your own documents" }),
      h("p", {
        class: "muted",
        text:
          "Create a knowledge base, add Word or PDF files, spreadsheets or meeting " +
          "transcripts, and ask: every answer cites the page, row or moment it comes from.",
      }),
      h(
        "div",
        { class: "welcome-actions" },
        h(
          "button",
          {
            type: "button",
            id: "welcome-create",
            class: "btn btn-primary btn-lg",
            onclick: () => openKb({ create: true }),
          },
          icon("plus", 18),
          "Create a knowledge base",
        ),
      ),
      signInNote(),
      h("h3", { class: "welcome-or", text: "Or try the built-in samples (not your files)" }),
      examples(),
    );
  }
  return h(
    "div",
    { class: "welcome", dataset: { step: "samples" } },
    h("h2", { text: "Ask the built-in samples" }),
    h("p", {
      class: "muted",
      text:
        "These answers come from the sample knowledge bases, not your files: pick one of " +
        "yours under Answer from to ask your own documents.",
    }),
    examples(),
  );
}

function showWelcome() {
  const old = $(".welcome", els.thread);
  if (old && !state.activeId) old.replaceWith(welcome());
}

function navigate(id) {
  const hash = id ? `#/c/${encodeURIComponent(id)}` : "#/";
  if (location.hash !== hash) location.hash = hash;
  else route();
}

function currentHashId() {
  const m = location.hash.match(/^#\/c\/([^/?#]+)$/);
  return m ? decodeURIComponent(m[1]) : null;
}

function route() {
  const id = currentHashId();
  if (id === state.activeId && els.thread.childElementCount) return Promise.resolve();
  return openConversation(id);
}

async function openConversation(id) {
  if (state.streaming) state.streaming.abort();
  state.activeId = id;
  const token = ++state.loadToken;
  sidebar.setActive(id);
  if (narrow.matches) setSidebarOpen(false);
  clear(els.thread);
  if (!id) {
    setTitle(null);
    picker.set(state.choice);
    els.thread.append(welcome());
    els.input.focus();
    return;
  }
  const known = sidebar.get(id);
  setTitle(known ? known.title : null);
  els.thread.append(h("p", { class: "muted loading", text: "Loading…" }));
  let conv;
  let messages;
  try {
    [conv, messages] = await Promise.all([api.conversation(id), api.messages(id)]);
  } catch (err) {
    if (token !== state.loadToken) return;
    clear(els.thread);
    if (err.status === 404) {
      toast("That conversation doesn't exist any more.", { kind: "info" });
      navigate(null);
    } else {
      els.thread.append(h("p", { class: "msg-error", role: "alert", text: errorText(err) }));
    }
    return;
  }
  if (token !== state.loadToken) return;
  setTitle(conv.title);
  const bound = (conv.kb || [])[0];
  picker.set(bound ? `kb:${bound}` : `agent:${conv.assigned_agent || ""}`);
  clear(els.thread);
  for (const m of messages) {
    if (m.role === "user") els.thread.append(userMessage(m.content));
    else if (m.role === "assistant")
      els.thread.append(assistantMessage(fromStored(m), { onCite }).el);
  }
  if (!messages.length) els.thread.append(welcome());
  scrollToBottom(true);
  els.input.focus();
}

async function refreshAfterTurn(id) {
  try {
    await sidebar.refresh();
  } catch {
    return;
  }
  for (const wait of TITLE_POLL_MS) {
    const conv = sidebar.get(id);
    if (!conv || conv.title) break;
    await new Promise((r) => setTimeout(r, wait));
    try {
      await sidebar.refresh();
    } catch {
      return;
    }
  }
  const conv = sidebar.get(id);
  if (conv && id === state.activeId) setTitle(conv.title);
}

// -- a turn ---------------------------------------------------------------------------------
async function send() {
  const text = els.input.value.trim();
  if (!text || state.streaming) return;
  const controller = new AbortController();
  state.streaming = controller;
  setBusy(true);

  const binding = picker.binding();
  let id = state.activeId;
  if (!id) {
    try {
      const conv = await api.createConversation(binding.kb);
      id = conv.id;
      state.activeId = id; // before the hash changes, so route() keeps this pane
      sidebar.upsert(conv);
      sidebar.setActive(id);
      location.hash = `#/c/${encodeURIComponent(id)}`;
    } catch (err) {
      state.streaming = null;
      setBusy(false);
      toast(errorText(err));
      return;
    }
  }
  els.input.value = "";
  autosize();
  $(".welcome", els.thread)?.remove();
  els.thread.append(userMessage(text));
  const reply = assistantMessage(
    { streaming: true, content: "" },
    { onCite, onRender: () => scrollToBottom() },
  );
  els.thread.append(reply.el);
  scrollToBottom(true);

  let content = "";
  let settled = false;
  try {
    const turn = streamTurn(id, text, binding.agent, controller.signal, binding.kb);
    for await (const { event, data } of turn) {
      if (event === "metadata") {
        reply.update({ agent: data.agent });
      } else if (event === "token") {
        content += data.text || "";
        reply.update({ content });
      } else if (event === "citations") {
        reply.update({ citations: data.citations || [] });
      } else if (event === "final") {
        settled = true;
        reply.update(
          {
            streaming: false,
            status: "complete",
            content: data.reply ?? content,
            agent: data.agent,
            citations: data.citations || [],
            no_answer: Boolean(data.no_answer),
            bubbles: data.bubbles,
            metadata: data.metadata || {},
            timings: data.timings,
          },
          { now: true },
        );
      } else if (event === "error") {
        settled = true;
        reply.update(
          {
            streaming: false,
            status: "failed",
            content,
            error: data.message || "The reply failed.",
          },
          { now: true },
        );
      }
    }
    if (!settled) {
      reply.update(
        { streaming: false, status: "interrupted", content, error: "The connection closed early." },
        { now: true },
      );
    }
  } catch (err) {
    if (err && err.name === "AbortError") {
      reply.update({ streaming: false, status: "interrupted", content }, { now: true });
    } else {
      reply.update(
        { streaming: false, status: "failed", content, error: errorText(err) },
        { now: true },
      );
      // Refused before it started (rate limit, busy server): give the text back to resend.
      if (!content && err && err.status && !els.input.value) {
        els.input.value = text;
        autosize();
      }
    }
  } finally {
    if (state.streaming === controller) state.streaming = null;
    setBusy(false);
    scrollToBottom();
    refreshAfterTurn(id);
  }
}

function stop() {
  if (state.streaming) state.streaming.abort();
}

// -- knowledge bases and the account ---------------------------------------------------------
function openKb({ create = false, preferred = null } = {}) {
  const shown = picker.value.startsWith("kb:") ? picker.value.slice(3) : null;
  openKnowledgeBases({
    create,
    preferred: preferred || shown,
    onChanged: async () => {
      await Promise.all([loadHealth(), picker.load()]);
      showWelcome();
    },
    onCreated: async (name) => {
      await picker.load();
      state.choice = `kb:${name}`;
      picker.set(state.choice, { remember: true });
      if (!state.activeId) showWelcome();
    },
    onChat: (name) => {
      closePanel();
      state.choice = `kb:${name}`;
      navigate(null);
      picker.load().then(() => {
        picker.set(state.choice, { remember: true });
        showWelcome();
      });
      els.input.focus();
    },
  });
}

function showAccount() {
  const me = state.me;
  const signedIn = state.auth.signed_in && me;
  const label = signedIn ? me.display_name || me.username : "Sign in";
  clear(els.account).append(
    icon("user", 18),
    h("span", { class: "btn-text", text: label }),
  );
  els.account.setAttribute("aria-label", signedIn ? `Your account: ${label}` : "Sign in");
  document.body.dataset.signedIn = String(Boolean(signedIn));
}

function accountClicked() {
  // A new identity: everything on the page (conversations, knowledge bases) changes with it.
  const reload = () => {
    location.hash = "#/";
    location.reload();
  };
  if (state.auth.signed_in && state.me) openAccount(state.me, { onSignedOut: reload });
  else openSignIn({ ...state.auth, user: state.me }, { onSignedIn: reload });
}

// -- health and agents ----------------------------------------------------------------------
async function loadHealth() {
  let health;
  try {
    health = await api.health();
  } catch {
    els.health.dataset.status = "down";
    els.health.textContent = "Server unreachable";
    return;
  }
  // "healthy" since the replaced systems' clients share /health; older servers said "ok".
  const healthy = health.status === "healthy" || health.status === "ok";
  els.health.dataset.status = healthy ? "ok" : health.status;
  els.health.textContent = healthy
    ? "All systems ok"
    : `Degraded: ${(health.degraded || []).join(", ")}`;
  els.health.title = `ragchat ${health.version || ""}`.trim();
}

// -- wiring ---------------------------------------------------------------------------------
function wire() {
  els.form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    send();
  });
  els.input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      send();
    }
  });
  els.input.addEventListener("input", autosize);
  els.messages.addEventListener("scroll", () => {
    state.stick = nearBottom();
  });
  // Taller content (a reply, an opened details box) or a narrower pane (the side panel)
  // keeps the newest message in view while the reader is at the bottom.
  const keepBottom = new ResizeObserver(() => scrollToBottom());
  keepBottom.observe(els.thread);
  keepBottom.observe(els.messages);
  els.stop.addEventListener("click", stop);
  $("#new-chat").addEventListener("click", () => navigate(null));
  $("#open-kb").addEventListener("click", () => openKb());
  els.account.addEventListener("click", accountClicked);
  $("#panel-close").addEventListener("click", closePanel);
  els.toggle.addEventListener("click", () =>
    setSidebarOpen(!document.body.classList.contains("sidebar-open")),
  );
  els.scrim.addEventListener("click", () => setSidebarOpen(false));
  narrow.addEventListener("change", () => {
    setSidebarOpen(false);
    syncLayout();
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key !== "Escape" || ev.defaultPrevented) return;
    if (document.querySelector("dialog[open]")) return;
    if (state.streaming) stop();
    else if (panelKind()) closePanel();
    else if (narrow.matches && document.body.classList.contains("sidebar-open"))
      setSidebarOpen(false);
  });
  window.addEventListener("hashchange", route);
  $("#open-kb").prepend(icon("book", 18));
  $("#new-chat").prepend(icon("plus", 18));
  els.toggle.append(icon("menu", 20));
  els.send.prepend(icon("send", 18));
  els.stop.prepend(icon("stop", 16));
  $("#panel-close").append(icon("close", 18));
}

/** A server that serves only people with an account, to someone signed out: the sign-in
 * form is the page. */
function gate() {
  document.body.dataset.gate = "sign-in";
  els.form.hidden = true;
  for (const id of ["#open-kb", "#new-chat", "#conv-empty"]) $(id).hidden = true;
  els.account.hidden = true;
  setTitle("Sign in");
  const form = signInForm(state.auth, {
    heading: "Sign in to ragchat",
    onSignedIn: () => location.reload(),
  });
  clear(els.thread).append(h("div", { class: "welcome gate" }, form.el));
  form.focus();
}

async function main() {
  wire();
  syncLayout();
  autosize();
  try {
    state.auth = await api.auth();
  } catch (err) {
    toast(errorText(err));
  }
  if (!state.auth.user && !state.auth.anonymous) {
    gate();
    loadHealth();
    document.body.dataset.ready = "true";
    return;
  }
  try {
    // One request first: a new visitor gets the identity cookie here, before the requests
    // below run in parallel (each would otherwise create its own anonymous user).
    state.me = await api.me();
  } catch (err) {
    toast(errorText(err));
  }
  showAccount();
  await Promise.all([
    sidebar.refresh().catch((err) => toast(errorText(err))),
    loadHealth(),
    picker.load(),
  ]);
  state.choice = startingChoice(state.me, picker.kbs);
  picker.set(state.choice);
  await route();
  document.body.dataset.ready = "true"; // for tests: the first view is complete
}

main();
