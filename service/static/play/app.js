/* cardtable /play: a reference client of the public REST API, in plain JavaScript (no build step).
 *
 * The page holds one thing: the seat token that POST /v1/matches returned for the human seat. Everything
 * it shows comes from that seat's view (GET /v1/matches/{id}), the legal moves it lists come from
 * GET /v1/matches/{id}/legal-moves and are posted back exactly as given, and the hint comes from
 * GET /v1/matches/{id}/hint. When an AI seat is to move the page asks the server to play it
 * (POST /v1/matches/{id}/advance); a server that plays AI turns by itself is polled instead.
 *
 * The table is drawn generically from the view (every key a game adds is shown, cards as cards), with
 * small per-game renderers keyed by game id where a game reads better another way.
 */
"use strict";

const $ = (id) => document.getElementById(id);
const SUIT_SYMBOLS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const RANK_LABELS = { T: "10" };
const RANK_ORDER = "A23456789TJQK";
const CARD_RE = /^(?:[2-9TJQKA][CDHS]|JK)$/;
// keys every view has (engine/game.py); the rest is the game's own table
const COMMON_KEYS = new Set(["game", "seat", "num_players", "options", "round", "dealer", "phase", "to_move",
  "ply", "turns_in_round", "totals", "round_scores", "winners", "hidden", "hand", "hand_sizes", "version",
  "events", "match_id"]);
const STORE_KEY = "cardtable.play.match";

const S = {
  games: [], game: null, matchId: null, token: null, seat: 0, names: [], ai: [], level: 3,
  view: null, moves: [], version: null, busy: false, shownRounds: 0, loggedVersion: 0, lastRoundEnd: null,
};

// -- the API --------------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, problem) {
    super(problemText(status, problem));
    this.status = status;
    this.code = problem && problem.code;
    this.option = problem && problem.option;
  }
}

