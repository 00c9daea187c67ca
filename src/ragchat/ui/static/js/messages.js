// Messages in the conversation pane: the user's (plain text) and the assistant's (Markdown,
// which agent answered, citation chips, a no-answer style, companion bubbles, and a details
// toggle with the reformulated query and timings). A streamed reply fills in as tokens arrive.

import { clear, formatMs, h } from "./dom.js";
import { icon } from "./icons.js";
import { renderMarkdown } from "./markdown.js";

export function userMessage(text) {
  return h(
    "article",
    { class: "msg msg-user", "aria-label": "You said" },
    h("div", { class: "bubble bubble-user", text }),
  );
}

/** A short "where": page, section path, or time range (speakers). */
export function citationWhere(c) {
  if (c.start_ts || c.end_ts) {
    const range = [c.start_ts, c.end_ts].filter(Boolean).map(shortTs).join("–");
    const who = (c.speakers || []).join(", ");
    return who ? `${range} (${who})` : range;
  }
  if (c.page !== null && c.page !== undefined) return `page ${c.page}`;
  if (c.section_path && c.section_path.length) return c.section_path.join(" › ");
  return c.location || "";
}

function shortTs(ts) {
  // 00:01:02.800 → 1:02 ; 01:02:03.000 → 1:02:03
  const m = String(ts).match(/^(\d+):(\d{2}):(\d{2})/);
  if (!m) return String(ts);
  const [hh, mm, ss] = [parseInt(m[1], 10), m[2], m[3]];
  return hh ? `${hh}:${mm}:${ss}` : `${parseInt(mm, 10)}:${ss}`;
}

/** Where in its document a citation is, as short as possible: time range, page, sheet and
 * row(s), section. */
export function chipWhere(c) {
  const location = String(c.location || "");
  if (/^\d+:\d{2}:\d{2}/.test(location)) {
    // "00:00:19.500–00:00:31.000, 00:01:25.500–00:01:36.000 (…)": each quoted range, short.
    const ranges = location.split(" (")[0].split(", ");
    return ranges.map((r) => r.split("–").map(shortTs).join("–")).join(", ");
  }
  if (c.start_ts || c.end_ts) return [c.start_ts, c.end_ts].filter(Boolean).map(shortTs).join("–");
  if (c.page !== null && c.page !== undefined) return `p. ${c.page}`;
  if (c.rows && c.location) return c.location;
  if (c.section_path && c.section_path.length) return c.section_path.at(-1);
  return c.location || "";
}

/** A chip's label. Chips of one document lead with their place ("1:02–1:20 · Toddler sleep
 * talk"), so a truncated label still tells them apart; a lone source leads with its name. */
export function chipLabel(c, shared = false) {
  const name = c.title || c.source || "Source";
  const where = chipWhere(c);
  if (!where || where === name) return name;
  return shared ? `${where} · ${name}` : `${name} · ${where}`;
}

function sources(citations, onCite) {
  if (!citations || !citations.length) return null;
  const list = h("ul", { class: "chips", "aria-label": "Sources" });
  const count = new Map();
  for (const c of citations) {
    const key = c.title || c.source || "";
    count.set(key, (count.get(key) || 0) + 1);
  }
  for (const c of citations) {
    const label = chipLabel(c, count.get(c.title || c.source || "") > 1);
    const name = c.title || c.source || "Source";
    const where = chipWhere(c);
    // The place is never cut: only the document's name shortens to fit.
    list.append(
      h(
        "li",
        {},
        h(
          "button",
          {
            type: "button",
            class: "chip",
            title: label,
            "aria-label": `Open source ${c.index}: ${label}`,
            onclick: (ev) => onCite(c, ev.currentTarget),
          },
          h("span", { class: "chip-n", text: String(c.index) }),
          h(
            "span",
            { class: "chip-label" },
            h("span", { class: "chip-name", text: name }),
            where && where !== name ? h("span", { class: "chip-where", text: where }) : null,
          ),
        ),
      ),
    );
  }
  return h("div", { class: "msg-sources" }, h("span", { class: "sources-label" }, "Sources"), list);
}

function details(metadata, timings) {
  const md = metadata || {};
  const rows = [];
  const reformulated = md.reformulated_query;
  const search = md.search_query;
  if (reformulated) rows.push(["Reformulated query", reformulated]);
  else if (search) rows.push(["Search query", search]);
  const routing = md.routing;
  if (routing && typeof routing === "object") {
    if (routing.reasoning) rows.push(["Routing", String(routing.reasoning)]);
  }
  if (typeof md.confidence === "number") rows.push(["Confidence", md.confidence.toFixed(2)]);
  if (md.gate && typeof md.gate.relevance === "number") {
    rows.push(["Best passage relevance", md.gate.relevance.toFixed(2)]);
  }
  if (md.retrieval_attempts) rows.push(["Retrieval attempts", String(md.retrieval_attempts)]);
  const times = timings || md.timings;
  if (!rows.length && !(times && Object.keys(times).length)) return null;

  const dl = h("dl", { class: "kv" });
  for (const [k, v] of rows) dl.append(h("dt", { text: k }), h("dd", { text: v }));
  const box = h("details", { class: "msg-details" }, h("summary", {}, "Details"), dl);
  if (times && Object.keys(times).length) {
    const table = h(
      "table",
      { class: "timings" },
      h("caption", { text: "Timings" }),
      h(
        "thead",
        {},
        h("tr", {}, h("th", { scope: "col" }, "Step"), h("th", { scope: "col" }, "Time")),
      ),
    );
    const body = h("tbody");
    for (const [step, ms] of Object.entries(times)) {
      if (typeof ms !== "number") continue;
      body.append(
        h("tr", {}, h("th", { scope: "row", text: step }), h("td", { text: formatMs(ms) })),
      );
    }
    table.append(body);
    box.append(table);
  }
  return box;
}

