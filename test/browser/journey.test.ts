// The main journey in a real browser: a person made with the CLI signs in through the form,
// creates a repository with the web form, pushes with git, browses the tree, a highlighted file
// (line anchors and a range), history filtered by path and a commit's diff, opens a change with
// the web form, reads its diff and patchsets, lands it with the button and sees it landed. Every
// page passes axe and shows no console error, CSP violation or failed load; the file page is also
// checked at a phone's width.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { accessibilityViolations, launchBrowser, openTab, signIn, step, type Tab } from "../helpers/browser.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../helpers/git.ts";
import { createUser, login, startServer, type RunningServer } from "../helpers/server.ts";

let server: RunningServer;
let browser: Browser;
let g: GitSandbox;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  g = gitSandbox("svc-journey-");
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  g?.[Symbol.dispose]();
}, 30_000);

const APP =
  Array.from({ length: 30 }, (_, i) => (i % 5 === 0 ? `// step ${i}` : `export function f${i}(x: number): string { return "v" + (x + ${i}); }`)).join("\n") +
  "\n";

/** Axe finds nothing and nothing went wrong on the page so far. */
async function clean(tab: Tab, what: string): Promise<void> {
  expect({ what, violations: await accessibilityViolations(tab.page) }).toEqual({ what, violations: [] });
  expect({ what, problems: tab.problems }).toEqual({ what, problems: [] });
}

/** Clicks a link or button and waits for the page it leads to. */
async function go(page: Page, click: () => Promise<void>): Promise<void> {
  await Promise.all([page.waitForNavigation(), click()]);
}

test("sign in → new repository → push → browse, file, history, commit → open a change → patchsets → land", async () => {
  const password = "correct horse battery";
  const user = await createUser(server, { org: "journey", handle: "jo", email: "jo@journey.example", password });
  const cookie = await login(server, user.email, password);
  const { token } = await mintTokenWithId(server, cookie, "journey", { scopes: ["repo:write"], label: "journey" });
  const tab = await openTab(browser, server.url);
  const page = tab.page;
  try {
    await step(tab, "sign-in", async () => {
      await signIn(page, user.email, password);
      await page.getByRole("heading", { name: /Welcome/ }).waitFor();
    });

    await step(tab, "new-repository", async () => {
      await page.goto("/journey");
      await page.getByText("New repository").click();
      await clean(tab, "org page with the form open");
      await page.getByLabel("Repository name").fill("trail");
      await page.getByLabel(/Description/).fill("Where the journey goes");
      await go(page, () => page.getByRole("button", { name: "Create repository" }).click());
      expect(new URL(page.url()).pathname).toBe("/journey/trail");
      await page.getByText("This repository is empty").waitFor();
      await clean(tab, "empty repository");
    });

    const dir = await initRepo(g, "trail");
    const url = repoUrl(server, "journey", "trail", token);
    let second = "";
    await step(tab, "push", async () => {
      await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
      await commitFiles(g, dir, { "README.md": "# Trail\n\nA *journey* repository.\n", "src/app.ts": APP, "docs/guide.md": "guide\n" }, "first steps");
      second = await commitFiles(g, dir, { "src/app.ts": APP.replace("x + 7", "x * 7") }, "multiply at seven");
      await g.ok(["push", "-q", url, "main"], { cwd: dir });
    });

    await step(tab, "tree", async () => {
      await page.goto("/journey/trail");
      await page.getByRole("heading", { name: "Trail", exact: true }).waitFor();
      await clean(tab, "repository root");
      await go(page, () => page.getByRole("link", { name: "src/" }).click());
      expect(new URL(page.url()).pathname).toBe("/journey/trail/tree/main/src");
      await clean(tab, "directory");
    });

    await step(tab, "file", async () => {
      await go(page, () => page.getByRole("link", { name: "app.ts" }).click());
      expect(await page.locator("table.code span.k").count()).toBeGreaterThan(10);
      await page.locator('td.n a[href="#L7"]').click();
      expect(new URL(page.url()).hash).toBe("#L7");
      expect(await page.locator("tr#L7").evaluate((r) => r.matches(":target"))).toBe(true);
      await page.locator('td.n a[href="#L9"]').click({ modifiers: ["Shift"] });
      expect(new URL(page.url()).hash).toBe("#L7-L9");
      expect(await page.locator("tr.sel").evaluateAll((rows) => rows.map((r) => r.id))).toEqual(["L7", "L8", "L9"]);
      await clean(tab, "highlighted file");
    });

    await step(tab, "history-filtered", async () => {
      await go(page, () => page.getByRole("link", { name: "History", exact: true }).first().click());
      await page.getByLabel("Only commits that changed").fill("docs");
      await go(page, () => page.getByRole("button", { name: "Filter" }).click());
      expect(new URL(page.url()).pathname).toBe("/journey/trail/commits/main/docs");
      expect(await page.locator(".commit-title").allInnerTexts()).toEqual(["first steps"]);
      await clean(tab, "history filtered by path");
      await page.getByLabel("Only commits that changed").fill("src/app.ts");
      await go(page, () => page.getByRole("button", { name: "Filter" }).click());
      expect(await page.locator(".commit-title").allInnerTexts()).toEqual(["multiply at seven", "first steps"]);
    });

    await step(tab, "commit", async () => {
      await go(page, () => page.getByRole("link", { name: "multiply at seven" }).click());
      expect(new URL(page.url()).pathname).toBe(`/journey/trail/commit/${second}`);
      await page.locator("tr.add td.c", { hasText: "x * 7" }).waitFor();
      await page.locator("tr.del td.c", { hasText: "x + 7" }).waitFor();
      await clean(tab, "commit diff");
    });

    await step(tab, "open-change", async () => {
      await g.ok(["checkout", "-q", "-b", "feature"], { cwd: dir });
      await commitFiles(g, dir, { "src/extra.ts": "export const extra = 1;\n" }, "extra");
      await g.ok(["push", "-q", url, "feature"], { cwd: dir });
      await page.goto("/journey/trail");
      await go(page, () => page.getByRole("link", { name: "Changes" }).click());
      await page.getByText("Open a change").click();
      await clean(tab, "changes list with the form open");
      await page.getByLabel("Title").fill("Add extra");
      await page.getByLabel("Branch with the commits").selectOption("feature");
      await go(page, () => page.getByRole("button", { name: "Open change" }).click());
      expect(new URL(page.url()).pathname).toBe("/journey/trail/changes/1");
      await clean(tab, "change page: conversation");
      await go(page, () => page.getByRole("link", { name: "Files changed" }).click());
      expect(new URL(page.url()).pathname).toBe("/journey/trail/changes/1/files");
      await page.locator("tr.add td.c", { hasText: "export const extra = 1;" }).waitFor();
      await clean(tab, "change page: files");
    });

    await step(tab, "patchsets", async () => {
      await commitFiles(g, dir, { "src/extra.ts": "export const extra = 2;\n" }, "extra two");
      await g.ok(["push", "-q", url, "feature"], { cwd: dir });
      await page.reload();
      await page.locator("tr.add td.c", { hasText: "export const extra = 2;" }).waitFor();
      await go(page, () => page.getByRole("link", { name: "Patchset 1" }).click());
      await page.locator("tr.add td.c", { hasText: "export const extra = 1;" }).waitFor();
      await page.getByLabel("Compare", { exact: true }).selectOption("1");
      await page.getByLabel("with", { exact: true }).selectOption("2");
      await go(page, () => page.getByRole("button", { name: "Compare" }).click());
      await page.getByRole("heading", { name: "Changes from patchset 1 to patchset 2" }).waitFor();
      await page.locator("tr.del td.c", { hasText: "export const extra = 1;" }).waitFor();
      await clean(tab, "patchset compare");
    });

    await step(tab, "land", async () => {
      await page.goto("/journey/trail/changes/1");
      await go(page, () => page.getByRole("button", { name: "Land" }).click());
      expect(new URL(page.url()).pathname).toBe("/journey/trail/changes/1");
      // The lander runs in the server; reload until it has landed (a deadline, not a sleep).
      const deadline = Date.now() + 30_000;
      while (!(await page.getByText("Landed", { exact: true }).count())) {
        if (Date.now() > deadline) throw new Error("the change did not land");
        await page.waitForTimeout(200);
        await page.reload();
      }
      expect(await page.getByRole("button", { name: "Land" }).count()).toBe(0);
      await clean(tab, "landed change");
      await page.goto("/journey/trail/changes?state=landed");
      await page.getByRole("link", { name: "Add extra" }).waitFor();
      await clean(tab, "landed list");
    });
  } finally {
    await tab.close();
  }
}, 180_000);

