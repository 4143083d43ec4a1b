import { S, api, newKey, matchPath } from "./api.js";
import { $, el, richText, plural } from "./cards.js";
import { renderer } from "./renderers.js";
import { render, setMovesEnabled, describeEvent, showRoundSummary, showGameOver } from "./draw.js";
import { hideWaitingRoom, offerRematch, showWaitingRoom } from "./friends.js";

// -- the match loop -------------------------------------------------------------------------------

export const isOver = (view) => Array.isArray(view.winners);

/* The match follows its event stream (GET /v1/matches/{id}/events, Server-Sent Events, the seat token in
 * ?access_token= since an EventSource cannot send headers): the server says when anyone moved — an AI seat,
 * or another person at the table — and the page then reads its view once. Nothing asks again on a timer.
 * The browser's EventSource reconnects by itself after a drop, sending the last event's id (the version):
 * the server resumes from there (Last-Event-ID), so no move is missed. */
export function follow() {
  unfollow();
  const q = new URLSearchParams({ access_token: S.token, since: String(S.version || 0) });
  const source = new EventSource(matchPath(`/events?${q}`));
  S.stream = source;
  source.addEventListener("open", () => { S.streamOpen = true; $("stream-error").textContent = ""; });
  source.addEventListener("move", (e) => onStreamed(JSON.parse(e.data)));
  // after the end: a rematch someone started, with this seat's place and token in it (this stream only)
  source.addEventListener("rematch", (e) => offerRematch(JSON.parse(e.data)));
  source.addEventListener("error", (e) => {
    // a server's error event carries data (then the browser reconnects by itself); a refused
    // connection (the match expired, a token that is no longer a seat's) closes the stream for good
    const problem = e.data ? JSON.parse(e.data) : null;
    if (problem && problem.code === "match_not_found") unfollow();
    if (problem || source.readyState === EventSource.CLOSED) {
      $("stream-error").textContent = problem ? problem.detail : "The live connection to the table was closed.";
    }
  });
}

export function unfollow() {
  if (S.stream) S.stream.close();
  S.stream = null;
  S.streamOpen = false;
}

/** One log entry from the stream: its events go to the log, and a newer version than the page shows is read. */
function onStreamed(entry) {
  S.streamed += 1;
  S.streamedEntries.push({ version: entry.version, seat: entry.seat, ai: entry.ai });
  absorbEvents((entry.events || []).map((ev) => Object.assign({}, ev, { version: entry.version })));
  if (typeof S.onEntry === "function") S.onEntry(entry);
  if (!Number.isInteger(S.version) || entry.version > S.version) refresh();
}

/** Read the view again (once, however many entries arrived while it was being read). */
export async function refresh() {
  if (S.refreshing) { S.dirty = true; return; }
  S.refreshing = true;
  try {
    do {
      S.dirty = false;
      const match = S.matchId;
      const { version, view } = await fetchView();
      if (match !== S.matchId) { S.dirty = true; continue; } // a rematch began meanwhile: read the new one
      await showView(view, version);
    } while (S.dirty);
  } catch (err) {
    if (!S.left) $("move-error").textContent = err.message;
  } finally {
    S.refreshing = false;
  }
}

/** Show a view of version ``version`` (an older one than shown is dropped); the legal moves when it is ours. */
export async function showView(view, version) {
  if (Number.isInteger(version) && Number.isInteger(S.shownVersion) && version < S.shownVersion) return;
  if (Number.isInteger(version)) { S.shownVersion = version; S.version = Math.max(S.version || 0, version); }
  if (S.match && S.match.status === "waiting") { S.view = view; showWaitingRoom(S.match); return; }
  if (!$("waiting").classList.contains("hidden")) { hideWaitingRoom(); $("match").classList.remove("hidden"); }
  setView(view);
  if (isOver(view)) {
    S.moves = [];
    render();
    if (!S.overShown) showGameOver(); // once, whichever answer (a move's, a read's) showed the end first
    S.overShown = true;
    // with other people at the table, keep listening: one of them may start a rematch
    if (!S.ai.some((ai, seat) => !ai && seat !== S.seat)) unfollow();
    return;
  }
  if (view.to_move === S.seat) {
    const legal = await api("GET", matchPath("/legal-moves"));
    if (legal.version !== S.version) { S.dirty = true; return; } // someone moved (or a rematch began): read again
    S.moves = legal.moves || [];
    S.stateId = legal.state_id; // sent back with the move: it is played on this very state or refused
  } else {
    S.moves = [];
  }
  render();
}

