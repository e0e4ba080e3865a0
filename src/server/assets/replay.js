// The replay page: one game's timeline, a stepper, the board after each
// event, the state panel and a diff, following the game live. Everything
// here reads the JSON API; nothing is computed that the server did not
// compute (steps, boards, what changed and rewinds come from it).

import { $, el } from "./dom.js";
import { api } from "./api.js";
import { drawAdjudication, drawBoard, strip, whoIn } from "./board.js";
import { judging } from "./judge.js";
import { follow as followGame } from "./live.js";

const game = decodeURIComponent(location.pathname.split("/")[2]);
const params = new URLSearchParams(location.search);
let entries = [];   // /replay events, in seq order
let at = 0;         // index into entries
let following = true;
let head = null;    // the state at the head: header, names, strip
let judge = null;   // the judge's controls, for a judge of this game (judge.js)

const g = encodeURIComponent(game);
const show = v => v === undefined ? "(absent)" : JSON.stringify(v);
// A seat by name and id ("Alice (p1)"); a judge by name.
const who = id => whoIn(head && head.header)(id);
// What changed, in the board's words (every ruleset has a board: the
// page asks for no state paths, `paths=0`).
function listChanges(ul, e) {
  ul.textContent = "";
  const lines = e.said || [];
  for (const line of lines) ul.append(el("li", "", line));
}

function timelineItem(e, i) {
  const li = el("li");
  li.dataset.seq = e.seq;
  li.className = ["event", e.kind, e.rewound ? "rewound" : "", i === at ? "current" : ""].join(" ").trim();
  // The step the event was made at, as `log` says it (event 0: none).
  const made = e.before ? e.before.reference : "";
  li.append(el("span", "seq", e.seq), who(e.actor) + ": " + e.action, el("span", "step", made));
  li.onclick = () => go(i);
  return li;
}

function renderTimeline() {
  const ol = $("timeline");
  ol.textContent = "";
  entries.forEach((e, i) => ol.append(timelineItem(e, i)));
  counts();
}

function counts() {
  const n = kind => entries.filter(e => e.kind === kind).length;
  $("counts").textContent = entries.length + " events · " + n("pass") + " passes · " + n("ruling") + " rulings";
}

// The header in words and the outcome strip, from the state at the head.
function renderHead() {
  const h = head.header;
  const title = [game, h.tournament, h.round != null ? "round " + h.round : null, h.table != null ? "table " + h.table : null].filter(x => x);
  $("title").textContent = title.join(" · ");
  const judges = head.judges.length ? " · judges: " + head.judges.join(", ") : "";
  $("teams").textContent = h.seats.map(s => s.name + " (" + s.id + ")").join(", ") + judges;
  $("strip").textContent = strip(head);
}

async function go(i) {
  if (entries.length === 0) return;
  at = Math.max(0, Math.min(i, entries.length - 1));
  following = at === entries.length - 1;
  const e = entries[at];
  for (const li of $("timeline").children) li.classList.toggle("current", Number(li.dataset.seq) === e.seq);
  const cur = $("timeline").children[at];
  if (cur) cur.scrollIntoView({ block: "nearest" });
  $("position").textContent = "seq " + e.seq + " (" + (at + 1) + " of " + entries.length + ")";
  $("jump").value = e.seq;
  $("actor").textContent = who(e.actor);
  $("action").textContent = e.action;
  // The step once when the event left it where it was.
  const same = e.before && e.before.reference === e.after.reference;
  $("step-before").textContent = same ? "at " : e.before ? e.before.reference : "";
  $("step-arrow").hidden = same || !e.before;
  $("step-after").textContent = e.after.reference;
  const tags = $("event-tags");
  tags.textContent = "";
  for (const [on, text] of [[e.kind === "ruling", "ruling"], [e.kind === "note", "note"], [e.rewound, "rewound"]]) {
    if (on) tags.append(el("span", "tag " + text, text));
  }
  $("recorded").textContent = (e.recorded || []).join("\n");
  listChanges($("changes"), e);
  const sp = new URLSearchParams(location.search);
  sp.set("seq", e.seq);
  history.replaceState(null, "", "?" + sp + location.hash);
  if (judge) judge.showing(e);
  try {
    const s = await api("/games/" + g + "/state?raw=0&at=" + e.seq);
    if (entries[at] !== e) return; // the reader moved on meanwhile
    $("state-step").textContent = s.step.reference;
    $("state-may-act").textContent = s.may_act.length ? s.may_act.map(who).join(", ") : "no one";
    $("state-legal").textContent = s.legal.join(", ");
    $("state-awaiting").textContent = s.awaiting_ruling ? "awaiting a judge's ruling: " + s.awaiting_ruling : "";
    drawAdjudication($("adjudication"), s, who);
    drawBoard($("board"), s.ruleset, s.board);
    $("state").textContent = "";
    if ($("raw").open) await showRaw();
    document.body.dataset.shownSeq = e.seq;
  } catch (err) { $("error").textContent = err.message; }
}

