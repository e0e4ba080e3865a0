// The judge's controls on the replay page, for a browser signed in as a
// judge of this game (GET /api/session) and no one else:
// - on the event shown, "Rewind to here": the board the rewind returns to
//   first, with what it takes back, then the reason (filled in, required)
//   and the rule cited, then the rewind recorded;
// - on the event shown, "What if this were skipped": the record folded
//   without it by the server (POST /whatif, nothing stored): the first
//   event that becomes illegal and the rule's reason, and the board where
//   it stops;
// - the judge's other moves (decide a pending ruling, a penalty, add a
//   judge, a note) as buttons and forms (moves.js), as the table page
//   shows a seat's.
// Everything recorded here is a move of GET /api/games/{game}/moves, sent
// at the seq it was offered after (expect_seq): an answer lost is sent
// again and stored once; another event first is a conflict, said, with
// the form kept; a refusal shows the rules' own words and stores nothing.

import { $, el } from "./dom.js";
import { api, eventAt, gamePath, whoAmI } from "./api.js";
import { drawBoard } from "./board.js";
import { Composer, actionWords, moveButton } from "./moves.js";
import { Sender } from "./send.js";

// A ruling's reason is a name: at most this many bytes (limits::MAX_NAME_BYTES).
const REASON_BYTES = 128;

const isRewind = m => m.type === "ruling" && m.action.kind === "rewind";
// The judge's rulings and notes; the ruleset's own moves a judge has while
// a ruling is pending are offered as `decide`s (with a reason), so only those.
const isRuling = m => m.type === "note" || (m.type === "ruling" && !isRewind(m));

// `context()`: {who, ruleset, entries} of the replay page, read when needed.
// Returns null when this browser is not a judge of `game`.
export async function judging(game, context) {
  const grant = await whoAmI().catch(() => null);
  if (!grant || grant.role !== "judge" || grant.game !== game) {
    document.body.dataset.judge = "";  // asked: no judge here
    return null;
  }
  const judge = new Judge(game, grant.judge, context);
  await judge.refresh();
  return judge;
}

class Judge {
  constructor(game, me, context) {
    this.game = game;
    this.g = gamePath(game);
    this.me = me;
    this.context = context;
    this.view = null;       // the last /moves answer (this judge's moves)
    this.shown = null;      // the replay's event shown
    this.composing = null;  // {composer, label, seq, root, onDone?}
    this.shownMoves = null;
    this.reading = null;
    this.again = false;
    $("judge-me").textContent = me;
    for (const id of ["judge-event", "judge"]) $(id).hidden = false;
    document.body.dataset.judge = me;
    $("rewind-here").onclick = () => this.rewindHere().catch(err => this.notice("error", err.message));
    $("whatif-skip").onclick = () => this.whatIf().catch(err => this.notice("error", err.message));
    this.sender = new Sender(game, "arbiter-judge-pending:" + game, {
      notice: (kind, text) => this.notice(kind, text),
      who: id => this.context().who(id),
      conflict: "The page is up to date; check and record again.",
      changed: () => this.view && this.render(),
      settled: o => this.settled(o),
    });
    this.sender.resume();
  }

  notice(kind, text) {
    const n = $("judge-notice");
    n.className = kind;
    n.textContent = text;
    document.body.dataset.judgeNotice = kind;
  }

  // ---- Reading: this judge's moves at the head. ----

  // One read at a time; events that arrive meanwhile bring one more.
  refresh() {
    if (this.reading) { this.again = true; return this.reading; }
    this.reading = (async () => {
      do {
        this.again = false;
        this.view = await api(this.g + "/moves");
        this.render();
      } while (this.again);
    })().catch(err => this.notice("error", err.message)).finally(() => { this.reading = null; });
    return this.reading;
  }

  render() {
    const v = this.view;
    $("judge-awaiting").textContent = v.awaiting_ruling ? "Awaiting your ruling: " + v.awaiting_ruling : "No ruling is pending.";
    $("judge-awaiting").className = v.awaiting_ruling ? "alert" : "";
    const mine = v.moves.map((m, i) => [m, i]).filter(([m]) => m.seat === this.me && isRuling(m));
    // The same moves read again stay the same buttons: a tap is never lost to a redraw.
    const key = JSON.stringify([mine, !!this.sender.pending]);
    if (key !== this.shownMoves) {
      this.shownMoves = key;
      const box = $("judge-moves");
      box.textContent = "";
      const decide = mine.filter(([m]) => m.action.kind === "decide");
      const other = mine.filter(([m]) => m.action.kind !== "decide");
      for (const [m, i] of [...decide, ...other]) {
        const b = moveButton(m, i, (m, i) => this.pick(m, i));
        b.dataset.kind = m.action.kind || m.type;
        if (m.action.kind === "decide") b.classList.add("decide");
        b.disabled = !!this.sender.pending;
        box.append(b);
      }
    }
    if (this.composing && this.composing.seq !== v.seq) {
      this.composing.stale.textContent = "The game moved on to seq " + v.seq + ": this was offered after seq " + this.composing.seq + ". Recording it now is refused as a conflict; read the record again and choose.";
    }
    this.showing(this.shown);
  }

