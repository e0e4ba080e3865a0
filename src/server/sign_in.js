// A token in the address (#token=...) is traded once for the cookie the API
// reads (POST /api/session: HttpOnly, so no script reads it back), and the
// fragment leaves the address bar, history and bookmarks at once.
async function signIn() {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  if (!token) return;
  history.replaceState(null, "", location.pathname + location.search);
  const r = await fetch("/api/session", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token }) });
  if (!r.ok) {
    const body = await r.json().catch(() => ({}));
    throw new Error((body.error && body.error.message) || r.statusText);
  }
}
const signedIn = signIn();
