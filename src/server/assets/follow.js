// The floor page, for the head judge: a card per game (the table, the
// ruleset, the step in the text's words, who is to act, a call or a
// pending ruling with how long it has waited, the last event), the games
// waiting for a judge first, live. A judge signed in here answers a call
// from its card. Each card is the game's summary (GET /api/games/{game}/
// summary), read again when the game's live stream brings an event.

import { $, el } from "./dom.js";
import { api, gamePath, signedIn, whoAmI } from "./api.js";
import { whoIn } from "./board.js";
import { follow } from "./live.js";
import { Sender } from "./send.js";

// A wait is amber under two minutes and red from two minutes on: long
// enough for a judge to walk to a table, short enough that the head judge
// sends another.
const LATE = 2 * 60 * 1000;

const STATUS = { waiting_for_a_judge: "waiting for a judge", in_progress: "in progress", over: "over" };
const RANK = { waiting_for_a_judge: 0, in_progress: 1, over: 2 };

let me = null;     // the signed-in grant, if any
let offset = 0;    // the server's clock minus this one, in ms
const cards = new Map();   // game -> card


// "3:07": minutes and seconds.
function clock(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
}

// A wait, ticking: its start is the server's time of the event.
function wait(at) {
  const w = el("span", "wait");
  w.dataset.since = Date.parse(at);
  return w;
}

function tick() {
  const now = Date.now() + offset;
  for (const w of document.querySelectorAll(".wait[data-since]")) {
    const ms = now - Number(w.dataset.since);
    w.textContent = "waited " + clock(ms);
    w.classList.toggle("soon", ms < LATE);
    w.classList.toggle("long", ms >= LATE);
  }
  for (const c of cards.values()) c.root.classList.toggle("late", !!c.root.querySelector(".wait.long"));
}

function card(game, index) {
  const root = el("section", "table");
  root.dataset.game = game;
  const h = el("h2");
  const a = el("a", "", game);
  a.href = gamePath(game) + "/replay";
  const links = el("span", "links");
  const table = el("a", "", "table page");
  table.href = gamePath(game) + "/table";
  links.append(table);
  h.append(el("span", "where"), a, el("span", "status"), links);
  root.append(h, el("div", "title"), el("div", "step"), el("div", "may-act"), el("ul", "waits"), el("div", "notice"), el("div", "answered"), el("div", "last"), el("div", "error"));
  $("tables").append(root);
  const c = { game, index, root, summary: null, busy: false, again: false, stream: null, open: [] };
  if (me && me.role === "judge" && me.game === game) c.sender = answers(c);
  cards.set(game, c);
  return c;
}

// Reads the game's summary again (one read at a time per game; events
// that come meanwhile make one more).
async function refresh(c) {
  if (c.busy) { c.again = true; return; }
  c.busy = true;
  try {
    do {
      c.again = false;
      const asked = Date.now();
      const s = await api(gamePath(c.game) + "/summary");
      // The server's clock, against this one's at the middle of the call.
      offset = Date.parse(s.now) - (asked + Date.now()) / 2;
      render(c, s);
    } while (c.again);
    c.root.querySelector(".error").textContent = "";
  } catch (err) {
    c.root.querySelector(".error").textContent = err.message;
  } finally {
    c.busy = false;
  }
  return c.summary;
}