  // The replay shows `e`: what may be done about it.
  showing(e) {
    // The replay's entry as it is now (a rewind marks entries again).
    if (e) e = this.context().entries.find(x => x.seq === e.seq) || e;
    this.shown = e;
    if (!e || !this.view) return;
    const rewind = this.view.moves.find(m => m.seat === this.me && isRewind(m));
    const concerns = rewind && rewind.enter.find(f => f.field === "concerns");
    const max = concerns && concerns.max != null ? concerns.max : -1;
    // Why not, in the rules' words (fold.rs), where the page can tell.
    const why = !rewind ? "no rewind is offered now"
      : e.rewound ? "seq " + e.seq + " was itself rewound: a rewind returns to an event that stands"
      : e.seq > max ? "nothing follows seq " + e.seq + ": there is nothing to rewind"
      : "";
    $("rewind-here").disabled = !!why || !!this.sender.pending;
    $("rewind-here").title = why;
    $("whatif-skip").disabled = e.seq === 0;
    $("whatif-skip").title = e.seq === 0 ? "event 0 (the header) cannot be skipped" : "";
    $("judge-event-why").textContent = why;
    $("judge-event").dataset.seq = e.seq;
  }

  // ---- Rewind to here: the board first, then the reason, then recorded. ----

  async rewindHere() {
    const e = this.shown;
    const { who, ruleset } = this.context();
    const [v, s, concerns] = await Promise.all([api(this.g + "/moves"), api(this.g + "/state?raw=0&at=" + e.seq), eventAt(this.game, e.seq)]);
    this.view = v;
    const m = v.moves.find(m => m.seat === this.me && isRewind(m));
    if (!m) return this.notice("error", "no rewind is offered to " + this.me + " now");
    this.close();
    // The event is fixed (the one shown, with its hash); the rest is asked.
    const move = { ...m, label: "rewind to seq " + e.seq, action: { ...m.action, concerns }, enter: m.enter.filter(f => f.field !== "concerns") };
    const box = this.preview("rewind", "Rewind to seq " + e.seq + ": the board it returns to");
    box.dataset.seq = e.seq;
    box.append(el("p", "", "The combat returns to the state after seq " + e.seq + " (" + who(e.actor) + ": " + e.action + ")."));
    const takenBack = el("p", "taken-back");
    takenBack.id = "rewind-taken-back";
    box.append(takenBack);
    // The table's actions it takes back, in words; rulings and notes among
    // them are said as a rule (a penalty, a note, a judge added stand).
    const showTakenBack = head => {
      const back = this.context().entries.filter(x => x.seq > e.seq && x.seq <= head && !x.rewound && (x.kind === "action" || x.kind === "pass"));
      const words = back.slice(0, 6).map(x => "seq " + x.seq + " " + who(x.actor) + ": " + x.action);
      if (back.length > 6) words.push("and " + (back.length - 6) + " more");
      takenBack.textContent = "Taken back (kept in the record, struck): seqs " + (e.seq + 1) + " to " + head + (words.length ? " · " + words.join(" · ") : "") + ". Penalties, notes and judges added among them stand.";
    };
    showTakenBack(v.seq);
    box.append(el("div", "step", "step: " + s.step.reference + " · may act: " + (s.may_act.length ? s.may_act.map(who).join(", ") : "no one")));
    const board = el("div", "board-preview");
    board.id = "rewind-board";
    drawBoard(board, s.ruleset || ruleset, s.board);
    box.append(board);
    this.open(move, box, {
      seq: v.seq,
      fill: { reason: defaultReason(e, who) },
      onRebase: showTakenBack,
      record: "Record the rewind",
    });
  }

  // ---- What if this were skipped: folded by the server, nothing stored. ----

