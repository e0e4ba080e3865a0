// The board panel, shared by the replay, table and floor pages: a ruleset's
// board (GET /api/games/{game}/state's `board`, a typed projection of the
// state in the players' names) drawn as a judge would draw it on paper,
// the outcome strip, and the adjudication that stands. Nothing here is
// computed that the server did not compute.

import { el } from "./dom.js";

// A seat by name and id ("Alice (p1)"); anyone else (a judge) as named.
export function whoIn(header) {
  return id => {
    const seat = header && header.seats.find(s => s.id === id);
    return seat ? seat.name + " (" + id + ")" : id;
  };
}

// The outcome so far in the board's words: points, scores, influence.
export function strip(s) {
  const b = s.board;
  if (!b) return "";
  const parts = [];
  for (const key of ["points", "scores", "influence", "influence_lost"]) {
    if (Array.isArray(b[key])) parts.push(key.replace("_", " ") + ": " + b[key].map(p => (p.player || p.side || p.name) + " " + (p.points ?? p.score ?? p.influence ?? p.lost)).join(" · "));
  }
  return parts.join("   ");
}

// ---- The board, drawn per ruleset; any other board as a plain table. ----
// `root` is emptied and drawn into; `root.dataset.drawn` says which drawing.
export function drawBoard(root, ruleset, board) {
  root.textContent = "";
  const drawers = { doomtrooper: drawDoomtrooper, riftbound: drawRiftbound, wtactics: drawWtactics, rawdeal: drawRawdeal, gurps: drawGurps };
  if (!board) { root.dataset.drawn = "none"; root.append(el("div", "", "(this ruleset shows its reducer state below)")); return; }
  if (drawers[ruleset]) { root.dataset.drawn = ruleset; return drawers[ruleset](root, board); }
  root.dataset.drawn = "generic";
  root.append(generic(board));
}

function drawDoomtrooper(root, b) {
  const c = b.combat;
  if (!c) { root.append(el("div", "", "No combat yet.")); return; }
  root.append(el("div", "", "Combat " + c.number + (c.finished ? " (finished)" : "") + " · " + b.combats_finished + " finished"));
  const board = el("div", "board");
  const side = (role, s, rows) => {
    const d = el("div", "side " + role);
    d.append(el("h3", "", s.warrior), el("div", "who", role + " · " + s.player));
    for (const r of rows) d.append(el("div", "", r));
    return d;
  };
  const fates = (list, warrior) => list.filter(r => r.warrior === warrior).map(r => r.outcome);
  const rows = warrior => {
    const out = [];
    const d = c.first_combat;
    const rating = d.standing.find(r => r.warrior === warrior);
    if (rating) out.push("rating " + rating.rating);
    const result = fates(d.results, warrior), status = fates(d.status, warrior);
    if (result.length) out.push("result: " + result.join(", "));
    if (status.length) out.push("status: " + status.join(", "));
    return out;
  };
  board.append(side("attacker", c.attacker, rows(c.attacker.warrior)), el("div", "versus", "vs"), side("defender", c.defender, rows(c.defender.warrior)));
  const facts = el("dl", "facts");
  const fact = (k, v) => { if (v) facts.append(el("dt", "", k), el("dd", "", v)); };
  // Only what stands reads plainly: a countered one is struck, with its counter.
  const announced = (k, a) => {
    const dd = el("dd", "announced");
    if (!a) dd.textContent = c.repeats > 0 ? "to be announced again (the combatants changed)" : "-";
    else if (a.countered_by) dd.append(el("s", "", a.name), el("span", "by", "seq " + a.seq + ", countered by " + a.countered_by));
    else dd.textContent = a.name + " (seq " + a.seq + ")";
    facts.append(el("dt", "", k), dd);
  };
  announced("battle tactic", c.battle_tactic);
  announced("warzone", c.warzone);
  fact("strike order", c.strike_order);
  fact("equipment", c.equipment.map(e => e.player + ": " + e.items.join(", ")).join("; "));
  const mods = el("dd", "modifiers");
  if (!c.modifiers.length) mods.textContent = "none";
  for (const m of c.modifiers) mods.append(el("div", "", "seq " + m.seq + " · " + m.player + " · " + m.what + " " + m.name + (m.combat ? " (" + m.combat + ")" : "")));
  facts.append(el("dt", "", "standing modifiers"), mods);
  fact("to award", c.award);
  fact("ended by", c.ended_by);
  fact("points awarded", c.first_combat.points.map(p => p.player + " " + p.points).join(", "));
  if (c.second_combat) {
    const s = c.second_combat;
    fact("second combat", [s.standing.map(r => r.warrior + " " + r.rating).join(", "), s.results.map(r => r.warrior + " " + r.outcome).join(", "), s.points.map(p => p.player + " " + p.points).join(", ")].filter(x => x).join(" · "));
  }
  board.append(facts);
  const effects = el("ol", "effects");
  for (const e of c.effects) {
    const li = el("li", e.stands ? "stands" : "countered");
    const words = "seq " + e.seq + " · " + e.player + " · " + e.what + (e.card ? " " + e.card : "") + (e.counters != null ? " → seq " + e.counters : "") + (e.detail ? ": " + e.detail : "");
    li.append(el("span", "effect", words));
    if (e.countered_by) li.append(el("span", "by", "countered by " + e.countered_by));
    effects.append(li);
  }
  board.append(effects);
  root.append(board);
}

