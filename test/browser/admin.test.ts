// Administering an org in a real browser: the owner invites someone (the link shown once),
// creates a team, adds a member and grants it a repository, creates a runner group and registers
// a machine with the exact command the page shows, adds a webhook pointing at a local receiver,
// pushes with git and sees the delivery listed; the audit log shows it all. A member without
// admin rights meets the API's 403/404 pages. Every page: axe clean, no console problems.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { join } from "node:path";
import { caller, person, type Person } from "../helpers/api.ts";
import { accessibilityViolations, launchBrowser, openTab, signIn, step, type Tab } from "../helpers/browser.ts";
import { commitFiles, gitSandbox, repoUrl, type GitSandbox } from "../helpers/git.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { BUN, ROOT, cleanEnv, mintToken, startServer, tempDir, type RunningServer } from "../helpers/server.ts";

let server: RunningServer;
let browser: Browser;
let receiver: Receiver;
let g: GitSandbox;
let owner: Person;
let member: Person;
const home = tempDir("svc-browser-runner-");

beforeAll(async () => {
  receiver = startReceiver();
  g = gitSandbox("svc-browser-admin-");
  [server, browser] = await Promise.all([startServer({ env: { SVC_WEBHOOK_ALLOW_PRIVATE: "1" } }), launchBrowser()]);
  owner = await person(server, "acme", "ada@acme.example", "owner", { handle: "ada", password: "correct horse battery" });
  member = await person(server, "acme", "bob@acme.example", "member", { handle: "bob", password: "correct horse battery" });
  expect((await caller(server, owner).post("/v1/orgs/acme/repos", { name: "app" })).status).toBe(201);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.[Symbol.asyncDispose]();
  receiver?.stop();
  g?.[Symbol.dispose]();
  home[Symbol.dispose]();
}, 30_000);

/** The page passes axe. */
async function accessible(page: Page): Promise<void> {
  expect(await accessibilityViolations(page)).toEqual([]);
}

/** Submits the form the button belongs to and waits for the page it leads to. */
async function submit(page: Page, button: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: button, exact: true }).click()]);
}

