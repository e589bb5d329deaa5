// Branches, tags and archives in a real browser (issue 33): ada opens the branches page (last
// commits, ahead/behind the default branch, the default badge, compare links), deletes a branch
// with its Delete button, is refused deleting a protected one with the API's reason, opens the
// tags page and downloads a tag's .zip and a branch's .tar.gz. Every page passes axe with no
// console error, CSP violation or failed load, light at a desktop's width and dark at a phone's
// (nothing wider than the screen); a branch named like markup stays text; a reader sees no
// Delete buttons.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import type { Browser, Page } from "playwright-core";
import { accessibilityViolations, launchBrowser, openTab, signIn, step, type Tab } from "../helpers/browser.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../helpers/git.ts";
import { client, createUser, login, startServer, type RunningServer } from "../helpers/server.ts";

let server: RunningServer;
let browser: Browser;
let g: GitSandbox;
const PASSWORD = "correct horse battery";
const HOSTILE = `"><svg/onload=alert(1)>`;
let ada: { email: string; token: string };
let bo: { email: string };

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  g = gitSandbox("svc-refs-browser-");
  const a = await createUser(server, { org: "team", handle: "ada", email: "ada@team.example", password: PASSWORD });
  const cookie = await login(server, a.email, PASSWORD);
  ada = { email: a.email, token: (await mintTokenWithId(server, cookie, "team", { scopes: ["repo:write", "org:admin"], label: "ada" })).token };
  const b = await createUser(server, { org: "team", handle: "bo", email: "bo@team.example", password: PASSWORD, role: "viewer" });
  bo = { email: b.email };
  const api = client(server, { token: ada.token });
  expect((await api.post("/v1/orgs/team/repos", { name: "app" })).status).toBe(201);
  const dir = await initRepo(g);
  await commitFiles(g, dir, { "README.md": "# app\n", "run.sh": "#!/bin/sh\n" }, "Seed the app");
  await g.ok(["branch", "stale"], { cwd: dir });
  await g.ok(["branch", "release/1"], { cwd: dir });
  await g.ok(["tag", "-a", "-m", "first", "v1.0"], { cwd: dir });
  await commitFiles(g, dir, { "README.md": "# app\n\nMore.\n" }, "Say more in the README");
  await g.ok(["checkout", "-q", "-b", "topic"], { cwd: dir });
  await commitFiles(g, dir, { "topic.txt": "topic\n" }, "Start the topic");
  await commitFiles(g, dir, { "topic.txt": "topic, twice\n" }, "Continue the topic");
  await g.ok(["branch", HOSTILE], { cwd: dir });
  await g.ok(["checkout", "-q", "main"], { cwd: dir });
  await g.ok(["push", "-q", repoUrl(server, "team", "app", ada.token), "--all"], { cwd: dir });
  await g.ok(["push", "-q", repoUrl(server, "team", "app", ada.token), "--tags"], { cwd: dir });
  expect((await api.put("/v1/orgs/team/repos/app/protections/release/*", { allow_force_push: false })).status).toBe(200);
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

/** The text of the row of branch `name` with runs of white space as one space. */
async function rowText(page: Page, name: string): Promise<string> {
  const row = page.locator("li.branch-row").filter({ has: page.getByRole("link", { name, exact: true }) });
  return ((await row.textContent()) ?? "").replace(/\s+/g, " ");
}

test("branches: ahead/behind, compare links, delete, a protected branch refused; tags and downloads", async () => {
  const tab = await openTab(browser, server.url);
  const page = tab.page;
  const dialogs: string[] = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  try {
    await step(tab, "branches-page", async () => {
      await signIn(page, ada.email, PASSWORD);
      await page.goto("/team/app/branches");
      const names = await page.locator("a.branch-name").allTextContents();
      expect(names).toEqual(["main", HOSTILE, "release/1", "stale", "topic"]);
      expect(await rowText(page, "main")).toContain("default");
      expect(await rowText(page, "topic")).toContain("2 ahead · 0 behind");
      expect(await rowText(page, "topic")).toContain("Continue the topic");
      expect(await rowText(page, "stale")).toContain("0 ahead · 1 behind");
      expect(await page.getByRole("link", { name: "Compare topic with main" }).getAttribute("href")).toBe("/team/app/compare/main...topic");
      // The branch named like markup is a name: no element was made of it and nothing ran.
      expect(await page.locator("main svg[onload]").count()).toBe(0);
      expect(await page.getByRole("button", { name: "Delete branch main" }).count()).toBe(0);
      await clean(tab, "branches");
    });

    await step(tab, "delete-branch", async () => {
      await go(page, () => page.getByRole("button", { name: "Delete branch stale" }).click());
      expect(new URL(page.url()).pathname).toBe("/team/app/branches");
      expect(await page.locator("a.branch-name").allTextContents()).not.toContain("stale");
      const refs = await client(server, { token: ada.token }).get("/v1/orgs/team/repos/app/branches");
      expect(refs.body.branches.map((b: { name: string }) => b.name)).not.toContain("stale");
      await clean(tab, "after delete");
    });

    await step(tab, "protected-refused", async () => {
      const [response] = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Delete branch release/1" }).click()]);
      expect(response?.status()).toBe(403);
      expect(await page.getByRole("alert").textContent()).toContain("release/1");
      expect(await page.locator("a.branch-name").allTextContents()).toContain("release/1");
      await clean(tab, "refused delete");
    });

    await step(tab, "tags-and-downloads", async () => {
      await go(page, () => page.getByRole("link", { name: "Tags", exact: true }).click());
      expect(new URL(page.url()).pathname).toBe("/team/app/tags");
      expect(await page.locator("a.branch-name").allTextContents()).toEqual(["v1.0"]);
      await clean(tab, "tags");
      const [zip] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download v1.0 as .zip" }).click()]);
      expect(zip.suggestedFilename()).toBe("app-v1.0.zip");
      const zipBytes = readFileSync((await zip.path())!);
      expect(zipBytes.subarray(0, 4)).toEqual(Buffer.from([0x50, 0x4b, 0x03, 0x04]));
      await page.goto("/team/app/branches");
      const [tgz] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download topic as .tar.gz" }).click()]);
      expect(tgz.suggestedFilename()).toBe("app-topic.tar.gz");
      const tar = gunzipSync(readFileSync((await tgz.path())!));
      expect(new TextDecoder().decode(tar)).toContain("app-topic/topic.txt");
      expect({ problems: tab.problems, dialogs }).toEqual({ problems: [], dialogs: [] });
    });
  } finally {
    await tab.close();
  }
}, 120_000);

test("dark, at a phone's width: the branches and tags pages fit and pass axe; a reader has no Delete", async () => {
  const tab = await openTab(browser, server.url, { width: 390, height: 800, colorScheme: "dark" });
  const page = tab.page;
  try {
    await step(tab, "phone", async () => {
      await signIn(page, bo.email, PASSWORD);
      for (const path of ["/team/app/branches", "/team/app/tags"]) {
        await page.goto(path);
        const widths = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth, view: window.innerWidth }));
        expect({ path, fits: widths.doc <= widths.view }).toEqual({ path, fits: true });
        await clean(tab, `${path} dark phone`);
      }
      await page.goto("/team/app/branches");
      expect(await page.getByRole("button", { name: /^Delete branch/ }).count()).toBe(0);
    });
  } finally {
    await tab.close();
  }
}, 120_000);
