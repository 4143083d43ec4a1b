import { STORE_KEY, S, api } from "./api.js";
import { $, el, words, playersText } from "./cards.js";
import { follow, refresh, unfollow } from "./match.js";
import { friendChoices, hideWaitingRoom, keepInvitations, saveSession, seatsFor } from "./friends.js";

// -- setup ----------------------------------------------------------------------------------------

export async function loadGames() {
  const data = await api("GET", "/v1/games");
  S.games = Array.isArray(data) ? data : data.games || [];
  const select = $("game-select");
  select.replaceChildren(...S.games.map((g) => el("option", { value: g.id, text: g.name })));
  const wanted = new URLSearchParams(location.search).get("game");
  if (wanted && S.games.some((g) => g.id === wanted)) select.value = wanted;
  else if (S.games.some((g) => g.id === "three-thirteen")) select.value = "three-thirteen";
  onGameChange();
}

export function onGameChange() {
  const game = S.games.find((g) => g.id === $("game-select").value);
  if (!game) return;
  const players = $("players-select");
  const options = [];
  for (let n = game.min_players; n <= game.max_players; n++) options.push(el("option", { value: String(n), text: String(n) }));
  players.replaceChildren(...options);
  friendChoices(Number(players.value), $("friends-select"));
  $("game-summary").textContent = `${playersText(game)} · ${game.lower_score_wins === false ? "highest" : "lowest"} total wins`;
  $("rules-link").href = `/rules/${encodeURIComponent(game.id)}`;
  $("rules-link").textContent = `The rules of ${game.name}`;
  const fields = (game.options || []).map((o) => optionField(o));
  $("options-fields").replaceChildren(...fields);
  api("GET", `/v1/games/${encodeURIComponent(game.id)}`).then((full) => {
    const text = full.summary || full.rules_summary || (full.rules && full.rules.summary);
    if (text && $("game-select").value === game.id) $("game-summary").textContent = text;
  }).catch(() => {});
}

export function optionField(o) {
  const id = `opt-${o.name}`;
  let input;
  if (o.type === "bool") {
    input = el("input", { type: "checkbox", id, "data-option": o.name, "data-type": "bool" });
    input.checked = !!o.default;
    return el("label", { class: "check" }, input, ` ${words(o.name)} `, el("span", { class: "desc", text: o.description || "" }));
  }
  if (o.type === "enum" || (o.choices && o.choices.length)) {
    input = el("select", { id, "data-option": o.name, "data-type": o.type });
    input.append(...o.choices.map((c) => el("option", { value: String(c), text: String(c) })));
    input.value = String(o.default);
  } else {
    input = el("input", { type: "number", id, "data-option": o.name, "data-type": o.type, step: "1" });
    if (o.minimum !== undefined) input.min = o.minimum;
    if (o.maximum !== undefined) input.max = o.maximum;
    input.value = String(o.default);
  }
  input.dataset.default = String(o.default);
  return el("label", {}, words(o.name), input, el("span", { class: "desc", text: o.description || "" }));
}

export function chosenOptions() {
  const out = {};
  for (const input of document.querySelectorAll("[data-option]")) {
    const name = input.dataset.option;
    if (input.dataset.type === "bool") {
      const game = S.games.find((g) => g.id === $("game-select").value);
      const spec = (game.options || []).find((o) => o.name === name);
      if (spec && input.checked !== !!spec.default) out[name] = input.checked;
    } else if (input.value !== input.dataset.default) {
      const game = S.games.find((g) => g.id === $("game-select").value);
      const spec = (game.options || []).find((o) => o.name === name) || {};
      // a choice is sent as the API lists it (first_dealer's choices are "random", 0 and 1)
      const choice = (spec.choices || []).find((c) => String(c) === input.value);
      out[name] = choice !== undefined ? choice : input.dataset.type === "int" ? Number(input.value) : input.value;
    }
  }
  return out;
}

export async function startMatch(ev) {
  ev.preventDefault();
  $("setup-error").textContent = "";
  document.querySelectorAll("[aria-invalid]").forEach((f) => f.removeAttribute("aria-invalid"));
  const game = S.games.find((g) => g.id === $("game-select").value);
  const n = Number($("players-select").value);
  const level = Number($("level-select").value);
  const players = seatsFor($("name-input").value.trim() || "You", n, Number($("friends-select").value || 0), level);
  const body = { game: game.id, players };
  const options = chosenOptions();
  if (Object.keys(options).length) body.options = options;
  if ($("seed-input").value !== "") body.seed = Number($("seed-input").value);
  $("start-button").disabled = true;
  try {
    S.token = null;
    const created = await api("POST", "/v1/matches", body);
    const mine = created.seats.find((s) => s.token) || created.seats[0];
    Object.assign(S, {
      game, matchId: created.match_id, token: mine.token, seat: mine.seat, level,
      names: created.seats.map((s) => s.name || (s.ai ? `AI ${s.seat}` : `Seat ${s.seat}`)),
      ai: created.seats.map((s) => !!s.ai), version: created.version, shownRounds: 0, loggedVersion: 0,
      lastRoundEnd: null, shownVersion: null, overShown: false,
    });
    keepInvitations(created);
    saveSession();
    enterMatch();
    follow();
    await refresh();
  } catch (err) {
    $("setup-error").textContent = err.message;
    const field = err.option && document.getElementById(`opt-${err.option}`);
    if (field) { $("options-box").open = true; field.setAttribute("aria-invalid", "true"); field.focus(); }
  } finally {
    $("start-button").disabled = false;
  }
}

export function enterMatch() {
  $("setup").classList.add("hidden");
  $("match").classList.remove("hidden");
  $("summary").classList.add("hidden");
  $("hint").classList.add("hidden");
  $("log").replaceChildren();
  $("match-title").textContent = S.game.name;
  $("match-title").title = `match ${S.matchId}`;
  $("match-rules").href = `/rules/${encodeURIComponent(S.game.id)}`;
}

export function newMatch() {
  unfollow();
  hideWaitingRoom();
  sessionStorage.removeItem(STORE_KEY);
  Object.assign(S, { matchId: null, token: null, view: null, moves: [] });
  $("match").classList.add("hidden");
  $("setup").classList.remove("hidden");
  $("match-title").textContent = "";
}

