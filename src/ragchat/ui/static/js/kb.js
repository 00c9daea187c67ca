// The knowledge-base panel: pick or create a knowledge base, upload files into one of yours
// (an ingestion job whose progress is polled from GET /jobs/{id}; a file that fails says why),
// list documents with chunk counts, delete your own documents or knowledge bases, and start a
// chat that answers from one. The built-in samples are read-only here: with no knowledge base
// of your own, the panel opens on creating one.

import { api } from "./api.js";
import { clear, h } from "./dom.js";
import { icon } from "./icons.js";
import { confirmDialog, errorText, openPanel, toast } from "./ui.js";

// The types GET /kb lists (file_types); this list is used until it has answered.
const ACCEPT = [
  ".pdf", ".docx", ".doc", ".pptx", ".ppt", ".xlsx", ".xlsm", ".xls", ".csv", ".tsv", ".html",
  ".htm", ".xhtml",
  ".epub", ".md", ".markdown", ".vtt", ".txt", ".jsonl", ".png", ".jpg", ".jpeg", ".tif", ".tiff",
].join(",");
const POLL_MS = 400;

function counted(documents, chunks) {
  const n = (value, word) => `${value ?? "?"} ${word}${value === 1 ? "" : "s"}`;
  return `${n(documents, "document")} · ${n(chunks, "chunk")}`;
}
const STORAGE_KEY = "ragchat.kb";

/** preferred: a knowledge base to show when none was picked before (e.g. the one named like
 * the conversation's agent). */
