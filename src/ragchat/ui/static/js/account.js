// Signing in and the account: the sign-in (or sign-up) form, and for a signed-in person their
// API keys (create — the key shown once —, revoke), a new password, and signing out. The
// session is an HttpOnly cookie the server sets; this page never sees it.

import { api } from "./api.js";
import { clear, formatTime, h } from "./dom.js";
import { icon } from "./icons.js";
import { confirmDialog, errorText, openPanel, toast } from "./ui.js";

/**
 * The sign-in form. status: GET /auth; onSignedIn(result) after a sign-in or sign-up.
 * Someone who used the page before signing in is offered to keep what they did (claim).
 */
export function signInForm(status, { onSignedIn, heading = "Sign in" }) {
  let signingUp = false;
  const title = h("h2", { class: "auth-title", id: "auth-title", text: heading });
  const username = h("input", {
    id: "auth-username",
    class: "input",
    name: "username",
    autocomplete: "username",
    required: true,
    maxlength: "64",
    autocapitalize: "none",
    spellcheck: "false",
  });
  const password = h("input", {
    id: "auth-password",
    class: "input",
    name: "password",
    type: "password",
    autocomplete: "current-password",
    required: true,
    maxlength: "256",
  });
  const hint = h("p", { id: "auth-hint", class: "muted small", hidden: true });
  const anonymous = status.user && status.user.kind !== "account";
  const claim = h("input", { id: "auth-claim", type: "checkbox", checked: true });
  const claimRow = anonymous
    ? h(
        "label",
        { class: "check", for: "auth-claim" },
        claim,
        " Keep what I did in this browser (conversations, knowledge bases)",
      )
    : null;
  const error = h("p", { id: "auth-error", class: "msg-error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", id: "auth-submit", class: "btn btn-primary" }, "Sign in");
  const toggle = status.sign_up
    ? h(
        "button",
        { type: "button", id: "auth-toggle", class: "btn btn-ghost", onclick: () => mode(!signingUp) },
        "Create an account",
      )
    : h("p", {
        class: "muted small",
        text: "New here? Ask whoever runs this server for an account.",
      });

  function mode(up) {
    signingUp = up;
    title.textContent = up ? "Create an account" : heading;
    submit.textContent = up ? "Create account" : "Sign in";
    password.autocomplete = up ? "new-password" : "current-password";
    password.minLength = up ? 8 : 1;
    hint.hidden = !up;
    hint.textContent = "A password of at least 8 characters; a sentence is easiest to remember.";
    if (status.sign_up) toggle.textContent = up ? "I have an account" : "Create an account";
    error.hidden = true;
  }

  const form = h(
    "form",
    { id: "auth-form", class: "auth-form", "aria-labelledby": "auth-title" },
    title,
    h("label", { for: "auth-username", class: "field-label", text: "Name" }),
    username,
    h("label", { for: "auth-password", class: "field-label", text: "Password" }),
    password,
    hint,
    claimRow,
    error,
    h("div", { class: "dialog-actions" }, submit, toggle),
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    error.hidden = true;
    submit.disabled = true;
    const keep = anonymous ? claim.checked : false;
    try {
      const result = signingUp
        ? await api.signUp(username.value.trim(), password.value, keep)
        : await api.signIn(username.value.trim(), password.value, keep);
      password.value = "";
      onSignedIn(result);
    } catch (err) {
      error.textContent = errorText(err);
      error.hidden = false;
      password.select();
    } finally {
      submit.disabled = false;
    }
  });
  return { el: form, focus: () => username.focus(), signUp: () => mode(true) };
}

export function openSignIn(status, { onSignedIn, signUp = false }) {
  const form = signInForm(status, { onSignedIn });
  openPanel({ title: "Your account", body: form.el, kind: "account" });
  if (signUp && status.sign_up) form.signUp();
  form.focus();
}