// Riftbound: the battlefields side by side, each with its controller and
// units; the combat and its showdown (Focus, the Chain); base, trash, scoring.
function drawRiftbound(root, b) {
  const t = b.turn;
  const top = t ? "Turn " + t.number + ": " + t.player + (t.conquered.length ? " · conquered this turn: " + t.conquered.join(", ") : "") + (t.ended ? " · over: the next in turn order begins the next" : "") : "No turn yet";
  root.append(el("div", "", top + " · victory at " + b.victory_score));
  if (b.winner) root.append(el("div", "winner", b.winner + " wins"));
  const stats = u => ["Might " + u.might, ...u.assault.map(x => "Assault " + x), ...u.shield.map(x => "Shield " + x), ...(u.tank ? ["Tank"] : [])].join(", ");
  // Units by owner, in the board's order (seat order).
  const units = (box, list) => {
    for (const player of [...new Set(list.map(u => u.player))]) {
      box.append(el("div", "owner", player));
      const ul = el("ul", "units");
      for (const u of list.filter(u => u.player === player)) {
        const li = el("li", "", u.name);
        li.append(el("span", "stats", stats(u)));
        if (u.combat_might !== null && u.combat_might !== u.might) li.append(el("span", "stats", "· Might " + u.combat_might + " in this combat"));
        if (u.damage > 0) li.append(el("span", "hurt", "damage " + u.damage));
        ul.append(li);
      }
      box.append(ul);
    }
  };
  const c = b.combat;
  const fields = el("div", "fields");
  for (const f of b.battlefields) {
    const fight = c && c.battlefield === f.name;
    const d = el("div", "side field" + (f.contested_by ? " contested" : "") + (fight ? " fight" : ""));
    d.append(el("h3", "", f.name));
    const facts = [f.controller ? "controlled by " + f.controller : "uncontrolled"];
    if (f.contested_by) facts.push("contested by " + f.contested_by);
    if (f.scored_this_turn) facts.push("scored this turn");
    d.append(el("div", "who", facts.join(" · ")));
    if (fight) d.append(el("div", "", "combat: " + c.attacker + " attacks, " + c.defender + " defends"));
    if (f.units.length) units(d, f.units); else d.append(el("div", "who", "no units"));
    fields.append(d);
  }
  root.append(fields);
  const facts = el("dl", "facts");
  const fact = (k, v) => { if (v) facts.append(el("dt", "", k), el("dd", "", v)); };
  fact("pending combats", b.pending_combats.map(p => p.battlefield + ": " + p.attacker + " attacks, " + p.defender + " defends").join("; "));
  if (c) {
    fact("combat", c.battlefield + " · " + c.step);
    fact("Might summed", c.attacker + " " + c.attacker_might + " · " + c.defender + " " + c.defender_might);
    fact("assigned", c.attacker_assigned.length ? c.attacker + ": " + c.attacker_assigned.map(a => a.unit + " " + a.damage).join(", ") : "");
    fact("assigns now", c.assigning);
  }
  const s = b.showdown;
  if (s) {
    fact("showdown", s.battlefield + (s.combat ? "" : " (no combat)") + " · " + s.stage);
    fact("relevant", s.relevant.join(", "));
    fact("Focus", s.focus || "-");
    fact("invited", s.invited);
  }
  fact("trash", b.trash.join(", "));
  root.append(facts);
  if (b.base.length) {
    const base = el("div", "side");
    base.append(el("h3", "", "Base"));
    units(base, b.base);
    root.append(base);
  }
  if (s) {
    root.append(el("h3", "sub", s.chain.length ? "The Chain (resolves newest first)" : "The Chain is empty"));
    const chain = el("ol", "effects");
    s.chain.forEach((i, n) => chain.append(el("li", n === s.chain.length - 1 ? "next" : "", "seq " + i.seq + " · " + i.player + " · " + i.kind + " " + i.card + (n === s.chain.length - 1 ? " · resolves next" : ""))));
    root.append(chain);
  }
  if (b.scoring.length) {
    root.append(el("h3", "sub", "Scoring"));
    const list = el("ol", "effects");
    for (const sc of b.scoring) list.append(el("li", "", "seq " + sc.seq + " · " + sc.said));
    root.append(list);
  }
}

