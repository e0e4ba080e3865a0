// Moves as buttons and forms: what GET /api/games/{game}/moves offers
// (schemas/move.schema.json), as a table taps it. Each move is a
// `<button data-move="TYPE">`; a chosen move opens its choices as buttons
// and its entries as inputs with their bounds, and what the rules fixed or
// computed in its `action` is shown for confirmation, not asked for. The
// action is built as `Move::build` builds it (src/kernel/moves.rs), and
// asked for as `arbiter record` asks (src/cli/record.rs): choices first,
// then entries; a list item's choices, then its fields.

import { el } from "./dom.js";

// The moves always open (a note, a ruling other than a decision), not
// moves of the combat (`kernel::moves::always_open`).
export function alwaysOpen(m) {
  if (m.type === "note") return true;
  return m.type === "ruling" && m.action.kind !== "decide";
}

// A note whose text starts with this calls a judge to the table
// (`adjudication::CALL`); the floor shows it until a judge answers it.
export const CALL = "call a judge";

// Sets the value at `path` (keys and list indices joined by "/"; empty:
// the whole value) as `kernel::moves::put` does, making the objects on
// the way; an index names an element or the next one. Returns the root.
export function put(root, path, value) {
  if (path === "") return value;
  const holder = { root };
  let parent = holder, slot = "root";
  for (const key of path.split("/")) {
    let cur = parent[slot];
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(key) || Number(key) > cur.length) return holder.root;
      if (Number(key) === cur.length) cur.push(null);
      parent = cur;
      slot = Number(key);
    } else {
      if (cur === null || typeof cur !== "object") parent[slot] = cur = {};
      if (!(key in cur)) cur[key] = null;
      parent = cur;
      slot = key;
    }
  }
  parent[slot] = value;
  return holder.root;
}

// A value in words: "Orc Raider", "Knight, Archer", "name Knight atk 3".
export function words(v) {
  if (v === null || v === undefined) return "-";
  if (Array.isArray(v)) return v.map(words).join(", ");
  if (typeof v === "object") {
    if ("seq" in v && "hash" in v && Object.keys(v).length === 2) return "seq " + v.seq;
    return Object.entries(v).filter(([, x]) => !isEmpty(x)).map(([k, x]) => k.replaceAll("_", " ") + " " + words(x)).join(", ");
  }
  return String(v);
}
const isEmpty = v => v === null || (typeof v === "object" && Object.values(v).every(isEmpty));

// An action in words, its type first: "resolve: what combat, dead Orc Raider".
export function actionWords(action) {
  const rest = Object.entries(action).filter(([k, v]) => k !== "type" && !isEmpty(v));
  return action.type + (rest.length ? ": " + rest.map(([k, v]) => k.replaceAll("_", " ") + " " + words(v)).join(" · ") : "");
}

// A field's path in words ("decision/dead" -> "decision › dead").
const fieldWords = f => f.replaceAll("/", " › ").replaceAll("_", " ");

function bounds(min, max) {
  if (min != null && max != null) return min === max ? String(min) : min + " to " + max;
  if (min != null) return min + " or more";
  if (max != null) return "at most " + max;
  return "";
}

// One button per move, in the API's order; `data-index` is the move's
// place in that list.
export function moveButton(m, i, onPick) {
  const b = el("button", "move", m.label);
  b.type = "button";
  b.dataset.move = m.type;
  b.dataset.index = i;
  b.onclick = () => onPick(m, i);
  return b;
}

const isNumber = kind => ["rating", "roll", "points", "number"].includes(kind);

// The form of one move. `values()` answers {ok, action | why}; an entry
// of kind `event` is answered as {seq} and made {seq, hash} by the caller
// (`events`: the paths to resolve).
export class Composer {
  // `move`: the move; `opts.lastSeq`: the last event's seq (offered for
  // an event entry); `opts.fill`: values to start entries with, by path
  // ("reason": "..."); `opts.onChange`: called on every change.
  constructor(move, opts = {}) {
    this.move = move;
    this.opts = opts;
    // In asking order: {path (in the action), rel (in its list item),
    // kind, read() -> {value?, why?}}.
    this.fields = [];
    this.root = el("div", "composer");
    this.root.dataset.move = move.type;
    this.root.append(el("h3", "", move.label));
    const fixed = fixedLeaves(move.action);
    if (fixed.length) {
      // What the rules fixed or computed: shown, not asked.
      const dl = el("dl", "fixed");
      for (const [k, v] of fixed) dl.append(el("dt", "", fieldWords(k)), el("dd", "", words(v)));
      this.root.append(dl);
    }
    for (const c of move.choose || []) this.root.append(this.choice(c, c.field, this.fields));
    for (const e of move.enter || []) this.root.append(this.entry(e, e.field, this.fields));
  }

