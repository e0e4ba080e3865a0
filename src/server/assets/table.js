// The table page: a seat (or a judge) signed in on this browser records
// by tapping. Its moves come from GET /api/games/{game}/moves (the cookie
// shows its own), each a button; a chosen move opens its form (moves.js);
// the action is sent at the seq it was offered after, so it is stored
// once at most: a lost connection keeps it and sends it again, another
// seat's event in between is a conflict, and a refusal says the rule's
// own words. While someone else is to act, the page says who and follows
// the game live.

import { $, el } from "./dom.js";
import { ApiError, api, append, eventAt, gamePath, whoAmI } from "./api.js";
import { drawAdjudication, drawBoard, strip, whoIn } from "./board.js";
import { follow } from "./live.js";
import { CALL, Composer, actionWords, alwaysOpen, moveButton, put } from "./moves.js";

const game = decodeURIComponent(location.pathname.split("/")[2]);
const g = gamePath(game);
// An action sent but not answered outlives a reload of the page.
const KEPT = "arbiter-pending:" + game;

let me = null;          // the seat id or judge's name this page records as
let judge = false;      // whether `me` is a judge
let view = null;        // the last /moves answer
let composing = null;   // {composer, label, seq, finish?}
let pending = kept();   // {actor, action, expect, label}: sent, not yet answered
let retryTimer = null;
let retryDelay = 1000;
let who = id => id;

function kept() {
  try { return JSON.parse(sessionStorage.getItem(KEPT)); } catch { return null; }
}
function keep(p) {
  pending = p;
  if (p) sessionStorage.setItem(KEPT, JSON.stringify(p)); else sessionStorage.removeItem(KEPT);
}

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
  const [s, last] = await Promise.all([api(g + "/state?raw=0&at=" + v.seq), v.seq > 0 ? rawEvent(v.seq) : null]);
  view = v;
  render(v, s, last);
}

// Event `seq` as stored (its actor and action), or null.
async function rawEvent(seq) {
  const page = await api(g + "/events?from=" + seq + "&limit=1");
  return page.events[0] && page.events[0].seq === seq ? page.events[0] : null;
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
  const key = JSON.stringify([mine, !!pending]);
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
  for (const b of document.querySelectorAll("#mine button.move, #call")) b.disabled = !!pending;
}

// ---- Composing a move. ----

function pick(m, i) {
  open(m, { index: i });
}

function open(m, { index, finish } = {}) {
  if (!pending) notice("", "");
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
  $("record").disabled = !!r.why || !!pending;
}

async function recordIt() {
  if (!composing || pending) return;
  const r = composing.composer.values();
  if (r.why) return preview();
  $("record").disabled = true;
  let action = r.action;
  try {
    // An event is named by its seq and hash: the hash is read from the record.
    for (const path of r.events) {
      const seq = path.split("/").reduce((v, k) => v[k], action).seq;
      action = put(action, path, await eventAt(game, seq));
    }
    if (composing.finish) action = await composing.finish(action);
  } catch (err) {
    $("record").disabled = false;
    return notice("error", "not sent: " + err.message);
  }
  keep({ actor: me, action, expect: composing.seq + 1, label: composing.label });
  renderMoves(view);
  await attempt();
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
    finish: async action => ({
      type: "note",
      concerns: await eventAt(game, seq),
      text: action.text ? CALL + ": " + action.text : CALL,
    }),
  });
}

// ---- Sending. ----

// Sends the pending action. Sent again after a lost answer, it is stored
// once: the server answers a retry at the same seq with the stored event.
let sending = false;
async function attempt() {
  clearTimeout(retryTimer);
  const p = pending;
  // One request at a time: a retry waits for the answer to the last.
  if (!p || sending) return;
  sending = true;
  notice("pending", "sending: " + p.label + "…");
  try {
    const r = await append(game, p.actor, p.action, p.expect).finally(() => { sending = false; });
    keep(null);
    retryDelay = 1000;
    close();
    notice("ok", "seq " + r.event.seq + " recorded: " + p.label + (r.duplicate ? " (it had been stored already; the first answer was lost)" : ""), r.event.seq);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500 || err.status === 408) {
      // No answer, or the server could not finish: kept, and sent again.
      const why = err instanceof ApiError ? err.message : "the connection to the server is lost";
      notice("pending", "not sent yet (" + why + "): " + p.label + " is sent again as soon as the server answers; nothing else is recorded here meanwhile.");
      retryTimer = setTimeout(attempt, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 8000);
      return;
    }
    keep(null);
    retryDelay = 1000;
    if (err.code === "conflict") {
      close();
      const first = await rawEvent(p.expect).catch(() => null);
      notice("conflict", (first ? who(first.actor) + " recorded “" + actionWords(first.action) + "” first (seq " + first.seq + ")" : "Another event was recorded first") + ": nothing of yours was stored. Here are your moves now.");
    } else if (err.code === "refused") {
      const v = (err.body.error && err.body.error.violation) || {};
      const lines = ["refused: " + (v.message || err.message)];
      if (v.rule) lines.push("rule: " + v.rule);
      if (v.offered && v.offered.length) lines.push("you may: " + v.offered.join(" · "));
      lines.push("nothing was stored");
      notice("refused", lines.join("\n"));
      preview();
    } else {
      notice("error", "not stored: " + err.message);
      preview();
    }
  }
  await refresh();
}

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
      if (status === "live" && pending) attempt();
    },
  });
  addEventListener("online", () => { if (pending) attempt(); });
  // An action left unanswered by an earlier load of this page.
  if (pending) attempt();
}

start().catch(err => { $("error").textContent = err.message; $("status").textContent = ""; });
