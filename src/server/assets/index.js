// The index page: the games the caller may read, each with its ruleset,
// table, step and status (from its summary), linked to its replay, its
// table page and the floor; the ticked ones open together on the floor.

import { $, el } from "./dom.js";
import { api, gamePath, signOut, signedIn } from "./api.js";

const STATUS = { waiting_for_a_judge: "waiting for a judge", in_progress: "in progress", over: "over" };

function link(text, href) {
  const a = el("a", "", text);
  a.href = href;
  return a;
}

function row(name) {
  const tr = el("tr");
  tr.dataset.game = name;
  const tick = el("input");
  tick.type = "checkbox";
  tick.value = name;
  tick.onchange = () => { $("follow").disabled = !document.querySelector("#games input:checked"); };
  const cell = (cls, ...content) => { const td = el("td", cls); td.append(...content); return td; };
  tr.append(
    cell("tick", tick),
    cell("name", link(name, gamePath(name) + "/replay")),
    cell("ruleset", "…"),
    cell("table"),
    cell("step"),
    cell("status"),
    cell("links", link("replay", gamePath(name) + "/replay"), link("table", gamePath(name) + "/table"), link("floor", "/follow?games=" + encodeURIComponent(name))),
  );
  return tr;
}

function fill(tr, s) {
  const set = (cls, text) => { tr.querySelector("td." + cls).textContent = text; };
  tr.dataset.status = s.status;
  set("ruleset", s.ruleset);
  const where = [s.tournament, s.round != null ? "round " + s.round : null, s.table != null ? "table " + s.table : null].filter(x => x);
  set("table", [where.join(", "), s.seats.map(x => x.name).join(" v ")].filter(x => x).join(" · "));
  set("step", s.step.reference.includes(s.step.title) ? s.step.reference : s.step.reference + ": " + s.step.title);
  set("status", STATUS[s.status]);
}

async function main() {
  await signedIn;
  const names = await api("/games");
  const body = $("games").tBodies[0];
  body.textContent = "";
  if (names.length === 0) {
    const td = el("td", "", "no games");
    td.colSpan = 7;
    const tr = el("tr");
    tr.append(td);
    body.append(tr);
    return;
  }
  const rows = names.map(row);
  body.append(...rows);
  // The browser asks a few at a time; each row fills in as its answer comes.
  await Promise.all(names.map((name, i) => api(gamePath(name) + "/summary")
    .then(s => fill(rows[i], s), err => { rows[i].querySelector("td.status").textContent = err.message; })));
  document.body.dataset.loaded = "true";
}

main().catch(err => { $("games-error").textContent = err.message; });
$("follow").onclick = () => {
  const games = [...document.querySelectorAll("#games input:checked")].map(t => encodeURIComponent(t.value));
  location.href = "/follow?games=" + games.join(",");
};
$("forget").onclick = () => signOut().then(() => location.reload());
