
export const $ = (id) => document.getElementById(id);
export const SUIT_SYMBOLS = { C: "♣", D: "♦", H: "♥", S: "♠" };
export const RANK_LABELS = { T: "10" };
export const RANK_ORDER = "A23456789TJQK";
export const CARD_RE = /^(?:[2-9TJQKA][CDHS]|JK)$/;
// keys every view has (engine/game.py); the rest is the game's own table
export const COMMON_KEYS = new Set(["game", "seat", "num_players", "options", "round", "dealer", "phase", "to_move",
  "ply", "turns_in_round", "totals", "round_scores", "winners", "hidden", "hand", "hand_sizes", "version",
  "events", "match_id"]);
// -- cards ----------------------------------------------------------------------------------------

export const isCard = (v) => typeof v === "string" && CARD_RE.test(v);
export const rankOf = (c) => (c === "JK" ? 0 : RANK_ORDER.indexOf(c[0]) + 1);
export const suitIndex = (c) => (c === "JK" ? 4 : "CDHS".indexOf(c[1]));
export const cardOrder = (a, b) => suitIndex(a) - suitIndex(b) || rankOf(a) - rankOf(b);

// games whose wild ranks are fixed (the others say theirs in the view's wild_rank)
export const FIXED_WILD_RANKS = { "contract-rummy": [2] };

export function isWild(card, view) {
  if (card === "JK") return true;
  if (!view) return false;
  if (FIXED_WILD_RANKS[view.game]) return FIXED_WILD_RANKS[view.game].includes(rankOf(card));
  if (Number.isInteger(view.wild_rank)) return rankOf(card) === view.wild_rank;
  if (Array.isArray(view.wild_ranks)) return view.wild_ranks.includes(rankOf(card));
  return false;
}

export function el(tag, attrs = {}, ...children) {
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

export function cardEl(name, view, { mini = false, extra = "" } = {}) {
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

export function cardBack(count) {
  return el("span", { class: "pile" }, el("span", { class: "card back", "aria-hidden": "true" }),
    el("span", { text: `${count} card${count === 1 ? "" : "s"}` }));
}

export function meldEl(meld, view) {
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
export function valueEl(value, view) {
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
export function richText(text, view) {
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

export const words = (key) => String(key).replace(/_/g, " ");
export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
export const playersText = (g) => (g.min_players === g.max_players ? `${g.min_players} players` : `${g.min_players}–${g.max_players} players`);
export const capital = (s) => s.charAt(0).toUpperCase() + s.slice(1);

