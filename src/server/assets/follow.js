// The floor page: many games at a glance, live over one stream.

import { $, el } from "./dom.js";
import { api, signedIn } from "./api.js";

// Many games over one live stream (/api/stream?games=...): a judge can
// follow a whole floor without running out of the browser's connections.
// Each stored event refreshes only its own game's card.
const games = (new URLSearchParams(location.search).get("games") || "").split(",").filter(g => g);

// The outcome so far, in the board's words (points, scores, influence).
function strip(s) {
  const b = s.board;
  if (!b) return "";
  const parts = [];
  for (const key of ["points", "scores", "influence"]) {
    if (Array.isArray(b[key])) parts.push(b[key].map(p => (p.player || p.side || p.name) + " " + (p.points ?? p.score ?? p.influence)).join(" · "));
  }
  return parts.join("  ");
}

function byName(s, id) {
  const seat = (s.header.seats || []).find(x => x.id === id);
  return seat ? seat.name + " (" + id + ")" : id;
}

const cards = {};
function card(game) {
  if (cards[game]) return cards[game];
  const c = el("section", "table");
  c.dataset.game = game;
  const h = el("h2");
  const a = el("a", "", game);
  a.href = "/games/" + encodeURIComponent(game) + "/replay";
  h.append(a);
  c.append(h, el("div", "title"), el("div", "step"), el("div", "may-act"), el("div", "alert"), el("div", "strip"), el("div", "last"));
  $("tables").append(c);
  return (cards[game] = c);
}

async function refresh(game, lastEvent) {
  const c = card(game);
  try {
    const s = await api("/games/" + encodeURIComponent(game) + "/state?raw=0");
    const h = s.header;
    const title = [h.tournament, h.round !== undefined && h.round !== null ? "round " + h.round : null, h.table !== undefined && h.table !== null ? "table " + h.table : null].filter(x => x);
    c.querySelector(".title").textContent = title.join(", ") + (title.length ? " · " : "") + h.seats.map(x => x.name + " (" + x.id + ")").join(", ");
    c.querySelector(".step").textContent = s.step.reference;
    c.querySelector(".may-act").textContent = "may act: " + (s.may_act.length ? s.may_act.map(id => byName(s, id)).join(", ") : "no one");
    c.querySelector(".alert").textContent = s.awaiting_ruling ? "awaiting a judge's ruling: " + s.awaiting_ruling : "";
    c.classList.toggle("awaiting", !!s.awaiting_ruling);
    c.querySelector(".strip").textContent = strip(s);
    c.dataset.seq = s.seq;
    if (lastEvent) {
      c.querySelector(".last").textContent = "seq " + lastEvent.seq + " " + lastEvent.at + ": " + byName(s, lastEvent.actor) + " " + lastEvent.action.type;
      c.classList.remove("changed");
      void c.offsetWidth;
      c.classList.add("changed");
    }
  } catch (err) { c.querySelector(".alert").textContent = err.message; }
}

let source = null;
function connect() {
  if (source || games.length === 0) return;
  source = new EventSource("/api/stream?games=" + games.map(encodeURIComponent).join(","));
  source.onopen = () => {
    $("live").textContent = "live: " + games.length + " games over one stream";
    $("live").className = "on";
    // Opened or reopened: what was stored meanwhile is read again.
    games.forEach(g => refresh(g));
  };
  source.onerror = () => { $("live").textContent = "reconnecting…"; $("live").className = ""; };
  const pending = {};
  source.addEventListener("event", m => {
    const { game, event } = JSON.parse(m.data);
    clearTimeout(pending[game]);
    pending[game] = setTimeout(() => refresh(game, event), 50);
  });
}
// A page in the back/forward cache or closing gives its connection back.
addEventListener("pagehide", () => { if (source) { source.close(); source = null; } });
addEventListener("pageshow", () => connect());

if (games.length === 0) {
  $("error").textContent = "name the games to follow: /follow?games=table-1,table-2";
} else {
  games.forEach(g => card(g));
  signedIn.then(connect, err => { $("error").textContent = err.message; });
}
