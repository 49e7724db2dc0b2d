// Draws the space-time diagram of one run from the inline JSON (#data): time runs down,
// one lane per capture. Simulated time is compressed to the instants something happened
// (one row each), so bursts stay readable and idle stretches take no room.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("data").textContent);
  const NS = "http://www.w3.org/2000/svg";
  const ROW = 9, TOP = 14, GUTTER = 64, SCN_W = 110, COL = 14, MIN_LANE = 120;
  const W = D.window;
  const secs = (ms) => (ms / 1000).toFixed(3) + "s";
  const tableName = new Map(D.tables.map((t) => [t.id, t.name]));
  const tname = (id) => tableName.get(id) || (id === 0 ? "trigger" : "table " + id);
  const clip = (t) => Math.min(Math.max(t, W.from_ms), W.to_ms);
  const endOf = (b) => (b.end === null ? W.to_ms : clip(b.end));

  function el(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function tip(e, text) {
    el("title", {}, e).textContent = text;
    return e;
  }
  function ents(e, o) {
    e.setAttribute("data-d", (o.d || []).join(" "));
    e.setAttribute("data-tb", (o.tb || []).join(" "));
    e.classList.add("ent");
  }

  // Rows: every instant an element starts, ends or changes.
  const times = [W.from_ms, W.to_ms];
  for (const m of D.msgs) {
    times.push(m.send);
    if (m.recv !== null) times.push(m.recv);
  }
  for (const b of D.bars) {
    times.push(clip(b.start), endOf(b));
    for (const [t] of b.states) times.push(clip(t));
  }
  for (const r of D.records) times.push(r.at);
  for (const v of D.violations) times.push(clip(v.at));
  const rows = Array.from(new Set(times)).sort((a, b) => a - b);
  function y(t) {
    let lo = 0, hi = rows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (rows[mid] < t) lo = mid + 1; else hi = mid;
    }
    return TOP + lo * ROW;
  }

  // Columns of a lane's bars: interval partitioning, per kind, so bars never overlap.
  function columns(bars) {
    const ends = [];
    for (const b of bars.sort((a, c) => a.start - c.start)) {
      const y0 = y(clip(b.start)), y1 = y(endOf(b));
      let c = ends.findIndex((e) => e + 2 * ROW < y0);
      if (c < 0) { c = ends.length; ends.push(0); }
      ends[c] = y1;
      b.col = c;
    }
    return ends.length;
  }
  const lanes = D.lanes.map((l, i) => ({ ...l, i }));
  let x = GUTTER + SCN_W;
  for (const l of lanes) {
    const mine = D.bars.filter((b) => b.node === l.i);
    l.x = x;
    l.axis = x + 10;
    let off = l.axis + 6;
    for (const kind of ["maintainer", "operator", "dispatcher"]) {
      const n = columns(mine.filter((b) => b.kind === kind));
      l[kind] = off;
      off += n * COL + (n ? 6 : 0);
    }
    l.width = Math.max(MIN_LANE, off - x + 16);
    x += l.width;
  }
  const width = x + 20, height = TOP + rows.length * ROW + 40;
  const scnX = GUTTER + 16;
  const axisX = (lane) => (lane >= 0 && lanes[lane] ? lanes[lane].axis : scnX);

  header();
  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, id: "diagram" });
  document.getElementById("timeline").appendChild(svg);
  const defs = el("defs", {}, svg);
  const mk = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" }, defs);
  el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#5a7fb0" }, mk);

  // Time ticks.
  const grid = el("g", { id: "grid" }, svg);
  for (let i = 0; i < rows.length; i += 25) {
    const yy = TOP + i * ROW;
    el("line", { class: "gridline", x1: GUTTER, x2: width, y1: yy, y2: yy }, grid);
    el("text", { class: "tick", x: 4, y: yy + 3 }, grid).textContent = secs(rows[i]);
  }
  // Lane axes: solid while an incarnation of the capture runs.
  const axes = el("g", { id: "axes" }, svg);
  el("line", { class: "axis dead", x1: scnX, x2: scnX, y1: TOP, y2: height - 30 }, axes);
  for (const l of lanes) {
    tip(el("line", { class: "axis dead", x1: l.axis, x2: l.axis, y1: TOP, y2: height - 30 }, axes), l.raw);
  }
  for (const b of D.bars.filter((b) => b.kind === "capture")) {
    const l = lanes[b.node];
    if (!l) continue;
    tip(el("line", { class: "axis", x1: l.axis, x2: l.axis, y1: y(clip(b.start)), y2: y(endOf(b)) }, axes), b.raw);
  }

  // Bars, one rect per state segment.
  // Maintainer generations' hues: none near the violations' red or the operators' orange.
  const HUES = [270, 190, 130, 300, 220, 160, 245];
  const epochHue = new Map();
  const bars = el("g", { id: "bars" }, svg);
  for (const b of D.bars) {
    const l = lanes[b.node];
    if (!l || b.kind === "capture") continue;
    const g = el("g", { class: "bar-group" }, bars);
    if (b.kind !== "maintainer") ents(g, b);
    g.classList.add("bar-" + b.kind);
    const bx = l[b.kind] + b.col * COL, w = b.kind === "maintainer" ? 9 : 6;
    if (!epochHue.has(b.label)) epochHue.set(b.label, HUES[epochHue.size % HUES.length]);
    const segs = b.states.map(([t, s], i) => [clip(t), i + 1 < b.states.length ? clip(b.states[i + 1][0]) : endOf(b), s]);
    for (const [t0, t1, s] of segs) {
      if (t1 < W.from_ms || t0 > W.to_ms) continue;
      const r = el("rect", { class: `bar ${b.kind} ${s}`, x: bx, y: y(t0), width: w, height: Math.max(2, y(t1) - y(t0)) }, g);
      if (b.kind === "maintainer") r.setAttribute("fill", `hsl(${epochHue.get(b.label)},60%,${s === "Working" ? 45 : 72}%)`);
      const until = b.end === null ? "the end" : secs(b.end);
      tip(r, `${b.label} [${s}] ${secs(t0)}..${secs(t1)}\n${b.raw}\nexists ${secs(b.start)}..${until}`);
    }
    const t = el("text", { class: "barlabel", transform: `translate(${bx + w + 1},${y(clip(b.start)) + 2}) rotate(90)` }, g);
    t.textContent = b.label;
  }

  // Messages: an arrow from the send to the handling.
  const msgs = el("g", { id: "msgs" }, svg);
  for (const m of D.msgs) {
    const x0 = axisX(m.from), x1 = axisX(m.to), y0 = y(m.send);
    let e;
    const what = `${m.kind} ${D.lanes[m.from] ? D.lanes[m.from].name : m.from} -> ${D.lanes[m.to] ? D.lanes[m.to].name : m.to}`;
    if (m.recv === null) {
      const xe = m.from === m.to ? x0 - 12 : x0 + (x1 - x0) * 0.35;
      e = el("line", { class: "msg lost", x1: x0, y1: y0, x2: xe, y2: y0 + 2 * ROW }, msgs);
      tip(e, `${what}, sent ${secs(m.send)}, never handled (lost, dropped or in flight)\n${m.detail}`);
    } else {
      const y1 = y(m.recv);
      if (m.from === m.to) {
        e = el("path", { class: "msg local", d: `M ${x0} ${y0} C ${x0 - 18} ${y0} ${x0 - 18} ${y1} ${x0} ${y1}`, "marker-end": "url(#arrow)" }, msgs);
      } else {
        e = el("line", { class: "msg", x1: x0, y1: y0, x2: x1, y2: y1, "marker-end": "url(#arrow)" }, msgs);
      }
      if (m.dup) e.classList.add("dup");
      tip(e, `${what}${m.dup ? " (network duplicate)" : ""}, sent ${secs(m.send)}, handled ${secs(m.recv)}\n${m.detail}`);
    }
    ents(e, m);
  }

  // Trace records as dots on their lane.
  const recs = el("g", { id: "records" }, svg);
  for (const r of D.records) {
    const c = el("circle", { class: "rec" + (r.lane < 0 ? " scenario" : ""), cx: axisX(r.lane), cy: y(r.at), r: 2.5 }, recs);
    tip(c, r.line.trim());
    ents(c, r);
  }

  // Violations: a red line across every lane where each fires.
  const vios = el("g", { id: "violations" }, svg);
  const atRow = new Map();
  D.violations.forEach((v, i) => {
    const yy = y(clip(v.at));
    // Violations of one instant stack their labels below the line.
    const k = atRow.get(yy) || 0;
    atRow.set(yy, k + 1);
    const g = el("g", { class: "violation", id: "violation-" + i }, vios);
    el("line", { x1: GUTTER, x2: width, y1: yy, y2: yy }, g);
    el("text", { x: scnX + 6, y: k === 0 ? yy - 3 : yy + 12 * k }, g).textContent = "\u26a0 " + v.invariant + " " + secs(v.at);
    tip(g, `${v.invariant} at ${secs(v.at)}: ${v.detail}`);
  });

  // Lane names, sticky above the diagram.
  const lh = document.getElementById("lanes-head");
  lh.style.width = width + "px";
  const name = document.createElement("div");
  name.style.left = scnX - 8 + "px";
  name.textContent = "scenario";
  name.title = "scenario steps, workload and checkers";
  lh.appendChild(name);
  for (const l of lanes) {
    const d = document.createElement("div");
    d.className = "lane-name";
    d.style.left = l.axis - 6 + "px";
    d.textContent = l.name;
    d.title = l.raw;
    lh.appendChild(d);
  }

  // The filter: elements that name none of the chosen table's or dispatcher's IDs hide.
  const sel = document.getElementById("table-filter");
  const inp = document.getElementById("dispatcher-filter");
  function applyFilter() {
    const t = sel.value, d = inp.value.trim().toLowerCase();
    let shown = 0, total = 0;
    for (const e of svg.querySelectorAll(".ent")) {
      total++;
      const tb = e.getAttribute("data-tb").split(" ");
      const ds = e.getAttribute("data-d").split(" ").filter((s) => s);
      const ok = (t === "" || tb.includes(t)) && (d === "" || ds.some((x) => x.startsWith(d)));
      e.classList.toggle("hidden", !ok);
      if (ok) shown++;
    }
    document.getElementById("filter-status").textContent =
      t === "" && d === "" ? "" : `${shown} of ${total} arrows, bars and records shown`;
  }
  sel.addEventListener("change", applyFilter);
  inp.addEventListener("input", applyFilter);

  // Raw IDs in free text with their scenario names beside them: `8302 (n2)`,
  // `epoch=759262767785 (g2)`.
  function named(text) {
    const gen = new Map();
    for (const b of D.bars) {
      const m = b.kind === "maintainer" && /epoch (\d+)/.exec(b.raw);
      if (m) gen.set(m[1], b.label.replace("maintainer ", ""));
    }
    return text.replace(/\b(\d+)\b/g, (w) => {
      const n = Number(w);
      if (gen.has(w)) return `${w} (${gen.get(w)})`;
      if (w.length === 4 && n >= 8300 && D.lanes[n - 8300]) return `${w} (${D.lanes[n - 8300].name})`;
      return w;
    });
  }

  function header() {
    const h = document.getElementById("head");
    const add = (tag, cls, text, parent) => {
      const e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text !== undefined) e.textContent = text;
      (parent || h).appendChild(e);
      return e;
    };
    add("h1", "", `${D.scenario} seed ${D.seed}: ${D.outcome}`);
    const bugs = D.bugs.length ? D.bugs.join(", ") : "none";
    const fixes = D.fixes.length ? `, fixes ${D.fixes.join(", ")}` : "";
    add("div", "meta", `bugs ${bugs}${fixes} \u00b7 trace hash ${D.trace_hash || "-"} \u00b7 simulated time ${secs(D.sim_time_ms)}`);
    const rep = add("div", "meta", "reproduce: ");
    add("code", "", D.reproduce, rep);
    if (D.violations.length) {
      const ul = add("ul", "violations");
      D.violations.forEach((v, i) => {
        const li = add("li", "", "", ul);
        const a = add("a", "", `${v.invariant} at ${secs(v.at)}`, li);
        a.setAttribute("href", "#violation-" + i);
        li.appendChild(document.createTextNode(": " + named(v.detail)));
      });
    } else {
      add("div", "meta", "violations: none");
    }
    const hosts = D.bars.filter((b) => b.kind === "maintainer").sort((a, b) => a.start - b.start)
      .map((b) => `${b.label} on ${D.lanes[b.node] ? D.lanes[b.node].name : b.node} ${secs(b.start)}..${b.end === null ? "end" : secs(b.end)}`);
    const mh = add("div", "meta", "maintainer: " + (hosts.length ? hosts.join("; ") : "none in this window"));
    mh.id = "maintainer-hosts";
    mh.title = D.bars.filter((b) => b.kind === "maintainer").map((b) => `${b.label}: ${b.raw}`).join("\n");
    const capped = W.msgs_shown < W.msgs_total || W.records_shown < W.records_total || W.bars_shown < W.bars_total;
    const cap = add("div", "cap",
      `Showing ${W.msgs_shown} of ${W.msgs_total} messages, ${W.records_shown} of ${W.records_total} trace records and ` +
      `${W.bars_shown} of ${W.bars_total} bars, ${secs(W.from_ms)} to ${secs(W.to_ms)}` +
      (capped ? ` (capped: ${D.window.focus_ms === null ? "the start of the run" : "around the first violation"}; the full trace: -v)` : "") +
      (W.unrecorded ? `; ${W.unrecorded} messages, bars or records were not recorded (recording caps)` : "") + ".");
    cap.id = "cap-note";
    const f = add("div", "filters");
    const l1 = add("label", "", "table ", f);
    const s = add("select", "", undefined, l1);
    s.id = "table-filter";
    const all = add("option", "", "all", s);
    all.value = "";
    for (const t of D.tables) {
      const o = add("option", "", t.name, s);
      o.value = String(t.id);
      o.title = "table ID " + t.id;
    }
    const l2 = add("label", "", "dispatcher ", f);
    const i = add("input", "", undefined, l2);
    i.id = "dispatcher-filter";
    i.placeholder = "ID prefix, e.g. 3f7b";
    i.size = 18;
    add("span", "", "", f).id = "filter-status";
    const lg = add("div", "legend");
    for (const [c, t] of [["#5a7fb0", "message"], ["#c33", "never handled"], ["#a050c0", "duplicate"], ["#9a9a9a", "local"],
      ["#3b7dd8", "dispatcher (working)"], ["#9cc0f0", "dispatcher (initializing)"], ["#aaa", "dispatcher (stopped)"],
      ["#e8912d", "operator"], ["hsl(270,60%,45%)", "maintainer (colour: generation)"], ["#d00", "violation"]]) {
      const sp = add("span", "", "", lg);
      add("i", "", "", sp).style.background = c;
      sp.appendChild(document.createTextNode(t));
    }
  }

  window.timelineReady = true;
  // Open at the first violation, unless the address names a place (`#top`, `#violation-2`).
  const first = document.getElementById("violation-0");
  if (first && !location.hash) first.scrollIntoView({ block: "center" });
})();
