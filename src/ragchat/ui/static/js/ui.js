// Shared bits of page chrome: the error toast, the confirmation dialog and the side panel.

import { clear, h } from "./dom.js";
import { icon } from "./icons.js";

let toastTimer = null;

/** A message at the bottom of the page (role="alert": read out at once). */
export function toast(message, { kind = "error", ms = 6000 } = {}) {
  const box = document.getElementById("toast");
  clear(box);
  box.className = `toast toast-${kind}`;
  box.append(h("span", { text: message }));
  box.append(
    h(
      "button",
      { type: "button", class: "icon-btn", "aria-label": "Dismiss", onclick: () => hide() },
      icon("close", 16),
    ),
  );
  box.hidden = false;
  clearTimeout(toastTimer);
  const hide = () => {
    box.hidden = true;
    clear(box);
  };
  toastTimer = setTimeout(hide, ms);
}

export function errorText(err) {
  if (!err) return "Something went wrong.";
  return err.message || String(err);
}

/** A modal <dialog> asking to confirm; resolves true when confirmed. */
export function confirmDialog({ title, message, confirm = "Delete", danger = true }) {
  const dialog = document.getElementById("confirm-dialog");
  dialog.querySelector("#confirm-title").textContent = title;
  dialog.querySelector("#confirm-message").textContent = message;
  const ok = dialog.querySelector("#confirm-ok");
  ok.textContent = confirm;
  ok.className = danger ? "btn btn-danger" : "btn btn-primary";
  const opener = document.activeElement;
  return new Promise((resolve) => {
    const done = () => {
      dialog.removeEventListener("close", done);
      resolve(dialog.returnValue === "confirm");
      if (opener && opener.isConnected) opener.focus();
    };
    dialog.addEventListener("close", done);
    dialog.returnValue = "";
    dialog.showModal();
    dialog.querySelector("#confirm-cancel").focus();
  });
}

// -- side panel (a source passage, or the knowledge bases) ----------------------------------
let panelOpener = null;
let panelOnClose = null;

export function openPanel({ title, body, kind, onClose = null }) {
  const panel = document.getElementById("panel");
  if (panelOnClose) panelOnClose();
  panelOnClose = onClose;
  const active = document.activeElement;
  if (!panel.contains(active)) panelOpener = active;
  panel.dataset.kind = kind || "";
  document.getElementById("panel-title").textContent = title;
  clear(document.getElementById("panel-body")).append(body);
  panel.hidden = false;
  document.body.classList.add("panel-open");
  document.getElementById("panel-title").focus();
}

export function closePanel() {
  const panel = document.getElementById("panel");
  if (panel.hidden) return;
  panel.hidden = true;
  document.body.classList.remove("panel-open");
  clear(document.getElementById("panel-body"));
  if (panelOnClose) panelOnClose();
  panelOnClose = null;
  if (panelOpener && panelOpener.isConnected) panelOpener.focus();
  panelOpener = null;
}

export function panelKind() {
  const panel = document.getElementById("panel");
  return panel.hidden ? null : panel.dataset.kind;
}