/**
 * An assistant message: {content, agent, citations, metadata, status, no_answer, bubbles}.
 * Returns {el, update(data), setStreaming(bool)}; update re-renders from the data.
 */
export function assistantMessage(initial, { onCite, onRender = null }) {
  const el = h("article", { class: "msg msg-assistant" });
  const head = h("div", { class: "msg-head" });
  const body = h("div", { class: "msg-body" });
  const extras = h("div", { class: "msg-extras" });
  el.append(head, body, extras);
  let data = { ...initial };

  function renderHead() {
    clear(head);
    const agent = data.agent || (data.streaming ? "routing…" : null);
    if (agent) {
      head.append(
        h(
          "span",
          { class: "agent-badge", dataset: { agent } },
          h("span", { class: "visually-hidden" }, "Answered by "),
          agent,
        ),
      );
    }
    if (data.no_answer) {
      head.append(
        h("span", { class: "tag tag-noanswer" }, icon("alert", 14), " Not in the knowledge base"),
      );
    }
    if (data.status === "interrupted")
      head.append(h("span", { class: "tag tag-stopped", text: "Stopped" }));
    if (data.status === "failed")
      head.append(h("span", { class: "tag tag-failed", text: "Failed" }));
  }

  function renderBody() {
    clear(body);
    const opts = { citations: data.citations || [], onCite, streaming: Boolean(data.streaming) };
    const texts =
      data.bubbles && data.bubbles.length > 1 && !data.streaming
        ? data.bubbles
        : [data.content || ""];
    for (const text of texts) {
      const bubble = h("div", { class: "bubble bubble-assistant md" });
      if (data.no_answer) bubble.classList.add("bubble-noanswer");
      if (text) bubble.append(renderMarkdown(text, opts));
      else if (data.streaming) {
        bubble.classList.add("typing");
        bubble.append(
          h("span", { class: "dots", "aria-hidden": "true" }, h("span"), h("span"), h("span")),
        );
        bubble.append(h("span", { class: "visually-hidden", text: "Thinking…" }));
      } else if (data.status === "failed") {
        bubble.append(h("p", { text: data.error || "The reply failed. Try again." }));
      } else if (data.status === "interrupted") {
        bubble.append(h("p", { class: "muted", text: "Stopped before any text." }));
      }
      body.append(bubble);
    }
    if (data.error && data.content)
      body.append(h("p", { class: "msg-error", role: "alert", text: data.error }));
  }

  function renderExtras() {
    clear(extras);
    const src = sources(data.citations, onCite);
    if (src) extras.append(src);
    const more = data.streaming ? null : details(data.metadata, data.timings);
    if (more) extras.append(more);
  }

  function render() {
    el.classList.toggle("no-answer", Boolean(data.no_answer));
    el.classList.toggle("streaming", Boolean(data.streaming));
    el.dataset.status = data.streaming ? "streaming" : data.status || "complete";
    if (data.streaming) {
      body.setAttribute("aria-live", "polite");
      body.setAttribute("aria-busy", "true");
    } else {
      body.removeAttribute("aria-busy");
    }
    renderHead();
    renderBody();
    renderExtras();
    if (onRender) onRender();
  }

  let frame = 0;
  render();
  return {
    el,
    get data() {
      return data;
    },
    update(patch, { now = false } = {}) {
      data = { ...data, ...patch };
      if (now) {
        cancelAnimationFrame(frame);
        frame = 0;
        render();
      } else if (!frame) {
        frame = requestAnimationFrame(() => {
          frame = 0;
          render();
        });
      }
    },
  };
}

/** A stored MessageOut (GET /conversations/{id}/messages) as assistantMessage data. */
export function fromStored(m) {
  const md = m.metadata || {};
  return {
    content: m.content,
    agent: m.agent,
    citations: m.citations || [],
    metadata: md,
    status: m.status,
    no_answer: Boolean(md.no_answer),
    bubbles: Array.isArray(md.bubbles) ? md.bubbles : null,
    timings: md.timings,
    error: m.status === "failed" ? `The reply failed${md.error ? ` (${md.error})` : ""}.` : null,
  };
}
