import { S, api } from "./api.js";
import { $, RANK_LABELS, RANK_ORDER, COMMON_KEYS, el, cardEl, cardBack, meldEl, valueEl, words, plural, capital } from "./cards.js";
import { isOver } from "./match.js";

// -- per-game renderers ---------------------------------------------------------------------------

export const ROUNDS = { "three-thirteen": 11, threezies: 8, "less-than-three": 6, "contract-rummy": 7 };

export const generic = {
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

export const rummyRounds = Object.assign(Object.create(generic), {
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

export const topDiscard = (view) => {
  const pile = view.discard || [];
  return pile.length ? cardEl(pile[pile.length - 1], view, { mini: true }) : "the discard";
};

export const leastScore = Object.assign(Object.create(generic), {
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

export const lessThanThree = Object.assign(Object.create(generic), {
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

export const contractRummy = Object.assign(Object.create(generic), {
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

export const RENDERERS = {
  "three-thirteen": rummyRounds, threezies: rummyRounds, "least-score": leastScore,
  "less-than-three": lessThanThree, "contract-rummy": contractRummy,
};
export const renderer = () => RENDERERS[S.game && S.game.id] || generic;

