// A repository's settings in a real browser (issue 33): the owner changes the default branch,
// makes the repository public (an anonymous tab then sees it), adds a branch protection (then a
// git push to that branch is refused, as the API refuses a commit there), renames it (the old
// address leads to the new one), and deletes it after a wrong and then the right confirmation.
// On a phone in the dark theme a private repository is renamed, and its old name is, for an
// outsider, the same "not found" page as a name that never existed. Every page: axe clean, no
// console errors, no CSP violations.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { caller, person, type Person } from "../helpers/api.ts";
import { accessibilityViolations, launchBrowser, openTab, signIn, step, type Tab } from "../helpers/browser.ts";
import { clone, commitFiles, gitSandbox, repoUrl, type GitSandbox } from "../helpers/git.ts";
import { mintToken, startServer, type RunningServer } from "../helpers/server.ts";

const PASSWORD = "correct horse battery";
let server: RunningServer;
let browser: Browser;
let g: GitSandbox;
let owner: Person;
let outsider: Person;
let api: ReturnType<typeof caller>;

/** A repository with a commit on main and a branch `topic`. */
async function seed(name: string): Promise<void> {
  expect((await api.post("/v1/orgs/acme/repos", { name })).status).toBe(201);
  for (const [branch, base] of [
    ["main", undefined],
    ["topic", "main"],
  ] as const) {
    const r = await api.post(`/v1/orgs/acme/repos/${name}/commits`, {
      branch,
      ...(base ? { base } : {}),
      message: `on ${branch}`,
      operations: [{ op: "put", path: `${branch}.txt`, content: `${branch}\n` }],
    });
    expect(r.status).toBe(201);
  }
}

beforeAll(async () => {
  g = gitSandbox("svc-browser-settings-");
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  owner = await person(server, "acme", "ada@acme.example", "owner", { handle: "ada", password: PASSWORD });
  outsider = await person(server, "rival", "rex@rival.example", "owner", { handle: "rex", password: PASSWORD });
  api = caller(server, owner);
  await seed("app");
  await seed("hidden");
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
}, 30_000);

async function accessible(page: Page): Promise<void> {
  expect(await accessibilityViolations(page)).toEqual([]);
}

/** Submits the form of the button and waits for the page it leads to. */
async function submit(page: Page, button: string): Promise<number> {
  const [res] = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: button, exact: true }).click()]);
  return res?.status() ?? 0;
}

/** The box (section) headed `heading`. */
const box = (page: Page, heading: string) => page.locator("section.box", { has: page.getByRole("heading", { name: heading, exact: true }) });

