// A CI run in a real browser: a workflow pushed with git, a real `svc runner` agent registered
// and running, and the job's page following the log live (server-sent events) while the job waits
// on a gate the test opens, until the job ends; no reload in between. Meanwhile the page without
// JavaScript: the log so far and a refresh link. Then a repository secret added through its settings
// page (listed by name, its value in no page) and the org secrets page. Every page: axe clean, no
// console problems.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { caller, person, type Person } from "../helpers/api.ts";
import { accessibilityViolations, launchBrowser, openTab, signIn, step } from "../helpers/browser.ts";
import { commitFiles, gitSandbox, repoUrl, type GitSandbox } from "../helpers/git.ts";
import { mintToken, startServer, tempDir, type RunningServer } from "../helpers/server.ts";
import { registerMachine, registrationToken, startAgent, type Agent } from "../blackbox/ci/helpers.ts";

let server: RunningServer;
let browser: Browser;
let g: GitSandbox;
let owner: Person;
let agent: Agent;
const home = tempDir("svc-browser-ci-");
const gate = join(home.path, "gate");

beforeAll(async () => {
  g = gitSandbox("svc-browser-ci-git-");
  [server, browser] = await Promise.all([startServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" } }), launchBrowser()]);
  owner = await person(server, "acme", "ada@acme.example", "owner", { handle: "ada", password: "correct horse battery" });
  const api = caller(server, owner);
  expect((await api.post("/v1/orgs/acme/repos", { name: "app" })).status).toBe(201);
  const m = await registerMachine(server, await registrationToken(api), home.path, { name: "builder", labels: ["browser"] });
  agent = startAgent(m.config, join(home.path, "work"));
  await agent.saw(/waiting for jobs/);
}, 90_000);

afterAll(async () => {
  // Whatever happened, the job must not wait for its gate forever.
  if (!existsSync(gate)) writeFileSync(gate, "");
  await agent?.stop("SIGKILL");
  await browser?.close();
  await server?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
  home[Symbol.dispose]();
}, 30_000);

async function accessible(page: Page): Promise<void> {
  expect(await accessibilityViolations(page)).toEqual([]);
}

/** Reloads until `probe` sees what it waits for (a run written by background work after the push). */
async function reloadUntil(page: Page, what: string, probe: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what} not shown within ${ms} ms`);
    await page.reload();
  }
}

/** The job page in a browser without JavaScript, while the job runs: the log so far, a refresh link that reads more. */
async function withoutScript(url: string): Promise<void> {
  const context = await browser.newContext({ baseURL: server.url, javaScriptEnabled: false });
  const page = await context.newPage();
  try {
    await signIn(page, owner.email, "correct horse battery");
    await page.goto(url);
    await page.locator("#log").getByText("first line").waitFor();
    await Promise.all([page.waitForNavigation(), page.getByRole("link", { name: "Refresh" }).click()]);
    await page.locator("#log").getByText("first line").waitFor();
    await page.getByRole("link", { name: "Raw log" }).waitFor();
    // (axe needs script; the same markup was checked in the scripted tab.)
  } finally {
    await context.close();
  }
}

test("push a workflow, watch the job's log arrive live until the job ends", async () => {
  const workflow = [
    "on: push",
    "jobs:",
    "  build:",
    "    runs-on: [self-hosted, browser]",
    "    steps:",
    "      - name: first",
    "        run: echo 'first line <b>not bold</b>'",
    "      - name: wait for the gate",
    `        run: while [ ! -f '${gate}' ]; do sleep 0.1; done; echo 'after the gate'`,
    "      - name: last",
    "        run: echo 'last line'",
  ].join("\n");
  const token = await mintToken(server, owner.cookie, "acme", { scopes: ["repo:write"], label: "push" });
  const dir = g.path("app");
  await g.ok(["init", "-q", "-b", "main", dir]);
  const sha = await commitFiles(g, dir, { ".svc/workflows/ci.yml": `${workflow}\n`, "README.md": "# app\n" }, "add ci");
  await g.ok(["push", "-q", repoUrl(server, "acme", "app", token), "main"], { cwd: dir });

  const tab = await openTab(browser, server.url);
  const { page } = tab;
  let navigations = 0;
  try {
    await step(tab, "runs-list", async () => {
      await signIn(page, owner.email, "correct horse battery");
      await page.goto("/acme/app");
      await Promise.all([page.waitForURL("**/acme/app/runs"), page.getByRole("link", { name: "Runs" }).click()]);
      await reloadUntil(page, "the run", async () => (await page.getByRole("link", { name: sha.slice(0, 10) }).count()) > 0);
      await accessible(page);
    });

    await step(tab, "run-page", async () => {
      await Promise.all([page.waitForURL("**/acme/app/runs/*"), page.getByRole("link", { name: "ci.yml" }).click()]);
      await page.getByRole("heading", { name: "build" }).waitFor();
      await page.getByText("wait for the gate").waitFor();
      await accessible(page);
    });

    await step(tab, "live-log", async () => {
      await Promise.all([page.waitForURL("**/jobs/*"), page.getByRole("link", { name: "Log of build" }).click()]);
      page.on("framenavigated", (f) => {
        if (f === page.mainFrame()) navigations++;
      });
      const log = page.locator("#log");
      // The job is held at its gate: whatever the page showed at first, the rest can only come live.
      await log.getByText("first line <b>not bold</b>").waitFor();
      await page.locator("#job-state").getByText("running").waitFor();
      expect(await log.textContent()).not.toContain("after the gate");
      await accessible(page);
      await withoutScript(page.url());
      writeFileSync(gate, "");
      await log.getByText("after the gate").waitFor();
      await log.getByText("last line").waitFor();
      await page.locator("#job-state").getByText("success").waitFor();
      await page.locator('li[data-step="2"] .state').getByText("success").waitFor();
      expect(await page.getByRole("link", { name: "Refresh" }).isVisible()).toBe(false);
      expect(navigations).toBe(0);
      // The markup in the log stayed text.
      expect(await log.locator("b").count()).toBe(0);
      await accessible(page);
    });

    await step(tab, "secrets-settings", async () => {
      await page.goto("/acme/app/settings/secrets");
      await page.getByLabel("Name", { exact: true }).fill("DEPLOY_KEY");
      await page.getByLabel("Value", { exact: true }).fill("browser-secret-value");
      await Promise.all([page.waitForURL("**/settings/secrets?done=created"), page.getByRole("button", { name: "Save secret" }).click()]);
      await page.getByText("Created.").waitFor();
      // The name is listed; the value is in no page.
      await page.getByRole("cell", { name: "DEPLOY_KEY", exact: true }).waitFor();
      expect(await page.content()).not.toContain("browser-secret-value");
      await accessible(page);
      await page.goto("/settings/orgs/acme/secrets");
      await page.getByRole("group", { name: "Repositories" }).waitFor();
      await accessible(page);
    });
    expect(tab.problems).toEqual([]);
  } finally {
    await tab.close();
  }
}, 180_000);
