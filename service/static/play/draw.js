import { STORE_KEY, S } from "./api.js";
import { $, suitIndex, cardOrder, isWild, el, cardEl, meldEl, valueEl, words, capital } from "./cards.js";
import { ROUNDS, rummyRounds, RENDERERS, renderer } from "./renderers.js";
import { isOver, playMove, sortKeys } from "./match.js";
import { peopleTools, rematchBox } from "./friends.js";

// -- drawing --------------------------------------------------------------------------------------

export function render() {
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

export function renderScores(view) {
  const rows = S.names.map((name, seat) => el("tr", { class: [seat === view.to_move ? "to-move" : "", seat === S.seat ? "me" : ""].join(" ") },
    el("td", { text: name + (seat === view.dealer ? " (dealer)" : "") }),
    el("td", { text: view.hand_sizes ? String(view.hand_sizes[seat]) : "" }),
    el("td", { text: (view.round_scores || []).length ? String(view.round_scores[view.round_scores.length - 1][seat]) : "—" }),
    el("td", { text: String(view.totals[seat]) })));
  $("scoreboard").replaceChildren(el("table", { class: "scores" },
    el("thead", {}, el("tr", {}, el("th", { text: "Player" }), el("th", { text: "Cards" }), el("th", { text: "Last round" }), el("th", { text: "Total" }))),
    el("tbody", {}, rows)));
}

export function renderHand(view, r) {
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
export const GROUP_ABOVE = 8;

export function renderMoves(view, r, mine) {
  $("moves-title").textContent = isOver(view) ? "The match is over" : mine ? "Your moves"
    : `Waiting for ${S.ai[view.to_move] ? "the AI" : S.names[view.to_move]}`;
  $("hint-button").classList.toggle("hidden", !mine);
  peopleTools(view, mine);
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
export function textOf(parts) {
  return [].concat(parts).map((p) => (p instanceof Node ? (p.getAttribute && p.getAttribute("aria-label")) || p.textContent : String(p))).join("");
}

export function setMovesEnabled(on) {
  document.querySelectorAll("button.move").forEach((b) => { b.disabled = !on; });
}

export function describeEvent(ev) {
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
    case "seat_claimed": return el("strong", { text: `${ev.name} joined` });
    case "seat_resigned": return `${who} left: an AI (level ${ev.level}) plays the seat now`;
    case "seat_taken_over": return `${who} was away too long: an AI (level ${ev.level}) plays the seat now`;
    case "rematch": return el("strong", { text: "A rematch is ready" });
    default: {
      const fields = Object.entries(ev).filter(([k]) => k !== "type" && k !== "seat");
      return [who ? `${who}: ` : "", words(ev.type), ...fields.flatMap(([k, val]) => [` ${words(k)} `, valueEl(val, v)])];
    }
  }
}

export const SEAT_LIST_KEYS = new Set(["knocked_out", "winners"]);
export const SUMMARY_SKIP = new Set(["type", "round", "reason", "went_out", "seat", "scores", "totals", "melds", "deadwood",
  "hands", "version"]);

/** The itemized scores of the round (or deal) that just ended: its end event, else the view's score rows. */
export function showRoundSummary(view, rounds) {
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

export function showGameOver() {
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
    el("div", { class: "table-wrap" }, el("table", { class: "summary-table", id: "final-scores" }, el("thead", {}, head), el("tbody", {}, rows))),
    rematchBox(), ...last);
  box.classList.remove("hidden");
  sessionStorage.removeItem(STORE_KEY);
}

