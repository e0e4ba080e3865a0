// Sending one action, the same way from every page (the table page, the
// judge's controls, the floor's answer to a call). An action is sent at
// `expect_seq`, the seq after the one its move was offered at, and kept
// (in `sessionStorage`, so also across a reload) until the server answers:
// - no answer, or a 5xx/408: kept and sent again (at the same seq, so it is
//   stored once: the server answers a retry of a stored event with it,
//   `duplicate`);
// - 409: another event took the seq; it is read, and said with who recorded it;
// - 422: the rules' message, rule and the moves `offered`; nothing stored.
// The events it names (`events`: paths of `{seq}` in the action) get their
// hashes when it is sent, not before it is kept: an action kept while the
// server is down is sent once it is back.

import { ApiError, append, eventAt, storedEvent } from "./api.js";
import { actionWords, put } from "./moves.js";

export class Sender {
  // `key`: where the unanswered action is kept. `on.notice(kind, text,
  // seq)`: what to say (pending, ok with the seq recorded, conflict,
  // refused, error); `on.settled({ok | conflict | refused | error})`:
  // the page's own work once answered, before the notice is said;
  // `on.changed()`: an action is kept or no longer; `on.who(id)`: a name;
  // `on.conflict`: what the page does after a conflict, in words (or a
  // function of the action sent that answers them).
  constructor(game, key, on) {
    this.game = game;
    this.key = key;
    this.on = on;
    this.sending = false;
    this.timer = null;
    this.delay = 1000;
    // Said "not sent yet": a retry leaves those words up (they say it is
    // sent again) rather than flickering back to "sending".
    this.waiting = false;
    try { this.pending = JSON.parse(sessionStorage.getItem(key)); } catch { this.pending = null; }
    addEventListener("online", () => this.resume());
  }

  keep(p) {
    this.pending = p;
    if (p) sessionStorage.setItem(this.key, JSON.stringify(p)); else sessionStorage.removeItem(this.key);
    if (this.on.changed) this.on.changed();
  }

  // Sends `p` = {actor, action, events, expect, label}: one at a time.
  send(p) {
    if (this.pending) return;
    this.keep(p);
    return this.attempt();
  }

  // Sends what is kept again now (back in touch, or a page loaded again).
  resume() {
    if (this.pending) return this.attempt();
  }

  async attempt() {
    clearTimeout(this.timer);
    const p = this.pending;
    // One request at a time: a retry waits for the answer to the last.
    if (!p || this.sending) return;
    this.sending = true;
    const say = (kind, text, seq) => this.on.notice(kind, text, seq);
    if (!this.waiting) say("pending", "sending: " + p.label + "…");
    let outcome;
    try {
      if (p.events && p.events.length) {
        let action = p.action;
        for (const path of p.events) {
          const seq = path.split("/").reduce((v, k) => v[k], action).seq;
          action = put(action, path, await eventAt(this.game, seq));
        }
        // Kept with its hashes: a retry does not read them again.
        this.keep({ ...p, action, events: [] });
      }
      const r = await append(this.game, p.actor, this.pending.action, p.expect);
      outcome = { ok: r.event, duplicate: r.duplicate };
    } catch (err) {
      if (err instanceof TypeError || (err instanceof ApiError && (err.status >= 500 || err.status === 408))) {
        // Not answered (fetch's own TypeError), or the server could not finish.
        const why = err instanceof ApiError ? err.message : "the connection to the server is lost";
        this.waiting = true;
        say("pending", "not sent yet (" + why + "): " + p.label + " is sent again as soon as the server answers; nothing else is recorded here meanwhile.");
        this.timer = setTimeout(() => this.attempt(), this.delay);
        this.delay = Math.min(this.delay * 2, 8000);
        return;
      }
      outcome = err.code === "conflict" ? { conflict: await storedEvent(this.game, p.expect).catch(() => null) }
        : err.code === "refused" ? { refused: (err.body.error && err.body.error.violation) || {}, error: err }
        : { error: err };
    } finally {
      this.sending = false;
    }
    this.delay = 1000;
    this.waiting = false;
    this.keep(null);
    await this.on.settled({ ...outcome, sent: p });
    if (outcome.ok) {
      say("ok", "seq " + outcome.ok.seq + " recorded: " + p.label + (outcome.duplicate ? " (it had been stored already; the first answer was lost)" : ""), outcome.ok.seq);
    } else if ("conflict" in outcome) {
      const first = outcome.conflict;
      const who = this.on.who || (id => id);
      say("conflict", (first ? who(first.actor) + " recorded “" + actionWords(first.action) + "” first (seq " + first.seq + ")" : "Another event was recorded first") + ": nothing of yours was stored. " + (typeof this.on.conflict === "function" ? this.on.conflict(p) : this.on.conflict));
    } else if (outcome.refused) {
      const v = outcome.refused;
      const lines = ["refused: " + (v.message || outcome.error.message)];
      if (v.rule) lines.push("rule: " + v.rule);
      if (v.offered && v.offered.length) lines.push("you may: " + v.offered.join(" · "));
      lines.push("nothing was stored");
      say("refused", lines.join("\n"));
    } else {
      say("error", "not stored: " + outcome.error.message);
    }
  }
}
