// A game's live stream, as the pages follow it: every event stored from a
// seq on, then each new one (GET /api/games/{game}/stream, Server-Sent
// Events whose id is the seq, so the browser resumes where it was after a
// drop). The pages call only `follow`, so how a browser holds its streams
// (one EventSource per tab today) can change without touching them.

// Follows `game` from seq `from`. `onEvent(event)` gets each stored event
// (the canonical event, parsed); `onStatus("live" | "reconnecting" |
// "closed")` says how the stream stands. Returns `{close()}`.
export function follow(game, from, { onEvent, onStatus = () => {} }) {
  let source = null;
  let last = from - 1;   // the last seq seen, to reopen from after a close
  let timer = null;
  let closed = false;
  const open = () => {
    source = new EventSource("/api/games/" + encodeURIComponent(game) + "/stream?from=" + (last + 1));
    source.onopen = () => onStatus("live");
    source.onerror = () => {
      onStatus("reconnecting");
      // The browser reconnects by itself after a dropped connection, but
      // not after an answer that is not a stream (a server restarting
      // behind a proxy, a 503): then open again, from the last seq seen.
      if (source.readyState === EventSource.CLOSED && !closed) {
        clearTimeout(timer);
        timer = setTimeout(open, 2000);
      }
    };
    source.addEventListener("event", m => {
      const event = JSON.parse(m.data);
      if (event.seq <= last) return;
      last = event.seq;
      onEvent(event);
    });
  };
  open();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      if (source) source.close();
      onStatus("closed");
    },
  };
}