export function openKnowledgeBases({
  onChanged = () => {},
  onChat = () => {},
  onCreated = () => {},
  preferred = null,
  create = false,
} = {}) {
  let current = preferred || localStorage.getItem(STORAGE_KEY) || "";
  let alive = true;
  let infos = [];
  let creating = create;

  const select = h("select", { id: "kb-select", class: "input" });
  const countLine = h("p", { class: "muted kb-counts" });
  const about = h("p", { class: "muted small kb-about" });
  const chatBtn = h(
    "button",
    { type: "button", id: "kb-chat", class: "btn btn-primary", onclick: () => onChat(current) },
    "Chat with this knowledge base",
  );
  const deleteKbBtn = h(
    "button",
    { type: "button", id: "kb-delete", class: "btn btn-danger", hidden: true, onclick: removeKb },
    "Delete knowledge base",
  );
  const newName = h("input", {
    id: "kb-new-name",
    class: "input",
    required: true,
    maxlength: "64",
    pattern: "[A-Za-z0-9][A-Za-z0-9._\\-]{0,63}",
    placeholder: "e.g. hobbies",
    "aria-describedby": "kb-new-help",
  });
  const newDesc = h("input", {
    id: "kb-new-description",
    class: "input",
    maxlength: "2000",
    placeholder: "What is in it (optional)",
  });
  const createTitle = h("h3", { class: "panel-h", id: "kb-new-title", text: "New knowledge base" });
  const createForm = h(
    "form",
    { id: "kb-new", class: "kb-new", hidden: true, "aria-labelledby": "kb-new-title" },
    createTitle,
    h("label", { for: "kb-new-name", class: "field-label", text: "Name" }),
    newName,
    h("p", {
      id: "kb-new-help",
      class: "muted small",
      text: "Letters, digits, '.', '_' or '-'. Only you see it until you share it.",
    }),
    h("label", { for: "kb-new-description", class: "field-label", text: "Description" }),
    newDesc,
    h(
      "div",
      { class: "dialog-actions" },
      h("button", { type: "submit", id: "kb-new-create", class: "btn btn-primary" }, "Create"),
      h(
        "button",
        {
          type: "button",
          class: "btn",
          onclick: () => {
            creating = false;
            showCreate(false);
          },
        },
        "Cancel",
      ),
    ),
  );
  const newBtn = h(
    "button",
    {
      type: "button",
      id: "kb-new-open",
      class: "btn btn-ghost",
      onclick: () => showCreate(true, !infos.some((kb) => kb.owned)),
    },
    icon("plus", 16),
    "New knowledge base",
  );
  createForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const name = newName.value.trim();
    try {
      await api.createKnowledgeBase(name, newDesc.value.trim());
    } catch (err) {
      toast(errorText(err));
      return;
    }
    newName.value = "";
    newDesc.value = "";
    createForm.hidden = true;
    creating = false;
    current = name;
    localStorage.setItem(STORAGE_KEY, current);
    toast(`Created ${name}. Add documents to it below.`, { kind: "info", ms: 3000 });
    await loadKbs();
    onCreated(name);
    onChanged();
    fileLabel.focus();
  });
  const docsList = h("ul", { class: "docs", "aria-label": "Documents" });
  const docsHeading = h("h3", { class: "panel-h", id: "kb-docs-title", text: "Documents" });
  const jobs = h("ul", { class: "jobs", "aria-label": "Uploads" });
  const fileInput = h("input", {
    type: "file",
    id: "kb-files",
    class: "visually-hidden",
    multiple: true,
    accept: ACCEPT,
  });
  const fileLabel = h("label", { for: "kb-files", class: "btn btn-primary", tabindex: "0" }, "Choose files");
  fileLabel.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      fileInput.click();
    }
  });
  const addTitle = h("h3", { class: "panel-h", text: "Add documents" });
  const readOnly = h("div", { class: "kb-readonly", hidden: true });
  const drop = h(
    "div",
    { class: "dropzone" },
    icon("upload", 22),
    fileLabel,
    h("span", { class: "muted", text: "or drop them here" }),
    h("p", {
      class: "muted small",
      text:
        "PDF (scans too), Word, PowerPoint, Excel (older .doc/.ppt/.xls too), CSV, HTML, EPUB, " +
        "Markdown, " +
        "WebVTT transcripts, text, JSONL, or images of pages (PNG, JPEG, TIFF)",
    }),
    fileInput,
  );

  fileInput.addEventListener("change", () => {
    const files = [...fileInput.files];
    fileInput.value = "";
    if (files.length) upload(files);
  });
  drop.addEventListener("dragover", (ev) => {
    ev.preventDefault();
    drop.classList.add("dragging");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("dragging"));
  drop.addEventListener("drop", (ev) => {
    ev.preventDefault();
    drop.classList.remove("dragging");
    const files = [...(ev.dataTransfer?.files || [])];
    if (files.length) upload(files);
  });
  select.addEventListener("change", () => {
    current = select.value;
    localStorage.setItem(STORAGE_KEY, current);
    showInfo();
    loadDocuments();
  });

  async function loadKbs() {
    let kbs = [];
    try {
      kbs = await api.knowledgeBases();
    } catch (err) {
      toast(errorText(err));
    }
    infos = kbs;
    clear(select);
    for (const kb of kbs) {
      const label = kb.owned ? `${kb.name} (yours${kb.shared ? ", shared" : ""})` : kb.name;
      select.append(h("option", { value: kb.name, text: label }));
    }
    if (!kbs.length) {
      select.append(h("option", { value: "", text: "No knowledge bases" }));
      return;
    }
    const own = kbs.filter((kb) => kb.owned);
    if (!kbs.some((kb) => kb.name === current)) current = (own[0] || kbs[0]).name;
    select.value = current;
    if (!own.length) creating = true; // nothing of your own yet: that is the first step
    showCreate(creating, own.length === 0);
    showInfo();
    await loadDocuments();
  }

  function showCreate(open, first = false) {
    createForm.hidden = !open;
    createTitle.textContent = first ? "Create your first knowledge base" : "New knowledge base";
    if (open) newName.focus();
  }

  function showInfo() {
    const info = infos.find((kb) => kb.name === current);
    if (info?.file_types?.length) fileInput.accept = info.file_types.join(",");
    countLine.textContent = info ? counted(info.documents, info.chunks) : "";
    const whose = !info
      ? ""
      : info.owned
        ? info.shared
          ? "Yours, shared with everyone."
          : "Yours: only you see it."
        : "Shared.";
    about.textContent = info ? [info.description, whose].filter(Boolean).join(" · ") : "";
    deleteKbBtn.hidden = !(info && info.owned);
    // Uploads go to your own knowledge bases only: the samples are read-only.
    const writable = Boolean(info && info.owned);
    drop.hidden = !writable;
    addTitle.hidden = !writable;
    readOnly.hidden = writable || !info;
    clear(readOnly);
    if (info && !writable) {
      readOnly.append(
        h("p", {
          text: info.configured
            ? `${info.name} is a built-in sample: read-only. Your own documents go in a knowledge base of yours.`
            : `${info.name} is shared with you: you can ask it, not add to it.`,
        }),
        h(
          "button",
          {
            type: "button",
            id: "kb-readonly-create",
            class: "btn btn-primary",
            onclick: () => showCreate(true, !infos.some((kb) => kb.owned)),
          },
          icon("plus", 16),
          "Create a knowledge base",
        ),
      );
    }
  }

  async function removeKb() {
    const kb = current;
    const yes = await confirmDialog({
      title: "Delete knowledge base?",
      message: `“${kb}” and every document in it will be deleted.`,
    });
    if (!yes) return;
    try {
      await api.deleteKnowledgeBase(kb);
      toast(`Deleted ${kb}.`, { kind: "info", ms: 3000 });
    } catch (err) {
      toast(errorText(err));
    }
    current = "";
    await loadKbs();
    onChanged();
  }

  let loads = 0; // only the latest listing is shown (the selection may change mid-request)

  async function loadDocuments() {
    if (!current) return;
    const kb = current;
    const token = ++loads;
    docsList.setAttribute("aria-busy", "true");
    let docs;
    try {
      docs = await api.documents(kb);
    } catch (err) {
      if (token === loads) {
        clear(docsList).append(h("li", { class: "msg-error", text: errorText(err) }));
      }
      return;
    } finally {
      if (token === loads) docsList.removeAttribute("aria-busy");
    }
    if (!alive || token !== loads) return;
    docsHeading.textContent = `Documents in ${kb} (${docs.length})`;
    const chunks = docs.reduce((n, d) => n + (d.chunks || 0), 0);
    countLine.textContent = counted(docs.length, chunks);
    clear(docsList);
    if (!docs.length) docsList.append(h("li", { class: "muted", text: "No documents yet." }));
    docs.sort((a, b) => String(b.added_at).localeCompare(String(a.added_at)));
    for (const d of docs) docsList.append(docItem(d, kb));
  }

  function docItem(d, kb) {
    const meta = `${d.file} · ${d.kind} · ${d.chunks} chunk${d.chunks === 1 ? "" : "s"}`;
    const li = h(
      "li",
      { class: "doc", dataset: { docId: d.doc_id } },
      icon("file", 18),
      h(
        "div",
        { class: "doc-text" },
        h("span", { class: "doc-title", text: d.title || d.file }),
        h("span", { class: "doc-meta", text: meta }),
      ),
    );
    if (d.shared) {
      li.append(
        h("span", {
          class: "tag",
          title: "Shared sample document: can't be deleted here",
          text: "shared",
        }),
      );
    } else {
      li.append(
        h(
          "button",
          {
            type: "button",
            class: "icon-btn danger",
            "aria-label": `Delete document ${d.title || d.file}`,
            onclick: () => removeDoc(d, kb),
          },
          icon("trash", 16),
        ),
      );
    }
    return li;
  }

  async function removeDoc(d, kb) {
    const yes = await confirmDialog({
      title: "Delete document?",
      message: `“${d.title || d.file}” will be removed from ${kb} and no longer cited.`,
    });
    if (!yes) return;
    try {
      await api.deleteDocument(kb, d.doc_id);
      toast(`Deleted “${d.title || d.file}”.`, { kind: "info", ms: 3000 });
    } catch (err) {
      toast(errorText(err));
    }
    await loadDocuments();
    onChanged();
  }

  async function upload(files) {
    const kb = current;
    const names = files.map((f) => f.name).join(", ");
    const bar = h("progress", { max: "1", value: "0", "aria-label": `Upload of ${names}` });
    const status = h("span", { class: "job-status", text: "Uploading…" });
    const row = h(
      "li",
      { class: "job", dataset: { state: "uploading" } },
      h("span", { class: "job-files", text: names }),
      bar,
      status,
    );
    jobs.prepend(row);
    const setState = (state, text) => {
      row.dataset.state = state;
      status.textContent = text;
    };
    let job;
    try {
      job = await api.upload(kb, files);
    } catch (err) {
      setState("failed", errorText(err));
      return;
    }
    setState(job.status, "Queued…");
    for (;;) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      let info;
      try {
        info = await api.job(job.job_id);
      } catch (err) {
        setState("failed", errorText(err));
        return;
      }
      bar.value = info.progress || 0;
      const pct = `${Math.round((info.progress || 0) * 100)}%`;
      if (info.status === "done" || info.status === "failed") {
        const errors = info.result?.errors || [];
        const failed = info.status === "failed";
        const added = info.result?.documents ?? 0;
        const summary = failed
          ? `Not added: ${errors.length === 1 ? "the file failed" : "every file failed"}.`
          : `Added ${added} document${added === 1 ? "" : "s"} (${info.result?.chunks ?? 0} chunks)` +
            (errors.length ? `; ${errors.length} file${errors.length === 1 ? "" : "s"} failed.` : ".");
        setState(failed ? "failed" : errors.length ? "partial" : "done", summary);
        if (errors.length) {
          const list = h("ul", { class: "job-errors", "aria-label": "Files that failed" });
          for (const e of errors) {
            const text = typeof e === "string" ? e : `${e.file}: ${e.reason}`;
            list.append(h("li", { class: "msg-error small", text }));
          }
          row.append(list);
        }
        if (alive && kb === current) await loadKbs();
        else
          toast(`${names}: ${info.message}`, { kind: info.status === "done" ? "info" : "error" });
        onChanged();
        return;
      }
      setState(info.status, `${info.message || info.status} · ${pct}`);
    }
  }

  const body = h(
    "div",
    { class: "kb" },
    h("label", { for: "kb-select", class: "field-label", text: "Knowledge base" }),
    select,
    countLine,
    about,
    h("div", { class: "kb-actions" }, chatBtn, newBtn, deleteKbBtn),
    createForm,
    readOnly,
    addTitle,
    drop,
    jobs,
    docsHeading,
    docsList,
  );
  openPanel({
    title: "Knowledge bases",
    body,
    kind: "kb",
    onClose: () => {
      alive = false;
    },
  });
  loadKbs();
}
