// The index page: the games the caller may read, each linked to its
// replay, and a link to follow the ticked ones on the floor page.

import { signOut, signedIn } from "./api.js";

signedIn.then(() => fetch("/api/games")).then(r => r.json()).then(names => {
  const ul = document.getElementById("games");
  ul.textContent = "";
  if (names.error) { ul.textContent = names.error.message; return; }
  if (!Array.isArray(names) || names.length === 0) { ul.textContent = "no games"; return; }
  for (const name of names) {
    const li = document.createElement("li");
    const tick = document.createElement("input");
    tick.type = "checkbox";
    tick.value = name;
    tick.onchange = () => {
      document.getElementById("follow").disabled = !document.querySelector("#games input:checked");
    };
    li.append(tick, " ");
    const a = document.createElement("a");
    a.href = "/games/" + encodeURIComponent(name) + "/replay";
    a.textContent = name;
    li.append(a);
    ul.append(li);
  }
}).catch(err => { document.getElementById("games").textContent = err.message; });
// The floor page follows many games over one stream (a browser allows six
// connections per host; eight replay tabs would stall the seventh).
document.getElementById("follow").onclick = () => {
  const games = [...document.querySelectorAll("#games input:checked")].map(t => encodeURIComponent(t.value));
  location.href = "/follow?games=" + games.join(",");
};
document.getElementById("forget").onclick = () => signOut().then(() => location.reload());