// WTactics: the attack as lines, each attacker against its defenders, the
// responses played, then the creatures (marked, dead) and the piles.
function drawWtactics(root, b) {
  const t = b.turn;
  root.append(el("div", "", t ? "turn " + t.number + ": " + t.active + " is the active player" + (t.attackers_announced ? " (attackers announced)" : "") : "no turn yet"));
  const fighter = f => f.name + " ATK " + f.atk + " DEF " + f.def;
  const a = b.attack;
  if (a) {
    root.append(el("h3", "", "attack " + a.number + (a.finished ? " (finished)" : "") + ": " + a.attacking_player + " attacks " + a.defending_player + " · " + a.defense));
    const lines = el("ol", "effects");
    for (const l of a.attackers) {
      // The attacker died: a red line, not struck (a struck line is one that does not count).
      const li = el("li", l.result && l.result.dead.includes(l.attacker.name) ? "fallen" : "stands");
      const against = l.defenders.length ? " ⟶ " + l.defenders.map(fighter).join(" and ") : " ⟶ undefended";
      li.append(el("span", "effect", fighter(l.attacker) + against));
      const notes = [l.status, l.chosen_by ? "chosen by " + l.chosen_by : null, l.damage != null ? l.damage + " damage" : null, l.result && l.result.dead.length ? "dead: " + l.result.dead.join(", ") : null].filter(x => x);
      li.append(el("span", "by", notes.join(" · ")));
      lines.append(li);
    }
    root.append(lines);
    if (a.influence_lost != null) root.append(el("div", "", "influence lost in this attack: " + a.influence_lost));
    if (a.responses.length) {
      const ul = el("ul");
      for (const r of a.responses) ul.append(el("li", "", "seq " + r.seq + " · " + r.player + " · " + r.kind + " " + r.card + ", " + r.during));
      root.append(el("div", "", "responses"), ul);
    }
  }
  const creatures = el("table", "generic");
  const head = el("tr");
  ["creature", "owner", "ATK", "DEF", ""].forEach(h => head.append(el("th", "", h)));
  creatures.append(head);
  for (const c of b.creatures) {
    const tr = el("tr");
    const marks = [c.marked ? "marked" : null, c.dead ? "dead" : null, c.enchantments.length ? "enchanted: " + c.enchantments.join(", ") : null].filter(x => x).join(" · ");
    [c.name, c.player, c.atk, c.def, marks].forEach(v => tr.append(el("td", "", String(v))));
    creatures.append(tr);
  }
  root.append(el("h3", "", "creatures"), creatures);
  for (const p of b.discard_piles) root.append(el("div", "", "discard pile of " + p.player + ": " + (p.cards.length ? p.cards.join(", ") : "-")));
}