  changed() { if (this.opts.onChange) this.opts.onChange(); }

  // A choice: its options as buttons (one, or several in the order picked).
  choice(c, path, into, rel = path) {
    const box = el("fieldset", "choice");
    box.dataset.choice = path;
    const how = c.list ? " (pick " + bounds(c.min, c.max) + ", in order)" : c.min === 0 ? " (or none)" : "";
    box.append(el("legend", "", fieldWords(path) + how));
    let picked = [];
    const buttons = c.options.map((o, k) => {
      const b = el("button", "option", o.label);
      b.type = "button";
      b.dataset.option = k;
      b.setAttribute("aria-pressed", "false");
      b.onclick = () => {
        const at = picked.indexOf(k);
        if (c.list) {
          if (at >= 0) picked.splice(at, 1);
          else if (picked.length < c.max) picked.push(k);
        } else if (at >= 0) {
          // One option: tapping it again leaves it out only where it may be.
          if (c.min === 0) picked = [];
        } else {
          picked = [k];
        }
        show();
        this.changed();
      };
      return b;
    });
    const show = () => buttons.forEach((b, k) => {
      const at = picked.indexOf(k);
      b.setAttribute("aria-pressed", String(at >= 0));
      b.dataset.order = c.list && at >= 0 ? at + 1 : "";
      b.disabled = c.list && at < 0 && picked.length >= c.max;
    });
    // A sole option that must be picked is picked (and shown so).
    if (!c.list && c.min >= 1 && c.options.length === 1) picked = [0];
    show();
    const row = el("div", "options");
    row.append(...buttons);
    box.append(row);
    into.push({
      path,
      rel,
      kind: "choice",
      read: () => {
        if (c.list) {
          if (picked.length < c.min) return { why: "pick " + bounds(c.min, c.max) + " for " + fieldWords(path) };
          return { value: picked.map(k => c.options[k].value) };
        }
        if (picked.length) return { value: c.options[picked[0]].value };
        if (c.min === 0 || c.options.length === 0) return {};
        return { why: "pick " + fieldWords(path) };
      },
    });
    return box;
  }

  // An entry: an input with its bounds and suggestions; a list, its items.
  entry(e, path, into, rel = path) {
    if (e.kind === "list") return this.list(e, path, into, rel);
    const box = el("label", "entry");
    const range = bounds(e.min, e.max);
    const hint = [e.kind === "event" ? "a seq" : "", range, e.optional ? "optional" : ""].filter(x => x).join(", ");
    box.append(el("span", "", e.label + (hint ? " (" + hint + ")" : "")));
    const input = el("input");
    input.dataset.field = path;
    input.dataset.kind = e.kind;
    if (isNumber(e.kind) || e.kind === "event") {
      input.type = "number";
      input.inputMode = "numeric";
      input.step = "1";
      if (e.min != null) input.min = e.min;
      if (e.max != null) input.max = e.max;
    } else {
      input.type = "text";
      input.autocomplete = "off";
      input.autocapitalize = e.kind === "text" ? "sentences" : "words";
    }
    if (this.opts.fill && this.opts.fill[path] != null) input.value = this.opts.fill[path];
    input.oninput = () => this.changed();
    box.append(input);
    // Names already on the board, and the last event, one tap away.
    const chips = (e.suggest || []).map(p => [p.label, String(p.value)]);
    if (e.kind === "event" && this.opts.lastSeq != null && (e.max == null || this.opts.lastSeq <= e.max)) chips.push(["the last event (seq " + this.opts.lastSeq + ")", String(this.opts.lastSeq)]);
    if (chips.length) {
      const row = el("div", "chips");
      for (const [label, value] of chips) {
        const b = el("button", "chip", label);
        b.type = "button";
        b.onclick = () => { input.value = value; this.changed(); };
        row.append(b);
      }
      box.append(row);
    }
    into.push({ path, rel, kind: e.kind, read: () => readEntry(e, input.value) });
    return box;
  }

