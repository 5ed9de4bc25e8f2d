/* Table display page: subscribes to the public feed over MQTT-over-WebSockets and draws
   the retained display state (shoe_controller/game/display_state.py, schema
   display_state.schema.json). No framework: one state object in, the whole page redrawn.

   Offline handling: the page is LIVE only while its broker connection is up AND the
   shoe controller's retained status says "online". Otherwise a banner and an overlay say
   why; mqtt.js reconnects by itself and the page re-subscribes on every connect, so a
   broker restart recovers without anyone touching the screen. */
"use strict";

const PAYLOAD_VERSION = 1;
const ROWS = 6;
const COLOURS = { banker: "#e0242f", player: "#1f6fe5", tie: "#1fa34a", red: "#e0242f", blue: "#1f6fe5" };
const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
const LETTER = { banker: "B", player: "P", tie: "T" };

const feed = { connected: false, controller: "unknown", error: "", state: null, messages: 0 };
window.displayFeed = feed; // for operators' devtools and the browser test

const $ = (id) => document.getElementById(id);

/* ---------- feed status ---------- */

function parseStatus(text) {
  // the retained status is JSON: "online" / "offline" or {"status": "online", ...}
  let v = text.trim();
  try { v = JSON.parse(text); } catch (e) { /* plain text */ }
  if (v && typeof v === "object") v = v.status ?? v.state ?? (v.online === true ? "online" : v.online === false ? "offline" : "");
  return String(v).toLowerCase() === "online" ? "online" : "offline";
}

function renderFeed() {
  const live = feed.connected && feed.controller === "online";
  const el = $("feed");
  let reason = "";
  if (!feed.connected) reason = feed.error ? `Broker unreachable (${feed.error})` : "Connecting to the broker\u2026";
  else if (feed.controller === "offline") reason = "The shoe controller is offline";
  else if (feed.controller !== "online") reason = "Waiting for the shoe controller\u2026";
  el.textContent = live ? "LIVE" : "OFFLINE";
  el.className = "feed " + (live ? "live" : "offline");
  el.dataset.state = live ? "live" : "offline";
  document.body.dataset.feed = live ? "live" : "offline";
  $("offline-reason").textContent = reason;
  $("offline-overlay").hidden = live;
}

/* ---------- cards, scores, banner ---------- */

function cardEl(code, third) {
  const div = document.createElement("div");
  const rank = code[0] === "T" ? "10" : code[0];
  const suit = code[1];
  div.className = "card" + (suit === "H" || suit === "D" ? " red" : "") + (third ? " third" : "");
  div.dataset.card = code;
  div.innerHTML = `<span class="rank">${rank}</span><span class="suit">${SUITS[suit] || "?"}</span>`;
  return div;
}

function renderHand(side, hand) {
  const box = $(`${side}-cards`);
  box.replaceChildren(...hand.cards.map((c, i) => cardEl(c, i === 2)));
  $(`${side}-score`).textContent = hand.score === null ? "" : String(hand.score);
}

function renderResult(s) {
  const el = $("result");
  const r = s.result;
  const centre = { no_shoe: "Waiting for the shoe", new_shoe: "NEW SHOE", shoe_ended: "SHOE ENDED" };
  if (!r) {
    el.hidden = !centre[s.phase];
    el.className = "result";
    el.dataset.winner = "";
    el.textContent = centre[s.phase] || "";
    return;
  }
  const title = r.winner === "tie" ? "TIE" : `${r.winner.toUpperCase()} WINS`;
  const extras = [];
  if (r.player_natural) extras.push("Player natural");
  if (r.banker_natural) extras.push("Banker natural");
  if (r.player_pair) extras.push("Player pair");
  if (r.banker_pair) extras.push("Banker pair");
  el.hidden = false;
  el.className = `result ${r.winner}`;
  el.dataset.winner = r.winner;
  el.dataset.round = String(r.round);
  // the round is named: under on_result the next round is dealt while this one shows
  el.innerHTML = `<span class="which">ROUND ${r.round}</span>${title}<span class="totals">Player ${r.player_total} \u2013 ${r.banker_total} Banker</span>` +
    (extras.length ? `<span class="extras">${extras.join(" \u00b7 ")}</span>` : "");
}

/* ---------- roads (SVG, 10 units per cell) ---------- */

function visibleColumns(box) {
  const w = box.clientWidth || 300, h = box.clientHeight || 100;
  return Math.max(4, Math.floor(w / (h / ROWS)));
}

