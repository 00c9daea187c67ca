// A small Markdown renderer for model output, safe by construction: it builds DOM nodes and
// puts every piece of source text in a text node, so markup in the text (<script>, <img
// onerror>, HTML entities) is shown, never parsed as HTML.
//
// Supported: paragraphs (single newlines are line breaks), # headings, **bold**, *italic*,
// ~~strike~~, `code`, fenced code blocks, - / 1. lists (nested by indentation), > quotes,
// --- rules, [links](url), <autolinks> and bare http(s) URLs, and citation markers [1] / [1, 2]
// (buttons when the reply has that citation).
// Links: only http, https and mailto; anything else (javascript:, data:, relative) is dropped
// and the label kept as text. Links open in a new tab with rel="noopener noreferrer".
// Images ![alt](url) are never loaded: they become a link (or text) labelled with the alt text.

const MAX_BLOCK_DEPTH = 6;
const MAX_INLINE_DEPTH = 8;
const SAFE_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])[ \t]+(.*)$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}>/;
const ESCAPABLE = /[\\`*_{}[\]()#+\-.!|~<>"'$&]/;

/** The URL if it is absolute and http/https/mailto, else null. */
export function safeUrl(raw) {
  if (typeof raw !== "string") return null;
  // Browsers ignore control characters and spaces in a scheme ("java\tscript:"): so do we.
  // eslint-disable-next-line no-control-regex
  const cleaned = raw.replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
  if (!cleaned) return null;
  let url;
  try {
    url = new URL(cleaned);
  } catch {
    return null; // relative or malformed
  }
  return SAFE_PROTOCOLS.has(url.protocol) ? url.href : null;
}

/**
 * Markdown text → DocumentFragment.
 * options.citations: [{index, ...}] (markers with a matching index become buttons);
 * options.onCite(citation, button): called when such a button is pressed.
 */
export function renderMarkdown(source, options = {}) {
  const fragment = document.createDocumentFragment();
  const lines = String(source ?? "")
    .replace(/\r\n?/g, "\n")
    .split("\n");
  renderBlocks(lines, fragment, options, 0);
  return fragment;
}

/** Inline Markdown only (titles, labels). */
export function renderInline(text, options = {}) {
  return inline(String(text ?? ""), options, 0);
}

// -- blocks ---------------------------------------------------------------------------------
function isBlockStart(line) {
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line) ||
    LIST_ITEM.test(line)
  );
}

function leading(line) {
  return line.length - line.trimStart().length;
}

function renderBlocks(lines, parent, options, depth) {
  if (depth > MAX_BLOCK_DEPTH) {
    parent.append(inline(lines.join("\n"), options, 0));
    return;
  }
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    let m = line.match(FENCE);
    if (m && !(m[1][0] === "`" && m[2].includes("`"))) {
      const fence = m[1];
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) {
        body.push(lines[i]);
        i++;
      }
      i++; // the closing fence (or the end)
      const code = document.createElement("code");
      code.textContent = body.join("\n");
      const lang = m[2]
        .trim()
        .split(/\s+/)[0]
        .replace(/[^\w+#.-]/g, "");
      if (lang) code.dataset.lang = lang;
      const pre = document.createElement("pre");
      pre.className = "md-code";
      pre.tabIndex = 0; // scrollable: reachable by keyboard
      pre.append(code);
      parent.append(pre);
      continue;
    }
    m = line.match(HEADING);
    if (m) {
      // Inside a message, # is a section of the reply: h3…h6 keep the page outline sane.
      const level = Math.min(6, m[1].length + 2);
      const heading = document.createElement(`h${level}`);
      heading.className = "md-heading";
      heading.append(inline(m[2], options, 0));
      parent.append(heading);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      parent.append(document.createElement("hr"));
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && QUOTE.test(lines[i])) {
        body.push(lines[i].replace(/^ {0,3}> ?/, ""));
        i++;
      }
      const quote = document.createElement("blockquote");
      renderBlocks(body, quote, options, depth + 1);
      parent.append(quote);
      continue;
    }
    if (LIST_ITEM.test(line)) {
      i = renderList(lines, i, parent, options, depth);
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !(para.length && isBlockStart(lines[i]))) {
      para.push(lines[i].trim());
      i++;
    }
    const p = document.createElement("p");
    p.append(inline(para.join("\n"), options, 0));
    parent.append(p);
  }
}

function renderList(lines, start, parent, options, depth) {
  const first = lines[start].match(LIST_ITEM);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const list = document.createElement(ordered ? "ol" : "ul");
  if (ordered) {
    const n = parseInt(first[2], 10);
    if (n !== 1) list.start = n;
  }
  const sameKind = (m) => m && m[1].length === indent && /\d/.test(m[2]) === ordered;
  let i = start;
  while (i < lines.length) {
    const m = lines[i].match(LIST_ITEM);
    if (!sameKind(m)) break;
    const width = indent + m[2].length + 1;
    const body = [m[3]];
    i++;
    while (i < lines.length) {
      const line = lines[i];
      if (!line.trim()) {
        let j = i + 1;
        while (j < lines.length && !lines[j].trim()) j++;
        if (j < lines.length && leading(lines[j]) > indent) {
          for (; i < j; i++) body.push("");
          continue;
        }
        break;
      }
      const item = line.match(LIST_ITEM);
      if (item && item[1].length <= indent) break;
      if (!item && leading(line) <= indent && isBlockStart(line)) break;
      body.push(line.slice(Math.min(leading(line), width)));
      i++;
    }
    const li = document.createElement("li");
    renderBlocks(body, li, options, depth + 1);
    list.append(li);
    // A blank line between two items of this list keeps the list going.
    let j = i;
    while (j < lines.length && !lines[j].trim()) j++;
    if (j > i && j < lines.length && sameKind(lines[j].match(LIST_ITEM))) i = j;
  }
  parent.append(list);
  return i;
}

// -- inline ---------------------------------------------------------------------------------
const CITE = /\[(\d{1,3}(?:[ \t]*,[ \t]*\d{1,3})*)\](?!\()/y;
const CITE_TAIL = /[.,;:!?)\u2019"]+/y;
const AUTOLINK = /<((?:https?|mailto):[^\s<>]+)>/iy;
const BARE_URL = /https?:\/\/[^\s<>"]*[^\s<>".,;:!?)\]'*_]/iy;
const BACKTICKS = /`+/y;

function appendText(parent, text) {
  const parts = text.split("\n");
  parts.forEach((part, k) => {
    if (k) parent.append(document.createElement("br"));
    if (part) parent.append(document.createTextNode(part));
  });
}

function matchAt(re, text, i) {
  re.lastIndex = i;
  return re.exec(text);
}

/** Index of the closing delimiter for an emphasis opened before `from`, or -1. */
function findClose(text, from, delim) {
  const ch = delim[0];
  let j = from;
  while ((j = text.indexOf(delim, j)) !== -1) {
    const before = text[j - 1];
    const after = text[j + delim.length] || "";
    if (j > from && !/\s/.test(before)) {
      if (delim.length === 1 && after === ch) {
        j += 2; // part of a ** / __ pair
        continue;
      }
      if (ch === "_" && /\w/.test(after)) {
        j++;
        continue;
      }
      return j;
    }
    j++;
  }
  return -1;
}

/** [label](url "title") starting at text[i] === "[": {label, url, end} or null. */
function parseLink(text, i) {
  let depth = 0;
  let j = i;
  for (; j < text.length; j++) {
    const c = text[j];
    if (c === "\\") {
      j++;
    } else if (c === "[") {
      depth++;
    } else if (c === "]") {
      depth--;
      if (depth === 0) break;
    } else if (c === "\n" && text[j + 1] === "\n") {
      return null;
    }
  }
  if (depth !== 0 || text[j + 1] !== "(") return null;
  const label = text.slice(i + 1, j);
  let k = j + 2;
  let parens = 1;
  for (; k < text.length; k++) {
    const c = text[k];
    if (c === "\\") k++;
    else if (c === "(") parens++;
    else if (c === ")" && --parens === 0) break;
    else if (c === "\n") return null;
  }
  if (parens !== 0) return null;
  let target = text.slice(j + 2, k).trim();
  const angled = target.match(/^<([^>]*)>/);
  target = angled ? angled[1] : target.split(/\s+/)[0] || "";
  return { label, url: target, end: k + 1 };
}

function link(href, children) {
  const a = document.createElement("a");
  a.href = href;
  a.target = "_blank";
  a.rel = "noopener noreferrer";
  a.className = "md-link";
  a.append(children);
  return a;
}

function citeButtons(numbers, options) {
  const out = document.createDocumentFragment();
  const known = options.citations || [];
  for (const n of numbers) {
    const citation = known.find((c) => Number(c.index) === n);
    if (!citation && options.streaming) {
      // Sources arrive after the text: a quiet placeholder, not a raw "[1]", until then.
      const pending = document.createElement("span");
      pending.className = "cite-ref cite-pending";
      pending.textContent = String(n);
      pending.setAttribute("aria-label", `Source ${n} (arriving)`);
      out.append(pending);
      continue;
    }
    if (!citation) {
      out.append(document.createTextNode(`[${n}]`));
      continue;
    }
    const button = document.createElement("button");
    button.type = "button";
    button.className = "cite-ref";
    button.textContent = String(n);
    const name = citation.title || citation.source || "source";
    button.setAttribute("aria-label", `Source ${n}: ${name}`);
    button.title = name;
    button.addEventListener("click", () => options.onCite?.(citation, button));
    out.append(button);
  }
  return out;
}

function inline(text, options, depth) {
  const out = document.createDocumentFragment();
  let buffer = "";
  const flush = () => {
    if (buffer) appendText(out, buffer);
    buffer = "";
  };
  const nested = depth < MAX_INLINE_DEPTH;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];

    if (c === "\\" && next !== undefined && ESCAPABLE.test(next)) {
      buffer += next;
      i += 2;
      continue;
    }

    if (c === "`") {
      const run = matchAt(BACKTICKS, text, i)[0];
      let end = text.indexOf(run, i + run.length);
      while (end !== -1 && text[end + run.length] === "`") {
        end = text.indexOf(run, end + run.length + 1);
      }
      if (end !== -1) {
        flush();
        let body = text.slice(i + run.length, end).replace(/\n/g, " ");
        if (body.length > 2 && body.startsWith(" ") && body.endsWith(" ")) body = body.slice(1, -1);
        const code = document.createElement("code");
        code.className = "md-inline-code";
        code.textContent = body;
        out.append(code);
        i = end + run.length;
        continue;
      }
      buffer += run;
      i += run.length;
      continue;
    }

    if (nested && (c === "*" || c === "_" || c === "~") && next === c) {
      const delim = c + c;
      const opensWord = c !== "_" || !/\w/.test(text[i - 1] || "");
      const after = text[i + 2];
      if (opensWord && after && !/\s/.test(after)) {
        const end = findClose(text, i + 2, delim);
        if (end !== -1) {
          flush();
          const el = document.createElement(c === "~" ? "del" : "strong");
          el.append(inline(text.slice(i + 2, end), options, depth + 1));
          out.append(el);
          i = end + 2;
          continue;
        }
      }
    }

    if (nested && (c === "*" || c === "_") && next !== c) {
      const opensWord = c !== "_" || !/\w/.test(text[i - 1] || "");
      if (opensWord && next && !/\s/.test(next)) {
        const end = findClose(text, i + 1, c);
        if (end !== -1) {
          flush();
          const em = document.createElement("em");
          em.append(inline(text.slice(i + 1, end), options, depth + 1));
          out.append(em);
          i = end + 1;
          continue;
        }
      }
    }

    if (c === "!" && next === "[") {
      const parsed = parseLink(text, i + 1);
      if (parsed) {
        flush();
        // Never an <img>: remote images are not loaded. A link to it at most.
        const label = `Image: ${parsed.label.trim() || "untitled"}`;
        const href = options.noLinks ? null : safeUrl(parsed.url);
        if (href) out.append(link(href, document.createTextNode(label)));
        else out.append(document.createTextNode(`[${label}]`));
        i = parsed.end;
        continue;
      }
    }

    if (c === "[") {
      const cite = matchAt(CITE, text, i);
      if (cite) {
        // The marker stays on the line of the word it follows and of the punctuation after
        // it ("mooring [1]." never leaves "." alone on the next line).
        const word = buffer.match(/(\S+) ?$/);
        buffer = word ? buffer.slice(0, word.index) : buffer;
        flush();
        const glue = document.createElement("span");
        glue.className = "cite-glue";
        if (word) glue.append(document.createTextNode(word[1]));
        const numbers = cite[1].split(",").map((s) => parseInt(s.trim(), 10));
        glue.append(citeButtons(numbers, options));
        i += cite[0].length;
        const tail = matchAt(CITE_TAIL, text, i);
        if (tail) {
          glue.append(document.createTextNode(tail[0]));
          i += tail[0].length;
        }
        out.append(glue);
        continue;
      }
      const parsed = parseLink(text, i);
      if (parsed) {
        flush();
        const href = options.noLinks ? null : safeUrl(parsed.url);
        const label = nested
          ? inline(parsed.label, { ...options, noLinks: true }, depth + 1)
          : document.createTextNode(parsed.label);
        out.append(href ? link(href, label) : label);
        i = parsed.end;
        continue;
      }
    }

    if (c === "<" && !options.noLinks) {
      const auto = matchAt(AUTOLINK, text, i);
      const href = auto && safeUrl(auto[1]);
      if (href) {
        flush();
        out.append(link(href, document.createTextNode(auto[1])));
        i += auto[0].length;
        continue;
      }
    }

    if ((c === "h" || c === "H") && !options.noLinks && !/\w/.test(text[i - 1] || "")) {
      const bare = matchAt(BARE_URL, text, i);
      const href = bare && safeUrl(bare[0]);
      if (href) {
        flush();
        out.append(link(href, document.createTextNode(bare[0])));
        i += bare[0].length;
        continue;
      }
    }

    buffer += c;
    i++;
  }
  flush();
  return out;
}