/** The signed-in person's panel. me: GET /users/me; onSignedOut() after signing out. */
export function openAccount(me, { onSignedOut }) {
  const keys = h("ul", { id: "api-keys", class: "keys", "aria-label": "API keys" });
  const secretBox = h("div", { id: "key-secret", class: "key-secret", hidden: true });
  const keyName = h("input", {
    id: "key-name",
    class: "input",
    maxlength: "100",
    placeholder: "e.g. laptop script",
    required: true,
  });
  const keyForm = h(
    "form",
    { id: "key-new", class: "inline-form" },
    h("label", { for: "key-name", class: "visually-hidden", text: "Name of the new key" }),
    keyName,
    h("button", { type: "submit", id: "key-create", class: "btn btn-primary" }, "Create key"),
  );
  keyForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    let made;
    try {
      made = await api.createApiKey(keyName.value.trim() || "key");
    } catch (err) {
      toast(errorText(err));
      return;
    }
    keyName.value = "";
    showSecret(made.secret);
    await loadKeys();
  });

  function showSecret(secret) {
    const code = h("code", { id: "key-secret-value", text: secret });
    const copy = h(
      "button",
      {
        type: "button",
        class: "btn",
        onclick: async () => {
          try {
            await navigator.clipboard.writeText(secret);
            toast("Copied.", { kind: "info", ms: 2000 });
          } catch {
            getSelection().selectAllChildren(code);
          }
        },
      },
      "Copy",
    );
    clear(secretBox).append(
      h("p", { class: "small", text: "Your new key, shown this once: copy it now." }),
      h("div", { class: "secret-row" }, code, copy),
      h("p", {
        class: "muted small",
        text:
          `curl: -H "Authorization: Bearer ${secret.slice(0, 6)}…" · ` +
          `OpenAI clients: base URL ${location.origin}/v1 with this key as the API key.`,
      }),
    );
    secretBox.hidden = false;
  }

  async function loadKeys() {
    let list = [];
    try {
      list = await api.apiKeys();
    } catch (err) {
      clear(keys).append(h("li", { class: "msg-error", text: errorText(err) }));
      return;
    }
    clear(keys);
    const live = list.filter((k) => !k.revoked_at);
    if (!live.length) keys.append(h("li", { class: "muted", text: "No keys yet." }));
    for (const key of live) {
      const used = key.last_used_at ? `used ${formatTime(key.last_used_at)}` : "never used";
      keys.append(
        h(
          "li",
          { class: "key", dataset: { keyId: key.id } },
          h(
            "div",
            { class: "doc-text" },
            h("span", { class: "doc-title", text: key.name }),
            h("span", {
              class: "doc-meta",
              text: `${key.prefix}… · made ${formatTime(key.created_at)} · ${used}`,
            }),
          ),
          h(
            "button",
            {
              type: "button",
              class: "btn btn-danger key-revoke",
              "aria-label": `Revoke key ${key.name}`,
              onclick: () => revoke(key),
            },
            "Revoke",
          ),
        ),
      );
    }
  }

  async function revoke(key) {
    const yes = await confirmDialog({
      title: "Revoke this key?",
      message: `Programs using “${key.name}” (${key.prefix}…) will be refused from now on.`,
      confirm: "Revoke",
    });
    if (!yes) return;
    try {
      await api.revokeApiKey(key.id);
    } catch (err) {
      toast(errorText(err));
    }
    await loadKeys();
  }

  const current = h("input", {
    id: "password-current",
    class: "input",
    type: "password",
    autocomplete: "current-password",
    required: true,
  });
  const next = h("input", {
    id: "password-new",
    class: "input",
    type: "password",
    autocomplete: "new-password",
    minlength: "8",
    required: true,
  });
  const passwordForm = h(
    "form",
    { id: "password-form" },
    h("label", { for: "password-current", class: "field-label", text: "Current password" }),
    current,
    h("label", { for: "password-new", class: "field-label", text: "New password" }),
    next,
    h("p", { class: "muted small", text: "Your other browsers are signed out when you change it." }),
    h("div", { class: "dialog-actions" }, h("button", { type: "submit", class: "btn" }, "Change password")),
  );
  passwordForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      await api.changePassword(current.value, next.value);
      current.value = "";
      next.value = "";
      toast("Password changed.", { kind: "info", ms: 3000 });
    } catch (err) {
      toast(errorText(err));
    }
  });

  const signOut = h(
    "button",
    {
      type: "button",
      id: "sign-out",
      class: "btn",
      onclick: async () => {
        try {
          await api.signOut();
        } catch (err) {
          toast(errorText(err));
          return;
        }
        onSignedOut();
      },
    },
    "Sign out",
  );

  const body = h(
    "div",
    { class: "account" },
    h(
      "p",
      { class: "account-who" },
      icon("user", 18),
      h("span", { text: "Signed in as " }),
      h("strong", { id: "account-name", text: me.display_name || me.username }),
      me.display_name && me.display_name !== me.username
        ? h("span", { class: "muted", text: ` (${me.username})` })
        : null,
    ),
    h("div", { class: "kb-actions" }, signOut),
    h("h3", { class: "panel-h", text: "API keys" }),
    h("p", {
      class: "muted small",
      text:
        "A key lets a script or an OpenAI-compatible client act as you: the same knowledge " +
        "bases and conversations as here.",
    }),
    keys,
    keyForm,
    secretBox,
    h("details", { class: "password" }, h("summary", {}, "Change password"), passwordForm),
  );
  openPanel({ title: "Your account", body, kind: "account" });
  loadKeys();
}