function problemText(status, p) {
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
async function api(method, path, body, { idempotencyKey = null } = {}) {
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

const newKey = () => (window.crypto && crypto.randomUUID ? crypto.randomUUID()
  : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`);
const matchPath = (suffix = "") => `/v1/matches/${encodeURIComponent(S.matchId)}${suffix}`;

// -- cards ----------------------------------------------------------------------------------------

const isCard = (v) => typeof v === "string" && CARD_RE.test(v);
const rankOf = (c) => (c === "JK" ? 0 : RANK_ORDER.indexOf(c[0]) + 1);
const suitIndex = (c) => (c === "JK" ? 4 : "CDHS".indexOf(c[1]));
const cardOrder = (a, b) => suitIndex(a) - suitIndex(b) || rankOf(a) - rankOf(b);

// games whose wild ranks are fixed (the others say theirs in the view's wild_rank)
const FIXED_WILD_RANKS = { "contract-rummy": [2] };

function isWild(card, view) {
  if (card === "JK") return true;
  if (!view) return false;
  if (FIXED_WILD_RANKS[view.game]) return FIXED_WILD_RANKS[view.game].includes(rankOf(card));
  if (Number.isInteger(view.wild_rank)) return rankOf(card) === view.wild_rank;
  if (Array.isArray(view.wild_ranks)) return view.wild_ranks.includes(rankOf(card));
  return false;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function cardEl(name, view, { mini = false, extra = "" } = {}) {
  const wild = isWild(name, view);
  const classes = ["card"];
  if (mini) classes.push("mini");
  if (name === "JK") classes.push("joker");
  else if (name[1] === "D" || name[1] === "H") classes.push("red");
  if (wild) classes.push("wild");
  if (extra) classes.push(extra);
  const label = name === "JK" ? "joker" : `${RANK_LABELS[name[0]] || name[0]} of ${{ C: "clubs", D: "diamonds", H: "hearts", S: "spades" }[name[1]]}`;
  const node = el("span", { class: classes.join(" "), title: label + (wild ? " (wild)" : ""), "data-card": name,
    "aria-label": label + (wild ? ", wild" : "") });
  if (name === "JK") {
    node.append(el("span", { class: "rank", text: mini ? "Joker" : "JK" }));
    if (!mini) node.append(el("span", { class: "suit", text: "★" }));
  } else {
    node.append(el("span", { class: "rank", text: RANK_LABELS[name[0]] || name[0] }),
      el("span", { class: "suit", text: SUIT_SYMBOLS[name[1]] }));
  }
  return node;
}

function cardBack(count) {
  return el("span", { class: "pile" }, el("span", { class: "card back", "aria-hidden": "true" }),
    el("span", { text: `${count} card${count === 1 ? "" : "s"}` }));
}

function meldEl(meld, view) {
  const cards = meld.cards || [];
  const stands = meld.stands_for || [];
  const node = el("span", { class: "meld", title: meld.kind || "meld" });
  cards.forEach((c, i) => {
    const card = cardEl(c, view, { mini: true });
    if (isWild(c, view) && stands[i] && stands[i] !== c) card.title += ` as ${stands[i]}`;
    node.append(card);
  });
  return node;
}

/** Any JSON value of a view, with cards drawn as cards. */
function valueEl(value, view) {
  if (isCard(value)) return cardEl(value, view, { mini: true });
  if (Array.isArray(value)) {
    if (!value.length) return el("span", { class: "muted", text: "—" });
    if (value.every(isCard)) return el("span", { class: "card-list" }, value.map((c) => cardEl(c, view, { mini: true })));
    return el("span", { class: "melds" }, value.map((v) => valueEl(v, view)));
  }
  if (value && typeof value === "object") {
    if (Array.isArray(value.cards)) return meldEl(value, view);
    return el("span", {}, Object.entries(value).map(([k, v]) => el("span", {}, `${words(k)} `, valueEl(v, view), " ")));
  }
  if (value === null || value === undefined) return el("span", { class: "muted", text: "—" });
  if (typeof value === "boolean") return document.createTextNode(value ? "yes" : "no");
  return document.createTextNode(String(value));
}

/** Free text (a hint's explanation) with its card codes drawn as the page draws cards (KH → K♥). */
function richText(text, view) {
  const out = [];
  let last = 0;
  for (const m of String(text).matchAll(/\b(?:[2-9TJQKA][CDHS]|JK)\b/g)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(cardEl(m[0], view, { mini: true }));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

const words = (key) => String(key).replace(/_/g, " ");
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
const playersText = (g) => (g.min_players === g.max_players ? `${g.min_players} players` : `${g.min_players}–${g.max_players} players`);
const capital = (s) => s.charAt(0).toUpperCase() + s.slice(1);

// -- per-game renderers ---------------------------------------------------------------------------

const ROUNDS = { "three-thirteen": 11, threezies: 8, "less-than-three": 6, "contract-rummy": 7 };

const generic = {
  roundLabel: "Round",
  header(view) { return []; },
  tableZones(view) {
    const zones = [];
    const n = view.num_players;
    for (const [key, value] of Object.entries(view)) {
      if (COMMON_KEYS.has(key) || (this.skipKeys && this.skipKeys.has(key))) continue;
      if (Array.isArray(value) && value.length === n && n > 1 && value.every(Array.isArray)) {
        value.forEach((v, seat) => {
          if (v.length) zones.push([`${capital(words(key))} · ${S.names[seat]}`, valueEl(v, view)]);
        });
        continue;
      }
      zones.push([capital(words(key)), valueEl(value, view)]);
    }
    return zones;
  },
  handExtra(view) { return null; },
  describeMove(move, view) {
    const parts = [capital(words(move.type || "?"))];
    for (const [k, v] of Object.entries(move)) {
      if (k === "type") continue;
      if (typeof v === "boolean") { if (v) parts.push(` and ${words(k)}`); continue; }
      if (k === "card" || k === "cards") { parts.push(" ", valueEl(v, view)); continue; }
      if (k === "source") { parts.push(` from the ${v}`); continue; }
      parts.push(` ${words(k)} `, valueEl(v, view));
    }
    return parts;
  },
  moveClass(move) { return ""; },
  /** A long list of moves is shown in groups (a label, then compact buttons): the group of a move, or null
   * for a move shown on its own, first. */
  moveGroup(move, view) { return null; },
  /** The compact label of a move inside its group (the group's label says the rest). */
  shortLabel(move, view) { return this.describeMove(move, view); },
};

const rummyRounds = Object.assign(Object.create(generic), {
  skipKeys: new Set(["stock_size", "discard", "wild_rank", "known", "taken", "went_out", "last_turns"]),
  header(view) {
    const r = view.wild_rank;
    return [`${RANK_LABELS[RANK_ORDER[r - 1]] || RANK_ORDER[r - 1]}s are wild`];
  },
  tableZones(view) {
    const discard = view.discard || [];
    const zones = [
      ["Stock", cardBack(view.stock_size || 0)],
      ["Discard", el("span", { class: "pile" }, discard.length ? cardEl(discard[discard.length - 1], view) : el("span", { class: "muted", text: "empty" }),
        el("span", { class: "muted", text: `${discard.length} in the pile` }))],
    ];
    (view.known || []).forEach((cards, seat) => {
      if (cards.length && seat !== view.seat) zones.push([`${S.names[seat]} holds`, valueEl(cards, view)]);
    });
    if (Number.isInteger(view.went_out)) {
      zones.push(["Going out", el("strong", { text: `${S.names[view.went_out]} went out: one last turn each (${view.last_turns} to go)` })]);
    }
    return zones.concat(generic.tableZones.call(this, view));
  },
  describeMove(move, view) {
    const discard = view.discard || [];
    if (move.type === "draw") {
      if (move.source === "discard" && discard.length) return ["Take ", cardEl(discard[discard.length - 1], view, { mini: true })];
      return ["Draw from the stock"];
    }
    if (move.type === "discard") return ["Discard ", cardEl(move.card, view, { mini: true })];
    if (move.type === "go_out") return ["Go out, discarding ", cardEl(move.card, view, { mini: true })];
    return generic.describeMove(move, view);
  },
  moveClass(move) { return move.type === "go_out" ? "go-out" : ""; },
  moveGroup(move) {
    if (move.type === "discard") return "Discard";
    if (move.type === "go_out") return "Go out, discarding";
    return null;
  },
  shortLabel(move, view) {
    return move.card ? [cardEl(move.card, view, { mini: true })] : this.describeMove(move, view);
  },
  /** The hand's best arrangement, from the stateless analyze endpoint (public API, no state needed). */
  async handExtra(view) {
    if (!(view.hand || []).length) return null;
    const a = await api("POST", `/v1/games/${encodeURIComponent(view.game)}/analyze`,
      { hand: view.hand, round: view.round, options: view.options });
    const melds = (a.melds || []).map((m) => meldEl(m, view));
    return [el("span", { text: "Best melds" }), ...(melds.length ? melds : [el("span", { text: "—" })]),
      el("span", { text: "· deadwood" }), valueEl(a.deadwood || [], view), el("span", { text: `= ${a.score}` }),
      a.can_go_out ? el("strong", { text: "· you can go out!" }) : null];
  },
});

const topDiscard = (view) => {
  const pile = view.discard || [];
  return pile.length ? cardEl(pile[pile.length - 1], view, { mini: true }) : "the discard";
};

const leastScore = Object.assign(Object.create(generic), {
  roundLabel: "Deal",
  skipKeys: new Set(["hand_total", "floor", "discarded", "dead", "dead_size", "deck_size", "out", "played", "known"]),
  header(view) {
    const t = view.options && view.options.threshold;
    return [`Your total ${view.hand_total}`].concat(t ? [`out over ${t}`] : []);
  },
  tableZones(view) {
    const zones = [
      ["Floor", el("span", { class: "pile" }, (view.floor || []).length ? (view.floor || []).map((c) => cardEl(c, view)) : el("span", { class: "muted", text: "empty" }))],
      ["Deck", cardBack(view.deck_size || 0)],
      ["Dead", el("span", { text: plural(Number.isInteger(view.dead_size) ? view.dead_size : (view.dead || []).length, "card") })],
    ];
    if ((view.discarded || []).length) zones.push(["You threw", valueEl(view.discarded, view)]);
    const out = (view.out || []).map((o, seat) => (o ? S.names[seat] : null)).filter(Boolean);
    if (out.length) zones.push(["Out", el("strong", { text: out.join(", ") })]);
    (view.known || []).forEach((cards, seat) => {
      if (cards.length && seat !== view.seat) zones.push([`${S.names[seat]} holds`, valueEl(cards, view)]);
    });
    return zones.concat(generic.tableZones.call(this, view));
  },
  describeMove(move, view) {
    if (move.type === "pick") return move.source === "floor" ? ["Pick up ", cardEl(move.card, view, { mini: true })] : ["Pick up the top of the deck"];
    if (move.type === "declare") return [`Declare (your total is ${view.hand_total})`];
    if (move.type === "discard") return ["Throw ", valueEl(move.cards, view)];
    return generic.describeMove(move, view);
  },
  moveClass(move) { return move.type === "declare" ? "go-out" : ""; },
  moveGroup(move) {
    if (move.type === "discard") return (move.cards || []).length === 1 ? "Throw one card" : "Throw a group";
    if (move.type === "pick" && move.source === "floor") return "Pick up from the floor";
    return null;
  },
  shortLabel(move, view) {
    if (move.type === "discard") return [valueEl(move.cards, view)];
    if (move.type === "pick" && move.card) return [cardEl(move.card, view, { mini: true })];
    return this.describeMove(move, view);
  },
});

const lessThanThree = Object.assign(Object.create(generic), {
  skipKeys: new Set(["table", "table_meld", "discarded", "sweeps", "sweep_used", "aside_size"]),
  header(view) {
    const mine = view.to_move === S.seat;
    const who = S.names[view.to_move] || "";
    if (isOver(view)) return [];
    if (view.phase === "lead") return [mine ? "Lead any meld" : `${who} leads`];
    if (view.phase === "respond") return [mine ? "Answer, sweep or pass" : `${who} answers`];
    return [words(view.phase || "")];
  },
  tableZones(view) {
    const m = view.table_meld;
    const zones = [["To beat", (view.table || []).length
      ? el("span", { class: "pile" }, (view.table || []).map((c) => cardEl(c, view)), el("span", { text: m ? (m.size === 1 ? m.kind : `${m.kind} of ${m.size}`) : "" }))
      : el("span", { class: "muted", text: "nothing: lead any meld" })]];
    zones.push(["Sweeps", el("span", { text: (view.sweeps || []).map((n, seat) => `${S.names[seat]} ${n}`).join(" · ") + (view.sweep_used ? " · used this round" : "") })]);
    if ((view.discarded || []).length) zones.push(["Played", valueEl(view.discarded, view)]);
    return zones.concat(generic.tableZones.call(this, view));
  },
  describeMove(move, view) {
    if (move.type === "play") return ["Play ", valueEl(move.cards, view), move.knock ? el("strong", { text: " and knock" }) : ""];
    return generic.describeMove(move, view);
  },
  moveClass(move) { return move.knock ? "go-out" : ""; },
  moveGroup(move) {
    if (move.type !== "play") return null;
    const cards = move.cards || [];
    const n = cards.length;
    const kind = n === 1 ? "Singles" : cards.every((c) => c[0] === cards[0][0])
      ? ({ 2: "Pairs", 3: "Three of a kind", 4: "Four of a kind" }[n] || `Sets of ${n}`) : `Runs of ${n}`;
    return move.knock ? `${kind}, then knock` : kind;
  },
  shortLabel(move, view) {
    return move.type === "play" ? [valueEl(move.cards, view)] : this.describeMove(move, view);
  },
});

const contractRummy = Object.assign(Object.create(generic), {
  skipKeys: new Set(["contract", "turn", "stock_size", "discard", "discarder", "known", "buys", "down", "melds",
    "taken", "went_down_now", "went_out"]),
  roundLabel: "Hand",
  header(view) { return [(view.contract && view.contract.text) || "", "2s and jokers wild"]; },
  tableZones(view) {
    const discard = view.discard || [];
    const zones = [
      ["Stock", cardBack(view.stock_size || 0)],
      ["Discard", el("span", { class: "pile" }, discard.length ? cardEl(discard[discard.length - 1], view) : el("span", { class: "muted", text: "empty" }))],
    ];
    if (view.phase === "buy") zones.push(["Buying", el("strong", { text: `${S.names[view.turn]} drew from the stock: the top discard is for sale` })]);
    S.names.forEach((name, seat) => {
      const own = (view.melds || []).filter((m) => m.owner === seat);
      if (own.length) zones.push([seat === S.seat ? "Your melds" : `${name}'s melds`, el("span", { class: "melds" }, own.map((m) => meldEl(m, view)))]);
    });
    if ((view.buys || []).some((b) => b)) zones.push(["Buys", el("span", { text: view.buys.map((b, seat) => `${S.names[seat]} ${b}`).join(" · ") })]);
    return zones.concat(generic.tableZones.call(this, view));
  },
  describeMove(move, view) {
    switch (move.type) {
      case "take_discard": return ["Take ", topDiscard(view)];
      case "draw": return ["Draw from the stock"];
      case "buy": return ["Buy ", topDiscard(view), " (+1 penalty card)"];
      case "pass": return view.phase === "buy" ? ["Don't buy ", topDiscard(view)] : ["Pass"];
      case "go_down": return ["Go down: ", ...(move.melds || []).map((m) => meldEl(m, view))];
      case "lay_off": {
        const target = (view.melds || [])[move.meld];
        const how = move.end ? ` (${move.end} end)` : move.wild_to ? ` (wild to the ${move.wild_to} end)` : "";
        return ["Lay off ", cardEl(move.card, view, { mini: true }), " on ", target ? meldEl(target, view) : `meld ${move.meld}`, how];
      }
      case "discard": return ["Discard ", cardEl(move.card, view, { mini: true })];
      default: return generic.describeMove(move, view);
    }
  },
  moveClass(move) { return move.type === "go_down" ? "go-out" : ""; },
  moveGroup(move, view) {
    if (move.type === "discard") return "Discard";
    if (move.type === "lay_off") {
      const how = move.end ? ` (${move.end} end)` : move.wild_to ? ` (wild to the ${move.wild_to} end)` : "";
      return `Lay off on meld ${move.meld + 1}${how}`;
    }
    return null;
  },
  shortLabel(move, view) {
    if (move.type === "discard" || move.type === "lay_off") return [cardEl(move.card, view, { mini: true })];
    return this.describeMove(move, view);
  },
});

