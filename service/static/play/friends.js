/* Playing with friends: seats left open for them when a match is made (each with an invitation: a link and a
 * code), the join page those links open (/play/join#CODE), and the waiting room everyone sees until every
 * seat is taken. The waiting room follows the match's event stream like the table does: a friend's claim is a
 * new version of the match, so it arrives on the stream and the page reads the match again. */

import { STORE_KEY, S, api } from "./api.js";
import { $, el } from "./cards.js";
import { follow, refresh, unfollow } from "./match.js";
import { enterMatch } from "./setup.js";

/** The seats of a new match: you, then ``friends`` open seats, then AIs of ``level``. */
export function seatsFor(name, n, friends, level) {
  const players = [{ name }];
  for (let i = 1; i < n; i++) {
    players.push(i <= friends ? { open: true, name: `Friend ${i}` } : { name: `AI ${i}`, ai: { level } });
  }
  return players;
}

/** The friends a match of ``n`` players can have (every other seat). */
export function friendChoices(n, select) {
  const keep = Math.min(Number(select.value || 0), n - 1);
  const options = [];
  for (let k = 0; k < n; k++) options.push(el("option", { value: String(k), text: k ? String(k) : "none" }));
  select.replaceChildren(...options);
  select.value = String(keep);
}

/** Invitations from a creation's answer (kept in this tab, so that a reload still shows them). */
export function keepInvitations(created) {
  S.invitations = {};
  for (const seat of created.seats) if (seat.invitation) S.invitations[seat.seat] = seat.invitation;
}

export function saveSession() {
  sessionStorage.setItem(STORE_KEY, JSON.stringify({ game: S.game.id, matchId: S.matchId, token: S.token,
    seat: S.seat, names: S.names, ai: S.ai, level: S.level, invitations: S.invitations || {} }));
}

const grouped = (code) => (code.length === 10 ? `${code.slice(0, 5)}-${code.slice(5)}` : code);

/** The waiting room: every seat, who has joined, and the invitation of each open seat (the host has them). */
export function showWaitingRoom(match) {
  $("match").classList.add("hidden");
  $("setup").classList.add("hidden");
  $("join").classList.add("hidden");
  $("waiting").classList.remove("hidden");
  $("waiting-game").textContent = `${S.game.name} · ${match.seats.length} players`;
  const rows = match.seats.map((seat) => {
    const state = seat.open ? el("span", { class: "seat-state", text: "waiting…" })
      : seat.ai ? el("span", { class: "seat-state ai", text: `AI level ${seat.ai.level}` })
        : el("span", { class: "seat-state joined", text: "joined" });
    const row = el("li", { "data-seat": String(seat.seat), class: seat.open ? "open" : "" },
      el("span", { class: "seat-name", text: seat.name + (seat.seat === S.seat ? " (you)" : "") }), state);
    const invitation = seat.open && S.invitations && S.invitations[seat.seat];
    if (invitation) row.append(inviteBox(invitation));
    return row;
  });
  $("waiting-seats").replaceChildren(...rows);
  const open = match.open_seats || [];
  $("waiting-note").textContent = open.length
    ? `The match begins when ${open.length === 1 ? "this friend joins" : `these ${open.length} friends join`}. `
      + (S.invitations && Object.keys(S.invitations).length ? "Send each friend their link (or read them the code)." : "")
    : "";
}

function inviteBox(invitation) {
  const link = el("input", { type: "text", readonly: "readonly", value: invitation.url, "aria-label": "Invitation link",
    class: "invite-link" });
  const copy = el("button", { type: "button", class: "copy-link", text: "Copy link" });
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(invitation.url);
    } catch (err) { // no clipboard API (an insecure origin): select the text for the usual copy
      link.select();
      document.execCommand("copy");
    }
    copy.textContent = "Copied!";
  });
  return el("div", { class: "invite" }, link, copy,
    el("span", { class: "muted small", text: "or the code" }),
    el("span", { class: "code", "data-code": invitation.code, text: grouped(invitation.code) }));
}

export function hideWaitingRoom() {
  $("waiting").classList.add("hidden");
}

// -- the join page ------------------------------------------------------------------------------------

export function isJoinPage() {
  return location.pathname.replace(/\/$/, "") === "/play/join";
}

