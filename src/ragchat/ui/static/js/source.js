// The source panel: a cited passage with its document, page / section / time range and
// speakers; selecting text in it offers "Ask about this", answered from the selection only
// (POST /query with use_context_only).

import { api } from "./api.js";
import { h } from "./dom.js";
import { icon } from "./icons.js";
import { renderMarkdown } from "./markdown.js";
import { citationWhere } from "./messages.js";
import { errorText, openPanel } from "./ui.js";

function metaRows(c) {
  const rows = [];
  if (c.source) rows.push(["Document", c.source]);
  if (c.page !== null && c.page !== undefined) rows.push(["Page", String(c.page)]);
  if (c.section_path && c.section_path.length) rows.push(["Section", c.section_path.join(" › ")]);
  if (c.start_ts || c.end_ts) {
    rows.push(["Time", [c.start_ts, c.end_ts].filter(Boolean).join(" – ")]);
  }
  if (c.speakers && c.speakers.length) rows.push(["Speakers", c.speakers.join(", ")]);
  if (c.chapter) rows.push(["Chapter", String(c.chapter)]);
  if (!rows.some(([k]) => ["Page", "Section", "Time"].includes(k)) && c.location) {
    rows.push(["Location", c.location]);
  }
  if (typeof c.score === "number") rows.push(["Relevance", c.score.toFixed(2)]);
  return rows;
}

/** The preview without Markdown heading marks ("## Side effects Most people…"): the section
 * is shown above it. */
function passageText(preview) {
  return String(preview || "")
    .replace(/(^|\s)#{1,6}\s+/g, "$1")
    .trim();
}

/** The text selected inside `root`, or "" (a selection reaching outside it does not count). */
function selectionIn(root) {
  const sel = window.getSelection();
  if (!sel || sel.isCollapsed || !sel.rangeCount) return "";
  const range = sel.getRangeAt(0);
  if (!root.contains(range.startContainer) || !root.contains(range.endContainer)) return "";
  return sel.toString().trim();
}

export function openSource(citation) {
  // A quoting answer names the words it quoted (for a transcript: the cues of its time range);
  // those are the passage shown, otherwise the whole cited passage is fetched below.
  const quoted = Boolean(citation.quote);
  const passage = h("blockquote", {
    class: "passage",
    tabindex: "0",
    "aria-label": quoted ? "Quoted words" : "Cited passage",
    text: passageText(quoted ? citation.quote : citation.preview) || "(no text)",
  });
  const dl = h("dl", { class: "kv" });
  for (const [k, v] of metaRows(citation)) dl.append(h("dt", { text: k }), h("dd", { text: v }));

  let selected = "";
  const askButton = h(
    "button",
    { type: "button", class: "btn btn-primary ask-btn", hidden: true },
    icon("ask", 16),
    " Ask about this",
  );
  const hint = h("p", {
    class: "hint",
    text: "Select part of the passage to ask a question about just that text.",
  });
  const wholeButton = h(
    "button",
    { type: "button", class: "btn btn-link" },
    "Ask about the whole passage",
  );
  const askArea = h("div", { class: "ask-area" });

  // Keep the selection when the button is pressed (a mousedown would collapse it).
  askButton.addEventListener("mousedown", (ev) => ev.preventDefault());
  askButton.addEventListener("click", () => showAskForm(selected));
  wholeButton.addEventListener("click", () => showAskForm(passage.textContent || ""));

  const onSelection = () => {
    if (!passage.isConnected) return;
    selected = selectionIn(passage);
    askButton.hidden = !selected;
    hint.hidden = Boolean(selected);
  };
  document.addEventListener("selectionchange", onSelection);

  function showAskForm(context) {
    const text = context.trim();
    if (!text) return;
    const input = h("input", {
      type: "text",
      id: "ask-question",
      class: "input",
      value: "What does this say?",
      maxlength: "4000",
      required: true,
      minlength: "3",
    });
    const result = h("div", { class: "ask-result", "aria-live": "polite" });
    const submit = h("button", { type: "submit", class: "btn btn-primary" }, "Ask");
    const form = h(
      "form",
      { class: "ask-form" },
      h("p", { class: "ask-context-label", text: "Selected text" }),
      h("blockquote", {
        class: "ask-context",
        text: text.length > 600 ? `${text.slice(0, 600)}…` : text,
      }),
      h("label", { for: "ask-question", text: "Your question (answered from this text only)" }),
      h("div", { class: "ask-row" }, input, submit),
      result,
    );
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const question = input.value.trim();
      if (question.length < 3) {
        input.focus();
        return;
      }
      submit.disabled = true;
      result.replaceChildren(h("p", { class: "muted", text: "Asking…" }));
      try {
        const answer = await api.query({ question, context: text, use_context_only: true });
        result.replaceChildren(renderAnswer(answer));
        result.scrollIntoView({ block: "nearest", behavior: "smooth" });
      } catch (err) {
        result.replaceChildren(h("p", { class: "msg-error", role: "alert", text: errorText(err) }));
      } finally {
        submit.disabled = false;
      }
    });
    askArea.replaceChildren(form);
    input.focus();
    input.select();
  }

  const body = h(
    "div",
    { class: "source" },
    h("p", { class: "source-title", text: citation.title || citation.source || "Source" }),
    citationWhere(citation)
      ? h("p", { class: "source-where", text: citationWhere(citation) })
      : null,
    dl,
    passage,
    h("div", { class: "ask-tools" }, askButton, hint, wholeButton),
    askArea,
  );
  openPanel({
    title: `Source ${citation.index ?? ""}`.trim(),
    body,
    kind: "source",
    onClose: () => document.removeEventListener("selectionchange", onSelection),
  });
  // A citation carries a preview; replace it with the whole passage when the server has it.
  if (citation.chunk_id && !quoted) {
    api
      .passage(citation.chunk_id)
      .then((full) => {
        if (passage.isConnected && full && full.text) passage.textContent = passageText(full.text);
      })
      .catch(() => {});
  }
}

function renderAnswer(answer) {
  const box = h("div", { class: `ask-answer${answer.no_answer ? " no-answer" : ""}` });
  box.append(
    h(
      "div",
      { class: "msg-head" },
      h("span", { class: "agent-badge", text: answer.agent || "assistant" }),
      h("span", { class: "tag", text: "Selected text only" }),
      answer.no_answer
        ? h("span", { class: "tag tag-noanswer" }, icon("alert", 14), " Not in the text")
        : null,
    ),
  );
  const bubble = h("div", {
    class: `bubble bubble-assistant md${answer.no_answer ? " bubble-noanswer" : ""}`,
  });
  bubble.append(renderMarkdown(answer.answer || "", {}));
  box.append(bubble);
  return box;
}