const RENDERERS = {
  "three-thirteen": rummyRounds, threezies: rummyRounds, "least-score": leastScore,
  "less-than-three": lessThanThree, "contract-rummy": contractRummy,
};
const renderer = () => RENDERERS[S.game && S.game.id] || generic;

// -- setup ----------------------------------------------------------------------------------------

async function loadGames() {
  const data = await api("GET", "/v1/games");
  S.games = Array.isArray(data) ? data : data.games || [];
  const select = $("game-select");
  select.replaceChildren(...S.games.map((g) => el("option", { value: g.id, text: g.name })));
  const wanted = new URLSearchParams(location.search).get("game");
  if (wanted && S.games.some((g) => g.id === wanted)) select.value = wanted;
  else if (S.games.some((g) => g.id === "three-thirteen")) select.value = "three-thirteen";
  onGameChange();
}

function onGameChange() {
  const game = S.games.find((g) => g.id === $("game-select").value);
  if (!game) return;
  const players = $("players-select");
  const options = [];
  for (let n = game.min_players; n <= game.max_players; n++) options.push(el("option", { value: String(n), text: String(n) }));
  players.replaceChildren(...options);
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

function optionField(o) {
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

function chosenOptions() {
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

async function startMatch(ev) {
  ev.preventDefault();
  $("setup-error").textContent = "";
  document.querySelectorAll("[aria-invalid]").forEach((f) => f.removeAttribute("aria-invalid"));
  const game = S.games.find((g) => g.id === $("game-select").value);
  const n = Number($("players-select").value);
  const level = Number($("level-select").value);
  const players = [{ name: $("name-input").value.trim() || "You" }];
  for (let i = 1; i < n; i++) players.push({ name: `AI ${i}`, ai: { level } });
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
      lastRoundEnd: null, noAdvance: false,
    });
    sessionStorage.setItem(STORE_KEY, JSON.stringify({ game: game.id, matchId: S.matchId, token: S.token,
      seat: S.seat, names: S.names, ai: S.ai, level }));
    enterMatch();
    await sync(null);
  } catch (err) {
    $("setup-error").textContent = err.message;
    const field = err.option && document.getElementById(`opt-${err.option}`);
    if (field) { $("options-box").open = true; field.setAttribute("aria-invalid", "true"); field.focus(); }
  } finally {
    $("start-button").disabled = false;
  }
}