/** GET the seat's view: ``{version, view}``, logging the events since the last one logged. */
export async function fetchView() {
  S.viewReads += 1;
  const match = S.matchId;
  const body = await api("GET", matchPath(`?since=${S.loggedVersion}`));
  if (match !== S.matchId) return { version: null, view: body.view }; // read for a match left meanwhile
  if (Array.isArray(body.seats)) {
    S.match = body; // the match around the view: its status (waiting, active, over) and its seats
    S.names = body.seats.map((s) => s.name || (s.ai ? `AI ${s.seat}` : `Seat ${s.seat}`));
    S.ai = body.seats.map((s) => !!s.ai);
  }
  absorbEvents(body.events || []);
  return { version: body.version, view: body.view && typeof body.view === "object" ? body.view : body };
}

export function setView(view) {
  S.view = view;
  const rounds = (view.round_scores || []).length;
  if (rounds > S.shownRounds) {
    showRoundSummary(view, rounds);
    S.shownRounds = rounds;
  }
}

/** Log events (from move and advance answers, and from GET ?since=); each carries the version of its move,
 * so an event seen twice is logged once. */
export function absorbEvents(events) {
  if (!events || !events.length) return;
  let newest = S.loggedVersion;
  for (const ev of events) {
    if (Number.isInteger(ev.version)) {
      if (ev.version <= S.loggedVersion) continue;
      newest = Math.max(newest, ev.version);
    }
    if (/_end$/.test(ev.type) && ev.type !== "game_end") S.lastRoundEnd = ev;
    const text = describeEvent(ev);
    if (text) $("log").append(el("li", {}, ...[].concat(text)));
  }
  S.loggedVersion = newest;
  const log = $("log");
  log.scrollTop = log.scrollHeight;
}

export async function playMove(move) {
  if (S.busy) return;
  S.busy = true;
  $("move-error").textContent = "";
  $("hint").classList.add("hidden");
  setMovesEnabled(false);
  try {
    const body = { move, expected_version: S.version };
    if (S.stateId) body.expected_state_id = S.stateId;
    const res = await api("POST", matchPath("/moves"), body, { idempotencyKey: newKey() });
    absorbEvents(res.events || []);
    await showView(res.view, res.version);
  } catch (err) {
    $("move-error").textContent = err.message;
    refresh();
  } finally {
    S.busy = false;
    setMovesEnabled(true);
  }
}

export async function showHint() {
  const box = $("hint");
  box.classList.remove("hidden");
  box.replaceChildren(el("span", { class: "waiting", text: "The AI is thinking about your hand…" }));
  $("hint-button").disabled = true;
  try {
    const h = await api("GET", matchPath(`/hint?level=${Math.max(S.level, 3)}`));
    const r = renderer();
    const key = JSON.stringify(sortKeys(h.move));
    document.querySelectorAll("button.move").forEach((b) => b.classList.toggle("suggested", b.dataset.key === key));
    const parts = [el("strong", {}, "AI suggests: ", ...r.describeMove(h.move, S.view))];
    if (h.explanation) parts.push(el("div", { class: "explanation" }, ...richText(h.explanation, S.view)));
    const facts = [];
    const signed = (x) => `${x >= 0 ? "+" : ""}${x.toFixed(1)}`;
    const best = (h.alternatives || [])[0];
    if (best && typeof best.value === "number") facts.push(`expected round margin ${signed(best.value)}`);
    if (typeof h.value === "number" && (h.alternatives || []).length > 1) facts.push(`${signed(h.value)} over the next best`);
    if (typeof h.win_chance === "number") facts.push(`win chance ${Math.round(h.win_chance * 100)}%`);
    if (h.samples) facts.push(`${plural(h.samples, "sampled deal")}`);
    if (facts.length) parts.push(el("div", { class: "muted small", text: facts.join(" · ") }));
    const alts = (h.alternatives || []).slice(1, 4);
    if (alts.length) {
      parts.push(el("div", { class: "muted small" }, "Also: ",
        ...alts.flatMap((a, i) => [i ? " · " : "", ...r.describeMove(a.move, S.view),
          typeof a.value === "number" ? ` (${signed(a.value)})` : ""])));
    }
    box.replaceChildren(...parts);
  } catch (err) {
    box.replaceChildren(el("span", { class: "error", text: err.message }));
  } finally {
    $("hint-button").disabled = false;
  }
}

export function sortKeys(obj) {
  if (Array.isArray(obj)) return obj.map(sortKeys);
  if (obj && typeof obj === "object") return Object.fromEntries(Object.keys(obj).sort().map((k) => [k, sortKeys(obj[k])]));
  return obj;
}