// Raw Deal: the breakdowns of the play sequence as a stack (each reversal
// indented on the card it answers), cost and damage as computed, then the
// Ring Areas and the other areas.
function drawRawdeal(root, b) {
  root.append(el("div", "", "rounding: " + b.rounding + " · ended so far: " + endedWords(b.breakdowns_ended, b.not_played, b.reversed)));
  // The turn's earlier sequences, folded: one <details> each, its breakdowns inside.
  if (b.earlier.length) root.append(el("h3", "", "earlier this turn"));
  for (const e of b.earlier) {
    const d = el("details", "earlier");
    d.append(el("summary", "", "seq " + e.seq + " · " + e.player + " · " + e.card + ": " + e.outcome + " · " + endedWords(e.breakdowns.length, e.not_played, e.reversed)));
    const list = el("ol", "effects");
    for (const f of e.breakdowns) {
      const li = el("li", f.outcome.startsWith("successfully") ? "stands" : "countered", "seq " + f.seq + " · " + f.player + " · " + f.card + ": " + f.outcome);
      li.style.marginLeft = (2 * f.depth) + "em";
      list.append(li);
    }
    d.append(list);
    root.append(d);
  }
  const q = b.sequence;
  if (q) {
    root.append(el("h3", "", q.finished ? "the last play sequence (finished)" : "the play sequence under way"));
    const stack = el("ol", "effects");
    for (const d of q.breakdowns) {
      const li = el("li", d.outcome && d.outcome.startsWith("completely reversed") ? "countered" : "stands");
      li.style.marginLeft = (2 * d.depth) + "em";
      const head = "seq " + d.seq + " · " + d.player + " · " + d.card + (d.reversal_of ? " (reversal of " + d.reversal_of + ")" : "") + " → " + d.opponent;
      li.append(el("span", "effect", head));
      const facts = [
        d.step ? "at " + d.step : null,
        d.priority ? "priority: " + d.priority : null,
        "cost " + (d.cost ?? d.printed_cost) + (d.cost != null && d.cost !== d.printed_cost ? " (printed " + d.printed_cost + ")" : ""),
        d.damage != null ? "damage " + d.damage + (d.printed_damage != null && d.printed_damage !== d.damage ? " (printed " + d.printed_damage + ")" : "") : null,
        d.cannot_be_reversed ? "cannot be reversed" : null,
        d.reversed ? "reversed" : null,
        d.overturned.length ? "overturned: " + d.overturned.join(", ") : null,
        d.ends_turn ? "ends the turn" : null,
        d.outcome,
      ].filter(x => x);
      li.append(el("div", "by", facts.join(" · ")));
      if (d.awaiting_ruling) li.append(el("div", "alert", "awaiting a judge: " + d.awaiting_ruling));
      stack.append(li);
    }
    root.append(stack);
  }
  for (const p of b.ring_area) root.append(el("div", "", "Ring Area of " + p.player + ": " + (p.cards.length ? p.cards.join(", ") : "-")));
  for (const a of b.areas) for (const p of a.piles) root.append(el("div", "", a.area + " of " + p.player + ": " + (p.cards.length ? p.cards.join(", ") : "-")));
}

// "4 breakdowns: 3 successfully played, 1 completely reversed (5c)", as `state` says it.
function endedWords(n, notPlayed, reversed) {
  const how = [[n - notPlayed - reversed, "successfully played"], [reversed, "completely reversed (5c)"], [notPlayed, "not played (2d)"]]
    .filter(([k]) => k > 0).map(([k, what]) => k + " " + what);
  return n + " breakdown" + (n === 1 ? "" : "s") + (how.length ? ": " + how.join(", ") : "");
}

