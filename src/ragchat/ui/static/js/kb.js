// The knowledge-base panel: pick a knowledge base, upload files (an ingestion job whose
// progress is polled from GET /jobs/{id}), list documents with chunk counts, delete your own.

import { api } from "./api.js";
import { clear, h } from "./dom.js";
import { icon } from "./icons.js";
import { confirmDialog, errorText, openPanel, toast } from "./ui.js";

// The types GET /kb lists (file_types); this list is used until it has answered.
const ACCEPT = [
  ".pdf", ".docx", ".pptx", ".xlsx", ".xlsm", ".csv", ".tsv", ".html", ".htm", ".xhtml",
  ".epub", ".md", ".markdown", ".vtt", ".txt", ".jsonl", ".png", ".jpg", ".jpeg", ".tif", ".tiff",
].join(",");
const POLL_MS = 400;
const STORAGE_KEY = "ragchat.kb";

/** preferred: a knowledge base to show when none was picked before (e.g. the one named like
 * the conversation's agent). */
export function openKnowledgeBases({ onChanged = () => {}, preferred = null } = {}) {
  let current = localStorage.getItem(STORAGE_KEY) || preferred || "";
  let alive = true;

  const select = h("select", { id: "kb-select", class: "input" });
  const countLine = h("p", { class: "muted kb-counts" });
  const docsList = h("ul", { class: "docs", "aria-label": "Documents" });
  const docsHeading = h("h3", { class: "panel-h", text: "Documents" });
  const jobs = h("ul", { class: "jobs", "aria-label": "Uploads" });
  const fileInput = h("input", {
    type: "file",
    id: "kb-files",
    class: "visually-hidden",
    multiple: true,
    accept: ACCEPT,
  });
  const drop = h(
    "div",
    { class: "dropzone" },
    icon("upload", 22),
    h("label", { for: "kb-files", class: "btn btn-primary" }, "Choose files"),
    h("span", { class: "muted", text: "or drop them here" }),
    h("p", {
      class: "muted small",
      text:
        "PDF (scans too), Word, PowerPoint, Excel, CSV, HTML, EPUB, Markdown, " +
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
    loadDocuments();
  });

  async function loadKbs() {
    let kbs = [];
    try {
      kbs = await api.knowledgeBases();
    } catch (err) {
      toast(errorText(err));
    }
    clear(select);
    for (const kb of kbs) select.append(h("option", { value: kb.name, text: kb.name }));
    if (!kbs.length) {
      select.append(h("option", { value: "", text: "No knowledge bases" }));
      return;
    }
    if (!kbs.some((kb) => kb.name === current)) current = kbs[0].name;
    select.value = current;
    const info = kbs.find((kb) => kb.name === current);
    if (info?.file_types?.length) fileInput.accept = info.file_types.join(",");
    countLine.textContent = info
      ? `${info.documents ?? "?"} documents · ${info.chunks ?? "?"} chunks`
      : "";
    await loadDocuments();
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
    countLine.textContent = `${docs.length} documents · ${chunks} chunks`;
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
        const errors = (info.result?.errors || []).map((e) =>
          typeof e === "string" ? e : JSON.stringify(e),
        );
        setState(
          info.status,
          info.status === "done" ? `Done: ${info.message}` : `Failed: ${info.message}`,
        );
        if (errors.length)
          row.append(h("p", { class: "msg-error small", text: errors.join("; ") }));
        if (alive && kb === current) await loadDocuments();
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
    h("h3", { class: "panel-h", text: "Add documents" }),
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
