// The blame page in a real browser (issue 33): from the file page's "Blame" link to the blame of a
// file with three commits' lines, each range led by its commit (summary linking to the commit,
// author, date), line anchors, the branch switcher keeping the file, the "File" link back; a
// binary file's refusal page; light and dark, a phone's width, without JavaScript; the immutable
// validator at a full commit id. Every page passes axe, with no console error or CSP violation.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { accessibilityViolations, launchBrowser, openTab, signIn, step, type Tab } from "../helpers/browser.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../helpers/git.ts";
import { client, createUser, login, startServer, type RunningServer } from "../helpers/server.ts";

let server: RunningServer;
let browser: Browser;
let g: GitSandbox;
const password = "correct horse battery";
let email = "";
let cookie = "";
const shas: string[] = [];

const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => `${f(i)}\n`).join("");
const V1 = lines(12, (i) => `export const v${i} = ${i};`);
const V2 = V1.replace("export const v3 = 3;", "export const v3 = 33;");
const V3 = `// <script>alert("x")</script> header\n${V2.replace("export const v9 = 9;", "export const v9 = 99;")}`;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  g = gitSandbox("svc-blame-web-");
  email = "bea@blame.example";
  await createUser(server, { org: "blamed", handle: "bea", email, password });
  cookie = await login(server, email, password);
  const { token } = await mintTokenWithId(server, cookie, "blamed", { scopes: ["repo:write"], label: "blame" });
  const r = await client(server, { token }).post("/v1/orgs/blamed/repos", { name: "lines", public: false });
  expect(r.status).toBe(201);
  const dir = await initRepo(g, "lines");
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  shas.push(await commitFiles(g, dir, { "src/values.ts": V1, "logo.bin": new Uint8Array([0, 1, 2, 0, 10]) }, "First values"));
  shas.push(await commitFiles(g, dir, { "src/values.ts": V2 }, "Make v3 bigger"));
  await g.ok(["branch", "older"], { cwd: dir });
  shas.push(await commitFiles(g, dir, { "src/values.ts": V3 }, 'Header <b>"bold"</b> & v9'));
  await g.ok(["push", "-q", repoUrl(server, "blamed", "lines", token), "main", "older"], { cwd: dir });
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  g?.[Symbol.dispose]();
}, 30_000);

/** Axe finds nothing and nothing went wrong on the page so far. */
async function clean(tab: Tab, what: string): Promise<void> {
  expect({ what, violations: await accessibilityViolations(tab.page) }).toEqual({ what, violations: [] });
  expect({ what, problems: tab.problems }).toEqual({ what, problems: [] });
}

async function go(page: Page, click: () => Promise<void>): Promise<void> {
  await Promise.all([page.waitForNavigation(), click()]);
}

/** The blame rows as [line, commit summary of its range or "", text]. */
async function rows(page: Page): Promise<[string, string, string][]> {
  return page
    .locator("table.blame tbody tr")
    .evaluateAll((trs) => trs.map((tr) => [tr.id, tr.querySelector("td.who a.sum")?.textContent ?? "", tr.querySelector("td.l")?.textContent ?? ""]));
}