function roadSvg(box, cells, drawCell) {
  // show the newest columns: scroll left once the grid is wider than the box
  const cols = visibleColumns(box);
  const maxCol = cells.reduce((m, c) => Math.max(m, c.col), -1);
  const first = Math.max(0, maxCol + 2 - cols);
  const parts = [];
  for (let x = 0; x <= cols; x++) parts.push(`<line x1="${x * 10}" y1="0" x2="${x * 10}" y2="60" class="g"/>`);
  for (let y = 0; y <= ROWS; y++) parts.push(`<line x1="0" y1="${y * 10}" x2="${cols * 10}" y2="${y * 10}" class="g"/>`);
  for (const c of cells) {
    if (c.col < first) continue;
    const x = (c.col - first) * 10 + 5, y = c.row * 10 + 5;
    parts.push(drawCell(c, x, y));
  }
  box.innerHTML = `<svg viewBox="0 0 ${cols * 10} 60" preserveAspectRatio="xMinYMin meet">` +
    `<style>.g{stroke:#c9d3cc;stroke-width:0.4}</style>${parts.join("")}</svg>`;
}

function pairDots(c, x, y) {
  let out = "";
  if (c.banker_pair) out += `<circle cx="${x - 3}" cy="${y - 3}" r="1.4" fill="${COLOURS.banker}" stroke="white" stroke-width="0.4"/>`;
  if (c.player_pair) out += `<circle cx="${x + 3}" cy="${y + 3}" r="1.4" fill="${COLOURS.player}" stroke="white" stroke-width="0.4"/>`;
  return out;
}

function drawBead(c, x, y) {
  return `<g class="cell" data-col="${c.col}" data-row="${c.row}" data-outcome="${c.outcome}">` +
    `<circle cx="${x}" cy="${y}" r="4.3" fill="${COLOURS[c.outcome]}"/>` +
    `<text x="${x}" y="${y + 2}" font-size="5.5" font-weight="bold" text-anchor="middle" fill="white">${LETTER[c.outcome]}</text>` +
    pairDots(c, x, y) + "</g>";
}

function drawBig(c, x, y) {
  let tie = "";
  const ring = c.outcome === "tie" ? "" :
    `<circle cx="${x}" cy="${y}" r="3.8" fill="none" stroke="${COLOURS[c.outcome]}" stroke-width="1.4"/>`;
  if (c.ties > 0) {
    tie = `<line x1="${x - 3.5}" y1="${y + 3.5}" x2="${x + 3.5}" y2="${y - 3.5}" stroke="${COLOURS.tie}" stroke-width="1.3"/>`;
    if (c.ties > 1) tie += `<text x="${x}" y="${y + 2}" font-size="5" font-weight="bold" text-anchor="middle" fill="${COLOURS.tie}">${c.ties}</text>`;
  }
  return `<g class="cell" data-col="${c.col}" data-row="${c.row}" data-outcome="${c.outcome}" data-ties="${c.ties}">` +
    ring + tie + pairDots(c, x, y) + "</g>";
}

const DERIVED = {
  big_eye_boy: (c, x, y) => `<circle cx="${x}" cy="${y}" r="3.6" fill="none" stroke="${COLOURS[c.mark]}" stroke-width="1.4"/>`,
  small_road: (c, x, y) => `<circle cx="${x}" cy="${y}" r="3.8" fill="${COLOURS[c.mark]}"/>`,
  cockroach_pig: (c, x, y) => `<line x1="${x - 3.5}" y1="${y + 3.5}" x2="${x + 3.5}" y2="${y - 3.5}" stroke="${COLOURS[c.mark]}" stroke-width="1.6"/>`,
};

function drawDerived(name) {
  return (c, x, y) => `<g class="cell" data-col="${c.col}" data-row="${c.row}" data-mark="${c.mark}">${DERIVED[name](c, x, y)}</g>`;
}

function askSvg(ask) {
  const names = ["big_eye_boy", "small_road", "cockroach_pig"];
  const parts = names.map((name, i) => {
    const mark = ask[name];
    const x = i * 12 + 6, y = 5;
    if (!mark) return `<text x="${x}" y="${y + 2}" font-size="6" text-anchor="middle" fill="#777">\u2013</text>`;
    return DERIVED[name]({ mark }, x, y);
  });
  const data = names.map((n) => ask[n] || "none").join(" ");
  return `<svg viewBox="0 0 36 10" data-ask="${data}">${parts.join("")}</svg>`;
}

/* ---------- the whole page ---------- */

function pct(n, total) { return total ? `${Math.round((100 * n) / total)}%` : ""; }

