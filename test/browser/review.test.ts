// Code review in a real browser (issue 28): ada opens a change; bo, reading the files tab, clicks
// a line number and comments (the script opens the form from the page's template and swaps in the
// thread the server draws: no full reload, a marker set on `window` survives), drags across two
// numbers to suggest a change for the range, leaves two pending comments ("Start a review", then
// "Add review comment") and requests changes with the review form, which publishes them; ada
// applies the suggestion (a new patchset), bo approves, ada lands. After bo's first comment ada's
// header counts one unread notification, and opening it from /notifications reads it. Every page
// passes axe and shows no console error, CSP violation or failed load. The same comment is then
// made with JavaScript off: the line number is a link to `?comment=` and every step is a plain form.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { accessibilityViolations, launchBrowser, openTab, signIn, step, type Tab } from "../helpers/browser.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../helpers/git.ts";
import { client, createUser, login, startServer, type RunningServer } from "../helpers/server.ts";

let server: RunningServer;
let browser: Browser;
let g: GitSandbox;
const PASSWORD = "correct horse battery";
let ada: { email: string; token: string };
let bo: { email: string };

const LINES = Array.from({ length: 20 }, (_, i) => `const v${i + 1} = ${i + 1};`);

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  g = gitSandbox("svc-review-");
  const a = await createUser(server, { org: "team", handle: "ada", email: "ada@team.example", password: PASSWORD });
  const cookie = await login(server, a.email, PASSWORD);
  ada = { email: a.email, token: (await mintTokenWithId(server, cookie, "team", { scopes: ["repo:write"], label: "ada" })).token };
  const b = await createUser(server, { org: "team", handle: "bo", email: "bo@team.example", password: PASSWORD, role: "member" });
  bo = { email: b.email };
  const api = client(server, { token: ada.token });
  expect((await api.post("/v1/orgs/team/repos", { name: "app", public: false })).status).toBe(201);
  const dir = await initRepo(g);
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  await commitFiles(g, dir, { "src/values.ts": `${LINES.join("\n")}\n` }, "values");
  const url = repoUrl(server, "team", "app", ada.token);
  await g.ok(["push", "-q", url, "main"], { cwd: dir });
  await g.ok(["checkout", "-q", "-b", "tune"], { cwd: dir });
  const tuned = [...LINES];
  for (const i of [9, 10, 11]) tuned[i] = `const v${i + 1} = ${(i + 1) * 10};`;
  await commitFiles(g, dir, { "src/values.ts": `${tuned.join("\n")}\n` }, "tune");
  await g.ok(["push", "-q", url, "tune"], { cwd: dir });
  expect((await api.post("/v1/orgs/team/repos/app/changes", { title: "Tune the values", branch: "tune", description: "Ten times." })).status).toBe(201);
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

const lineLink = (page: Page, n: number, side = "new") => page.getByRole("link", { name: `Comment on line ${n} (${side})`, exact: true });

