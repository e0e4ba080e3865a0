// Many follows of many games over one connection: the live streams of a
// whole browser, held by the shared worker (stream-worker.js), or of one
// tab where a browser has no SharedWorker (live.js). One EventSource on
// /api/stream?games=a:N,b:M,... carries every followed game from where it
// is wanted; each event goes to the follows of its game. A follow of one
// more game, or of a game from an earlier seq, opens a new stream where
// each game left off (the server sends what was stored meanwhile first),
// so nothing is lost and the duplicates a follow already had are dropped.
// Used by a worker too: no DOM here.

// The server's cap on the games of one stream (limits::MAX_FOLLOWED_GAMES):
// more games take more streams.
const PER_STREAM = 64;

export class Hub {
  constructor() {
    // game -> {next: the seq the stream is to send next, subs: key -> sub,
    //          refused: the server refused to stream it (4xx), live}
    this.games = new Map();
    this.sources = [];
    this.opening = null;   // a reopen scheduled
    this.delay = 500;      // after a failed stream, growing to 10 s
    this.retrying = null;  // the timer that tries refused games again
  }

  // Follows `game` from seq `from` for `key`: `send({kind: "event", event})`
  // for each event after the last sent to it, `send({kind: "status",
  // status: "live" | "reconnecting"})` as its stream stands.
  add(key, game, from, send) {
    let g = this.games.get(game);
    if (!g) {
      g = { next: from, subs: new Map(), refused: false, live: false };
      this.games.set(game, g);
      this.reopen();
    } else if (from < g.next) {
      g.next = from;
      this.reopen();
    }
    g.subs.set(key, { last: from - 1, send });
    if (g.live && !this.opening) send({ kind: "status", status: "live" });
    if (g.refused) send({ kind: "status", status: "reconnecting" });
  }

  // Stops following for `key`. The game stays in the open stream until
  // the next reopen (closing a stream for it would cost a new one now).
  remove(key) {
    for (const [game, g] of this.games) {
      if (g.subs.delete(key) && g.subs.size === 0) this.games.delete(game);
    }
  }

  // Removes every key `owns` says is its own (a tab that went away).
  removeAll(owns) {
    for (const [game, g] of this.games) {
      for (const key of [...g.subs.keys()]) if (owns(key)) g.subs.delete(key);
      if (g.subs.size === 0) this.games.delete(game);
    }
  }

  // Opens the streams again, once for all the changes made meanwhile.
  reopen(after = 0) {
    if (this.opening) return;
    this.opening = setTimeout(() => { this.opening = null; this.open(); }, after);
  }

  open() {
    for (const s of this.sources) s.close();
    this.sources = [];
    const names = [...this.games.keys()].filter(n => !this.games.get(n).refused);
    for (let i = 0; i < names.length; i += PER_STREAM) this.stream(names.slice(i, i + PER_STREAM));
  }

  stream(names) {
    const list = names.map(n => encodeURIComponent(n) + ":" + this.games.get(n).next).join(",");
    const source = new EventSource("/api/stream?games=" + list);
    let opened = false;
    source.onopen = () => {
      opened = true;
      this.delay = 500;
      for (const n of names) {
        const g = this.games.get(n);
        if (!g) continue;
        g.live = true;
        this.tell(g, "live");
      }
    };
    source.addEventListener("event", m => {
      const { game, event } = JSON.parse(m.data);
      const g = this.games.get(game);
      if (!g) return;
      if (event.seq >= g.next) g.next = event.seq + 1;
      for (const sub of g.subs.values()) {
        if (event.seq <= sub.last) continue;
        sub.last = event.seq;
        sub.send({ kind: "event", event });
      }
    });
    // Reopened by hand, not by the browser: the browser would reconnect
    // with this address, from where each game was when it opened.
    source.onerror = () => {
      if (!this.sources.includes(source)) return;
      source.close();
      this.sources = this.sources.filter(s => s !== source);
      for (const n of names) {
        const g = this.games.get(n);
        if (!g) continue;
        g.live = false;
        this.tell(g, "reconnecting");
      }
      const delay = this.delay;
      this.delay = Math.min(this.delay * 2, 10000);
      // A stream refused outright may be one game's fault (gone, or no
      // longer readable by this browser): ask for each, and leave out the
      // refused ones so the others stay live.
      const checked = opened ? Promise.resolve() : this.check(names);
      checked.then(() => this.reopen(delay));
    };
    this.sources.push(source);
  }

  tell(g, status) {
    for (const sub of g.subs.values()) sub.send({ kind: "status", status });
  }

  // Asks the server for each game's head: a game it refuses (4xx) is left
  // out of the streams and asked for again every ten seconds.
  async check(names) {
    await Promise.all(names.map(async n => {
      const refused = await fetch("/api/games/" + encodeURIComponent(n)).then(r => r.status >= 400 && r.status < 500, () => false);
      const g = this.games.get(n);
      if (g) g.refused = refused;
    }));
    if ([...this.games.values()].some(g => g.refused) && !this.retrying) {
      this.retrying = setTimeout(() => {
        this.retrying = null;
        const refused = [...this.games].filter(([, g]) => g.refused).map(([n]) => n);
        this.check(refused).then(() => {
          if (refused.some(n => this.games.has(n) && !this.games.get(n).refused)) this.reopen();
        });
      }, 10000);
    }
  }
}
