// The pages' one way to the API. A page opened with #token=... trades the
// token once for the HttpOnly cookie (POST /api/session) and drops it from
// the address bar; from then on the browser sends the cookie with every
// request, so no script ever holds the token. Every call waits for that
// sign-in first.

async function signIn() {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  if (!token) return null;
  // Out of the address bar, history and bookmarks at once.
  history.replaceState(null, "", location.pathname + location.search);
  const r = await fetch("/api/session", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token }) });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error((body.error && body.error.message) || r.statusText);
  return body.grant;
}

// Settles once the address's token (if any) is the cookie.
export const signedIn = signIn();

// An answer of the API that is not a success: its status, its code
// (`error.code`: refused, conflict...) and the whole body. A lost
// connection is not an ApiError: fetch rejects with a TypeError, and the
// caller can tell that nothing was answered.
export class ApiError extends Error {
  constructor(status, body, fallback) {
    super((body.error && body.error.message) || fallback);
    this.status = status;
    this.code = body.error && body.error.code;
    this.body = body;
  }
}

// A JSON call to /api + path.
export async function api(path, init) {
  await signedIn;
  const r = await fetch("/api" + path, init);
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new ApiError(r.status, body, r.statusText);
  return body;
}

// Who this browser is signed in as: the cookie's grant ({role, game,
// seat | judge}), or null.
export async function whoAmI() {
  const v = await api("/session");
  return v.grant;
}

export const gamePath = game => "/games/" + encodeURIComponent(game);

// Appends `action` as `actor` at `expectSeq`. The append is idempotent at
// a seq: sent again after a lost answer, the server finds it stored and
// answers 200 with `duplicate: true`; if another event took the seq, it
// answers 409 (`conflict`), and nothing of this action is stored.
export function append(game, actor, action, expectSeq) {
  return api(gamePath(game) + "/events", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ actor, action, expect_seq: expectSeq }),
  });
}

// Event `seq` of the game as stored (its actor, action and hash), or null.
export async function storedEvent(game, seq) {
  const page = await api(gamePath(game) + "/events?from=" + seq + "&limit=1");
  return page.events[0] && page.events[0].seq === seq ? page.events[0] : null;
}

// {seq, hash} of an event of the game, as a ruling or note names it.
export async function eventAt(game, seq) {
  const e = await storedEvent(game, seq);
  if (!e) throw new Error("there is no event " + seq + " in " + game);
  return { seq, hash: e.hash };
}

// Forgets this browser's cookie (a shared tablet at the venue).
export function signOut() {
  return fetch("/api/session", { method: "DELETE" });
}
