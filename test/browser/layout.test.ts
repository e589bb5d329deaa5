// The one repository layout in a real browser (issue 33): Watch and Unwatch change the count; Fork
// from the button (the namespace page for someone who may fork into several, straight to the fork
// for someone with only their own) and the fork says "forked from"; a mirror whose origin fails
// shows the error and Sync now, and no Changes tab; the empty repository says a token is git's
// password and links to Settings → Tokens. Every page passes axe with no console error, CSP
// violation or failed load, light and dark, and fits a phone's width.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { accessibilityViolations, launchBrowser, openTab, signIn, step, type Tab } from "../helpers/browser.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../helpers/git.ts";
import { eventually } from "../helpers/receiver.ts";
import { client, createUser, login, startServer, type RunningServer } from "../helpers/server.ts";

let server: RunningServer;
let browser: Browser;
let g: GitSandbox;
const PASSWORD = "correct horse battery";
let ada: { email: string; token: string };
let vi: { email: string };

beforeAll(async () => {
  // Why private origins allowed: the failing mirror's origin is on this same loopback server.
  [server, browser] = await Promise.all([startServer({ env: { SVC_MIRROR_ALLOW_PRIVATE: "1" } }), launchBrowser()]);
  g = gitSandbox("svc-layout-browser-");
  const a = await createUser(server, { org: "team", handle: "ada", email: "ada@team.example", password: PASSWORD });
  const cookie = await login(server, a.email, PASSWORD);
  ada = { email: a.email, token: (await mintTokenWithId(server, cookie, "team", { scopes: ["repo:write"], label: "ada" })).token };
  // A viewer of team may create repositories only in their own namespace: Fork forks at once.
  const v = await createUser(server, { org: "team", handle: "vi", email: "vi@team.example", password: PASSWORD, role: "viewer" });
  vi = { email: v.email };
  const api = client(server, { token: ada.token });
  expect((await api.post("/v1/orgs/team/repos", { name: "app", public: true, description: "The <app> itself", homepage: "https://app.example/" })).status).toBe(
    201,
  );
  expect((await api.post("/v1/orgs/team/repos", { name: "empty", public: true })).status).toBe(201);
  const dir = await initRepo(g);
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  await commitFiles(g, dir, { "README.md": "# App\n", "src/app.ts": "export const a = 1;\n" }, "seed");
  await g.ok(["tag", "v1"], { cwd: dir });
  await g.ok(["push", "-q", repoUrl(server, "team", "app", ada.token), "main", "v1"], { cwd: dir });
  // A mirror whose origin does not exist: its first sync fails, and says why.
  const m = await client(server, { cookie }).post(
    "/v1/orgs/team/repos",
    { name: "mirror", kind: "mirror", origin_url: `${server.url}/nobody/none.git` },
    { origin: server.url },
  );
  expect(m.status).toBe(201);
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
  await Promise.all([page.waitForEvent("load"), click()]);
}

/** The repository nav's link names. */
async function tabs(page: Page): Promise<string[]> {
  return (await page.getByRole("navigation", { name: "Repository" }).getByRole("link").allTextContents()).map((t) => t.replace(/\s+/g, " ").trim());
}

test("watch and unwatch; fork from the button into a chosen namespace and see the banner", async () => {
  const tab = await openTab(browser, server.url);
  const { page } = tab;
  try {
    await step(tab, "anonymous", async () => {
      await page.goto("/team/app");
      expect(await page.locator("h1.repo-title").textContent()).toContain("team / app");
      expect(await page.getByText("The <app> itself").count()).toBe(1);
      expect(await page.getByRole("link", { name: /app\.example/ }).getAttribute("href")).toBe("https://app.example/");
      // Counts for everyone; the buttons are links to sign in.
      const watch = page.getByRole("link", { name: /^Watch 0 watchers$/ });
      expect(await watch.getAttribute("href")).toStartWith("/login?next=");
      expect(await page.getByRole("link", { name: /^Fork 0 forks$/ }).count()).toBe(1);
      expect(await tabs(page)).toEqual(["Code", "Issues 0 open", "Changes", "Runs"]);
      // The branch switcher: branches and tags pages and the archives of the shown ref.
      expect(await page.getByRole("link", { name: "Download ZIP" }).getAttribute("href")).toBe("/team/app/archive/main.zip");
      expect(await page.getByRole("link", { name: "tar.gz archive" }).getAttribute("href")).toBe("/team/app/archive/main.tar.gz");
      expect(await page.getByRole("link", { name: "1 branch", exact: true }).getAttribute("href")).toBe("/team/app/branches");
      expect(await page.getByRole("link", { name: "1 tag", exact: true }).getAttribute("href")).toBe("/team/app/tags");
      // Icons, not emoji.
      expect(await page.locator("table.files svg.icon").count()).toBe(2);
      expect(await page.content()).not.toMatch(/📁|📄|▾/);
      await clean(tab, "anonymous repository page");
    });
    await signIn(page, ada.email, PASSWORD);
    await step(tab, "watch", async () => {
      await page.goto("/team/app/issues");
      await go(page, () => page.getByRole("button", { name: /^Watch 0 watchers$/ }).click());
      // Back on the page it was pressed on, watching.
      expect(new URL(page.url()).pathname).toBe("/team/app/issues");
      await page.getByRole("button", { name: /^Unwatch 1 watcher$/ }).waitFor();
      await clean(tab, "watching");
    });
    await step(tab, "unwatch", async () => {
      await go(page, () => page.getByRole("button", { name: /^Unwatch 1 watcher$/ }).click());
      await page.getByRole("button", { name: /^Watch 0 watchers$/ }).waitFor();
    });
    await step(tab, "fork", async () => {
      await page.goto("/team/app");
      // ada may create repositories in team and in her own namespace: the page asks where.
      await go(page, () => page.getByRole("button", { name: /^Fork 0 forks$/ }).click());
      await page.getByRole("heading", { name: "Fork team/app" }).waitFor();
      expect(await page.getByRole("radio", { name: "ada" }).isChecked()).toBe(true);
      expect(await page.getByRole("radio", { name: "team" }).count()).toBe(1);
      await clean(tab, "fork page");
      await go(page, () => page.getByRole("button", { name: "Create fork" }).click());
      expect(new URL(page.url()).pathname).toBe("/ada/app");
      const banner = page.locator(".fork-banner");
      expect(await banner.textContent()).toContain("forked from team/app");
      expect(await banner.getByRole("link", { name: "team/app" }).getAttribute("href")).toBe("/team/app");
      await clean(tab, "fork");
    });
    await step(tab, "fork count", async () => {
      await page.goto("/team/app");
      await page.getByRole("button", { name: /^Fork 1 fork$/ }).waitFor();
    });
  } finally {
    await tab.close();
  }
}, 120_000);

test("someone who may create repositories only in their own namespace forks at once", async () => {
  const tab = await openTab(browser, server.url);
  const { page } = tab;
  try {
    await signIn(page, vi.email, PASSWORD);
    await step(tab, "fork", async () => {
      await page.goto("/team/app");
      await go(page, () => page.getByRole("button", { name: /^Fork \d+ forks?$/ }).click());
      expect(new URL(page.url()).pathname).toBe("/vi/app");
      expect(await page.locator(".fork-banner").textContent()).toContain("forked from team/app");
      // Not an admin of team/app's fork? vi owns it: Settings is there.
      expect(await tabs(page)).toContain("Settings");
      await clean(tab, "vi's fork");
    });
  } finally {
    await tab.close();
  }
}, 120_000);

test("a mirror whose origin fails shows the error and Sync now, and no Changes tab", async () => {
  const api = client(server, { token: ada.token });
  await eventually(async () => (await api.get("/v1/orgs/team/repos/mirror")).body.sync_error, 60_000, "the mirror's sync error");
  const tab = await openTab(browser, server.url);
  const { page } = tab;
  try {
    await signIn(page, ada.email, PASSWORD);
    await step(tab, "mirror", async () => {
      await page.goto("/team/mirror");
      const banner = page.locator(".mirror-banner");
      expect(await banner.textContent()).toContain(`Mirror of ${server.url}/nobody/none.git`);
      expect(await banner.getByRole("alert").textContent()).toContain("Last sync failed:");
      expect(await tabs(page)).not.toContain("Changes");
      expect(await tabs(page)).toContain("Issues 0 open");
      await clean(tab, "mirror");
    });
    await step(tab, "sync now", async () => {
      await go(page, () => page.getByRole("button", { name: "Sync now" }).click());
      expect(new URL(page.url()).pathname).toBe("/team/mirror");
      await clean(tab, "after sync now");
    });
  } finally {
    await tab.close();
  }
}, 120_000);

test("the empty repository says a token is git's password, light and dark, at a phone's width", async () => {
  for (const colorScheme of ["light", "dark"] as const) {
    const tab = await openTab(browser, server.url, { colorScheme, width: 390, height: 844 });
    const { page } = tab;
    try {
      await signIn(page, ada.email, PASSWORD);
      for (const path of [
        "/team/empty",
        "/team/app",
        "/team/app/blob/main/src/app.ts",
        "/team/app/commits/main",
        "/team/app/issues",
        "/team/app/runs",
        "/team/mirror",
        "/ada/app",
      ]) {
        await step(tab, `${colorScheme} ${path}`, async () => {
          await page.goto(path);
          if (path === "/team/empty") {
            const empty = page.getByRole("region", { name: "This repository is empty" });
            expect(await empty.textContent()).toContain("token as the password");
            expect(await empty.getByRole("link", { name: /Settings → Tokens/ }).getAttribute("href")).toBe("/settings/tokens");
            expect(await empty.textContent()).toContain(`git remote add origin ${server.url}/team/empty.git`);
          }
          // Nothing wider than the phone's screen.
          expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
          await clean(tab, `${colorScheme} ${path}`);
        });
      }
    } finally {
      await tab.close();
    }
  }
}, 180_000);