test("the file page at a phone's width: nothing wider than the screen but the code, which scrolls", async () => {
  const password = "correct horse battery";
  const user = await createUser(server, { org: "phone", handle: "pho", email: "pho@phone.example", password });
  const cookie = await login(server, user.email, password);
  const { token } = await mintTokenWithId(server, cookie, "phone", { scopes: ["repo:write"], label: "phone" });
  const created = await fetch(`${server.url}/v1/orgs/phone/repos`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "small", public: true }),
  });
  expect(created.status).toBe(201);
  const dir = await initRepo(g, "small");
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  // A TODO marker on the marked line (#L1): its contrast on --mark is checked in the dark theme.
  await commitFiles(
    g,
    dir,
    {
      "src/a-rather-long-file-name-for-a-small-screen.ts":
        `// TODO: keep <b>this</b> & "that" readable\n` + APP + `export const long = "${"x".repeat(300)}";\n`,
    },
    "one",
  );
  await g.ok(["push", "-q", repoUrl(server, "phone", "small", token), "main"], { cwd: dir });
  const tab = await openTab(browser, server.url, { width: 375, height: 740, colorScheme: "dark" });
  try {
    await step(tab, "phone-file", async () => {
      await signIn(tab.page, user.email, password);
      await tab.page.goto("/phone/small/blob/main/src/a-rather-long-file-name-for-a-small-screen.ts#L1");
      expect(await tab.page.locator("tr#L1 span.e").textContent()).toBe("TODO");
      expect(await tab.page.locator("tr#L1").evaluate((r) => r.matches(":target"))).toBe(true);
      expect(await tab.page.locator("table.code span.k").count()).toBeGreaterThan(0);
      const widths = await tab.page.evaluate(() => ({
        doc: document.documentElement.scrollWidth,
        view: window.innerWidth,
        code: document.querySelector(".scroll")!.scrollWidth > document.querySelector(".scroll")!.clientWidth,
      }));
      expect(widths.doc).toBeLessThanOrEqual(widths.view);
      expect(widths.code).toBe(true);
      await clean(tab, "file at 375 px, dark");
    });
  } finally {
    await tab.close();
  }
}, 120_000);
