// The ragchat HTTP API, same origin. Identity is the server's signed HttpOnly cookie, sent
// with every request (credentials: "same-origin"). Errors come back as
// {"error": {"type", "message", "request_id"}} and are thrown as ApiError.

export class ApiError extends Error {
  constructor(status, type, message, { retryAfter = null, requestId = null } = {}) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.type = type;
    this.retryAfter = retryAfter;
    this.requestId = requestId;
  }
}

const enc = encodeURIComponent;

async function errorFrom(response) {
  const requestId = response.headers.get("X-Request-ID");
  const retryAfter = response.headers.get("Retry-After");
  let type = "http_error";
  let message = `The server answered ${response.status} ${response.statusText}`.trim();
  try {
    const data = await response.json();
    if (data && data.error) {
      type = String(data.error.type || type);
      message = String(data.error.message || message);
    } else if (data && data.detail) {
      message = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail);
    }
  } catch {
    // not JSON: keep the status line
  }
  if (response.status === 429) {
    const wait = retryAfter ? `${retryAfter} s` : "a moment";
    message = `Too many requests: try again in ${wait}.`;
  } else if (response.status === 503 && retryAfter) {
    message = `${message} Try again in ${retryAfter} s.`;
  }
  return new ApiError(response.status, type, message, { retryAfter, requestId });
}

async function send(method, path, { json, body, signal, accept = "application/json" } = {}) {
  const init = { method, credentials: "same-origin", headers: { Accept: accept }, signal };
  if (json !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(json);
  } else if (body !== undefined) {
    init.body = body; // FormData: the browser sets the multipart boundary
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    if (err && err.name === "AbortError") throw err;
    throw new ApiError(0, "network", "Can't reach the ragchat server. Is it still running?");
  }
  if (!response.ok) throw await errorFrom(response);
  return response;
}

async function request(method, path, options) {
  const response = await send(method, path, options);
  if (response.status === 204) return null;
  return response.json();
}

export const api = {
  me: () => request("GET", "/users/me"),
  updateMe: (changes) => request("PATCH", "/users/me", { json: changes }),
  auth: () => request("GET", "/auth"),
  signIn: (username, password, claim = true) =>
    request("POST", "/auth/sign-in", { json: { username, password, claim } }),
  signUp: (username, password, claim = true) =>
    request("POST", "/auth/sign-up", { json: { username, password, claim } }),
  signOut: () => request("POST", "/auth/sign-out"),
  changePassword: (current_password, new_password) =>
    request("POST", "/auth/password", { json: { current_password, new_password } }),
  apiKeys: () => request("GET", "/users/me/api-keys"),
  createApiKey: (name) => request("POST", "/users/me/api-keys", { json: { name } }),
  revokeApiKey: (id) => request("DELETE", `/users/me/api-keys/${enc(id)}`),
  agents: () => request("GET", "/agents"),
  health: () => request("GET", "/health"),
  knowledgeBases: () => request("GET", "/kb"),
  createKnowledgeBase: (name, description) =>
    request("POST", "/kb", { json: { name, description } }),
  deleteKnowledgeBase: (name) => request("DELETE", `/kb/${enc(name)}`),

  conversations: () => request("GET", "/conversations?limit=200"),
  createConversation: (kb = []) => request("POST", "/conversations", { json: { kb } }),
  conversation: (id) => request("GET", `/conversations/${enc(id)}`),
  rename: (id, title) => request("PATCH", `/conversations/${enc(id)}`, { json: { title } }),
  regenerateTitle: (id) => request("POST", `/conversations/${enc(id)}/title`),
  deleteConversation: (id) => request("DELETE", `/conversations/${enc(id)}`),
  messages: (id) => request("GET", `/conversations/${enc(id)}/messages?limit=500`),

  query: (body) => request("POST", "/query", { json: body }),
  passage: (chunkId) => request("GET", `/passages/${enc(chunkId)}`),

  documents: (kb) => request("GET", `/kb/${enc(kb)}/documents`),
  deleteDocument: (kb, docId) => request("DELETE", `/kb/${enc(kb)}/documents/${enc(docId)}`),
  upload: (kb, files) => {
    const form = new FormData();
    for (const file of files) form.append("files", file, file.name);
    return request("POST", `/kb/${enc(kb)}/documents`, { body: form });
  },
  job: (id) => request("GET", `/jobs/${enc(id)}`),
};

/**
 * One chat turn, streamed: yields {event, data} for each Server-Sent Event of
 * POST /conversations/{id}/messages?stream=true (metadata → token… → citations → final, or
 * error). Abort `signal` to stop: the server stores the partial reply as interrupted.
 * `kb`: the knowledge bases the conversation answers from ([] for the agents' own).
 */
export async function* streamTurn(conversationId, message, agent, signal, kb = []) {
  const json = { message, kb };
  if (agent) json.agent = agent;
  const response = await send(
    "POST",
    `/conversations/${enc(conversationId)}/messages?stream=true`,
    { json, signal, accept: "text/event-stream" },
  );
  yield* parseEventStream(response.body);
}

/** Server-Sent Events from a byte stream (the text/event-stream format, data as JSON). */
export async function* parseEventStream(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      // Normalise line ends; a lone "\r" at the end may be half of a "\r\n": keep it.
      const tail = buffer.endsWith("\r") ? "\r" : "";
      buffer = buffer.slice(0, buffer.length - tail.length).replace(/\r\n?/g, "\n") + tail;
      let cut;
      while ((cut = buffer.indexOf("\n\n")) !== -1) {
        const event = parseEvent(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
        if (event) yield event;
      }
    }
    const last = parseEvent(buffer.replace(/\r\n?/g, "\n"));
    if (last) yield last;
  } finally {
    reader.cancel().catch(() => {});
  }
}

function parseEvent(block) {
  let event = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  if (!data.length) return null;
  const raw = data.join("\n");
  try {
    return { event, data: JSON.parse(raw) };
  } catch {
    return { event, data: raw };
  }
}