test("comment on a line, suggest on a range, request changes, apply, approve, land", async () => {
  const boTab = await openTab(browser, server.url);
  const adaTab = await openTab(browser, server.url);
  const page = boTab.page;
  try {
    await step(boTab, "bo-opens", async () => {
      await signIn(page, bo.email, PASSWORD);
      await page.goto("/team/app/changes/1");
      await page.getByRole("heading", { name: /Tune the values/ }).waitFor();
      await clean(boTab, "conversation tab");
      await go(page, () => page.getByRole("link", { name: "Files changed" }).click());
      expect(new URL(page.url()).pathname).toBe("/team/app/changes/1/files");
      await clean(boTab, "files tab");
    });

    await step(boTab, "line-comment", async () => {
      await page.evaluate(() => {
        (window as unknown as { __marker: number }).__marker = 42;
      });
      await lineLink(page, 12).click();
      const form = page.locator("tr.comment-row");
      await form.getByText("Comment on line 12 (new) of src/values.ts").waitFor();
      await clean(boTab, "line comment form open");
      await form.getByRole("textbox").fill("Is **120** right?");
      await form.getByRole("button", { name: "Add comment" }).click();
      await page.locator(".thread", { hasText: "Is 120 right?" }).waitFor();
      expect(await page.locator("tr.comment-row").count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __marker?: number }).__marker)).toBe(42);
      await clean(boTab, "thread swapped in");
    });

    // ada (the author) is told: her header counts it; opening it from the inbox reads it.
    const adaPage = adaTab.page;
    await step(adaTab, "notified", async () => {
      await signIn(adaPage, ada.email, PASSWORD);
      await adaPage.goto("/team/app");
      // The fan-out is a background job: reload until the bell counts it (a deadline, not a sleep).
      const bell = adaPage.getByRole("link", { name: "Notifications, 1 unread" });
      const deadline = Date.now() + 30_000;
      while (!(await bell.count())) {
        if (Date.now() > deadline) throw new Error("ada's header never counted the comment");
        await adaPage.waitForTimeout(200);
        await adaPage.reload();
      }
      await go(adaPage, () => bell.click());
      await clean(adaTab, "inbox");
      await go(adaPage, () => adaPage.getByRole("link", { name: "Tune the values #1" }).click());
      expect(new URL(adaPage.url()).pathname).toBe("/team/app/changes/1");
      await adaPage.getByRole("link", { name: "Notifications, none unread" }).waitFor();
    });

    await step(boTab, "range-suggestion", async () => {
      await lineLink(page, 10).hover();
      await page.mouse.down();
      await lineLink(page, 11).hover();
      await page.mouse.up();
      const form = page.locator("tr.comment-row");
      await form.getByText("Comment on lines 10–11 (new) of src/values.ts").waitFor();
      await form.getByRole("textbox").fill("Keep them small:\n\n```suggestion\nconst v10 = 10;\nconst v11 = 11;\n```\n");
      await form.getByRole("button", { name: "Add comment" }).click();
      const thread = page.locator(".thread", { hasText: "Keep them small" });
      await thread.locator("table.suggestion tr.add", { hasText: "+const v11 = 11;" }).waitFor();
      await thread.locator("table.suggestion tr.del", { hasText: "-const v11 = 110;" }).waitFor();
      expect(await page.evaluate(() => (window as unknown as { __marker?: number }).__marker)).toBe(42);
      await clean(boTab, "suggestion thread");
    });

    await step(boTab, "pending-comments", async () => {
      // "Start a review": the comment waits, drawn under its line as Pending, and the review box counts it.
      await lineLink(page, 8).click();
      let form = page.locator("tr.comment-row");
      await form.getByRole("textbox").fill("Pending: why 8?");
      await form.getByRole("button", { name: "Start a review" }).click();
      await page.locator(".thread", { hasText: "Pending: why 8?" }).getByText("Pending", { exact: true }).waitFor();
      await page.locator("details.review-drop > summary", { hasText: "1 pending comment" }).waitFor();
      // The next form offers to add to the review; the count follows without a reload.
      await lineLink(page, 14).click();
      form = page.locator("tr.comment-row");
      await form.getByRole("textbox").fill("Pending: and 14?");
      await form.getByRole("button", { name: "Add review comment" }).click();
      await page.locator(".thread", { hasText: "Pending: and 14?" }).waitFor();
      await page.locator("details.review-drop > summary", { hasText: "2 pending comments" }).waitFor();
      expect(await page.evaluate(() => (window as unknown as { __marker?: number }).__marker)).toBe(42);
      await clean(boTab, "two pending comments");
    });

    await step(boTab, "request-changes", async () => {
      await page.getByText("Review changes").click();
      await page.getByText("2 pending comments will be published with this review.").waitFor();
      await page.getByLabel("Comment (Markdown)").fill("Two things to look at.");
      await page.getByLabel(/Request changes/).check();
      await clean(boTab, "review form open");
      await go(page, () => page.getByRole("button", { name: "Submit review" }).click());
      expect(new URL(page.url()).pathname).toBe("/team/app/changes/1");
      await page.getByText("bo requested changes on patchset 1").waitFor();
      // One review, carrying both pending comments, published (no Pending label left).
      const review = page.locator("li.review");
      expect(await review.count()).toBe(1);
      await review.locator(".thread", { hasText: "Pending: why 8?" }).waitFor();
      await review.locator(".thread", { hasText: "Pending: and 14?" }).waitFor();
      expect(await page.locator(".badge.pending").count()).toBe(0);
      await clean(boTab, "conversation after the review");
    });

    await step(adaTab, "apply", async () => {
      await adaPage.goto("/team/app/changes/1");
      await adaPage.locator(".thread", { hasText: "Is 120 right?" }).waitFor();
      await clean(adaTab, "ada's conversation");
      await adaPage.goto("/team/app/changes/1/files");
      await clean(adaTab, "ada's files tab");
      await go(adaPage, () => adaPage.getByRole("button", { name: "Apply suggestion" }).click());
      await adaPage.getByRole("heading", { name: "Patchset 2" }).waitFor();
      // Applying resolved its thread (collapsed; its lines changed, so it is no longer on a line).
      const applied = adaPage.locator("details.thread.resolved", { hasText: "Resolved conversation started by bo" });
      if (!(await applied.evaluate((d) => (d as HTMLDetailsElement).open))) await applied.locator(":scope > summary").click();
      await applied.getByText(/Applied in [0-9a-f]{10}/).waitFor();
      await adaPage.locator("tr.add td.c", { hasText: "+const v12 = 120;" }).waitFor();
      expect(await adaPage.locator("tr.add td.c", { hasText: "+const v11 = 110;" }).count()).toBe(0);
      await clean(adaTab, "after applying");
    });

    await step(boTab, "approve", async () => {
      await page.goto("/team/app/changes/1");
      await page.getByLabel(/Approve/).check();
      await go(page, () => page.getByRole("button", { name: "Submit review" }).click());
      await page.getByText("bo approved these changes on patchset 2").waitFor();
      await clean(boTab, "approved");
    });

    await step(adaTab, "land", async () => {
      await adaPage.goto("/team/app/changes/1");
      await go(adaPage, () => adaPage.getByRole("button", { name: "Land" }).click());
      // The lander runs in the server; reload until it has landed (a deadline, not a sleep).
      const deadline = Date.now() + 30_000;
      while (!(await adaPage.locator("[role=status]", { hasText: "Landed" }).count())) {
        if (Date.now() > deadline) throw new Error("the change did not land");
        await adaPage.waitForTimeout(200);
        await adaPage.reload();
      }
      await clean(adaTab, "landed");
    });
  } finally {
    await boTab.close();
    await adaTab.close();
  }
}, 240_000);

test("with JavaScript off every step is a plain form: the line number leads to the comment form", async () => {
  const tab = await openTab(browser, server.url, { javaScriptEnabled: false });
  const page = tab.page;
  try {
    await step(tab, "no-js-comment", async () => {
      await signIn(page, bo.email, PASSWORD);
      await page.goto("/team/app/changes/1/files?ps=1");
      await go(page, () => lineLink(page, 12).click());
      expect(new URL(page.url()).searchParams.get("comment")).toBe("src/values.ts:new:12");
      const form = page.locator("tr.comment-row");
      await form.getByText("Comment on line 12 (new) of src/values.ts").waitFor();
      await form.getByRole("textbox", { name: /Comment on line 12/ }).fill("Without a script.");
      await go(page, () => form.getByRole("button", { name: "Add comment" }).click());
      expect(new URL(page.url()).pathname).toBe("/team/app/changes/1/files");
      await page.locator(".thread", { hasText: "Without a script." }).waitFor();
      await go(page, () => page.getByRole("link", { name: "Conversation" }).click());
      await page.locator(".thread", { hasText: "Without a script." }).waitFor();
      expect(tab.problems).toEqual([]);
    });
  } finally {
    await tab.close();
  }
}, 120_000);