// The reducer's state, fetched only when a reader opens it.
async function showRaw() {
  const e = entries[at];
  const s = await api("/games/" + g + "/state?at=" + e.seq);
  if (entries[at] === e) $("state").textContent = JSON.stringify(s.state, null, 2);
}

async function load() {
  head = await api("/games/" + g + "/state?raw=0");
  renderHead();
  // The replay comes in pages (the server answers at most 1,000 events at a time).
  let events = [];
  for (let from = 0; from !== null;) {
    const r = await api("/games/" + g + "/replay?paths=0&from=" + from);
    events = events.concat(r.events);
    from = r.next;
  }
  const wasLast = following;
  const seq = entries.length ? entries[at].seq : null;
  entries = events;
  renderTimeline();
  if (wasLast || seq === null) {
    const want = seq === null && params.has("seq") ? Number(params.get("seq")) : null;
    const i = want === null ? entries.length - 1 : entries.findIndex(e => e.seq === want);
    await go(i < 0 ? entries.length - 1 : i);
  } else {
    await go(entries.findIndex(e => e.seq === seq));
  }
}

// A live event: fetch only what is new and append it. A ruling can mark
// earlier events rewound: the ranges it took back are fetched again, not
// the whole replay.
async function catchUp() {
  const from = entries.length ? entries[entries.length - 1].seq + 1 : 0;
  const r = await api("/games/" + g + "/replay?paths=0&from=" + from);
  if (r.events.length === 0) return;
  if (r.events.some(e => e.kind === "ruling")) {
    const first = entries.length ? entries[0].seq : 0;
    for (const [a, b] of r.rewound) {
      const z = Math.min(b, from - 1);
      // Ranges already marked, or only of the new events, need nothing.
      if (a >= from || entries.slice(a - first, z - first + 1).every(e => e.rewound)) continue;
      for (let f = a; f !== null && f <= z;) {
        const page = await api("/games/" + g + "/replay?paths=0&from=" + f + "&to=" + z);
        for (const e of page.events) entries[e.seq - first] = e;
        f = page.next;
      }
    }
    renderTimeline();
  }
  head = await api("/games/" + g + "/state?raw=0");
  renderHead();
  const wasLast = following;
  for (const e of r.events) {
    entries.push(e);
    $("timeline").append(timelineItem(e, entries.length - 1));
  }
  counts();
  if (wasLast) await go(entries.length - 1);
  else $("position").textContent = "seq " + entries[at].seq + " (" + (at + 1) + " of " + entries.length + ")";
  if (judge) await judge.refresh();
}