function render(s) {
  document.body.dataset.phase = s.phase;
  document.body.dataset.round = s.round === null ? "" : String(s.round);
  $("title").textContent = window.pageConfig?.title || `Table ${s.table}`;
  $("shoe").textContent = s.shoe ?? "-";
  $("round").textContent = s.round ?? "-";

  const p = s.shoe_progress;
  const frac = p.cards_total ? Math.min(1, p.cards_dealt / p.cards_total) : 0;
  $("progress-fill").style.width = `${(frac * 100).toFixed(1)}%`;
  $("progress-text").textContent = p.cards_total ? `${p.cards_dealt} / ${p.cards_total} cards` : "";

  // the warning stays up through the last round; once the shoe is over it says so
  $("last-round").hidden = !(s.last_round || s.phase === "shoe_ended");
  $("last-round").textContent = s.phase === "shoe_ended" ? "SHOE ENDED \u00b7 NEW SHOE NEXT" : "LAST ROUND";
  $("bets-open").hidden = !s.bets_open;
  $("bets-open").textContent = s.bets_open && s.bets_round ? `PLACE YOUR BETS \u00b7 ROUND ${s.bets_round}` : "PLACE YOUR BETS";
  $("paused").hidden = !s.paused;
  $("notice").hidden = !s.notice;
  $("notice").textContent = s.notice || "";

  renderHand("player", s.player);
  renderHand("banker", s.banker);
  renderResult(s);
  const prompts = { player_draws: "Player draws", banker_draws: "Banker draws" };
  $("prompt").textContent = prompts[s.prompt] || "";

  const roads = s.roads;
  roadSvg($("bead-plate"), roads.bead_plate, drawBead);
  // ties before the first Banker/Player result wait, drawn on the empty first cell
  const waiting = roads.big_road.length === 0 && roads.leading_ties > 0
    ? [{ col: 0, row: 0, outcome: "tie", ties: roads.leading_ties }] : [];
  roadSvg($("big-road"), roads.big_road.length ? roads.big_road : waiting, drawBig);
  roadSvg($("big-eye-boy"), roads.grids.big_eye_boy, drawDerived("big_eye_boy"));
  roadSvg($("small-road"), roads.grids.small_road, drawDerived("small_road"));
  roadSvg($("cockroach-pig"), roads.grids.cockroach_pig, drawDerived("cockroach_pig"));
  $("ask-banker").innerHTML = askSvg(s.ask.banker);
  $("ask-player").innerHTML = askSvg(s.ask.player);

  const st = s.statistics;
  for (const k of ["banker", "player", "tie"]) {
    $(`stat-${k}`).textContent = st[k];
    $(`pct-${k}`).textContent = pct(st[k], st.rounds);
  }
  $("stat-banker-pair").textContent = st.banker_pair;
  $("stat-player-pair").textContent = st.player_pair;
  $("stat-natural").textContent = st.natural;
  $("stat-rounds").textContent = st.rounds;
}

function onState(text) {
  if (!text) return; // a cleared retained message
  let s;
  try { s = JSON.parse(text); } catch (e) { console.error("display state is not JSON", e); return; }
  if (s.version !== PAYLOAD_VERSION) { console.error("unsupported display state version", s.version); return; }
  feed.state = s;
  feed.messages += 1;
  render(s);
}

function brokerUrl(cfg) {
  if (cfg.broker_ws_url) return cfg.broker_ws_url;
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  return `${scheme}://${location.hostname || "127.0.0.1"}:${cfg.ws_port || 9001}`;
}

async function loadConfig() {
  for (;;) {
    try {
      const r = await fetch("config.json", { cache: "no-store" });
      if (r.ok) return await r.json();
    } catch (e) { /* the Pi may still be starting */ }
    feed.error = "page server unreachable";
    renderFeed();
    await new Promise((ok) => setTimeout(ok, 2000));
  }
}

async function start() {
  renderFeed();
  if (typeof mqtt === "undefined") {
    feed.error = "MQTT client bundle missing: run python -m shoe_controller.display.build";
    renderFeed();
    return;
  }
  const cfg = await loadConfig();
  window.pageConfig = cfg;
  $("title").textContent = cfg.title || `Table ${cfg.table_id}`;
  const client = mqtt.connect(brokerUrl(cfg), {
    clientId: `display-${cfg.table_id}-${Math.random().toString(16).slice(2, 10)}`,
    clean: true,
    keepalive: 10,
    reconnectPeriod: 2000,
    connectTimeout: 5000,
    username: cfg.username || undefined,
    password: cfg.password || undefined,
  });
  window.displayClient = client;
  client.on("connect", () => {
    feed.connected = true;
    feed.error = "";
    // subscribe on every connect: a restarted broker has forgotten us
    client.subscribe([cfg.topics.state, cfg.topics.status], { qos: 1 });
    renderFeed();
  });
  client.on("message", (topic, payload) => {
    const text = new TextDecoder().decode(payload);
    if (topic === cfg.topics.status) {
      feed.controller = parseStatus(text);
      renderFeed();
    } else if (topic === cfg.topics.state) {
      onState(text);
    }
  });
  const down = (why) => () => {
    feed.connected = false;
    if (why) feed.error = why;
    renderFeed();
  };
  client.on("close", down("connection closed"));
  client.on("offline", down("broker unreachable"));
  client.on("error", (e) => { feed.error = e && e.message ? e.message : "error"; renderFeed(); });
  window.addEventListener("resize", () => feed.state && render(feed.state));
}

start();