function render(c, s) {
  const before = c.summary;
  c.summary = s;
  const who = whoIn(s);
  const r = c.root;
  r.dataset.seq = s.seq;
  r.dataset.status = s.status;
  r.querySelector(".status").textContent = STATUS[s.status];
  // The table first: it is what a judge walking the floor looks for.
  r.querySelector(".where").textContent = s.table != null ? "table " + s.table : "";
  const event = [s.tournament, s.round != null ? "round " + s.round : null].filter(x => x);
  r.querySelector(".title").textContent = [s.ruleset, event.join(", "), s.seats.map(x => x.name + " (" + x.id + ")").join(", ")].filter(x => x).join(" · ");
  // The step in the text's words: where it is, and its heading when the
  // reference does not already say it.
  const step = s.step.reference.includes(s.step.title) ? s.step.reference : s.step.reference + ": " + s.step.title;
  r.querySelector(".step").textContent = step;
  r.querySelector(".may-act").textContent = s.may_act.length ? "to act: " + s.may_act.map(who).join(", ") : "no one may act";
  drawWaits(c, s, who);
  // A call open before and not now was answered.
  const open = s.calls.map(x => x.seq);
  const answered = c.open.filter(seq => !open.includes(seq));
  if (answered.length) {
    const by = s.judges.includes(s.last.actor) ? " by " + who(s.last.actor) + " (seq " + s.last.seq + ")" : "";
    r.querySelector(".answered").textContent = "answered" + by + ": the call at seq " + answered.join(", ");
  } else if (before && before.seq !== s.seq) {
    r.querySelector(".answered").textContent = "";
  }
  c.open = open;
  const time = new Date(s.last.at).toLocaleTimeString();
  const what = s.last.seq === 0 ? "the game opened" : who(s.last.actor) + ": " + s.last.action;
  r.querySelector(".last").textContent = "last: seq " + s.last.seq + " at " + time + " · " + what;
  if (before && before.seq !== s.seq) {
    r.classList.remove("changed");
    void r.offsetWidth;
    r.classList.add("changed");
  }
  sort();
  tick();
}

// The pending ruling and each open call, with how long it has waited; a
// judge of this game signed in here answers a call from its line. Drawn
// again only when they change, so an answer being typed stays.
function drawWaits(c, s, who) {
  const key = JSON.stringify([s.awaiting_ruling, s.calls, me]);
  if (c.waits === key) return;
  c.waits = key;
  const ul = c.root.querySelector(".waits");
  ul.textContent = "";
  if (s.awaiting_ruling) {
    const li = el("li", "ruling", "awaiting a ruling: " + s.awaiting_ruling.what + " ");
    li.append(wait(s.awaiting_ruling.at));
    ul.append(li);
  }
  const judge = me && me.role === "judge" && me.game === c.game ? me.judge : null;
  for (const call of s.calls) {
    const li = el("li", "call");
    li.dataset.call = call.seq;
    const words = call.text.slice("call a judge".length).replace(/^:\s*/, "");
    li.append("call by " + who(call.by) + (words ? ": " + words : "") + " (seq " + call.seq + ", about seq " + call.concerns + ") ", wait(call.at));
    if (judge) li.append(answerForm(c, call, judge));
    ul.append(li);
  }
}

function answerForm(c, call, judge) {
  const form = el("form", "answer");
  const words = el("input");
  words.name = "words";
  words.placeholder = "your answer (optional)";
  words.maxLength = 200;
  const button = el("button", "", "answer");
  button.type = "submit";
  button.dataset.answer = call.seq;
  button.disabled = !!c.sender.pending;
  form.append(words, button);
  form.onsubmit = ev => {
    ev.preventDefault();
    button.disabled = true;
    const action = { concerns: { seq: call.seq }, text: words.value.trim() || "answered" };
    answer(c, { actor: judge, action, events: ["concerns"], label: "the answer to the call at seq " + call.seq })
      .finally(() => { button.disabled = !!c.sender.pending; });
  };
  return form;
}

// The answer is the judge's `note` move about the call, sent at the seq
// after the moves like any action (send.js): kept and sent again while
// the server does not answer; another event first (a conflict), the moves
// are read again and the note sent after it.
async function answer(c, p) {
  try {
    const m = await api(gamePath(c.game) + "/moves?as=" + encodeURIComponent(p.actor));
    const note = m.moves.find(x => x.seat === p.actor && x.type === "note");
    if (!note) throw new Error(p.actor + " may not note here");
    await c.sender.send({ ...p, action: { ...note.action, ...p.action }, expect: m.seq + 1 });
  } catch (err) {
    say(c, "error", "not answered: " + err.message);
  }
}

