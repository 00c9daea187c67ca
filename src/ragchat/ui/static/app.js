// ragchat's chat page: wires the sidebar, the conversation pane, the composer and the panels.
// The URL hash (#/c/<id>) names the open conversation, so a reload comes back to it.

import { api, streamTurn } from "./js/api.js";
import { $, clear, h } from "./js/dom.js";
import { icon } from "./js/icons.js";
import { openKnowledgeBases } from "./js/kb.js";
import { assistantMessage, fromStored, userMessage } from "./js/messages.js";
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
  agent: $("#agent-select"),
  kb: $("#kb-choice"),
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
};

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
function welcome() {
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
  return h(
    "div",
    { class: "welcome" },
    h("h2", { text: "Ask your documents" }),
    h("p", {
      class: "muted",
      text:
        "Answers come from the knowledge bases, with numbered sources you can open. " +
        "Add your own files under Knowledge bases.",
    }),
    list,
  );
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
  chooseKb((conv.kb || [])[0] || "");
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

  let id = state.activeId;
  if (!id) {
    try {
      const conv = await api.createConversation(boundKbs());
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
    const turn = streamTurn(id, text, els.agent.value, controller.signal, boundKbs());
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

// -- knowledge bases to answer from ---------------------------------------------------------
function boundKbs() {
  return els.kb.value ? [els.kb.value] : [];
}

function chooseKb(name) {
  if (name && ![...els.kb.options].some((o) => o.value === name))
    els.kb.append(h("option", { value: name, text: name }));
  els.kb.value = name;
  document.body.dataset.kb = name;
}

async function loadKbChoices() {
  let kbs = [];
  try {
    kbs = await api.knowledgeBases();
  } catch {
    return;
  }
  const keep = els.kb.value;
  clear(els.kb).append(h("option", { value: "", text: "All agents" }));
  for (const kb of kbs) {
    const label = kb.owned ? `${kb.name} (yours)` : kb.name;
    els.kb.append(h("option", { value: kb.name, text: label, title: kb.description || "" }));
  }
  els.kb.value = kbs.some((kb) => kb.name === keep) ? keep : "";
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
  const keep = els.agent.value;
  clear(els.agent).append(h("option", { value: "", text: "Auto (best agent)" }));
  for (const name of health.agents || [])
    els.agent.append(h("option", { value: name, text: name }));
  els.agent.value = keep && (health.agents || []).includes(keep) ? keep : "";
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
  $("#open-kb").addEventListener("click", () =>
    openKnowledgeBases({
      onChanged: () => Promise.all([loadHealth(), loadKbChoices()]),
      onChat: (name) => {
        closePanel();
        navigate(null);
        loadKbChoices().then(() => chooseKb(name));
        els.input.focus();
      },
      preferred: els.kb.value || sidebar.get(state.activeId)?.assigned_agent || null,
    }),
  );
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

async function main() {
  wire();
  syncLayout();
  autosize();
  try {
    // One request first: a new visitor gets the identity cookie here, before the requests
    // below run in parallel (each would otherwise create its own anonymous user).
    await api.me();
  } catch (err) {
    toast(errorText(err));
  }
  await Promise.all([
    sidebar.refresh().catch((err) => toast(errorText(err))),
    loadHealth(),
    loadKbChoices(),
  ]);
  await route();
  document.body.dataset.ready = "true"; // for tests: the first view is complete
}

main();