  // A list: items added (and the last removed) one at a time, each with
  // its choices, then its fields, within the list's bounds. An optional
  // list is left out until an item is added, or "none" is tapped (an
  // empty list): `arbiter record` asks "how many", empty to leave out.
  list(e, path, into, rel = path) {
    const box = el("fieldset", "list");
    box.dataset.list = path;
    box.append(el("legend", "", e.label + " (" + (bounds(e.min, e.max) || "any number") + (e.optional ? ", optional" : "") + ")"));
    const items = el("ol", "items");
    const rows = [];   // each item's fields
    let none = false;  // an optional list recorded empty
    const button = (cls, text) => {
      const b = el("button", cls, text);
      b.type = "button";
      b.dataset[cls] = path;
      return b;
    };
    const add = button("add", "add one");
    const remove = button("remove", "remove the last");
    const empty = button("none", "none");
    const show = () => {
      add.disabled = e.max != null && rows.length >= e.max;
      remove.disabled = rows.length === 0;
      empty.setAttribute("aria-pressed", String(none));
    };
    const addItem = () => {
      const i = rows.length;
      const li = el("li", "item");
      const fields = [];
      for (const c of e.choose || []) li.append(this.choice(c, path + "/" + i + "/" + c.field, fields, c.field));
      for (const f of e.items || []) li.append(this.entry(f, f.field === "" ? path + "/" + i : path + "/" + i + "/" + f.field, fields, f.field));
      items.append(li);
      rows.push(fields);
      none = false;
      show();
    };
    add.onclick = () => { addItem(); this.changed(); };
    remove.onclick = () => { rows.pop(); items.lastChild.remove(); show(); this.changed(); };
    empty.onclick = () => {
      none = !none;
      while (none && rows.length) { rows.pop(); items.lastChild.remove(); }
      show();
      this.changed();
    };
    for (let k = 0; k < Math.max(0, e.min || 0); k++) addItem();
    show();
    const buttons = el("div", "options");
    buttons.append(add, remove);
    if (e.optional && !(e.min > 0)) buttons.append(empty);
    box.append(items, buttons);
    into.push({
      path,
      rel,
      kind: "list",
      read: () => {
        if (rows.length === 0 && e.optional && !none) return {};
        if (e.min != null && rows.length < e.min) return { why: e.label + ": " + bounds(e.min, e.max) + " items" };
        const list = [], events = [];
        for (const fields of rows) {
          let item = null;
          for (const f of fields) {
            const got = f.read();
            if (got.why) return got;
            if (!("value" in got)) continue;
            item = put(item, f.rel, got.value);
            if (f.kind === "event") events.push(f.path);
          }
          list.push(item === null ? {} : item);
        }
        return { value: list, events };
      },
    });
    return box;
  }

  // {action, events} built from the move, or {why}: the first thing
  // missing. An event entry's value is {seq} in the action; `events`
  // lists the paths of those, for the caller to make {seq, hash}.
  values() {
    let action = structuredClone(this.move.action);
    const events = [];
    for (const f of this.fields) {
      const got = f.read();
      if (got.why) return { why: got.why };
      if (!("value" in got)) continue;
      action = put(action, f.path, got.value);
      if (f.kind === "event") events.push(f.path);
      if (got.events) events.push(...got.events);
    }
    return { action, events };
  }
}

// The value typed into an entry: {value}, {} when left out, or {why}.
function readEntry(e, text) {
  const name = e.label || e.field;
  const within = n => (e.min != null && n < e.min) || (e.max != null && n > e.max) ? { why: name + ": " + n + " is outside " + bounds(e.min, e.max) } : null;
  if (e.kind === "card" || e.kind === "name") text = text.trim();
  if (text === "" || (e.kind !== "text" && text.trim() === "")) return e.optional ? {} : { why: "enter " + name };
  if (isNumber(e.kind) || e.kind === "event") {
    if (!/^-?\d+$/.test(text.trim())) return { why: name + ": " + JSON.stringify(text) + " is not a whole number" };
    const n = Number(text.trim());
    return within(n) || { value: e.kind === "event" ? { seq: n } : n };
  }
  return { value: text };
}

// The leaves of a move's action other than its type: what the rules
// fixed or computed, as (path, value).
function fixedLeaves(action) {
  const out = [];
  const walk = (v, path) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v) && !("seq" in v && "hash" in v)) {
      for (const [k, x] of Object.entries(v)) walk(x, path ? path + "/" + k : k);
    } else if (!isEmpty(v) && path !== "type") {
      out.push([path, v]);
    }
  };
  walk(action, "");
  return out;
}
