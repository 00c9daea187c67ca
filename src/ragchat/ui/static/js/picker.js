// The "Answer from" control: the one choice of what the next answer searches — one of your
// knowledge bases, one shared with you, or the built-in samples (the sample agent that fits
// each question, or one by name). It is remembered for the person on the server
// (PATCH /users/me answer_from), so a reload or another browser starts where they left off;
// with knowledge bases of your own and nothing remembered, it starts on yours.

import { api } from "./api.js";
import { clear, h } from "./dom.js";

export const SAMPLES = "agent:";
const NEW = "new";

function describe(value, agents) {
  if (value.startsWith("kb:")) return `Answers cite only the documents of ${value.slice(3)}.`;
  const name = value.slice("agent:".length);
  if (!name)
    return "The built-in sample knowledge bases (medical, parenting, textbook…), not your files: the agent that fits each question answers.";
  const agent = agents.find((a) => a.name === name);
  return agent ? `${agent.description} (built-in sample, not your files)` : "";
}

/** select: the <select>; onNew(): "New knowledge base…" was picked. */
export function createPicker(select, help, { onNew = () => {}, onChange = () => {} } = {}) {
  let kbs = [];
  let agents = [];
  let current = SAMPLES;

  function option(value, text, title = "") {
    return h("option", { value, text, title });
  }

  function render() {
    clear(select);
    const own = kbs.filter((kb) => kb.owned);
    const shared = kbs.filter((kb) => !kb.owned && !kb.configured);
    if (own.length) {
      const group = h("optgroup", { label: "Your knowledge bases" });
      for (const kb of own)
        group.append(option(`kb:${kb.name}`, kb.name, kb.description || "Yours"));
      select.append(group);
    }
    if (shared.length) {
      const group = h("optgroup", { label: "Shared with you" });
      for (const kb of shared) group.append(option(`kb:${kb.name}`, kb.name, kb.description));
      select.append(group);
    }
    const samples = h("optgroup", { label: "Built-in samples (not your files)" });
    samples.append(option(SAMPLES, "Samples: the agent that fits each question"));
    for (const agent of agents) {
      if (agent.needs_kb) continue;
      samples.append(option(`agent:${agent.name}`, `Samples: ${agent.name} agent`, agent.description));
    }
    select.append(samples);
    select.append(option(NEW, "＋ New knowledge base…"));
    show(current);
  }

  function known(value) {
    return [...select.options].some((o) => o.value === value && value !== NEW);
  }

  function show(value) {
    if (value.startsWith("kb:") && !known(value)) {
      // Bound by a conversation to a knowledge base not in the list (yet): still show it.
      select.append(option(value, value.slice(3)));
    }
    current = known(value) ? value : SAMPLES;
    select.value = current;
    const text = describe(current, agents);
    select.title = text;
    if (help) help.textContent = text;
    document.body.dataset.answerFrom = current;
  }

  select.addEventListener("change", () => {
    if (select.value === NEW) {
      select.value = current;
      onNew();
      return;
    }
    set(select.value, { remember: true });
    onChange(current);
  });

  /** Shows ``value``; ``remember``: kept on the server as the person's choice. */
  function set(value, { remember = false } = {}) {
    show(value || SAMPLES);
    if (remember) {
      const body = current.startsWith("kb:")
        ? { answer_from: { kb: current.slice(3) } }
        : { answer_from: { agent: current.slice("agent:".length) || null } };
      api.updateMe(body).catch(() => {});
    }
  }

  /** Lists what there is to choose from; ``initial``: the choice to start on. */
  async function load(initial = null) {
    const [kbList, agentList] = await Promise.all([
      api.knowledgeBases().catch(() => kbs),
      api.agents().catch(() => agents),
    ]);
    kbs = kbList;
    agents = agentList;
    render();
    if (initial !== null) show(initial);
  }

  return {
    load,
    set,
    get value() {
      return current;
    },
    get kbs() {
      return kbs;
    },
    ownKbs: () => kbs.filter((kb) => kb.owned),
    /** What a turn sends: the knowledge base bound, or the agent to answer. */
    binding() {
      if (current.startsWith("kb:")) return { kb: [current.slice(3)], agent: "" };
      return { kb: [], agent: current.slice("agent:".length) };
    },
  };
}

/** The choice to start on: the remembered one, else your first knowledge base, else the
 * samples. */
export function startingChoice(me, kbs) {
  const remembered = me && me.answer_from;
  if (remembered && remembered.kb && kbs.some((kb) => kb.name === remembered.kb))
    return `kb:${remembered.kb}`;
  if (remembered && !remembered.kb) return `agent:${remembered.agent || ""}`;
  const own = kbs.find((kb) => kb.owned);
  return own ? `kb:${own.name}` : SAMPLES;
}
