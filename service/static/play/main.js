/* cardtable /play: a reference client of the public REST API, in plain JavaScript (no build step).
 *
 * The page holds one thing: the seat token that POST /v1/matches returned for the human seat. Everything
 * it shows comes from that seat's view (GET /v1/matches/{id}), the legal moves it lists come from
 * GET /v1/matches/{id}/legal-moves and are posted back exactly as given, and the hint comes from
 * GET /v1/matches/{id}/hint. What the other seats (AI or people) play arrives on the match's event stream
 * (GET /v1/matches/{id}/events): the page reads its view when the stream says something changed, and never
 * asks again on a timer.
 *
 * Plain ES modules, no build step: api.js (the state and the API), cards.js (drawing cards and values),
 * renderers.js (per-game tables), setup.js (the new-match form), match.js (the stream, moves, hints),
 * draw.js (the table, the log, the summaries), friends.js (invitations, the join page, the waiting room),
 * main.js (this: start).
 *
 * The table is drawn generically from the view (every key a game adds is shown, cards as cards), with
 * small per-game renderers keyed by game id where a game reads better another way.
 */
import { STORE_KEY, S } from "./api.js";
import { $ } from "./cards.js";
import { RENDERERS } from "./renderers.js";
import { friendChoices, isJoinPage, showJoinPage } from "./friends.js";
import { loadGames, onGameChange, startMatch, enterMatch, newMatch } from "./setup.js";
import { isOver, fetchView, follow, showHint, showView } from "./match.js";

// -- start ----------------------------------------------------------------------------------------

async function resume() {
  const saved = JSON.parse(sessionStorage.getItem(STORE_KEY) || "null");
  if (!saved) return false;
  const game = S.games.find((g) => g.id === saved.game);
  if (!game) return false;
  Object.assign(S, { game, matchId: saved.matchId, token: saved.token, seat: saved.seat, names: saved.names,
    invitations: saved.invitations || {},
    ai: saved.ai, level: saved.level || 3, version: null, shownVersion: null, overShown: false, loggedVersion: 0, shownRounds: 0, lastRoundEnd: null });
  try {
    enterMatch();
    const { version, view } = await fetchView();
    S.shownRounds = (view.round_scores || []).length;
    await showView(view, version);
    if (!isOver(view)) follow();
    return true;
  } catch (err) {
    newMatch();
    return false;
  }
}

async function main() {
  $("setup-form").addEventListener("submit", startMatch);
  $("game-select").addEventListener("change", onGameChange);
  $("hint-button").addEventListener("click", showHint);
  $("new-button").addEventListener("click", newMatch);
  try {
    await loadGames();
  } catch (err) {
    $("setup-error").textContent = `Could not load the games: ${err.message}`;
    return;
  }
  if (isJoinPage()) showJoinPage();
  else await resume();
  $("players-select").addEventListener("change", () => friendChoices(Number($("players-select").value), $("friends-select")));
  document.body.dataset.ready = "true";
}

window.cardtable = { S, RENDERERS }; // for the browser tests and the console
main();
