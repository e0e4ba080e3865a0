// A game's live stream, as the pages follow it: every event stored from a
// seq on, then each new one. The pages call only `follow`; behind it, all
// of a browser's tabs share one connection to the server through a shared
// worker (stream-worker.js: one EventSource on /api/stream for every game
// any tab follows). A browser with no SharedWorker, or whose worker fails
// to start, follows through a hub of this tab's own (hub.js): one
// connection per tab, whatever the number of games it follows.

import { Hub } from "./hub.js";

// Each follow of this tab: id -> {game, last, onEvent, onStatus}.
const follows = new Map();
let ids = 0;
let link = null;

// The worker's name carries the protocol's version: a tab of a newer
// server never talks to a worker an older page started.
const WORKER = "arbiter-stream/1";

function connect() {
  if (link) return link;
  if (typeof SharedWorker === "function") {
    try {
      const worker = new SharedWorker("/assets/stream-worker.js", { type: "module", name: WORKER });
      worker.port.onmessage = m => heard(m.data);
      worker.onerror = () => {
        // The worker did not start: follow here instead, from where each was.
        link = local();
        for (const [id, f] of follows) link.follow(id, f.game, f.last + 1);
      };
      link = {
        follow: (id, game, from) => worker.port.postMessage({ op: "follow", id, game, from }),
        close: id => worker.port.postMessage({ op: "close", id }),
      };
      return link;
    } catch (_) { /* no shared worker here: the local hub */ }
  }
  return (link = local());
}

function local() {
  const hub = new Hub();
  return {
    follow: (id, game, from) => hub.add(id, game, from, msg => heard({ id, ...msg })),
    close: id => hub.remove(id),
  };
}

function heard({ id, kind, event, status }) {
  const f = follows.get(id);
  if (!f) return;
  if (kind === "status") return f.onStatus(status);
  if (event.seq <= f.last) return;
  f.last = event.seq;
  f.onEvent(event);
}

// Follows `game` from seq `from`. `onEvent(event)` gets each stored event
// (the canonical event, parsed), in seq order, once; `onStatus("live" |
// "reconnecting" | "closed")` says how the stream stands. Returns `{close()}`.
export function follow(game, from, { onEvent, onStatus = () => {} }) {
  const id = ++ids;
  follows.set(id, { game, last: from - 1, onEvent, onStatus });
  connect().follow(id, game, from);
  return {
    close() {
      if (!follows.delete(id)) return;
      link.close(id);
      onStatus("closed");
    },
  };
}