test("the owner changes the default branch, makes it public, protects main, renames and deletes it", async () => {
  const tab: Tab = await openTab(browser, server.url);
  const { page } = tab;
  try {
    await step(tab, "general", async () => {
      await signIn(page, owner.email, PASSWORD);
      await page.goto("/acme/app/settings");
      await page.getByRole("navigation", { name: "Repository settings" }).waitFor();
      expect(await page.getByRole("navigation", { name: "Repository" }).getByRole("link", { name: "Settings" }).getAttribute("aria-current")).toBe("page");
      await accessible(page);
    });

    await step(tab, "default-branch", async () => {
      expect(await page.getByLabel("Branch", { exact: true }).inputValue()).toBe("main");
      await page.getByLabel("Branch", { exact: true }).selectOption("topic");
      await submit(page, "Update");
      await page.getByText("Saved.").waitFor();
      expect(await page.getByLabel("Branch", { exact: true }).inputValue()).toBe("topic");
      expect((await api.get("/v1/orgs/acme/repos/app")).body.default_branch).toBe("topic");
    });

    await step(tab, "make-public", async () => {
      const anonymous = await openTab(browser, server.url);
      try {
        expect((await anonymous.page.goto("/acme/app"))?.status()).toBe(401);
        await page.getByLabel(/Public: anyone/).check();
        await submit(page, "Change visibility");
        await page.getByText("This repository is public").waitFor();
        expect((await anonymous.page.goto("/acme/app"))?.status()).toBe(200);
        await anonymous.page.getByRole("link", { name: "app", exact: true }).first().waitFor();
        expect(anonymous.problems).toEqual([]);
      } finally {
        await anonymous.close();
      }
    });

    await step(tab, "protect-main", async () => {
      await page.getByRole("navigation", { name: "Repository settings" }).getByRole("link", { name: "Protections" }).click();
      await page.getByRole("heading", { name: "Add a protection" }).waitFor();
      await accessible(page);
      const add = box(page, "Add a protection");
      await add.getByLabel("Branch name pattern").fill("main..");
      await add.getByLabel(/Require a change/).check();
      await add.getByLabel(/^Required approvals/).fill("1");
      expect(await submit(page, "Save protection")).toBe(400);
      await page.getByRole("alert").getByText('invalid branch pattern "main.."').waitFor();
      await accessible(page);
      // What was typed is kept: only the pattern needs fixing.
      expect(await add.getByLabel(/Require a change/).isChecked()).toBe(true);
      expect(await add.getByLabel(/^Required approvals/).inputValue()).toBe("1");
      await add.getByLabel("Branch name pattern").fill("main");
      await add.getByLabel(/^Required checks/).fill("test");
      await submit(page, "Save protection");
      await page.getByText("Saved.").waitFor();
      await page.getByRole("heading", { name: "main", exact: true }).waitFor();
      await accessible(page);
      expect((await api.get("/v1/orgs/acme/repos/app/protections")).body.protections).toEqual([
        {
          pattern: "main",
          allow_force_push: false,
          allow_deletion: false,
          require_change: true,
          required_checks: ["test"],
          required_approvals: 1,
          dismiss_stale_approvals: true,
        },
      ]);
    });

    await step(tab, "push-refused", async () => {
      const token = await mintToken(server, owner.cookie, "acme", { scopes: ["repo:write"], label: "push" });
      const dir = await clone(g, repoUrl(server, "acme", "app", token), ["--branch", "main"]);
      await commitFiles(g, dir, { "direct.txt": "direct\n" }, "a direct push");
      const push = await g.run(["push", "origin", "main"], { cwd: dir });
      expect(push.code).not.toBe(0);
      expect(push.stderr).toContain("protected branch main: direct updates are refused");
      // The API refuses a commit there the same way.
      const viaApi = await api.post("/v1/orgs/acme/repos/app/commits", {
        branch: "main",
        message: "direct",
        operations: [{ op: "put", path: "d.txt", content: "d\n" }],
      });
      expect({ status: viaApi.status, error: viaApi.body.error }).toEqual({
        status: 403,
        error: expect.stringContaining("protected branch main: direct updates are refused"),
      });
    });

    await step(tab, "rename", async () => {
      await page.getByRole("navigation", { name: "Repository settings" }).getByRole("link", { name: "General" }).click();
      await page.getByLabel("Name", { exact: true }).fill("app-two");
      await Promise.all([page.waitForURL("**/acme/app-two/settings?done=renamed"), page.getByRole("button", { name: "Rename", exact: true }).click()]);
      await page.getByText(/^Renamed\./).waitFor();
      await accessible(page);
      // The old address, and a page below it, lead to the new one.
      await page.goto("/acme/app/settings/protections");
      expect(new URL(page.url()).pathname).toBe("/acme/app-two/settings/protections");
      await page.goto("/acme/app/blob/topic/topic.txt");
      expect(new URL(page.url()).pathname).toBe("/acme/app-two/blob/topic/topic.txt");
    });

    await step(tab, "delete", async () => {
      await page.goto("/acme/app-two/settings");
      const danger = box(page, "Danger zone");
      await danger.getByLabel(/^Type/).fill("acme/app");
      expect(await submit(page, "Delete this repository")).toBe(422);
      await box(page, "Danger zone").getByRole("alert").getByText("type acme/app-two to confirm the deletion; nothing was deleted").waitFor();
      await accessible(page);
      expect((await api.get("/v1/orgs/acme/repos/app-two")).status).toBe(200);
      await box(page, "Danger zone").getByLabel(/^Type/).fill("acme/app-two");
      await Promise.all([page.waitForURL((u) => u.pathname === "/acme"), page.getByRole("button", { name: "Delete this repository", exact: true }).click()]);
      expect((await api.get("/v1/orgs/acme/repos/app-two")).status).toBe(404);
      // Gone, the old names lead nowhere.
      expect((await page.goto("/acme/app"))?.status()).toBe(404);
    });
    expect(tab.problems).toEqual([]);
  } finally {
    await tab.close();
  }
}, 120_000);

test("on a phone in the dark theme: a private repository renamed; its old name is masked for an outsider", async () => {
  const tab = await openTab(browser, server.url, { width: 390, height: 800, colorScheme: "dark" });
  const { page } = tab;
  const other = await openTab(browser, server.url, { width: 390, height: 800, colorScheme: "dark" });
  try {
    await step(tab, "phone-settings", async () => {
      await signIn(page, owner.email, PASSWORD);
      await page.goto("/acme/hidden/settings");
      await accessible(page);
      // Nothing wider than the phone.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.getByLabel("Name", { exact: true }).fill("hidden-too");
      await Promise.all([page.waitForURL("**/acme/hidden-too/settings?done=renamed"), page.getByRole("button", { name: "Rename", exact: true }).click()]);
      await page.getByRole("link", { name: "Protections" }).click();
      await page.getByRole("heading", { name: "Add a protection" }).waitFor();
      await accessible(page);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      // The owner still follows the old name.
      await page.goto("/acme/hidden/issues");
      expect(new URL(page.url()).pathname).toBe("/acme/hidden-too/issues");
    });

    await step(other, "outsider-masked", async () => {
      await signIn(other.page, outsider.email, PASSWORD);
      const old = await other.page.goto("/acme/hidden");
      const stayed = new URL(other.page.url()).pathname;
      const oldText = (await other.page.locator("main").innerText()).replaceAll("hidden", "X");
      const never = await other.page.goto("/acme/neverthere");
      const neverText = (await other.page.locator("main").innerText()).replaceAll("neverthere", "X");
      expect({ status: old?.status(), stayed }).toEqual({ status: 404, stayed: "/acme/hidden" });
      expect({ status: old?.status(), text: oldText }).toEqual({ status: never?.status(), text: neverText });
      await accessible(other.page);
    });
    expect(tab.problems).toEqual([]);
    expect(other.problems).toEqual([]);
  } finally {
    await tab.close();
    await other.close();
  }
}, 120_000);
