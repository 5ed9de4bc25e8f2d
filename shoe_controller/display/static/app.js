/* Table display page: subscribes to the public feed over MQTT-over-WebSockets and draws
   the retained display state (shoe_controller/game/display_state.py, schema
   display_state.schema.json), in the players' language(s) (static/i18n/<tag>.json).

   Safety: the page never builds HTML from strings. Every element is made with
   createElement / createElementNS and every text goes in with textContent; attribute
   names are constants of this file and attribute values are numbers or constants. Each
   state is type-checked before anything is drawn (validateState): a malformed state is
   refused, counted, and the last good state stays on screen. When the page's config
   carries verification keys, a state whose Ed25519 signature does not verify (WebCrypto)
   is refused too. The server's Content-Security-Policy forbids inline script anyway.

   Offline handling: the page is LIVE only while its broker connection is up AND the
   shoe controller's retained status says "online". Otherwise a banner and an overlay say
   why; mqtt.js reconnects by itself and the page re-subscribes on every connect. */
"use strict";

(() => {
  const PAYLOAD_VERSION = 1;
  const ROWS = 6;
  const SVGNS = "http://www.w3.org/2000/svg";
  const COLOURS = { banker: "#e0242f", player: "#1f6fe5", tie: "#1fa34a", red: "#e0242f", blue: "#1f6fe5" };
  const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  const PHASES = ["no_shoe", "new_shoe", "dealing", "result", "voided", "shoe_ended"];
  const OUTCOMES = ["banker", "player", "tie"];
  const MARKS = ["red", "blue"];
  const PROMPTS = [null, "player_draws", "banker_draws", "stand"];
  const DERIVED_ROADS = ["big_eye_boy", "small_road", "cockroach_pig"];
  const BET_NAMES = ["player", "banker", "tie", "player_pair", "banker_pair", "either_pair",
    "perfect_pair", "player_natural", "banker_natural", "player_bonus", "banker_bonus",
    "lucky_six", "lucky_six_2", "lucky_six_3", "lucky_seven", "lucky_seven_2",
    "lucky_seven_3", "super_lucky_seven"];
  /* side bets as the players know them: one chip per group (docs/display.md) */
  const SIDE_GROUPS = [
    ["pairs", ["player_pair", "banker_pair"]],
    ["either_pair", ["either_pair"]],
    ["perfect_pair", ["perfect_pair"]],
    ["naturals", ["player_natural", "banker_natural"]],
    ["bonus", ["player_bonus", "banker_bonus"]],
    ["lucky_six", ["lucky_six", "lucky_six_2", "lucky_six_3"]],
    ["lucky_seven", ["lucky_seven", "lucky_seven_2", "lucky_seven_3", "super_lucky_seven"]],
  ];
  const LIMIT_KEYS = ["player", "banker", "tie", "pairs", "either_pair", "perfect_pair",
    "naturals", "bonus", "lucky_six", "lucky_seven"];
  const PAUSE_REASONS = ["supervisor", "unreadable_card", "foreign_card", "missing_card",
    "link_down", "camera_lost", "lid_opened", "shoe_empty"];
  const MISDEAL_KINDS = ["extra_card", "no_round_open", "after_shoe_end", "card_while_paused"];
  const CARD = /^[A2-9TJQK][SHDC]$/;
  const LANG_TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

  const feed = {
    connected: false, controller: "unknown", error: "", state: null, messages: 0,
    refused: 0, refusal: "", verified: 0, lang: "", langs: [], ready: false,
  };
  window.displayFeed = feed; // for operators' devtools and the browser tests

  const $ = (id) => document.getElementById(id);

  /* ---------- DOM helpers: the only ways this page makes elements ---------- */

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function svgEl(tag, attrs) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k of Object.keys(attrs)) e.setAttribute(k, String(attrs[k]));
    return e;
  }

  /* ---------- language ---------- */

  let strings = {};      // the current language, English filled in underneath
  let english = {};
  let locale = "en";
  const languages = {};  // tag -> {meta, strings}

  /* only until the first language file is in (the page server may be unreachable) */
  const BEFORE_LANGUAGE = { live: "LIVE", offline: "OFFLINE", connecting: "Connecting\u2026",
    page_server_unreachable: "Page server unreachable", broker_unreachable: "Broker unreachable" };

  function t(key, vars) {
    let s = Object.prototype.hasOwnProperty.call(strings, key) ? strings[key]
      : Object.prototype.hasOwnProperty.call(english, key) ? english[key] : BEFORE_LANGUAGE[key];
    if (typeof s !== "string") s = key;
    if (vars) s = s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
    return s;
  }

  function num(n) {
    return typeof n === "number" ? new Intl.NumberFormat(locale).format(n) : "";
  }

  function pct(n, total) {
    if (!total) return "";
    return new Intl.NumberFormat(locale, { style: "percent", maximumFractionDigits: 0 }).format(n / total);
  }

  function money(n) {
    const cfg = window.pageConfig || {};
    if (cfg.currency) {
      try {
        return new Intl.NumberFormat(locale, { style: "currency", currency: cfg.currency,
          maximumFractionDigits: 0 }).format(n);
      } catch (e) { /* an unknown currency: plain number */ }
    }
    return num(n);
  }

  async function loadLanguage(tag) {
    if (languages[tag]) return languages[tag];
    const r = await fetch(`i18n/${tag}.json`, { cache: "no-cache" });
    if (!r.ok) throw new Error(`language ${tag}: HTTP ${r.status}`);
    const data = await r.json();
    const okStrings = data && typeof data.strings === "object" && data.strings !== null &&
      Object.values(data.strings).every((v) => typeof v === "string");
    if (!okStrings || typeof data.meta !== "object" || data.meta === null) {
      throw new Error(`language ${tag}: not a language file`);
    }
    languages[tag] = data;
    return data;
  }

  function applyLanguage(tag) {
    const data = languages[tag];
    strings = data.strings;
    const meta = data.meta;
    locale = typeof meta.locale === "string" ? meta.locale : tag;
    try { new Intl.NumberFormat(locale); } catch (e) { locale = "en"; }
    feed.lang = tag;
    document.documentElement.lang = tag;
    document.body.dataset.lang = tag;
    const fonts = Array.isArray(meta.fonts) ? meta.fonts.filter((f) => typeof f === "string" && /^[\w .-]+$/.test(f)) : [];
    document.documentElement.style.fontFamily = fonts.map((f) => `"${f}"`).concat(["sans-serif"]).join(", ");
    for (const e of document.querySelectorAll("[data-i18n]")) e.textContent = t(e.dataset.i18n);
    renderFeed();
    if (feed.state) render(feed.state);
    else renderIdle();
  }

  function wantedLanguages(cfg) {
    const q = new URLSearchParams(location.search).get("lang");
    const available = Array.isArray(cfg.languages) ? cfg.languages : ["en"];
    let wanted = q ? q.split(",") : (Array.isArray(cfg.language) ? cfg.language : [cfg.language]);
    wanted = wanted.map((x) => String(x).trim()).filter((x) => LANG_TAG.test(x) && available.includes(x));
    if (q && !wanted.length) console.error("?lang=: no such language file:", q, "known:", available.join(", "));
    return wanted.length ? wanted : ["en"];
  }

  async function startLanguages(cfg) {
    try { english = (await loadLanguage("en")).strings; } catch (e) { console.error(e); }
    const wanted = wantedLanguages(cfg);
    const loaded = [];
    for (const tag of wanted) {
      try { await loadLanguage(tag); loaded.push(tag); } catch (e) { console.error(e); }
    }
    if (!loaded.length) loaded.push("en");
    feed.langs = loaded;
    applyLanguage(loaded[0]);
    if (loaded.length > 1) {
      let i = 0;
      const every = Math.max(2, Number(cfg.language_seconds) || 10) * 1000;
      setInterval(() => { i = (i + 1) % loaded.length; applyLanguage(loaded[i]); }, every);
    }
  }

  /* ---------- validation: refuse, never draw, a malformed state ---------- */

  class Refused extends Error {}

  function need(cond, what) { if (!cond) throw new Refused(what); }
  const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const isInt = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;
  const isBool = (v) => typeof v === "boolean";
  const isStr = (v, max) => typeof v === "string" && v.length <= max;
  const isArr = (v, max) => Array.isArray(v) && v.length <= max;
  const optional = (v) => v === undefined || v === null;

  function checkHand(h, what) {
    need(isObj(h), what);
    need(isArr(h.cards, 3) && h.cards.every((c) => typeof c === "string" && CARD.test(c)), `${what}.cards`);
    need(h.score === null || isInt(h.score, 0, 9), `${what}.score`);
  }

  function checkCells(cells, what, check) {
    need(isArr(cells, 5000), what);
    cells.forEach((c, i) => {
      need(isObj(c) && isInt(c.col, 0, 5000) && isInt(c.row, 0, ROWS - 1), `${what}[${i}]`);
      check(c, `${what}[${i}]`);
    });
  }

  function validateState(s) {
    need(isObj(s), "not an object");
    need(s.version === PAYLOAD_VERSION, "version");
    need(isStr(s.table, 128), "table");
    for (const k of ["shoe", "round", "cards_round", "last_round_number", "bets_round"]) {
      need(optional(s[k]) || isInt(s[k], 0, 1e9), k);
    }
    need(PHASES.includes(s.phase), "phase");
    for (const k of ["paused", "cut_card", "last_round", "bets_open"]) need(isBool(s[k]), k);
    need(optional(s.pause_reason) || isStr(s.pause_reason, 64), "pause_reason");
    need(optional(s.notice) || isStr(s.notice, 200), "notice");
    if (!optional(s.misdeal)) {
      const m = s.misdeal;
      need(isObj(m) && (optional(m.round) || isInt(m.round, 0, 1e9)) && isStr(m.kind, 64) &&
        ["burn", "void", "carry", ""].includes(m.policy), "misdeal");
    }
    checkHand(s.player, "player");
    checkHand(s.banker, "banker");
    need(PROMPTS.includes(s.prompt), "prompt");
    if (s.result !== null) {
      const r = s.result;
      need(isObj(r), "result");
      need(isInt(r.round, 0, 1e9), "result.round");
      need(OUTCOMES.includes(r.winner), "result.winner");
      need(isInt(r.player_total, 0, 9) && isInt(r.banker_total, 0, 9), "result totals");
      for (const k of ["natural", "player_pair", "banker_pair", "player_natural", "banker_natural", "confirmed"]) {
        need(isBool(r[k]), `result.${k}`);
      }
    }
    const roads = s.roads;
    need(isObj(roads), "roads");
    checkCells(roads.bead_plate, "bead_plate", (c, w) => need(OUTCOMES.includes(c.outcome) &&
      isBool(c.player_pair) && isBool(c.banker_pair) && isBool(c.natural), w));
    checkCells(roads.big_road, "big_road", (c, w) => need((c.outcome === "banker" || c.outcome === "player") &&
      isInt(c.ties, 0, 1000) && isInt(c.column, 0, 5000) && isInt(c.depth, 0, 5000) &&
      isBool(c.player_pair) && isBool(c.banker_pair), w));
    need(isArr(roads.column_lengths, 5000) && roads.column_lengths.every((n) => isInt(n, 1, 5000)), "column_lengths");
    need(isInt(roads.leading_ties, 0, 1000), "leading_ties");
    need(isObj(roads.grids), "grids");
    for (const name of DERIVED_ROADS) {
      need(isArr(roads[name], 5000) && roads[name].every((m) => MARKS.includes(m)), name);
      checkCells(roads.grids[name], name, (c, w) => need(MARKS.includes(c.mark), w));
    }
    need(isObj(s.ask) && isObj(s.ask.banker) && isObj(s.ask.player), "ask");
    for (const side of ["banker", "player"]) {
      for (const name of DERIVED_ROADS) {
        need(s.ask[side][name] === null || MARKS.includes(s.ask[side][name]), `ask.${side}.${name}`);
      }
    }
    const st = s.statistics;
    need(isObj(st), "statistics");
    for (const k of ["rounds", "banker", "player", "tie", "player_pair", "banker_pair", "natural",
      "player_natural", "banker_natural"]) {
      need(isInt(st[k], 0, 1e6), `statistics.${k}`);
    }
    const p = s.shoe_progress;
    need(isObj(p) && isInt(p.cards_dealt, 0, 1e5) && (p.cards_total === null || isInt(p.cards_total, 52, 1e5)),
      "shoe_progress");
    need(isArr(s.bets, BET_NAMES.length) && s.bets.every((b) => BET_NAMES.includes(b)), "bets");
  }

  /* ---------- signature (Ed25519 over the bytes docs/mqtt.md names) ----------
     The state is canonical JSON signed by the device key: the signed bytes are the text
     received with its single "sig":"<128 hex>" member and the comma after it (or, last,
     the comma before it) cut out. The public keys come from the page server's
     /config.json (the daemon's own key, [display] public_keys), never from the feed. */

  const keyCache = {};

  function b64bytes(text) {
    const bin = atob(text);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  function hexBytes(hex) {
    return Uint8Array.from(hex.match(/../g), (h) => parseInt(h, 16));
  }

  function publicKey(keys, keyId) {
    if (!keyCache[keyId]) {
      keyCache[keyId] = crypto.subtle.importKey("raw", b64bytes(keys[keyId]), { name: "Ed25519" },
        false, ["verify"]);
    }
    return keyCache[keyId];
  }

  function signedText(text) {
    const m = text.match(/"sig":"([0-9a-f]{128})"/);
    if (!m || text.indexOf('"sig":"', m.index + 1) !== -1) return null;
    const end = m.index + m[0].length;
    const cut = text[end] === "," ? text.slice(0, m.index) + text.slice(end + 1)
      : text[m.index - 1] === "," ? text.slice(0, m.index - 1) + text.slice(end) : null;
    return cut === null ? null : { sig: m[1], cut };
  }

  async function verify(text, s) {
    const keys = (window.pageConfig || {}).verify_keys || {};
    if (!Object.keys(keys).length) { // a page server without keys: only with --unsigned
      if (document.body.dataset.signed !== "unchecked") {
        document.body.dataset.signed = "unchecked";
        renderFeed();
      }
      return;
    }
    need(isObj(s) && s.unsigned === undefined, "unsigned state");
    need(isStr(s.key_id, 64) && Object.prototype.hasOwnProperty.call(keys, s.key_id), "unknown key_id");
    const part = signedText(text);
    need(part !== null && s.sig === part.sig, "no single signature");
    let ok = false;
    try {
      const key = await publicKey(keys, s.key_id);
      ok = await crypto.subtle.verify({ name: "Ed25519" }, key, hexBytes(part.sig),
        new TextEncoder().encode(part.cut));
    } catch (e) { ok = false; }
    need(ok, "bad signature");
    feed.verified += 1;
    document.body.dataset.signed = "verified";
  }

  /* ---------- feed status ---------- */

  function parseStatus(text) {
    // the retained status is JSON: "online" / "offline" or {"status": "online", ...}
    let v = text.trim();
    try { v = JSON.parse(text); } catch (e) { /* plain text */ }
    if (isObj(v)) v = v.status ?? v.state ?? (v.online === true ? "online" : v.online === false ? "offline" : "");
    return String(v).toLowerCase() === "online" ? "online" : "offline";
  }

  function renderFeed() {
    const live = feed.connected && feed.controller === "online";
    const pill = $("feed");
    let reason = "";
    if (!feed.connected) {
      reason = feed.error === "bundle" ? t("bundle_missing")
        : feed.error === "page" ? t("page_server_unreachable")
          : feed.error ? t("broker_unreachable") : t("connecting");
    } else if (feed.controller === "offline") reason = t("controller_offline");
    else if (feed.controller !== "online") reason = t("waiting_controller");
    // a page server with no key to check the state against (a --unsigned run) says so
    const unchecked = live && document.body.dataset.signed === "unchecked";
    pill.textContent = live ? (unchecked ? `${t("live")} \u00b7 ${t("unsigned")}` : t("live")) : t("offline");
    pill.className = "feed " + (live ? "live" : "offline") + (unchecked ? " unsigned" : "");
    pill.dataset.state = live ? "live" : "offline";
    document.body.dataset.feed = live ? "live" : "offline";
    $("offline-reason").textContent = reason;
    $("offline-overlay").hidden = live;
  }

  /* ---------- fitting text into its box ---------- */

  function fit(e) {
    // shrink the font until the one-line text fits its box's width (long words in some
    // languages); heights are fixed by the layout (the browser test checks them)
    e.style.fontSize = "";
    for (let i = 0; i < 6; i++) {
      if (e.scrollWidth - e.clientWidth <= 1) return;
      const size = parseFloat(getComputedStyle(e).fontSize);
      const ratio = e.clientWidth / Math.max(1, e.scrollWidth);
      e.style.fontSize = `${Math.max(6, size * Math.min(0.97, ratio))}px`;
    }
  }

  function fitAll() {
    for (const e of document.querySelectorAll(".fit")) if (e.offsetParent !== null) fit(e);
  }

  /* ---------- cards, scores, result ---------- */

  function cardEl(code, third) {
    const rank = code[0] === "T" ? "10" : code[0];
    const suit = code[1];
    const card = el("div", "card" + (suit === "H" || suit === "D" ? " red" : "") + (third ? " third" : ""));
    card.dataset.card = code;
    const idx = el("div", "idx");
    idx.append(el("span", "rank", rank), el("span", "suit", SUITS[suit]));
    card.append(idx);
    return card;
  }

  function renderHand(side, hand) {
    $(`${side}-cards`).replaceChildren(...hand.cards.map((c, i) => cardEl(c, i === 2)));
    $(`${side}-score`).textContent = hand.score === null ? "" : num(hand.score);
  }

  function renderCentre(s) {
    const box = $("result");
    const prompt = $("prompt");
    const r = s.result;
    prompt.hidden = true;
    prompt.replaceChildren();
    delete prompt.dataset.prompt;
    if (s.prompt === "player_draws" || s.prompt === "banker_draws") {
      const side = s.prompt === "player_draws" ? "player" : "banker";
      prompt.hidden = false;
      prompt.className = `prompt ${side}`;
      prompt.dataset.prompt = s.prompt;
      prompt.append(el("div", "big fit", t(s.prompt)), el("div", "small fit", t("third_card")));
    }
    if (!r) {
      box.hidden = true;
      box.replaceChildren();
      box.dataset.winner = "";
      delete box.dataset.round;
      return;
    }
    box.hidden = false;
    box.className = `result ${r.winner}`;
    box.dataset.winner = r.winner;
    box.dataset.round = String(r.round);
    const title = r.winner === "tie" ? t("tie_result") : t(`${r.winner}_wins`);
    const extras = [];
    if (r.player_natural) extras.push(t("player_natural"));
    if (r.banker_natural) extras.push(t("banker_natural"));
    if (r.player_pair) extras.push(t("player_pair"));
    if (r.banker_pair) extras.push(t("banker_pair"));
    // the round is named: under on_result the next round is dealt while this one shows
    const parts = [el("div", "which fit", t("round_n", { n: num(r.round) })), el("div", "title fit", title),
      el("div", "totals fit", t("totals", { player: num(r.player_total), banker: num(r.banker_total) }))];
    if (extras.length) parts.push(el("div", "extras fit", extras.join(" \u00b7 ")));
    box.replaceChildren(...parts);
  }

  /* ---------- the table's state: bets, dealing, draw, paused, misdeal, shoe ---------- */

  function pauseReason(code) {
    if (!code) return t("reason_other");
    if (code.startsWith("supervisor")) return t("reason_supervisor");
    return PAUSE_REASONS.includes(code) ? t(`reason_${code}`) : t("reason_other");
  }

  function sideBetsOpen(s) {
    return SIDE_GROUPS.filter(([, bets]) => bets.some((b) => s.bets.includes(b))).map(([g]) => g);
  }

  function nextClosing(s) {
    // the next round after which some offered side bets close (from the table's rules)
    const last = (window.pageConfig || {}).bet_last_rounds || {};
    const rnd = s.bets_round || s.round || 1;
    let at = null;
    for (const b of s.bets) {
      const n = last[b];
      if (Number.isInteger(n) && n >= rnd && (at === null || n < at)) at = n;
    }
    if (at === null) return null;
    const groups = SIDE_GROUPS.filter(([, bets]) => bets.some((b) => s.bets.includes(b) && last[b] === at))
      .map(([g]) => t(`bet_${g}`));
    return groups.length ? { round: at, groups } : null;
  }

  function statusOf(s) {
    if (s.paused) return "paused";
    if (s.misdeal && (s.misdeal.round === null || s.misdeal.round === s.round) && s.phase !== "shoe_ended") return "misdeal";
    if (s.phase === "shoe_ended") return "shoe_ended";
    if (s.phase === "voided") return "voided";
    if (s.prompt === "player_draws" || s.prompt === "banker_draws") return s.prompt;
    if (s.bets_open) return "bets_open";
    if (s.phase === "dealing") return "dealing";
    if (s.phase === "result") return "result";
    return s.phase; // no_shoe, new_shoe
  }

  function renderStatus(s) {
    const box = $("status");
    const status = statusOf(s);
    box.dataset.status = status;
    box.className = `status ${status}`;
    const head = el("div", "head fit");
    const detail = el("div", "detail fit");
    const extra = [];
    const roundN = (n) => t("round_n", { n: num(n) });
    switch (status) {
      case "paused":
        head.textContent = t("paused");
        detail.textContent = `${pauseReason(s.pause_reason)} \u00b7 ${t("please_wait")}`;
        break;
      case "misdeal": {
        const m = s.misdeal;
        head.textContent = m.round ? `${t("misdeal")} \u00b7 ${roundN(m.round)}` : t("misdeal");
        const what = MISDEAL_KINDS.includes(m.kind) ? t(`misdeal_${m.kind}`) : t("misdeal_other");
        const next = ["burn", "void", "carry"].includes(m.policy) ? t(`next_${m.policy}`) : t("please_wait");
        detail.textContent = what;
        extra.push(el("div", "detail next fit", next));
        break;
      }
      case "shoe_ended":
        head.textContent = t("shoe_ended");
        detail.textContent = t("shuffling");
        break;
      case "voided":
        head.textContent = t("voided");
        detail.textContent = t("voided_detail", { n: num(s.round) });
        break;
      case "player_draws":
      case "banker_draws":
        head.textContent = t("no_more_bets");
        detail.textContent = t(status);
        break;
      case "bets_open": {
        head.textContent = t("place_bets");
        detail.textContent = s.bets_round ? roundN(s.bets_round) : "";
        const groups = sideBetsOpen(s);
        const chips = el("div", "chips fit");
        chips.append(el("span", "label fit", groups.length ? t("side_bets_open") : t("no_side_bets")));
        for (const g of groups) {
          const chip = el("span", "chip", t(`bet_${g}`));
          chip.dataset.bet = g;
          chips.append(chip);
        }
        extra.push(chips);
        const closing = nextClosing(s);
        if (closing) {
          const c = el("div", "detail closing fit",
            t("bets_close_after", { bets: closing.groups.join(", "), n: num(closing.round) }));
          c.dataset.round = String(closing.round);
          extra.push(c);
        }
        break;
      }
      case "dealing":
        head.textContent = t("no_more_bets");
        detail.textContent = t("dealing_round", { n: num(s.round) });
        break;
      case "result":
        head.textContent = s.result ? roundN(s.result.round) : "";
        detail.textContent = "";
        break;
      case "new_shoe":
        head.textContent = t("new_shoe");
        detail.textContent = t("burning");
        break;
      default:
        head.textContent = t("waiting_shoe");
        detail.textContent = "";
    }
    box.replaceChildren(head, detail, ...extra);

    const last = $("last-round");
    const showLast = s.last_round && s.phase !== "shoe_ended";
    last.hidden = !showLast;
    last.replaceChildren();
    if (showLast) {
      last.append(el("span", "head", t("last_round")));
      if (s.last_round_number) last.append(el("span", "detail", t("last_round_detail", { n: num(s.last_round_number) })));
    }
  }

  /* ---------- roads (SVG, 10 units per cell) ---------- */

  function visibleColumns(box) {
    const w = box.clientWidth || 300, h = box.clientHeight || 100;
    return Math.max(4, Math.floor(w / (h / ROWS)));
  }

  function roadSvg(box, cells, drawCell) {
    // show the newest columns: scroll left once the grid is wider than the box, and say so
    const cols = visibleColumns(box);
    const maxCol = cells.reduce((m, c) => Math.max(m, c.col), -1);
    const first = Math.max(0, maxCol + 2 - cols);
    const svg = svgEl("svg", { viewBox: `0 0 ${cols * 10} 60`, preserveAspectRatio: "xMinYMin meet" });
    for (let x = 0; x <= cols; x++) svg.append(svgEl("line", { x1: x * 10, y1: 0, x2: x * 10, y2: 60, class: "g" }));
    for (let y = 0; y <= ROWS; y++) svg.append(svgEl("line", { x1: 0, y1: y * 10, x2: cols * 10, y2: y * 10, class: "g" }));
    for (const c of cells) {
      if (c.col < first) continue;
      const x = (c.col - first) * 10 + 5, y = c.row * 10 + 5;
      svg.append(drawCell(c, x, y));
    }
    box.dataset.earlier = String(first);
    const badge = box.parentElement.querySelector(".earlier");
    badge.hidden = first === 0;
    badge.textContent = first > 0 ? t("earlier_columns", { n: num(first) }) : "";
    if (first > 0) svg.append(svgEl("line", { x1: 0.5, y1: 0, x2: 0.5, y2: 60, class: "cut" }));
    box.replaceChildren(svg);
  }

  function cellGroup(c, extra) {
    const g = svgEl("g", { class: "cell", "data-col": c.col, "data-row": c.row });
    if (extra.outcome) g.setAttribute("data-outcome", extra.outcome);
    if (extra.ties !== undefined) g.setAttribute("data-ties", String(extra.ties));
    if (extra.mark) g.setAttribute("data-mark", extra.mark);
    return g;
  }

  function pairDots(g, c, x, y) {
    if (c.banker_pair) g.append(svgEl("circle", { cx: x - 3, cy: y - 3, r: 1.4, fill: COLOURS.banker, stroke: "white", "stroke-width": 0.4 }));
    if (c.player_pair) g.append(svgEl("circle", { cx: x + 3, cy: y + 3, r: 1.4, fill: COLOURS.player, stroke: "white", "stroke-width": 0.4 }));
  }

  function svgText(x, y, size, fill, text) {
    const e = svgEl("text", { x, y, "font-size": size, "font-weight": "bold", "text-anchor": "middle",
      "dominant-baseline": "central", fill });
    e.textContent = text;
    return e;
  }

  function drawBead(c, x, y) {
    const g = cellGroup(c, { outcome: c.outcome });
    g.append(svgEl("circle", { cx: x, cy: y, r: 4.3, fill: COLOURS[c.outcome] }));
    g.append(svgText(x, y + 0.3, 5, "white", t(`${c.outcome}_short`)));
    pairDots(g, c, x, y);
    return g;
  }

  function drawBig(c, x, y) {
    const g = cellGroup(c, { outcome: c.outcome, ties: c.ties });
    if (c.outcome !== "tie") {
      g.append(svgEl("circle", { cx: x, cy: y, r: 3.8, fill: "none", stroke: COLOURS[c.outcome], "stroke-width": 1.4 }));
    }
    if (c.ties > 0) {
      g.append(svgEl("line", { x1: x - 3.5, y1: y + 3.5, x2: x + 3.5, y2: y - 3.5, stroke: COLOURS.tie, "stroke-width": 1.3 }));
      if (c.ties > 1) g.append(svgText(x, y, 5, COLOURS.tie, num(c.ties)));
    }
    pairDots(g, c, x, y);
    return g;
  }

  const DERIVED = {
    big_eye_boy: (mark, x, y) => svgEl("circle", { cx: x, cy: y, r: 3.6, fill: "none", stroke: COLOURS[mark], "stroke-width": 1.4 }),
    small_road: (mark, x, y) => svgEl("circle", { cx: x, cy: y, r: 3.8, fill: COLOURS[mark] }),
    cockroach_pig: (mark, x, y) => svgEl("line", { x1: x - 3.5, y1: y + 3.5, x2: x + 3.5, y2: y - 3.5, stroke: COLOURS[mark], "stroke-width": 1.6 }),
  };

  function drawDerived(name) {
    return (c, x, y) => {
      const g = cellGroup(c, { mark: c.mark });
      g.append(DERIVED[name](c.mark, x, y));
      return g;
    };
  }

  function askSvg(ask) {
    const svg = svgEl("svg", { viewBox: "0 0 36 10", "data-ask": DERIVED_ROADS.map((n) => ask[n] || "none").join(" ") });
    DERIVED_ROADS.forEach((name, i) => {
      const mark = ask[name];
      const x = i * 12 + 6, y = 5;
      svg.append(mark ? DERIVED[name](mark, x, y) : svgText(x, y, 6, "#777", "\u2013"));
    });
    return svg;
  }

  /* ---------- statistics and limits ---------- */

  function renderStats(st) {
    for (const k of ["banker", "player", "tie"]) {
      $(`stat-${k}`).textContent = num(st[k]);
      $(`pct-${k}`).textContent = pct(st[k], st.rounds);
    }
    $("stat-banker-pair").textContent = num(st.banker_pair);
    $("pct-banker-pair").textContent = pct(st.banker_pair, st.rounds);
    $("stat-player-pair").textContent = num(st.player_pair);
    $("pct-player-pair").textContent = pct(st.player_pair, st.rounds);
    $("stat-natural").textContent = num(st.natural);
    $("pct-natural").textContent = pct(st.natural, st.rounds);
    $("stat-rounds").textContent = num(st.rounds);
  }

  function renderLimits() {
    const cfg = window.pageConfig || {};
    const limits = isObj(cfg.limits) ? cfg.limits : {};
    const box = $("limits");
    const rows = [];
    for (const key of LIMIT_KEYS) {
      const v = limits[key];
      if (!Array.isArray(v) || v.length !== 2 || !v.every((n) => Number.isInteger(n))) continue;
      const row = el("div", "limit");
      row.dataset.bet = key;
      row.append(el("span", "bet fit", t(`bet_${key}`)), el("span", "range fit", t("limit_range", { min: money(v[0]), max: money(v[1]) })));
      rows.push(row);
    }
    box.hidden = rows.length === 0;
    $("limits-body").replaceChildren(...rows);
  }

  /* ---------- the whole page ---------- */

  function renderTitle(s) {
    const cfg = window.pageConfig || {};
    $("title").textContent = cfg.title || t("table", { table: (s && s.table) || cfg.table_id || "" });
  }

  function renderIdle() {
    renderTitle(null);
    renderLimits();
    fitAll();
  }

  function render(s) {
    document.body.dataset.phase = s.phase;
    document.body.dataset.round = s.round === null || s.round === undefined ? "" : String(s.round);
    renderTitle(s);
    $("shoe").textContent = s.shoe === null ? "-" : num(s.shoe);
    $("round").textContent = s.round === null ? "-" : num(s.round);

    const p = s.shoe_progress;
    const frac = p.cards_total ? Math.min(1, p.cards_dealt / p.cards_total) : 0;
    $("progress-fill").style.width = `${(frac * 100).toFixed(1)}%`;
    $("progress-text").textContent = p.cards_total ? t("cards_progress", { dealt: num(p.cards_dealt), total: num(p.cards_total) }) : "";

    renderStatus(s);
    renderHand("player", s.player);
    renderHand("banker", s.banker);
    renderCentre(s);

    const roads = s.roads;
    roadSvg($("bead-plate"), roads.bead_plate, drawBead);
    // ties before the first Banker/Player result wait, drawn on the empty first cell
    const waiting = roads.big_road.length === 0 && roads.leading_ties > 0
      ? [{ col: 0, row: 0, outcome: "tie", ties: roads.leading_ties }] : [];
    roadSvg($("big-road"), roads.big_road.length ? roads.big_road : waiting, drawBig);
    for (const name of DERIVED_ROADS) roadSvg($(name.replace(/_/g, "-")), roads.grids[name], drawDerived(name));
    $("ask-banker").replaceChildren(askSvg(s.ask.banker));
    $("ask-player").replaceChildren(askSvg(s.ask.player));
    renderStats(s.statistics);
    renderLimits();
    fitAll();
  }

  /* States are handled strictly in arrival order, one at a time (verification is async). */
  let queue = Promise.resolve();

  async function handleState(text) {
    if (!text) return; // a cleared retained message
    let s;
    try {
      try { s = JSON.parse(text); } catch (e) { throw new Refused("not JSON"); }
      await verify(text, s);
      validateState(s);
      const cfg = window.pageConfig || {};
      need(!cfg.table_id || s.table === cfg.table_id, "another table's state");
    } catch (e) {
      if (!(e instanceof Refused)) throw e;
      feed.refused += 1;
      feed.refusal = e.message;
      document.body.dataset.refused = String(feed.refused);
      console.error("display state refused:", e.message);
      return;
    }
    feed.state = s;
    feed.messages += 1;
    render(s);
  }

  function onState(text) {
    queue = queue.then(() => handleState(text)).catch((e) => console.error("display state", e));
    return queue;
  }
  feed.receive = onState; // the same path as a broker message (tests, devtools)

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
      feed.error = "page";
      renderFeed();
      await new Promise((ok) => setTimeout(ok, 2000));
    }
  }

  async function start() {
    renderFeed();
    const cfg = await loadConfig();
    window.pageConfig = cfg;
    await startLanguages(cfg);
    feed.ready = true;
    if (typeof mqtt === "undefined") {
      feed.error = "bundle";
      renderFeed();
      return;
    }
    const client = mqtt.connect(brokerUrl(cfg), {
      clientId: `display-${cfg.table_id}-${Math.random().toString(16).slice(2, 10)}`,
      clean: true,
      keepalive: 10,
      reconnectPeriod: 2000,
      connectTimeout: 5000,
      // no blob: worker for the keepalive timer (the CSP allows none); a kiosk page is
      // never a background tab, so native timers are not throttled
      timerVariant: "native",
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
    client.on("close", down("closed"));
    client.on("offline", down("unreachable"));
    client.on("error", () => { feed.error = "error"; renderFeed(); });
    let resizing = 0;
    window.addEventListener("resize", () => {
      clearTimeout(resizing);
      resizing = setTimeout(() => (feed.state ? render(feed.state) : renderIdle()), 100);
    });
  }

  start();
})();
