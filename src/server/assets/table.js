// The table page: a seat (or a judge) signed in on this browser records
// by tapping. Its moves come from GET /api/games/{game}/moves (the cookie
// shows its own), each a button; a chosen move opens its form (moves.js);
// the action is sent at the seq it was offered after, so it is stored
// once at most: a lost connection keeps it and sends it again, another
// seat's event in between is a conflict, and a refusal says the rule's
// own words. While someone else is to act, the page says who and follows
// the game live.

import { $, el } from "./dom.js";
import { api, gamePath, storedEvent, whoAmI } from "./api.js";
import { drawAdjudication, drawBoard, strip, whoIn } from "./board.js";
import { follow } from "./live.js";
import { CALL, Composer, actionWords, alwaysOpen, moveButton } from "./moves.js";
import { Sender } from "./send.js";

const game = decodeURIComponent(location.pathname.split("/")[2]);
const g = gamePath(game);

let me = null;          // the seat id or judge's name this page records as
let judge = false;      // whether `me` is a judge
let view = null;        // the last /moves answer
let composing = null;   // {composer, label, seq, finish?}
let who = id => id;

// The message under the status: ok, pending, conflict, refused, error or info.
// "Recorded" stays until the game moves past that event; the others
// until the seat does something else.
let noticeSeq = null;
function notice(kind, text, seq = null) {
  $("notice").className = kind;
  $("notice").textContent = text;
  document.body.dataset.notice = kind;
  noticeSeq = seq;
}

// ---- Reading: the moves, the state at the same seq, the last event. ----

let refreshing = null;
let again = false;
// One read at a time; events that arrive meanwhile bring one more.
function refresh() {
  if (refreshing) { again = true; return refreshing; }
  refreshing = (async () => {
    do { again = false; await read(); } while (again);
  })().catch(err => { $("error").textContent = err.message; }).finally(() => { refreshing = null; });
  return refreshing;
}

async function read() {
  const v = await api(g + "/moves");
  const [s, last] = await Promise.all([api(g + "/state?raw=0&at=" + v.seq), v.seq > 0 ? storedEvent(game, v.seq) : null]);
  view = v;
  render(v, s, last);
}

const eventWords = e => "seq " + e.seq + " · " + who(e.actor) + ": " + actionWords(e.action);

function render(v, s, last) {
  who = whoIn(s.header);
  const h = s.header;
  $("title").textContent = [game, h.tournament, h.round != null ? "round " + h.round : null, h.table != null ? "table " + h.table : null].filter(x => x).join(" · ");
  document.title = game + ": arbiter table";
  $("strip").textContent = strip(s);
  // Whose turn, by name.
  const status = $("status");
  const names = v.may_act.map(who).join(", ");
  if (v.awaiting_ruling) {
    status.textContent = judge ? "Your ruling: " + v.awaiting_ruling : "Waiting for a judge: " + v.awaiting_ruling;
    status.className = judge ? "mine" : "judge";
  } else if (me && v.may_act.includes(me)) {
    status.textContent = v.may_act.length > 1 ? "Your move (also " + v.may_act.filter(a => a !== me).map(who).join(", ") + ")" : "Your move";
    status.className = "mine";
  } else {
    status.textContent = v.may_act.length ? "Waiting for " + names : "No one is to act";
    status.className = "";
  }
  $("step").textContent = v.step.reference;
  $("last").textContent = last ? "last: " + eventWords(last) : "no event yet";
  drawBoard($("board"), s.ruleset, s.board);
  drawAdjudication($("adjudication"), s, who);
  renderMoves(v);
  if (composing && composing.seq !== v.seq) {
    $("stale").textContent = "The game moved on (" + (last ? eventWords(last) : "seq " + v.seq) + "): this move was offered after seq " + composing.seq + ". Recording it now is refused as a conflict; choose again.";
  }
  if (noticeSeq !== null && v.seq > noticeSeq) notice("", "");
  document.body.dataset.seq = v.seq;
}

let shownMoves = null;
function renderMoves(v) {
  const mine = me ? v.moves.map((m, i) => [m, i]).filter(([m]) => m.seat === me) : [];
  // The same moves read again (a second read after one event) stay the
  // same buttons: a tap on one is never lost to a redraw.
  const key = JSON.stringify([mine, !!sender.pending]);
  if (key === shownMoves) return;
  shownMoves = key;
  const combat = mine.filter(([m]) => !alwaysOpen(m));
  const other = mine.filter(([m]) => alwaysOpen(m));
  $("moves").textContent = "";
  $("other").textContent = "";
  for (const [m, i] of combat) $("moves").append(moveButton(m, i, pick));
  for (const [m, i] of other) {
    const b = moveButton(m, i, pick);
    b.classList.add("other");
    $("other").append(b);
  }
  $("moves-title").hidden = combat.length === 0;
  $("other-title").hidden = other.length === 0;
  $("call").hidden = !me || judge || !other.some(([m]) => m.type === "note");
  // One action at a time: nothing else is recorded while one is unanswered.
  for (const b of document.querySelectorAll("#mine button.move, #call")) b.disabled = !!sender.pending;
}

