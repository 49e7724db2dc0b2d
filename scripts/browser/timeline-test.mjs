// Loads a `--html` timeline page in headless Chromium and checks it: no console error or
// uncaught exception, the first violation is marked and in view, and the table and
// dispatcher filters hide every unrelated arrow and bar (visible counts before/after).
//
// usage: node timeline-test.mjs PAGE.html [--screenshot OUT.png]
// Chromium: $CHROMIUM or /usr/bin/chromium. Exit 0 pass, 1 a check failed, 2 bad usage.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const page_ = args[0];
const shotAt = args.indexOf("--screenshot");
const shot = shotAt >= 0 ? args[shotAt + 1] : null;
if (!page_ || !existsSync(page_) || (shotAt >= 0 && !shot)) {
  console.error("error: usage: node timeline-test.mjs PAGE.html [--screenshot OUT.png] (page must exist)");
  process.exit(2);
}
const exe = process.env.CHROMIUM || "/usr/bin/chromium";
if (!existsSync(exe)) {
  console.error(`error: chromium not found at ${exe} (install Debian's chromium or set CHROMIUM)`);
  process.exit(1);
}

const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures.push(what);
};

const profile = mkdtempSync(join(tmpdir(), "timeline-test-"));
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: exe,
  headless: true,
  viewport: { width: 1400, height: 1000 },
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
try {
  const page = ctx.pages()[0] || (await ctx.newPage());
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
  page.on("pageerror", (e) => errors.push("exception: " + e.message));
  // The page is self-contained: any request beyond the file itself is a failure.
  const url = pathToFileURL(resolve(page_)).href;
  page.on("request", (r) => { if (r.url() !== url) errors.push("request: " + r.url()); });
  await page.goto(url, { waitUntil: "load" });
  const ready = await page.waitForFunction(() => window.timelineReady === true, null, { timeout: 10000 })
    .then(() => true, () => false);
  check(ready, "the page finished drawing");
  check(errors.length === 0, "no console error, exception or request" + (errors.length ? ": " + errors.join("; ") : ""));

  // The violation: a marker in the diagram, in view after load, and listed in the header.
  const marks = await page.locator("#violations .violation").count();
  check(marks > 0, `violation markers drawn (${marks})`);
  if (marks > 0) {
    const inView = await page.evaluate(() => {
      const r = document.querySelector("#violation-0 line").getBoundingClientRect();
      return r.top >= 0 && r.bottom <= window.innerHeight;
    });
    check(inView, "the first violation is scrolled into view");
    check(await page.locator("#head ul.violations a").first().isVisible(), "the violation is listed in the header");
  }
  // What a reader sees first: the diagram around the violation.
  if (shot) await page.screenshot({ path: shot });

  const counts = () => page.evaluate(() => {
    const vis = (sel) => Array.from(document.querySelectorAll(sel)).filter((e) => !e.classList.contains("hidden"));
    const arrows = vis("#msgs .msg"), bars = vis("#bars .bar-group.ent");
    return { arrows: arrows.length, bars: bars.length,
      tables: [...arrows, ...bars].map((e) => e.getAttribute("data-tb").split(" ")),
      dispatchers: [...arrows, ...bars].map((e) => e.getAttribute("data-d").split(" ")) };
  });
  const all = await counts();
  check(all.arrows > 0 && all.bars > 0, `unfiltered: ${all.arrows} arrows, ${all.bars} bars`);

  // Filter by the table with the most dispatcher bars, among the scenario's tables.
  const table = await page.evaluate(() => {
    const n = new Map();
    for (const g of document.querySelectorAll("#bars .bar-dispatcher")) {
      for (const t of g.getAttribute("data-tb").split(" ")) if (t !== "0") n.set(t, (n.get(t) || 0) + 1);
    }
    return [...n.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  });
  check(table !== null, `a table to filter by (${table})`);
  if (table !== null) {
    await page.selectOption("#table-filter", table);
    const f = await counts();
    check(f.arrows > 0 && f.bars > 0, `table ${table}: ${f.arrows} arrows, ${f.bars} bars still shown`);
    check(f.arrows < all.arrows && f.bars < all.bars, `table ${table} hides others (arrows ${all.arrows} -> ${f.arrows}, bars ${all.bars} -> ${f.bars})`);
    check(f.tables.every((t) => t.includes(table)), `every shown arrow and bar is about table ${table}`);
    const status = await page.locator("#filter-status").textContent();
    check(/shown/.test(status), `the filter says what it shows ("${status}")`);
    await page.selectOption("#table-filter", "");
    const back = await counts();
    check(back.arrows === all.arrows && back.bars === all.bars, "clearing the filter shows everything again");
  }

  // Filter by a dispatcher ID prefix (the first dispatcher bar's).
  const d = await page.evaluate(() => document.querySelector("#bars .bar-dispatcher")?.getAttribute("data-d").slice(0, 6));
  if (d) {
    await page.fill("#dispatcher-filter", d);
    const f = await counts();
    check(f.bars > 0 && f.bars < all.bars, `dispatcher ${d}: bars ${all.bars} -> ${f.bars}`);
    check(f.dispatchers.every((ds) => ds.some((x) => x.startsWith(d))), `every shown element names dispatcher ${d}...`);
    await page.fill("#dispatcher-filter", "");
  }
  check(errors.length === 0, "still no console error after filtering" + (errors.length ? ": " + errors.join("; ") : ""));
} finally {
  await ctx.close();
  rmSync(profile, { recursive: true, force: true });
}
if (failures.length) {
  console.error(`error: timeline page ${page_}: ${failures.length} check(s) failed: ${failures.join("; ")}`);
  process.exit(1);
}
console.log(`timeline page ${page_}: ok`);