test("file → Blame → ranges with their commits, anchors, switcher, File back; light and dark", async () => {
  for (const colorScheme of ["light", "dark"] as const) {
    const tab = await openTab(browser, server.url, { colorScheme });
    const page = tab.page;
    try {
      await step(tab, `sign-in-${colorScheme}`, async () => {
        await signIn(page, email, password);
        await page.getByRole("heading", { name: /Welcome/ }).waitFor();
      });
      await step(tab, `file-to-blame-${colorScheme}`, async () => {
        await page.goto("/blamed/lines/blob/main/src/values.ts");
        await go(page, () => page.getByRole("link", { name: "Blame", exact: true }).click());
        expect(new URL(page.url()).pathname).toBe("/blamed/lines/blame/main/src/values.ts");
        await page.getByRole("region", { name: "Blame" }).waitFor();
        const got = await rows(page);
        expect(got.length).toBe(13);
        // Line 1 from the last commit (its summary is text, not markup), 5 and 11 from theirs, the rest from the first.
        expect(got[0]).toEqual(["L1", 'Header <b>"bold"</b> & v9', '// <script>alert("x")</script> header']);
        expect(got[1]).toEqual(["L2", "First values", "export const v0 = 0;"]);
        expect(got[4]).toEqual(["L5", "Make v3 bigger", "export const v3 = 33;"]);
        expect(got[5]![1]).toBe("First values");
        expect(got[10]).toEqual(["L11", 'Header <b>"bold"</b> & v9', "export const v9 = 99;"]);
        expect(got.filter((r) => r[1] !== "").length).toBe(6);
        expect(await page.locator("table.blame span.k").count()).toBeGreaterThan(5);
        expect(await page.locator("td.who .by").first().innerText()).toMatch(/^bea|.+ · \d{4}-\d{2}-\d{2}$/);
        await clean(tab, `blame (${colorScheme})`);
      });
      await step(tab, `anchor-${colorScheme}`, async () => {
        await page.locator('td.n a[href="#L5"]').click();
        expect(new URL(page.url()).hash).toBe("#L5");
        expect(await page.locator("tr#L5").evaluate((r) => r.matches(":target"))).toBe(true);
      });
      await step(tab, `switcher-${colorScheme}`, async () => {
        await page.getByLabel(/Switch branch or tag/).click();
        await go(page, () => page.getByRole("link", { name: "older", exact: true }).click());
        expect(new URL(page.url()).pathname).toBe("/blamed/lines/blame/older/src/values.ts");
        const got = await rows(page);
        expect(got.length).toBe(12);
        expect(got.filter((r) => r[1] !== "").map((r) => r[1])).toEqual(["First values", "Make v3 bigger", "First values"]);
        await clean(tab, `blame of another branch (${colorScheme})`);
      });
      await step(tab, `commit-link-${colorScheme}`, async () => {
        await go(page, () => page.getByRole("link", { name: "Make v3 bigger" }).click());
        expect(new URL(page.url()).pathname).toBe(`/blamed/lines/commit/${shas[1]}`);
        await page.goBack();
        await go(page, () => page.getByRole("link", { name: "File", exact: true }).click());
        expect(new URL(page.url()).pathname).toBe("/blamed/lines/blob/older/src/values.ts");
      });
      await step(tab, `binary-${colorScheme}`, async () => {
        const r = await page.goto("/blamed/lines/blame/main/logo.bin");
        expect(r?.status()).toBe(422);
        await page.getByText("is a binary file").waitFor();
        await clean(tab, `binary refused (${colorScheme})`);
      });
      expect(tab.problems).toEqual([]);
    } finally {
      await tab.close();
    }
  }
}, 180_000);

test("a phone's width, without JavaScript: the page fits and reads", async () => {
  for (const javaScriptEnabled of [true, false]) {
    const tab = await openTab(browser, server.url, { width: 390, height: 800, colorScheme: "dark", javaScriptEnabled });
    try {
      await step(tab, `phone-${javaScriptEnabled}`, async () => {
        await signIn(tab.page, email, password);
        await tab.page.goto("/blamed/lines/blame/main/src/values.ts#L11");
        await tab.page.getByRole("region", { name: "Blame" }).waitFor();
        expect((await rows(tab.page)).length).toBe(13);
        expect(await tab.page.locator("tr#L11").evaluate((r) => r.matches(":target"))).toBe(true);
        // Only the table's own scroller may be wider than the screen.
        expect(await tab.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        // axe needs the page's script; without it, what went wrong is still checked.
        if (javaScriptEnabled) await clean(tab, "phone");
        else expect(tab.problems).toEqual([]);
      });
    } finally {
      await tab.close();
    }
  }
}, 120_000);

test("at a full commit id the page carries a validator and answers 304; an outsider sees not found", async () => {
  const at = `/blamed/lines/blame/${shas[2]}/src/values.ts`;
  const first = await fetch(`${server.url}${at}`, { headers: { cookie } });
  expect(first.status).toBe(200);
  const etag = first.headers.get("etag");
  expect(etag).toBeTruthy();
  expect((await fetch(`${server.url}${at}`, { headers: { cookie, "if-none-match": etag! } })).status).toBe(304);
  // At a branch: no validator (the branch moves).
  expect((await fetch(`${server.url}/blamed/lines/blame/main/src/values.ts`, { headers: { cookie } })).headers.get("etag")).toBeNull();
  // Someone else: the same 404 as a repository that does not exist.
  const other = await createUser(server, { org: "elsewhere", handle: "eli", email: "eli@else.example", password });
  const otherCookie = await login(server, other.email, password);
  const hidden = await fetch(`${server.url}${at}`, { headers: { cookie: otherCookie, "if-none-match": etag! } });
  const missing = await fetch(`${server.url}/blamed/nothing/blame/${shas[2]}/src/values.ts`, { headers: { cookie: otherCookie } });
  expect([hidden.status, missing.status]).toEqual([404, 404]);
});
