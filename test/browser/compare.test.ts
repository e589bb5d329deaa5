// The compare page in a real browser (issue 33): ada picks two branches in the pickers, reads the
// comparison (summary, commits, diff), opens a change from its prefilled form and lands on the
// change page. Every page passes axe with no console error, CSP violation or failed load, in the
// light theme, then in the dark one at a phone's width (nothing wider than the screen); the
// pickers also work with JavaScript off, and an anonymous visitor gets the sign-in hint.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { accessibilityViolations, launchBrowser, openTab, signIn, step, type Tab } from "../helpers/browser.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../helpers/git.ts";
import { createUser, login, startServer, type RunningServer } from "../helpers/server.ts";

let server: RunningServer;
let browser: Browser;
let g: GitSandbox;
const PASSWORD = "correct horse battery";
let ada: { email: string };

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  g = gitSandbox("svc-compare-browser-");
  const a = await createUser(server, { org: "team", handle: "ada", email: "ada@team.example", password: PASSWORD });
  const cookie = await login(server, a.email, PASSWORD);
  const { token } = await mintTokenWithId(server, cookie, "team", { scopes: ["repo:write"], label: "ada" });
  ada = { email: a.email };
  const res = await fetch(`${server.url}/v1/orgs/team/repos`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "app", public: true }),
  });
  expect(res.status).toBe(201);
  const dir = await initRepo(g);
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  await commitFiles(g, dir, { "upload.ts": "export const limit = 2;\nexport const retries = 0;\n" }, "seed");
  await g.ok(["checkout", "-q", "-b", "feature/retries"], { cwd: dir });
  await commitFiles(g, dir, { "upload.ts": "export const limit = 2;\nexport const retries = 3;\n" }, "Retry uploads three times");
  await commitFiles(
    g,
    dir,
    { "docs/retries.md": "# Retries\n\nUploads retry three times with a growing pause between attempts, which is a long line on a phone.\n" },
    "Document the retries",
  );
  const url = repoUrl(server, "team", "app", token);
  await g.ok(["push", "-q", url, "main", "feature/retries"], { cwd: dir });
}, 120_000);

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

/** Clicks and waits for the page it leads to. */
async function go(page: Page, click: () => Promise<void>): Promise<void> {
  await Promise.all([page.waitForNavigation(), click()]);
}

/** The page's text with runs of white space as one space. */
async function textOf(page: Page): Promise<string> {
  return ((await page.locator("main").textContent()) ?? "").replace(/\s+/g, " ");
}

/** Nothing on the page is wider than the screen (the diff scrolls inside its own box). */
async function fitsScreen(page: Page): Promise<void> {
  const widths = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth, view: window.innerWidth }));
  expect(widths.doc).toBeLessThanOrEqual(widths.view);
}

test("pick two branches, compare, open a change from the comparison and land on it", async () => {
  const tab = await openTab(browser, server.url);
  const page = tab.page;
  try {
    await step(tab, "pickers", async () => {
      await signIn(page, ada.email, PASSWORD);
      await page.goto("/team/app/compare");
      await clean(tab, "pickers");
      expect(await page.getByLabel("Base").inputValue()).toBe("main");
      await page.getByLabel("Compare", { exact: true }).fill("feature/retries");
      await go(page, () => page.getByRole("button", { name: "Compare" }).click());
      expect(new URL(page.url()).pathname).toBe("/team/app/compare/main...feature/retries");
    });
    await step(tab, "comparison", async () => {
      const text = await textOf(page);
      expect(text).toContain("feature/retries is 2 commits ahead of and 0 commits behind main.");
      expect(text).toContain("Retry uploads three times");
      expect(text).toContain("2 files changed");
      await page.locator("table.diff").first().waitFor();
      expect(await page.getByLabel("Title").inputValue()).toBe("Retries");
      expect(await page.getByLabel(/^Description/).inputValue()).toBe("- Retry uploads three times\n- Document the retries");
      await clean(tab, "comparison");
    });
    await step(tab, "open-change", async () => {
      await page.getByLabel("Title").fill("Retry uploads");
      await go(page, () => page.getByRole("button", { name: "Open change" }).click());
      expect(new URL(page.url()).pathname).toMatch(/^\/team\/app\/changes\/\d+$/);
      const text = await textOf(page);
      expect(text).toContain("Retry uploads");
      expect(text).toContain("Document the retries");
      await clean(tab, "change page");
    });
  } finally {
    await tab.close();
  }
}, 120_000);

test("dark theme at a phone's width, anonymous: the pickers stack, nothing overflows, the sign-in hint shows", async () => {
  const tab = await openTab(browser, server.url, { width: 390, height: 800, colorScheme: "dark" });
  const page = tab.page;
  try {
    await step(tab, "phone-pickers", async () => {
      await page.goto("/team/app/compare");
      await clean(tab, "phone pickers");
      await fitsScreen(page);
    });
    await step(tab, "phone-comparison", async () => {
      await page.goto("/team/app/compare/main...feature/retries");
      await clean(tab, "phone comparison");
      await fitsScreen(page);
      expect(await page.locator("form[action='/team/app/changes']").count()).toBe(0);
      await go(page, () => page.getByRole("link", { name: "Sign in" }).last().click());
      expect(new URL(page.url()).searchParams.get("next")).toBe("/team/app/compare/main...feature/retries");
    });
    await step(tab, "phone-unknown", async () => {
      const r = await page.goto("/team/app/compare/main...nope");
      expect(r?.status()).toBe(404);
      await page.getByRole("alert").waitFor();
      await clean(tab, "phone unknown ref");
      await fitsScreen(page);
    });
  } finally {
    await tab.close();
  }
}, 120_000);

test("the pickers work with JavaScript off", async () => {
  const tab = await openTab(browser, server.url, { javaScriptEnabled: false });
  const page = tab.page;
  try {
    await step(tab, "no-js", async () => {
      await page.goto("/team/app/compare");
      await page.getByLabel("Base").fill("main");
      await page.getByLabel("Compare", { exact: true }).fill("feature/retries");
      await go(page, () => page.getByRole("button", { name: "Compare" }).click());
      expect(new URL(page.url()).pathname).toBe("/team/app/compare/main...feature/retries");
      expect(await textOf(page)).toContain("2 commits ahead");
    });
  } finally {
    await tab.close();
  }
}, 60_000);