// Where the card's answer stands: sending, not sent yet, refused...; what
// is recorded, the card says itself ("answered by ...").
function say(c, kind, text) {
  const n = c.root.querySelector(".notice");
  n.className = "notice " + kind;
  n.textContent = kind === "ok" ? "" : text;
  for (const b of c.root.querySelectorAll("button[data-answer]")) b.disabled = kind === "pending";
}

const CONFLICTS = 4;  // an answer sent again after this many events first at most

function answers(c) {
  return new Sender(c.game, "arbiter-answer-pending:" + c.game, {
    notice: (kind, text) => say(c, kind, text),
    who: id => (c.summary ? whoIn(c.summary)(id) : id),
    conflict: p => (p.conflicts || 0) < CONFLICTS ? "The answer is sent again after it." : "Answer again.",
    settled: async o => {
      const tries = o.sent.conflicts || 0;
      // Not awaited: sent again after the conflict is said.
      if ("conflict" in o && tries < CONFLICTS) answer(c, { ...o.sent, conflicts: tries + 1 });
      else await refresh(c);
    },
  });
}

// Waiting for a judge first, the longest wait first; then the games in
// progress, then those over, each in the order they were named.
function sort() {
  const since = s => Math.min(...[s.awaiting_ruling, ...s.calls].filter(x => x).map(x => Date.parse(x.at)));
  const all = [...cards.values()].sort((a, b) => {
    const sa = a.summary, sb = b.summary;
    const ra = sa ? RANK[sa.status] : 3, rb = sb ? RANK[sb.status] : 3;
    if (ra !== rb) return ra - rb;
    if (ra === 0 && since(sa) !== since(sb)) return since(sa) - since(sb);
    return a.index - b.index;
  });
  // By CSS order, not by moving the cards: an answer being typed keeps its focus.
  all.forEach((c, i) => { c.root.style.order = i; c.root.dataset.rank = i; });
}

// How the streams stand, for the header.
const statuses = new Map();
function showLive() {
  const live = [...statuses.values()].filter(s => s === "live").length;
  const all = live === cards.size && live > 0;
  $("live").textContent = all ? "live: " + live + " games" : live + " of " + cards.size + " games live; reconnecting…";
  $("live").className = all ? "on" : "";
}

function followCard(c) {
  if (c.stream || !c.summary) return;
  c.stream = follow(c.game, c.summary.seq + 1, {
    onEvent: () => refresh(c),
    onStatus: status => {
      statuses.set(c.game, status);
      showLive();
      // Back in touch: an answer not yet answered is sent again now.
      if (status === "live" && c.sender) c.sender.resume();
    },
  });
}

async function start(c) {
  if (await refresh(c)) {
    followCard(c);
    // An answer left unanswered by an earlier load of this page.
    if (c.sender) c.sender.resume();
  } else setTimeout(() => start(c), 10000);
}

function signedInAs(grant) {
  if (!grant) return "not signed in: a judge answers calls here after opening this page with the judge's link";
  if (grant.role === "judge") return "signed in as " + grant.judge + ", judge of " + grant.game + ": answer its calls here";
  if (grant.role === "seat") return "signed in as seat " + grant.seat + " of " + grant.game;
  return "signed in as the organiser";
}

async function main() {
  await signedIn;
  me = await whoAmI().catch(() => null);
  $("who").textContent = signedInAs(me);
  // The games named in the address, or every game this browser may read.
  let games = (new URLSearchParams(location.search).get("games") || "").split(",").filter(g => g);
  if (games.length === 0) games = await api("/games");
  if (games.length === 0) { $("error").textContent = "no games to follow"; return; }
  games.forEach((g, i) => card(g, i));
  cards.forEach(c => start(c));
  setInterval(tick, 1000);
}

// A page put away gives its follows back; shown again, it reads every
// card again and follows from there.
addEventListener("pagehide", () => cards.forEach(c => { if (c.stream) { c.stream.close(); c.stream = null; } }));
addEventListener("pageshow", ev => { if (ev.persisted) cards.forEach(c => refresh(c).then(() => followCard(c))); });

main().catch(err => { $("error").textContent = err.message; });
