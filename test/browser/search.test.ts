// Header search and explore in a real browser (issue 33): type in the header's search box, press
// Enter, see the results (a private repository of someone else never among them), open one; the
// Issues tab of a repository's search; the explore page and its paging. Every page passes axe
// with no console error, CSP violation or failed load, in the light and dark themes and at a
// phone's width (nothing wider than the screen); the search works with JavaScript off.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { accessibilityViolations, launchBrowser, openTab, signIn, step, type Tab } from "../helpers/browser.ts";
import { mintTokenWithId } from "../helpers/git.ts";
import { client, createUser, login, startServer, type RunningServer } from "../helpers/server.ts";

let server: RunningServer;
let browser: Browser;
const PASSWORD = "correct horse battery";
let ada: { email: string };

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  const a = await createUser(server, { org: "acme", handle: "ada", email: "ada@acme.example", password: PASSWORD });
  ada = { email: a.email };
  const token = (await mintTokenWithId(server, await login(server, a.email, PASSWORD), "acme", { scopes: ["repo:write"], label: "ada" })).token;
  const c = await createUser(server, { org: "beta", handle: "cy", email: "cy@beta.example", password: PASSWORD });
  const cyToken = (await mintTokenWithId(server, await login(server, c.email, PASSWORD), "beta", { scopes: ["repo:write"], label: "cy" })).token;
  const api = client(server, { token });
  for (const [name, pub, description] of [
    ["rocket", true, "A <b>rocket</b> engine simulator"],
    ["rocket-docs", true, "Documentation for rocket"],
    ["launchpad", false, "Private rocket launch tooling"],
  ] as const) {
    expect((await api.post("/v1/orgs/acme/repos", { name, public: pub, description })).status).toBe(201);
  }
  expect((await client(server, { token: cyToken }).post("/v1/orgs/beta/repos", { name: "rocket-secrets", public: false })).status).toBe(201);
  expect((await api.post("/v1/orgs/acme/repos/rocket/issues", { title: "Thrust is too low" })).status).toBe(201);
  expect((await api.post("/v1/orgs/acme/repos/rocket/issues", { title: "Fuel gauge wrong" })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
}, 30_000);

async function clean(tab: Tab, what: string): Promise<void> {
  expect({ what, violations: await accessibilityViolations(tab.page) }).toEqual({ what, violations: [] });
  expect({ what, problems: tab.problems }).toEqual({ what, problems: [] });
}

async function go(page: Page, act: () => Promise<void>): Promise<void> {
  await Promise.all([page.waitForNavigation(), act()]);
}

/** The repositories listed in the results, in order. */
async function hits(page: Page): Promise<string[]> {
  return page.locator("ul.hits > li > a > strong").allTextContents();
}

test("header search → results → open a repository; a repository's issues; explore", async () => {
  const tab = await openTab(browser, server.url);
  const page = tab.page;
  try {
    await step(tab, "search-from-header", async () => {
      await signIn(page, ada.email, PASSWORD);
      await page.goto("/");
      await page.getByRole("search", { name: "Site" }).getByLabel("Search").fill("rocket");
      await go(page, () => page.keyboard.press("Enter"));
      expect(new URL(page.url()).pathname).toBe("/search");
      await page.getByRole("status").getByText("3 repositories").waitFor();
      expect(await hits(page)).toEqual(["acme/rocket", "acme/rocket-docs", "acme/launchpad"]);
      // The description is text, not markup.
      await page.getByText("A <b>rocket</b> engine simulator").waitFor();
      await clean(tab, "search results (light)");
    });
    await step(tab, "open-a-repository", async () => {
      await go(page, () => page.getByRole("link", { name: "acme/rocket", exact: true }).click());
      expect(new URL(page.url()).pathname).toBe("/acme/rocket");
    });
    await step(tab, "code-and-issues-tabs", async () => {
      await page.goto("/search?q=thrust&type=code");
      await page.getByText("Code is not searched").waitFor();
      await clean(tab, "code tab");
      await go(page, () => page.getByRole("link", { name: "Issues" }).click());
      await page.getByText("Issues are searched one repository at a time").waitFor();
      await page.getByLabel("Repository").fill("acme/rocket");
      await go(page, () => page.getByRole("button", { name: "Search", exact: true }).click());
      await page.getByRole("link", { name: "Thrust is too low" }).waitFor();
      expect(await page.getByRole("link", { name: "Fuel gauge wrong" }).count()).toBe(0);
      // The header box now searches this repository.
      expect(await page.getByRole("search", { name: "Site" }).getByLabel("Search acme/rocket").count()).toBe(1);
      await clean(tab, "issue results");
      await go(page, () => page.getByRole("link", { name: "Thrust is too low" }).click());
      expect(new URL(page.url()).pathname).toBe("/acme/rocket/issues/1");
    });
    await step(tab, "explore", async () => {
      await page.goto("/");
      await go(page, () => page.getByRole("link", { name: "Explore", exact: true }).click());
      expect(new URL(page.url()).pathname).toBe("/explore");
      expect(await hits(page)).toEqual(["acme/rocket-docs", "acme/rocket"]);
      await clean(tab, "explore (light)");
    });
  } finally {
    await tab.close();
  }
}, 120_000);

test("dark theme at a phone's width, signed out, and with JavaScript off", async () => {
  const tab = await openTab(browser, server.url, { colorScheme: "dark", width: 390, height: 844 });
  const page = tab.page;
  try {
    for (const path of ["/explore", "/search?q=rocket", "/search?q=fuel&type=issues&repo=acme%2Frocket", "/search", "/search?q=rocket&type=code"]) {
      await step(tab, `phone ${path}`, async () => {
        await page.goto(path);
        await clean(tab, `dark phone ${path}`);
        const widths = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth, view: window.innerWidth }));
        expect(widths.doc).toBeLessThanOrEqual(widths.view);
      });
    }
    // Someone else's private repository never shows; signed out, neither does acme's.
    await page.goto("/search?q=rocket");
    expect(await hits(page)).toEqual(["acme/rocket", "acme/rocket-docs"]);
  } finally {
    await tab.close();
  }
  const off = await openTab(browser, server.url, { javaScriptEnabled: false });
  try {
    await step(off, "no-script", async () => {
      await off.page.goto("/explore");
      await off.page.getByRole("search", { name: "Site" }).getByLabel("Search").fill("docs");
      await go(off.page, () => off.page.keyboard.press("Enter"));
      expect(await hits(off.page)).toEqual(["acme/rocket-docs"]);
    });
  } finally {
    await off.close();
  }
}, 120_000);
