// The conversation list: newest first, grouped by day, the active one highlighted; rename in
// place, regenerate the title, delete (after confirmation).

import { api } from "./api.js";
import { clear, h } from "./dom.js";
import { icon } from "./icons.js";
import { confirmDialog, errorText, toast } from "./ui.js";

export const UNTITLED = "New chat";

function group(iso) {
  const d = new Date(iso);
  const today = new Date();
  today.setHours(0, 0, 0, 0);
  const day = 86400000;
  if (d >= today) return "Today";
  if (d >= today - day) return "Yesterday";
  if (d >= today - 7 * day) return "Previous 7 days";
  return "Older";
}

/**
 * handlers: open(id), deleted(id), renamed(conversation)
 */
export function createSidebar(root, handlers) {
  let conversations = [];
  let activeId = null;
  let editingId = null;

  function sorted() {
    return [...conversations].sort((a, b) =>
      String(b.updated_at).localeCompare(String(a.updated_at)),
    );
  }

  function render() {
    const focusedAction = document.activeElement?.closest?.(".conv-item")
      ? document.activeElement
      : null;
    const focusKey = focusedAction && {
      id: focusedAction.closest(".conv-item").dataset.id,
      role: focusedAction.dataset.role,
    };
    clear(root);
    const empty = document.getElementById("conv-empty");
    if (empty) empty.hidden = conversations.length > 0;
    let currentGroup = null;
    let list = null;
    for (const c of sorted()) {
      const g = group(c.updated_at);
      if (g !== currentGroup) {
        currentGroup = g;
        const id = `conv-group-${g.replace(/\W+/g, "-").toLowerCase()}`;
        list = h("ul", { class: "conv-list", "aria-labelledby": id });
        root.append(h("h2", { class: "conv-group", id, text: g }), list);
      }
      list.append(item(c));
    }
    if (focusKey) {
      const again = root.querySelector(
        `.conv-item[data-id="${CSS.escape(focusKey.id)}"] [data-role="${focusKey.role}"]`,
      );
      if (again) again.focus();
    }
  }

  function item(c) {
    const title = c.title || UNTITLED;
    const active = c.id === activeId;
    const li = h("li", { class: `conv-item${active ? " active" : ""}`, dataset: { id: c.id } });
    if (editingId === c.id) {
      li.append(renameInput(c));
      return li;
    }
    li.append(
      h(
        "a",
        {
          class: "conv-open",
          href: `#/c/${encodeURIComponent(c.id)}`,
          "aria-current": active ? "page" : null,
          title,
          dataset: { role: "open" },
        },
        h("span", { class: "conv-title-text", text: title }),
      ),
      h(
        "div",
        { class: "conv-actions" },
        iconButton("pencil", `Rename “${title}”`, "rename", () => startRename(c.id)),
        iconButton("refresh", `Regenerate the title of “${title}”`, "regen", (ev) =>
          regenerate(c, ev.currentTarget),
        ),
        iconButton("trash", `Delete “${title}”`, "delete", () => remove(c)),
      ),
    );
    return li;
  }

  function iconButton(name, label, role, onclick) {
    return h(
      "button",
      {
        type: "button",
        class: "icon-btn",
        "aria-label": label,
        title: label,
        dataset: { role },
        onclick,
      },
      icon(name, 16),
    );
  }

  function renameInput(c) {
    const input = h("input", {
      type: "text",
      class: "input conv-rename",
      value: c.title || "",
      maxlength: "200",
      "aria-label": "New title (Enter to save, Escape to cancel)",
    });
    let settled = false;
    const finish = async (save) => {
      if (settled) return;
      settled = true;
      const title = input.value.trim();
      editingId = null;
      if (save && title && title !== c.title) {
        try {
          const updated = await api.rename(c.id, title);
          replace(updated);
          handlers.renamed(updated);
        } catch (err) {
          toast(errorText(err));
        }
      }
      render();
      root.querySelector(`.conv-item[data-id="${CSS.escape(c.id)}"] [data-role="rename"]`)?.focus();
    };
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") {
        ev.preventDefault();
        finish(true);
      } else if (ev.key === "Escape") {
        ev.preventDefault();
        ev.stopPropagation();
        finish(false);
      }
    });
    input.addEventListener("blur", () => finish(true));
    queueMicrotask(() => {
      input.focus();
      input.select();
    });
    return input;
  }

  function startRename(id) {
    editingId = id;
    render();
  }

  async function regenerate(c, button) {
    button.disabled = true;
    button.classList.add("spinning");
    try {
      const updated = await api.regenerateTitle(c.id);
      replace(updated);
      handlers.renamed(updated);
    } catch (err) {
      toast(errorText(err));
    } finally {
      button.disabled = false;
      button.classList.remove("spinning");
    }
    render();
  }

  async function remove(c) {
    const yes = await confirmDialog({
      title: "Delete conversation?",
      message: `“${c.title || UNTITLED}” and all its messages will be deleted. This can't be undone.`,
    });
    if (!yes) return;
    try {
      await api.deleteConversation(c.id);
    } catch (err) {
      if (err.status !== 404) {
        toast(errorText(err));
        return;
      }
    }
    conversations = conversations.filter((x) => x.id !== c.id);
    render();
    handlers.deleted(c.id);
  }

  function replace(updated) {
    const i = conversations.findIndex((x) => x.id === updated.id);
    if (i === -1) conversations.unshift(updated);
    else conversations[i] = updated;
  }

  return {
    async refresh() {
      conversations = await api.conversations();
      if (editingId === null) render(); // don't wipe a title being typed

      return conversations;
    },
    setActive(id) {
      activeId = id;
      render();
    },
    upsert(c) {
      replace(c);
      render();
    },
    get(id) {
      return conversations.find((c) => c.id === id) || null;
    },
    get all() {
      return conversations;
    },
  };
}
