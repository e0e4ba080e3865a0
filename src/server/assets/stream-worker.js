// The shared worker that holds a browser's live streams: every tab of
// this server follows its games through here (live.js), so the whole
// browser holds one connection for them, not one per tab (a browser
// allows six per host over HTTP/1.1: the seventh tab froze). Each tab
// talks over its own port: {op: "follow", id, game, from} and {op:
// "close", id}; it hears {id, kind: "event", event} and {id, kind:
// "status", status}.

import { Hub } from "./hub.js";

const hub = new Hub();
let tabs = 0;

onconnect = e => {
  const port = e.ports[0];
  const tab = ++tabs;
  const key = id => tab + "/" + id;
  port.onmessage = m => {
    const { op, id, game, from } = m.data;
    if (op === "follow") hub.add(key(id), game, from, msg => port.postMessage({ id, ...msg }));
    else if (op === "close") hub.remove(key(id));
  };
  // A tab that goes away without closing its follows (it crashed, or was
  // killed): where the browser says so, its follows go too.
  port.addEventListener("close", () => hub.removeAll(k => k.startsWith(tab + "/")));
};