let stream = null;
function follow() {
  // Live: each stored event after the last shown (the stream resumes by
  // itself after a drop); a burst of events is read in one catch-up.
  if (stream) return;
  const from = entries.length ? entries[entries.length - 1].seq + 1 : 0;
  let pending = null;
  stream = followGame(game, from, {
    onEvent: () => {
      clearTimeout(pending);
      pending = setTimeout(() => catchUp().catch(err => $("error").textContent = err.message), 50);
    },
    onStatus: status => {
      $("live").textContent = { live: "live", reconnecting: "reconnecting…", closed: "not live" }[status];
      $("live").className = status === "live" ? "on" : "";
    },
  });
}
// A page put away (another tab's navigation, the back/forward cache) gives
// its connection back: a browser holds six per host, and a judge follows
// many tables.
addEventListener("pagehide", () => { if (stream) { stream.close(); stream = null; } });
addEventListener("pageshow", ev => { if (ev.persisted) catchUp().then(follow).catch(err => $("error").textContent = err.message); });

async function diff(other) {
  const d = await api("/diff?a=" + g + "&b=" + encodeURIComponent(other));
  $("diff").hidden = false;
  $("diff-other").textContent = other;
  $("diff-summary").textContent = d.agree
    ? "The records agree: " + d.common + " events."
    : "The records differ from seq " + d.common + " (aligned by " + d.alignment + "; " + d.a_events + " and " + d.b_events + " events).";
  const outcome = $("diff-outcome");
  outcome.textContent = "";
  for (const r of d.outcome) outcome.append(el("li", "", r.what + ": " + game + " " + (r.a ?? "(not reached)") + " · " + other + " " + (r.b ?? "(not reached)")));
  if (!d.outcome.length && !d.agree) outcome.append(el("li", "", d.changes.length ? "the same; see every difference below" : "the same"));
  $("diff-a-title").textContent = game;
  $("diff-b-title").textContent = other;
  // The rows lined up by content, side by side: an event missing from one
  // side leaves its place empty, so the rows after it still face each other.
  for (const [id, side] of [["diff-a", "a"], ["diff-b", "b"]]) {
    const ol = $(id);
    ol.textContent = "";
    let last = null;
    for (const r of d.rows) {
      const e = r[side];
      const other = r[side === "a" ? "b" : "a"];
      const seq = e ? e.seq : null;
      const gap = last !== null && seq !== null && seq > last + 1;
      if (gap) ol.append(el("li", "gap", "…"));
      const li = el("li", (r.same ? "" : "differs") + (e ? "" : " missing"), e ? e.by + ": " + e.words : "(not in this record)");
      if (e) { li.value = e.seq; last = e.seq; }
      if (!e && other) li.title = "only in the other record";
      ol.append(li);
    }
  }
  const ul = $("diff-changes");
  ul.textContent = "";
  for (const c of d.changes) ul.append(el("li", "", c.path + ": " + show(c.before) + " → " + show(c.after)));
}

document.title = game + ": arbiter replay";
$("raw").ontoggle = () => { if ($("raw").open) showRaw().catch(err => $("error").textContent = err.message); };
$("hide-passes").onchange = ev => document.body.classList.toggle("hide-passes", ev.target.checked);
$("back").onclick = () => go(at - 1);
$("forward").onclick = () => go(at + 1);
$("go").onclick = () => {
  const seq = Number($("jump").value);
  const i = entries.findIndex(e => e.seq >= seq);
  go(i < 0 ? entries.length - 1 : i);
};
$("jump").onkeydown = ev => { if (ev.key === "Enter") $("go").click(); };
document.onkeydown = ev => {
  if (ev.target.tagName === "INPUT") return;
  if (ev.key === "ArrowRight") go(at + 1);
  if (ev.key === "ArrowLeft") go(at - 1);
};
load().then(async () => {
  follow();
  // What the judge's controls read of this page, when they need it.
  const context = () => ({ who, ruleset: head.ruleset, entries, go: seq => go(entries.findIndex(e => e.seq === seq)) });
  judge = await judging(game, context);
  if (judge) judge.showing(entries[at]);
  if (params.has("diff")) return diff(params.get("diff"));
}).catch(err => { $("error").textContent = err.message; });