// GURPS: the turn sequence as a ring, in order, whose turn it is marked,
// each character's maneuver and the limits it puts in force.
function drawGurps(root, b) {
  root.append(el("div", "", b.time + " · " + b.combats_ended + " combats ended"));
  const c = b.combat;
  if (c) {
    root.append(el("h3", "", "combat " + c.number + ", second " + c.second + (c.ended ? " (ended)" : "") + (c.turn ? " · turn: " + c.turn : "")));
    for (const t of c.ties) root.append(el("div", "alert", "tie to settle: " + t.combatants.join(", ") + " (" + t.settled_by + ")"));
    const ring = el("div", "ring");
    c.sequence.forEach((ch, i) => {
      const d = el("div", "character" + (ch.acting ? " acting" : "") + (ch.active ? "" : " inactive"));
      d.append(el("div", "", (i + 1) + ". " + ch.name), el("div", "who", ch.player + " · " + ch.side + " · " + (ch.pc ? "PC" : "NPC")));
      d.append(el("div", "who", "Basic Speed " + ch.basic_speed + " · DX " + ch.dx + (ch.active ? "" : " · inactive")));
      if (ch.maneuver) d.append(el("div", "", ch.maneuver));
      if (ch.limits) d.append(el("div", "limits", ch.limits));
      ring.append(d);
    });
    root.append(ring);
  }
  if (b.latest) root.append(el("div", "", "the GM's record (" + b.entries + " entries), latest at seq " + b.latest.seq + ": " + b.latest.text));
}

// Any board: objects as rows, lists of objects as tables.
function generic(v) {
  if (Array.isArray(v)) {
    if (v.length && v.every(x => x && typeof x === "object" && !Array.isArray(x))) {
      const t = el("table", "generic");
      const keys = [...new Set(v.flatMap(Object.keys))];
      const tr = el("tr");
      keys.forEach(k => tr.append(el("th", "", k.replaceAll("_", " "))));
      t.append(tr);
      for (const x of v) {
        const row = el("tr");
        keys.forEach(k => { const td = el("td"); td.append(generic(x[k])); row.append(td); });
        t.append(row);
      }
      return t;
    }
    return document.createTextNode(v.map(x => typeof x === "object" ? JSON.stringify(x) : String(x)).join(", ") || "-");
  }
  if (v && typeof v === "object") {
    const dl = el("dl", "facts");
    for (const [k, x] of Object.entries(v)) {
      const dd = el("dd");
      dd.append(generic(x));
      dl.append(el("dt", "", k.replaceAll("_", " ")), dd);
    }
    return dl;
  }
  return document.createTextNode(v === null || v === undefined ? "-" : String(v));
}

// Judges, the order of priority, penalties and notes that stand, as list
// items of `ul` (`who` names an actor).
export function drawAdjudication(ul, s, who) {
  ul.textContent = "";
  if (s.priority && s.priority.length) ul.append(el("li", "", "order of priority: " + s.priority.map(who).join(", ")));
  if (s.judges.length) ul.append(el("li", "", "judges: " + s.judges.join(", ")));
  const rulingWords = { rewind: "rewind to after seq ", decide: "decides on seq ", add_judge: "adds a judge, about seq " };
  for (const r of s.rulings.filter(r => r.kind !== "penalty")) ul.append(el("li", "ruling", "ruling (seq " + r.seq + ") by " + r.judge + ": " + (rulingWords[r.kind] || r.kind + " about seq ") + r.concerns + ": " + r.reason + (r.rule ? " (" + r.rule + ")" : "")));
  for (const p of s.penalties) ul.append(el("li", "penalty", "penalty (seq " + p.seq + ", about seq " + p.concerns + "): " + p.penalty + " for " + who(p.seat) + ": " + p.infraction + "; fix: " + p.fix + " (judge " + p.judge + ")"));
  for (const n of s.notes) ul.append(el("li", "note", "note (seq " + n.seq + ", about seq " + n.concerns + ") by " + who(n.by) + ": " + n.text));
}