/** Reloads until `probe` sees what it waits for (a record written by background work). */
async function reloadUntil(page: Page, what: string, probe: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what} not shown within ${ms} ms`);
    await page.reload();
  }
}

test("an owner administers the org end to end", async () => {
  const tab: Tab = await openTab(browser, server.url);
  const { page } = tab;
  try {
    await step(tab, "settings-from-org-page", async () => {
      await signIn(page, owner.email, "correct horse battery");
      await page.goto("/acme");
      await Promise.all([page.waitForURL("**/settings/orgs/acme/profile"), page.locator("#main").getByRole("link", { name: "Settings" }).click()]);
      await page.getByRole("navigation", { name: "Organization settings" }).waitFor();
      await accessible(page);
      await page.getByLabel("Display name").fill("Acme Inc");
      await submit(page, "Save profile");
      await page.getByText("Saved.").waitFor();
      expect(await page.getByLabel("Display name").inputValue()).toBe("Acme Inc");
    });

    await step(tab, "invite", async () => {
      await page.getByRole("link", { name: "Invitations" }).click();
      await page.getByRole("heading", { name: "Invite someone" }).waitFor();
      await accessible(page);
      await page.getByLabel("Email").fill("carol@elsewhere.example");
      await page.getByLabel("Role").selectOption("viewer");
      await submit(page, "Create invitation");
      const link = await page.getByLabel("Invitation link", { exact: true }).inputValue();
      expect(link).toMatch(new RegExp(`^${server.url}/invite\\?token=svcinv_[a-z2-7]{32}$`));
      // The copy button is there once the script runs.
      await page.getByRole("button", { name: "Copy" }).waitFor();
      await accessible(page);
      await page.goto("/settings/orgs/acme/invitations");
      await page.getByRole("cell", { name: "carol@elsewhere.example", exact: true }).waitFor();
      expect(await page.getByLabel("Invitation link", { exact: true }).count()).toBe(0);
      expect(await page.content()).not.toContain("svcinv_");
    });

    await step(tab, "team-and-grant", async () => {
      await page.getByRole("link", { name: "Teams" }).click();
      await page.getByLabel("Name").fill("backend");
      await page.getByLabel("Description").fill("Services and storage");
      await submit(page, "Create team");
      await page.getByRole("heading", { name: "backend", exact: true }).waitFor();
      await accessible(page);
      await page.getByLabel("Handle of an org member").fill("bob");
      await submit(page, "Add to team");
      await page.getByRole("link", { name: "bob" }).waitFor();
      await page.getByLabel(/^Repository/).selectOption("app");
      await page.getByLabel(/^Role/).selectOption("admin");
      await submit(page, "Grant");
      await page.waitForURL("**/acme/app/settings/access?done=granted");
      await page.getByText("Granted.").waitFor();
      await page.getByRole("row", { name: "backend team admin" }).waitFor();
      await page.getByRole("row", { name: "bob admin team backend" }).waitFor();
      await accessible(page);
    });

    let command = "";
    await step(tab, "runner-group-and-registration", async () => {
      await page.goto("/settings/orgs/acme/runners");
      await accessible(page);
      await page.getByLabel("Name").fill("gpu");
      await submit(page, "Create group");
      await page.getByRole("cell", { name: "gpu", exact: true }).waitFor();
      await page.getByLabel(/^Group/).selectOption("gpu");
      await submit(page, "Create registration command");
      command = await page.getByLabel("Command", { exact: true }).inputValue();
      expect(command).toMatch(new RegExp(`^svc runner register --url ${server.url} --token svcg_\\S+$`));
      await accessible(page);
    });

    await step(tab, "register-with-the-shown-command", async () => {
      // The command as shown, run as `svc` (this checkout's entry point), plus where to keep the credential.
      const args = command.split(" ").slice(1);
      const p = Bun.spawn([BUN, join(ROOT, "src/main.ts"), ...args, "--name", "gpu-box", "--config", join(home.path, "gpu-box.json")], {
        env: cleanEnv(),
        stdout: "pipe",
        stderr: "pipe",
      });
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      expect({ code, err }).toEqual({ code: 0, err: "" });
      expect(out).toContain("registered runner gpu-box");
      await page.goto("/settings/orgs/acme/runners");
      await page.getByRole("row", { name: /gpu-box gpu online/ }).waitFor();
      await accessible(page);
    });

    await step(tab, "webhook-and-delivery", async () => {
      await page.goto("/acme/app");
      // The repository layout's Settings tab leads to the settings pages (General first); webhooks are one of them.
      expect(await page.getByRole("navigation", { name: "Repository" }).getByRole("link", { name: "Settings" }).getAttribute("href")).toBe(
        "/acme/app/settings",
      );
      await page.goto("/acme/app/settings/webhooks");
      await accessible(page);
      await page.getByLabel("Receiver URL").fill(`${receiver.url}/hook`);
      await submit(page, "Add webhook");
      receiver.secret("/hook", await page.getByLabel("Secret", { exact: true }).inputValue());
      await accessible(page);
      const token = await mintToken(server, owner.cookie, "acme", { scopes: ["repo:write"], label: "push" });
      const dir = g.path("app");
      await g.ok(["init", "-q", "-b", "main", dir]);
      await commitFiles(g, dir, { "README.md": "# app\n" }, "first");
      await g.ok(["push", "-q", repoUrl(server, "acme", "app", token), "main"], { cwd: dir });
      await receiver.until((r) => r.some((x) => x.path === "/hook" && x.event === "push"));
      expect(receiver.of("/hook")[0]!.signed).toBe(true);
      await page.goto("/acme/app/settings/webhooks");
      await page.getByRole("link", { name: `${receiver.url}/hook` }).click();
      await reloadUntil(page, "the delivery", async () => (await page.getByRole("row", { name: /push .* 1 delivered 200/ }).count()) > 0);
      await accessible(page);
    });

    await step(tab, "audit", async () => {
      await page.goto("/settings/orgs/acme/audit");
      await page.getByLabel("Action").fill("team.created");
      await submit(page, "Filter");
      await page.getByRole("cell", { name: "backend" }).waitFor();
      expect(await page.getByRole("cell", { name: "team.created" }).count()).toBe(1);
      await accessible(page);
      await page.goto("/settings/orgs/acme/billing");
      await page.getByRole("heading", { name: "Plan" }).waitFor();
      await accessible(page);
    });

    expect(tab.problems).toEqual([]);
  } finally {
    await tab.close();
  }
}, 180_000);

test("on a phone: the members page fits 375 px and passes axe", async () => {
  const tab = await openTab(browser, server.url, { width: 375, height: 740 });
  try {
    await step(tab, "phone-members", async () => {
      await signIn(tab.page, owner.email, "correct horse battery");
      await tab.page.goto("/settings/orgs/acme/members");
      await tab.page.getByRole("heading", { name: "Members" }).waitFor();
      expect(await tab.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
      await accessible(tab.page);
      await tab.page.goto("/settings/orgs/acme/runners");
      expect(await tab.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    });
    expect(tab.problems).toEqual([]);
  } finally {
    await tab.close();
  }
}, 60_000);

test("a member without admin rights meets the API's refusals, and no admin controls", async () => {
  const tab = await openTab(browser, server.url, { colorScheme: "dark" });
  try {
    await step(tab, "member-refused", async () => {
      await signIn(tab.page, member.email, "correct horse battery");
      for (const [path, status, heading] of [
        ["/settings/orgs/acme/invitations", 403, "Not allowed"],
        ["/settings/orgs/acme/profile", 403, "Not allowed"],
        ["/settings/orgs/acme/billing", 404, "Not found"],
        ["/acme/app/settings/access", 403, "Not allowed"],
      ] as const) {
        const res = await tab.page.goto(path);
        expect({ path, status: res?.status() }).toEqual({ path, status });
        await tab.page.getByRole("heading", { name: heading }).waitFor();
        await accessible(tab.page);
      }
      const res = await tab.page.goto("/settings/orgs/acme");
      expect(res?.url()).toEndWith("/settings/orgs/acme/members");
      await tab.page.getByRole("heading", { name: "Members" }).waitFor();
      expect(await tab.page.getByRole("button", { name: /Change the role/ }).count()).toBe(0);
      expect(await tab.page.getByRole("link", { name: "Invitations" }).count()).toBe(0);
      await accessible(tab.page);
    });
    expect(tab.problems).toEqual([]);
  } finally {
    await tab.close();
  }
}, 60_000);