export function showJoinPage() {
  $("setup").classList.add("hidden");
  $("join").classList.remove("hidden");
  const code = decodeURIComponent(location.hash.replace(/^#/, ""));
  if (code) $("join-code").value = code;
  $("join-form").addEventListener("submit", join);
  ($("join-code").value ? $("join-name") : $("join-code")).focus();
}

async function join(ev) {
  ev.preventDefault();
  $("join-error").textContent = "";
  const code = $("join-code").value.trim();
  if (!code) { $("join-error").textContent = "Type the code your friend sent you."; return; }
  const name = $("join-name").value.trim();
  $("join-button").disabled = true;
  try {
    S.token = null;
    const seat = await api("POST", `/v1/invitations/${encodeURIComponent(code)}/claim`, name ? { name } : {});
    const game = S.games.find((g) => g.id === seat.game);
    Object.assign(S, { game, matchId: seat.match_id, token: seat.token, seat: seat.seat, names: [], ai: [],
      version: null, shownVersion: null, overShown: false, loggedVersion: 0, shownRounds: 0, lastRoundEnd: null,
      invitations: {} });
    history.replaceState(null, "", "/play"); // a reload resumes this seat (the code is used up)
    $("join").classList.add("hidden");
    enterMatch();
    follow();
    await refresh();
    saveSession();
  } catch (err) {
    $("join-error").textContent = err.message;
  } finally {
    $("join-button").disabled = false;
  }
}

// -- leaving, and a friend who is away --------------------------------------------------------------

/** With other people at the table: leave (an AI of your level plays on), or, while everyone waits for a person,
 * ask for an AI to play their seat (the server allows it once the match has waited long enough for them). */
export function peopleTools(view, mine) {
  const others = S.ai.some((ai, seat) => !ai && seat !== S.seat);
  const playing = others && !Array.isArray(view.winners);
  $("people-tools").classList.toggle("hidden", !playing);
  if (!playing) return;
  const waitingFor = !mine && !S.ai[view.to_move] ? view.to_move : null;
  const takeover = $("takeover-button");
  takeover.classList.toggle("hidden", waitingFor === null);
  if (waitingFor !== null) {
    takeover.textContent = `${S.names[waitingFor]} is away? Let an AI play for them`;
    takeover.dataset.seat = String(waitingFor);
  }
  if (S.peopleToolsBound) return;
  S.peopleToolsBound = true;
  takeover.addEventListener("click", () => seatToAi(`/seats/${takeover.dataset.seat}/takeover`));
  $("leave-button").addEventListener("click", async () => {
    S.left = true; // the seat's token stops working: what the stream says next is not for this page
    unfollow();
    if (!await seatToAi(`/seats/${S.seat}/resign`)) {
      S.left = false;
      follow();
    } else {
      sessionStorage.removeItem(STORE_KEY);
      $("people-tools").classList.add("hidden");
      $("move-error").textContent = "You left the table: an AI plays your seat now.";
      $("moves").replaceChildren();
    }
  });
}

async function seatToAi(suffix) {
  $("people-error").textContent = "";
  try {
    await api("POST", `/v1/matches/${encodeURIComponent(S.matchId)}${suffix}`, { level: S.level || 3 });
    return true;
  } catch (err) {
    $("people-error").textContent = err.message;
    return false;
  }
}

// -- the rematch ------------------------------------------------------------------------------------

/** The game-over panel's rematch button (and, once someone started one, the way in). */
export function rematchBox() {
  const start = el("button", { type: "button", id: "rematch-button", class: "primary", text: "Rematch" });
  start.addEventListener("click", startRematch);
  return el("div", { id: "rematch-box", class: "actions" }, start,
    el("span", { class: "muted small", text: " the same players and options; the deal passes to the next seat" }));
}

async function startRematch() {
  $("rematch-button").disabled = true;
  try {
    switchTo(await api("POST", `/v1/matches/${encodeURIComponent(S.matchId)}/rematch`));
  } catch (err) {
    $("rematch-box").append(el("p", { class: "error", text: err.message }));
    $("rematch-button").disabled = false;
  }
}

/** Someone started a rematch: this seat's place and token in it came on this seat's stream. */
export function offerRematch(data) {
  const box = $("rematch-box");
  if (!box || !data.token) return;
  const join = el("button", { type: "button", id: "rematch-join", class: "primary", text: "Play the rematch" });
  join.addEventListener("click", () => switchTo(data));
  box.replaceChildren(el("strong", { text: "A rematch is ready. " }), join);
}

function switchTo(seat) {
  unfollow();
  Object.assign(S, { matchId: seat.match_id, token: seat.token, seat: seat.seat, version: null, shownVersion: null,
    overShown: false, loggedVersion: 0, shownRounds: 0, lastRoundEnd: null, invitations: {}, moves: [],
    match: null, left: false });
  saveSession();
  enterMatch();
  follow();
  refresh();
}