function enterMatch() {
  $("setup").classList.add("hidden");
  $("match").classList.remove("hidden");
  $("summary").classList.add("hidden");
  $("hint").classList.add("hidden");
  $("log").replaceChildren();
  $("match-title").textContent = S.game.name;
  $("match-title").title = `match ${S.matchId}`;
  $("match-rules").href = `/rules/${encodeURIComponent(S.game.id)}`;
}

function newMatch() {
  sessionStorage.removeItem(STORE_KEY);
  Object.assign(S, { matchId: null, token: null, view: null, moves: [] });
  $("match").classList.add("hidden");
  $("setup").classList.remove("hidden");
  $("match-title").textContent = "";
}

// -- the match loop -------------------------------------------------------------------------------

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const isOver = (view) => Array.isArray(view.winners);

/** Fetch the view (and events since the last one we saw); play AI turns until it is our decision. */
async function sync(initialView) {
  let view = initialView || null;
  for (let polls = 0; ; polls++) {
    if (!view) view = await fetchView();
    setView(view);
    if (isOver(view)) { S.moves = []; render(); showGameOver(); return; }
    if (view.to_move === S.seat) {
      const legal = await api("GET", matchPath("/legal-moves"));
      S.moves = legal.moves || [];
      if (legal.version !== undefined) S.version = legal.version;
      render();
      return;
    }
    S.moves = [];
    render();
    const advanced = await advance();
    if (!advanced) await sleep(Math.min(1500, 200 + 100 * polls));
    view = advanced && advanced.view ? advanced.view : null;
  }
}