// ---- Composing a move. ----

function pick(m, i) {
  open(m, { index: i });
}

function open(m, { index, finish } = {}) {
  if (!sender.pending) notice("", "");
  const composer = new Composer(m, { lastSeq: view.seq, onChange: preview });
  composing = { composer, label: m.label, seq: view.seq, finish };
  const box = $("composer");
  box.textContent = "";
  const stale = el("div");
  stale.id = "stale";
  const shown = el("div");
  shown.id = "preview";
  const why = el("div");
  why.id = "why";
  const record = el("button", "", "Record");
  record.id = "record";
  record.type = "button";
  record.onclick = recordIt;
  const back = el("button", "", "Back");
  back.id = "back";
  back.type = "button";
  back.onclick = close;
  const send = el("div", "send");
  send.append(record, back);
  composer.root.append(stale, shown, why, send);
  box.append(composer.root);
  for (const b of document.querySelectorAll("#mine button.move")) b.setAttribute("aria-pressed", String(b.dataset.index === String(index)));
  preview();
  composer.root.scrollIntoView({ block: "nearest" });
}

function close() {
  composing = null;
  $("composer").textContent = "";
  for (const b of document.querySelectorAll("#mine button.move")) b.setAttribute("aria-pressed", "false");
}

// What would be recorded, or what is missing.
function preview() {
  if (!composing) return;
  const r = composing.composer.values();
  $("why").textContent = r.why || "";
  $("preview").textContent = r.why ? "" : "to record: " + actionWords(r.action);
  $("record").disabled = !!r.why || !!sender.pending;
}

function recordIt() {
  if (!composing || sender.pending) return;
  let r = composing.composer.values();
  if (r.why) return preview();
  if (composing.finish) r = composing.finish(r);
  $("record").disabled = true;
  sender.send({ actor: me, action: r.action, events: r.events, expect: composing.seq + 1, label: composing.label });
}

// "Call a judge": a note about the last event, addressed to the judges by
// its first words (CALL), with what happened if the seat says it.
function callJudge() {
  const note = view.moves.find(m => m.seat === me && m.type === "note");
  if (!note) return;
  const call = { ...note, label: CALL, action: { type: "note" },
    enter: [{ field: "text", kind: "text", label: "what happened", optional: true }] };
  const seq = view.seq;
  open(call, {
    finish: ({ action }) => ({
      action: { type: "note", concerns: { seq }, text: action.text ? CALL + ": " + action.text : CALL },
      events: ["concerns"],
    }),
  });
}

// ---- Sending (send.js): what is not answered is kept and sent again. ----

const sender = new Sender(game, "arbiter-pending:" + game, {
  notice,
  who: id => who(id),
  conflict: "Here are your moves now.",
  changed: () => view && renderMoves(view),
  settled: async o => {
    if (o.ok || "conflict" in o) close(); else preview();
    await refresh();
  },
});

// ---- Starting. ----

async function start() {
  const grant = await whoAmI();
  if (grant && grant.game === game && (grant.seat || grant.judge)) {
    me = grant.seat || grant.judge;
    judge = !!grant.judge;
  }
  document.body.dataset.me = me || "";
  await refresh();
  if (!view) return;
  const mine = view.seats.find(s => s.id === me);
  $("me").textContent = me ? "you: " + (judge ? "judge " + me : mine ? mine.name + " (" + me + ")" : me) : "";
  if (!me) {
    notice("info", grant && grant.game && grant.game !== game
      ? "This browser is signed in for " + grant.game + ", not " + game + ": open your link for this table to record here."
      : "Open your seat's or judge's link to record here; this page shows the game.");
  }
  $("call").onclick = callJudge;
  let pendingRead = null;
  follow(game, view.seq + 1, {
    onEvent: () => {
      clearTimeout(pendingRead);
      pendingRead = setTimeout(refresh, 50);
    },
    onStatus: status => {
      $("live").textContent = { live: "live", reconnecting: "reconnecting…", closed: "not live" }[status];
      $("live").className = status === "live" ? "on" : "";
      // Back in touch: what is unanswered is sent again now.
      if (status === "live") sender.resume();
    },
  });
  // An action left unanswered by an earlier load of this page.
  sender.resume();
}

start().catch(err => { $("error").textContent = err.message; $("status").textContent = ""; });
