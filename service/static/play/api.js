
export const STORE_KEY = "cardtable.play.match";

export const S = {
  games: [], game: null, matchId: null, token: null, seat: 0, names: [], ai: [], level: 3,
  view: null, moves: [], version: null, stateId: null, shownVersion: null, busy: false,
  stream: null, streamOpen: false, streamed: 0, streamedEntries: [], viewReads: 0, refreshing: false, dirty: false, overShown: false,
  shownRounds: 0, loggedVersion: 0, lastRoundEnd: null,
};

// -- the API --------------------------------------------------------------------------------------

export class ApiError extends Error {
  constructor(status, problem) {
    super(problemText(status, problem));
    this.status = status;
    this.code = problem && problem.code;
    this.option = problem && problem.option;
  }
}

export function problemText(status, p) {
  if (!p) return `The server answered ${status}.`;
  let text = p.detail || p.title || `The server answered ${status}.`;
  if (p.errors && typeof p.errors === "object") {
    // the detail usually says the first error already: add only the ones it does not say
    const more = Object.entries(p.errors).map(([k, v]) => `${k}: ${[].concat(v).join(", ")}`)
      .filter((line) => !text.includes(line));
    if (more.length) text += (/[.!?]$/.test(text) ? " " : ". ") + more.join("; ");
  }
  return text;
}

/** One API call; a POST with an ``idempotencyKey`` is retried once if the network drops, and the server
 * answers the retry with its first answer instead of playing the move twice. */
export async function api(method, path, body, { idempotencyKey = null } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (S.token) headers.Authorization = "Bearer " + S.token;
  if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
  const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
  let res;
  try {
    res = await fetch(path, init);
  } catch (err) {
    if (!idempotencyKey) throw err;
    await new Promise((r) => setTimeout(r, 500));
    res = await fetch(path, init);
  }
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

export const newKey = () => (window.crypto && crypto.randomUUID ? crypto.randomUUID()
  : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`);
export const matchPath = (suffix = "") => `/v1/matches/${encodeURIComponent(S.matchId)}${suffix}`;