/** GET the seat's view: ``{match_id, version, scores, view, events}``, events since the last one logged. */
async function fetchView() {
  const body = await api("GET", matchPath(`?since=${S.loggedVersion}`));
  if (Number.isInteger(body.version)) S.version = body.version;
  absorbEvents(body.events || []);
  return body.view && typeof body.view === "object" ? body.view : body;
}

/** Ask the server to play the AI seats; false when it plays them by itself (no advance endpoint). */
async function advance() {
  if (S.noAdvance) return false;
  try {
    const res = await api("POST", matchPath("/advance"), {});
    if (res) {
      if (res.version !== undefined) S.version = res.version;
      absorbEvents(res.events || []);
    }
    return res || true;
  } catch (err) {
    if (err.status === 404 || err.status === 405) { S.noAdvance = true; return false; }
    if (err.status === 409) return false; // someone else moved: just look again
    if (err.status === 429 || err.status === 503) { await sleep(2000); return false; } // rate limited, or Redis down
    throw err;
  }
}

function setView(view) {
  S.view = view;
  const rounds = (view.round_scores || []).length;
  if (rounds > S.shownRounds) {
    showRoundSummary(view, rounds);
    S.shownRounds = rounds;
  }
}

/** Log events (from move and advance answers, and from GET ?since=); each carries the version of its move,
 * so an event seen twice is logged once. */