  async whatIf() {
    const e = this.shown;
    const { who, ruleset, entries } = this.context();
    const w = await api(this.g + "/whatif", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ skip: [e.seq] }) });
    if (this.shown !== e) return;
    this.closePreview();
    const box = this.preview("whatif", "What if seq " + e.seq + " were skipped (nothing is stored)");
    box.dataset.seq = e.seq;
    box.append(el("p", "", "Without seq " + e.seq + " (" + who(e.actor) + ": " + e.action + "):"));
    let where;
    if (w.illegal) {
      const [seq, v] = w.illegal;
      const bad = entries.find(x => x.seq === seq);
      const p = el("p", "illegal");
      p.id = "whatif-illegal";
      p.dataset.seq = seq;
      p.append(el("b", "", "seq " + seq + " becomes illegal"), bad ? " (" + who(bad.actor) + ": " + bad.action + ")" : "", ": " + v.message);
      const jump = el("button", "", "show seq " + seq);
      jump.type = "button";
      jump.onclick = () => this.context().go(seq);
      box.append(p, el("div", "rule", "rule: " + v.rule), el("div", "", "at " + v.step.reference + " · may act: " + (v.may_act.length ? v.may_act.map(who).join(", ") : "no one")), jump);
      where = "The board just before seq " + seq + ", without seq " + e.seq;
    } else {
      const p = el("p", "legal", "Every later event stays legal.");
      p.id = "whatif-legal";
      box.append(p);
      if (w.outcome.length) {
        const ul = el("ul");
        for (const r of w.outcome) ul.append(el("li", "", r.what + ": recorded " + (r.a ?? "(not reached)") + " · without seq " + e.seq + ": " + (r.b ?? "(not reached)")));
        box.append(el("div", "", "The outcome changes:"), ul);
      } else {
        box.append(el("div", "", w.changes.length ? "The outcome is the same; the state differs in " + w.changes.length + " places." : "Nothing changes."));
      }
      where = "The board at the end, without seq " + e.seq + (w.step ? " (" + w.step.reference + ")" : "");
    }
    box.append(el("h3", "", where));
    const board = el("div", "board-preview");
    board.id = "whatif-board";
    drawBoard(board, ruleset, w.board);
    box.append(board);
    const done = el("button", "", "Close");
    done.type = "button";
    done.onclick = () => { $("judge-preview").hidden = true; };
    box.append(done);
  }

  // The preview panel, emptied, titled and shown; returns its body.
  preview(kind, title) {
    const panel = $("judge-preview");
    panel.hidden = false;
    panel.dataset.kind = kind;
    $("judge-preview-title").textContent = title;
    const body = $("judge-preview-body");
    body.textContent = "";
    panel.scrollIntoView({ block: "nearest" });
    return body;
  }

  // ---- A move's form, and recording it. ----

  pick(m, i) {
    this.close();
    const box = $("judge-composer");
    box.textContent = "";
    const { entries } = this.context();
    // The event a ruling concerns: the one shown, or for a decision the
    // last event (the state that waits for the ruling).
    const shown = this.shown ? this.shown.seq : null;
    const concerns = m.action.kind === "decide" || shown === null ? this.view.seq : shown;
    this.open(m, box, { seq: this.view.seq, fill: { concerns: String(concerns) }, lastSeq: entries.length ? entries[entries.length - 1].seq : null });
    for (const b of document.querySelectorAll("#judge-moves button.move")) b.setAttribute("aria-pressed", String(b.dataset.index === String(i)));
  }

  // Opens `move`'s form in `box`: its fields (moves.js), `fill`ed where the
  // page knows a good value, what would be recorded, Record and Back.
  open(move, box, { seq, fill = {}, onRebase, record = "Record", lastSeq = null }) {
    const composer = new Composer(move, { lastSeq, fill, onChange: () => this.check() });
    const stale = el("div", "stale");
    const shown = el("div", "to-record");
    const why = el("div", "why");
    const button = el("button", "record", record);
    button.type = "button";
    button.id = "judge-record";
    button.onclick = () => this.recordIt();
    const back = el("button", "", "Back");
    back.type = "button";
    back.onclick = () => this.close();
    const send = el("div", "send");
    send.append(button, back);
    composer.root.append(stale, shown, why, send);
    box.append(composer.root);
    this.composing = { composer, label: move.label, seq, stale, shown, why, button, onRebase, box };
    this.check();
    composer.root.scrollIntoView({ block: "nearest" });
  }

  close() {
    if (this.composing && this.composing.box === $("judge-preview-body")) $("judge-preview").hidden = true;
    this.composing = null;
    $("judge-composer").textContent = "";
    for (const b of document.querySelectorAll("#judge-moves button.move")) b.setAttribute("aria-pressed", "false");
  }

  closePreview() {
    if (this.composing && this.composing.box === $("judge-preview-body")) this.composing = null;
    $("judge-preview").hidden = true;
  }

  // What would be recorded, or what is missing.
  check() {
    const c = this.composing;
    if (!c) return;
    const r = c.composer.values();
    c.why.textContent = r.why || "";
    c.shown.textContent = r.why ? "" : "to record: " + actionWords(r.action);
    c.button.disabled = !!r.why || !!this.sender.pending;
  }

  recordIt() {
    const c = this.composing;
    if (!c || this.sender.pending) return;
    const r = c.composer.values();
    if (r.why) return this.check();
    c.button.disabled = true;
    this.sender.send({ actor: this.me, action: r.action, events: r.events, expect: c.seq + 1, label: c.label });
  }

  // Answered (send.js): after a conflict the form stays, offered after the
  // new head, to be read again and recorded.
  async settled(o) {
    if (o.ok) this.close();
    if ("conflict" in o) {
      await this.refresh();
      const c = this.composing;
      if (c && this.view) {
        c.seq = this.view.seq;
        c.stale.textContent = "";
        if (c.onRebase) c.onRebase(this.view.seq);
      }
    }
    this.check();
    await this.refresh();
  }
}

// "rewind to after seq 4 (Ben (p2): counter Cancel)", within a reason's bytes.
function defaultReason(e, who) {
  let text = "rewind to after seq " + e.seq + " (" + who(e.actor) + ": " + e.action + ")";
  const bytes = s => new TextEncoder().encode(s).length;
  if (bytes(text) > REASON_BYTES) {
    while (bytes(text + "…") > REASON_BYTES) text = text.slice(0, -1);
    text = text.trimEnd() + "…";
  }
  return text;
}