function absorbEvents(events) {
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

async function playMove(move) {
  if (S.busy) return;
  S.busy = true;
  $("move-error").textContent = "";
  $("hint").classList.add("hidden");
  setMovesEnabled(false);
  try {
    const res = await api("POST", matchPath("/moves"), { move, expected_version: S.version },
      { idempotencyKey: newKey() });
    if (res.version !== undefined) S.version = res.version;
    absorbEvents(res.events || []);
    await sync(res.view);
  } catch (err) {
    $("move-error").textContent = err.message;
    try { await sync(); } catch (e) { /* the error above says enough */ }
  } finally {
    S.busy = false;
    setMovesEnabled(true);
  }
}

async function showHint() {
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

function sortKeys(obj) {
  if (Array.isArray(obj)) return obj.map(sortKeys);
  if (obj && typeof obj === "object") return Object.fromEntries(Object.keys(obj).sort().map((k) => [k, sortKeys(obj[k])]));
  return obj;
}

// -- drawing --------------------------------------------------------------------------------------

function render() {
  const view = S.view;
  const r = renderer();
  const mine = view.to_move === S.seat;
  const of = ROUNDS[S.game.id] ? ` of ${ROUNDS[S.game.id]}` : "";
  const status = [el("span", { text: S.game.name }), el("span", { text: `${r.roundLabel} ${view.round}${of}` })];
  r.header(view).forEach((t) => status.push(el("span", { text: t })));
  if (!isOver(view)) {
    status.push(el("span", { class: "turn" + (mine ? " mine" : ""),
      text: mine ? "Your turn" : `${S.names[view.to_move]} is thinking…` }));
  }
  $("status").replaceChildren(...status);
  renderScores(view);
  const zones = r.tableZones(view).map(([label, node]) => el("div", { class: "zone" }, el("span", { class: "zone-label", text: label }), node));
  $("table").replaceChildren(el("h3", { text: "Table" }), ...zones);
  renderHand(view, r);
  renderMoves(view, r, mine);
}

function renderScores(view) {
  const rows = S.names.map((name, seat) => el("tr", { class: [seat === view.to_move ? "to-move" : "", seat === S.seat ? "me" : ""].join(" ") },
    el("td", { text: name + (seat === view.dealer ? " (dealer)" : "") }),
    el("td", { text: view.hand_sizes ? String(view.hand_sizes[seat]) : "" }),
    el("td", { text: (view.round_scores || []).length ? String(view.round_scores[view.round_scores.length - 1][seat]) : "—" }),
    el("td", { text: String(view.totals[seat]) })));
  $("scoreboard").replaceChildren(el("table", { class: "scores" },
    el("thead", {}, el("tr", {}, el("th", { text: "Player" }), el("th", { text: "Cards" }), el("th", { text: "Last round" }), el("th", { text: "Total" }))),
    el("tbody", {}, rows)));
}

function renderHand(view, r) {
  const hand = (view.hand || []).slice();
  const wild = hand.filter((c) => isWild(c, view)).sort(cardOrder);
  const groups = [[], [], [], []];
  hand.filter((c) => !isWild(c, view)).sort(cardOrder).forEach((c) => groups[suitIndex(c)].push(c));
  if (wild.length) groups.push(wild);
  $("hand-count").textContent = `(${hand.length} cards)`;
  $("hand").replaceChildren(...groups.filter((g) => g.length).map((g) => el("span", { class: "suit-group" },
    g.map((c) => cardEl(c, view, { extra: "in-hand" + (c === view.taken ? " taken" : "") })))));
  const legend = [];
  if (hand.some((c) => isWild(c, view))) legend.push("★ wild");
  if (view.taken) legend.push("outlined: just taken from the discard pile");
  const box = $("hand-extra");
  box.replaceChildren(el("div", { text: legend.join(" · ") }));
  Promise.resolve(r.handExtra(view)).then((extra) => {
    if (extra && S.view === view) box.append(el("div", { class: "analysis" }, ...[].concat(extra)));
  }).catch(() => {});
}

/** Up to this many moves are listed as full buttons; a longer list is grouped (e.g. Less Than Three's ~30
 * leads: singles, pairs, runs of 2...), each group a label and compact buttons — still one tap a move. */
const GROUP_ABOVE = 8;

function renderMoves(view, r, mine) {
  $("moves-title").textContent = isOver(view) ? "The match is over" : mine ? "Your moves" : "Waiting for the AI";
  $("hint-button").classList.toggle("hidden", !mine);
  const button = (move, label) => {
    const b = el("button", { type: "button", class: `move ${r.moveClass(move)}`.trim(), "aria-label": textOf(r.describeMove(move, view)) }, ...label);
    b.dataset.key = JSON.stringify(sortKeys(move));
    b.addEventListener("click", () => playMove(move));
    return b;
  };
  const box = $("moves");
  if (!S.moves.length) {
    box.replaceChildren(el("span", { class: "waiting", text: isOver(view) ? "" : "…" }));
    return;
  }
  const groups = new Map();
  const single = [];
  for (const move of S.moves) {
    const group = S.moves.length > GROUP_ABOVE ? r.moveGroup(move, view) : null;
    if (group === null) single.push(move);
    else (groups.get(group) || groups.set(group, []).get(group)).push(move);
  }
  const rows = single.map((move) => button(move, r.describeMove(move, view)));
  for (const [label, moves] of groups) {
    rows.push(el("div", { class: "move-group", role: "group", "aria-label": label },
      el("span", { class: "move-group-label", text: label }),
      el("span", { class: "move-group-buttons" }, moves.map((move) => button(move, r.shortLabel(move, view))))));
  }
  box.classList.toggle("grouped", groups.size > 0);
  box.replaceChildren(...rows);
}

/** The text of a label made of strings and elements (for aria-label). */
function textOf(parts) {
  return [].concat(parts).map((p) => (p instanceof Node ? (p.getAttribute && p.getAttribute("aria-label")) || p.textContent : String(p))).join("");
}

function setMovesEnabled(on) {
  document.querySelectorAll("button.move").forEach((b) => { b.disabled = !on; });
}

function describeEvent(ev) {
  const who = Number.isInteger(ev.seat) ? S.names[ev.seat] : null;
  const v = S.view;
  switch (ev.type) {
    case "draw":
      if (ev.card && ev.source === "discard") return [`${who} took `, cardEl(ev.card, v, { mini: true }), " from the discard pile"];
      return `${who} drew from the ${ev.source || "stock"}`;
    case "take_discard": return [`${who} took `, cardEl(ev.card, v, { mini: true }), " from the discard pile"];
    case "pick": return ev.card ? [`${who} picked up `, cardEl(ev.card, v, { mini: true })] : `${who} picked up from the ${ev.source || "deck"}`;
    case "play": return [`${who} played `, valueEl(ev.cards, v), ev.knock ? el("strong", { text: " and knocked" }) : ""];
    case "pass": return `${who} passed`;
    case "sweep": return el("strong", { text: `${who} swept the table` });
    case "declare": return el("strong", { text: `${who} declared` });
    case "buy": return [`${who} bought `, cardEl(ev.card, v, { mini: true })];
    case "go_down": return [el("strong", { text: `${who} went down` }), ": ", ...(ev.melds || []).map((m) => meldEl(m, v))];
    case "lay_off": return [`${who} laid off `, cardEl(ev.card, v, { mini: true })];
    case "discard": return [`${who} discarded `, ev.cards ? valueEl(ev.cards, v) : cardEl(ev.card, v, { mini: true })];
    case "go_out": return [el("strong", { text: `${who} went out` }), ev.card ? [", discarding ", cardEl(ev.card, v, { mini: true })] : ""];
    case "reshuffle": return `The discard pile was shuffled into a new stock (${ev.cards} cards)`;
    case "round_start": case "deal_start":
      return el("strong", { text: `${ev.type === "deal_start" ? "Deal" : "Round"} ${ev.round} begins` + (Number.isInteger(ev.dealer) ? ` (dealer: ${S.names[ev.dealer]})` : "") });
    case "round_end": case "deal_end": return el("strong", { text: `${ev.type === "deal_end" ? "Deal" : "Round"} ${ev.round} is over` });
    case "game_end": return el("strong", { text: "The match is over" });
    default: {
      const fields = Object.entries(ev).filter(([k]) => k !== "type" && k !== "seat");
      return [who ? `${who}: ` : "", words(ev.type), ...fields.flatMap(([k, val]) => [` ${words(k)} `, valueEl(val, v)])];
    }
  }
}

const SEAT_LIST_KEYS = new Set(["knocked_out", "winners"]);
const SUMMARY_SKIP = new Set(["type", "round", "reason", "went_out", "seat", "scores", "totals", "melds", "deadwood",
  "hands", "version"]);

/** The itemized scores of the round (or deal) that just ended: its end event, else the view's score rows. */
function showRoundSummary(view, rounds) {
  const round = rounds; // round_scores has one row per finished round, numbered from 1
  const ev = S.lastRoundEnd && S.lastRoundEnd.round === round ? S.lastRoundEnd : null;
  const n = S.names.length;
  const scores = (ev && ev.scores) || view.round_scores[rounds - 1];
  const totals = (ev && ev.totals) || view.totals;
  // the view has moved on to the next round: show the cards with the finished round's wild rank
  const evView = Number.isInteger(view.wild_rank) && RENDERERS[S.game.id] === rummyRounds
    ? Object.assign({}, view, { wild_rank: round + 2 }) : view;
  const perSeat = ev ? Object.keys(ev).filter((k) => !SUMMARY_SKIP.has(k) && !SEAT_LIST_KEYS.has(k)
    && Array.isArray(ev[k]) && ev[k].length === n) : [];
  const notes = ev ? Object.keys(ev).filter((k) => !SUMMARY_SKIP.has(k) && !perSeat.includes(k)
    && ev[k] !== null && ev[k] !== false && !(Array.isArray(ev[k]) && !ev[k].length)) : [];
  const head = ["Player"];
  if (ev && ev.melds) head.push("Melds");
  if (ev && (ev.deadwood || ev.hands)) head.push(ev.deadwood ? "Left over" : "Hand");
  perSeat.forEach((k) => head.push(capital(words(k))));
  const numeric = head.length;
  head.push("Score", "Total");
  const rows = S.names.map((name, seat) => {
    const cells = [el("td", { text: name })];
    if (ev && ev.melds) cells.push(el("td", {}, valueEl(ev.melds[seat] || [], evView)));
    if (ev && (ev.deadwood || ev.hands)) cells.push(el("td", {}, valueEl((ev.deadwood || ev.hands)[seat] || [], evView)));
    perSeat.forEach((k) => cells.push(el("td", {}, valueEl(ev[k][seat], evView))));
    cells.push(el("td", { class: "num", text: String(scores[seat]) }), el("td", { class: "num", text: String(totals[seat]) }));
    return el("tr", {}, cells);
  });
  const seatText = (v) => (Number.isInteger(v) && v >= 0 && v < n ? S.names[v]
    : Array.isArray(v) && v.every((x) => Number.isInteger(x)) ? v.map((x) => S.names[x]).join(", ") : null);
  let reason = "";
  if (ev && Number.isInteger(ev.went_out)) reason = ` — ${S.names[ev.went_out]} went out`;
  else if (ev && ev.reason) reason = ` — ${words(ev.reason)}` + (Number.isInteger(ev.seat) ? ` (${S.names[ev.seat]})` : "");
  const label = ev && ev.type === "deal_end" ? "Deal" : renderer().roundLabel;
  const box = $("summary");
  box.replaceChildren(el("h3", { text: `${label} ${round} is over${reason}` }),
    ...notes.map((k) => el("p", { class: "small" }, `${capital(words(k))}: `, seatText(ev[k]) || valueEl(ev[k], evView))),
    el("div", { class: "table-wrap" }, el("table", { class: "summary-table" },
      el("thead", {}, el("tr", {}, head.map((h, i) => el("th", { class: i >= numeric ? "num" : "", text: h })))),
      el("tbody", {}, rows))));
  box.classList.remove("hidden");
}

function showGameOver() {
  const view = S.view;
  const rounds = view.round_scores || [];
  const head = el("tr", {}, el("th", { text: "Round" }), S.names.map((n) => el("th", { class: "num", text: n })));
  const rows = rounds.map((row, i) => el("tr", {}, el("td", { text: String(i + 1) }), row.map((v) => el("td", { class: "num", text: String(v) }))));
  rows.push(el("tr", {}, el("th", { text: "Total" }), view.totals.map((t) => el("th", { class: "num", text: String(t) }))));
  const winners = view.winners || [];
  const text = winners.includes(S.seat)
    ? (winners.length > 1 ? "You share the win!" : "You win!")
    : `${winners.map((w) => S.names[w]).join(" and ")} win${winners.length > 1 ? "" : "s"}.`;
  const box = $("summary");
  const last = box.classList.contains("hidden") ? [] : Array.from(box.childNodes);
  box.replaceChildren(el("h3", { text: "Game over" }), el("p", { class: "winner", id: "winner", text }),
    el("div", { class: "table-wrap" }, el("table", { class: "summary-table", id: "final-scores" }, el("thead", {}, head), el("tbody", {}, rows))), ...last);
  box.classList.remove("hidden");
  sessionStorage.removeItem(STORE_KEY);
}

// -- start ----------------------------------------------------------------------------------------

async function resume() {
  const saved = JSON.parse(sessionStorage.getItem(STORE_KEY) || "null");
  if (!saved) return false;
  const game = S.games.find((g) => g.id === saved.game);
  if (!game) return false;
  Object.assign(S, { game, matchId: saved.matchId, token: saved.token, seat: saved.seat, names: saved.names,
    ai: saved.ai, level: saved.level || 3, version: null, loggedVersion: 0, shownRounds: 0, lastRoundEnd: null });
  try {
    enterMatch();
    const view = await fetchView();
    S.shownRounds = (view.round_scores || []).length;
    await sync(view);
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
  await resume();
  document.body.dataset.ready = "true";
}

main();
