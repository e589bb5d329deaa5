// The account journey in a real browser: sign up, the confirmation mail (through a real SMTP
// relay), its link, a token whose secret is shown once, an SSH key, the profile, and the person's
// page with its contribution graph after a push with git; then an outsider's view of that page,
// which never names the private repository, and the page on a phone in dark mode. Every page
// passes axe and raises no console error, CSP violation or failed load.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type { Browser } from "playwright-core";
import { accessibilityViolations, launchBrowser, openTab, step, type Tab } from "../helpers/browser.ts";
import { client, startServer, type RunningServer } from "../helpers/server.ts";
import { commitFiles, gitSandbox, initRepo, repoUrl, type GitSandbox } from "../helpers/git.ts";
import { parseMail } from "../helpers/mail-capture.ts";
import { startRelay, type Relay } from "../helpers/mail-endpoints.ts";

let relay: Relay;
let server: RunningServer;
let browser: Browser;
let g: GitSandbox;

beforeAll(async () => {
  relay = await startRelay({ hideStartTls: true });
  [server, browser] = await Promise.all([
    startServer({ env: { SVC_MAIL_TRANSPORT: "smtp", SVC_MAIL_SMTP_HOST: `127.0.0.1:${relay.port}`, SVC_MAIL_FROM: "svc <no-reply@example.test>" } }),
    launchBrowser(),
  ]);
  g = gitSandbox("svc-browser-account-");
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await relay?.close();
  g?.[Symbol.dispose]();
}, 30_000);

/** An ed25519 public key line (any 32 bytes make a well-formed key). */
function ed25519Key(comment: string): string {
  const type = Buffer.from("ssh-ed25519");
  const key = randomBytes(32);
  const len = (b: Buffer) => Buffer.from([0, 0, 0, b.length]);
  return `ssh-ed25519 ${Buffer.concat([len(type), type, len(key), key]).toString("base64")} ${comment}`;
}

/** The page is accessible (axe, WCAG 2 A/AA). */
async function accessible(tab: Tab): Promise<void> {
  expect(await accessibilityViolations(tab.page)).toEqual([]);
}

/** Submits the form holding the button named `button` and waits for the page it leads to. */
async function submit(tab: Tab, button: string): Promise<void> {
  await Promise.all([tab.page.waitForNavigation(), tab.page.getByRole("button", { name: button, exact: true }).click()]);
}

test("sign up → confirm by mail → token shown once → SSH key → profile → own page with the graph after a push; an outsider never sees the private repository", async () => {
  const tab = await openTab(browser, server.url);
  let secret = "";
  try {
    await step(tab, "sign-up", async () => {
      await tab.page.goto("/");
      await Promise.all([tab.page.waitForURL("**/signup"), tab.page.getByRole("link", { name: "create an account" }).click()]);
      await accessible(tab);
      await tab.page.getByLabel("Email").fill("grace@example.com");
      await tab.page.getByLabel("Name").fill("Grace Hopper");
      await tab.page.getByLabel("Handle").fill("grace");
      await tab.page.getByLabel("Password").fill("a long enough password");
      await submit(tab, "Create account");
      await tab.page.getByRole("heading", { name: "Check your email" }).waitFor();
      await accessible(tab);
    });

    await step(tab, "confirm-link", async () => {
      const got = await relay.waitFor((m) => m.to.includes("grace@example.com"));
      const mail = parseMail("relayed.eml", got.raw.toString("utf8"));
      const link = mail.links.find((l) => l.token.startsWith("svcv_"))!;
      expect(link.url.startsWith(`${server.url}/verify?token=`)).toBe(true);
      await tab.page.goto(link.url);
      await accessible(tab);
      await submit(tab, "Confirm my address");
      await tab.page.getByRole("heading", { name: "Welcome, Grace Hopper" }).waitFor();
      await accessible(tab);
    });

    await step(tab, "token-once", async () => {
      await tab.page.getByRole("navigation", { name: "Account" }).getByRole("link", { name: "Settings" }).click();
      await tab.page.getByRole("heading", { name: "Profile", exact: true }).waitFor();
      await Promise.all([
        tab.page.waitForURL("**/settings/tokens"),
        tab.page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Tokens" }).click(),
      ]);
      await accessible(tab);
      await tab.page.getByRole("combobox", { name: /^Organization/ }).selectOption("grace");
      await tab.page.getByLabel("Label", { exact: true }).fill("laptop");
      await tab.page.getByRole("checkbox", { name: /^repo:write/ }).check();
      await submit(tab, "Create token");
      await tab.page.getByRole("heading", { name: "Your new token" }).waitFor();
      secret = await tab.page.getByRole("textbox", { name: "Token secret" }).inputValue();
      expect(secret).toMatch(/^svc_[a-z2-7]{16}_[a-z2-7]{32}$/);
      expect(await tab.page.getByRole("button", { name: "Copy" }).isVisible()).toBe(true);
      await accessible(tab);
      await tab.page.reload();
      await tab.page.getByRole("heading", { name: "Tokens", exact: true }).waitFor();
      expect(await tab.page.getByRole("heading", { name: "Your new token" }).count()).toBe(0);
      expect(await tab.page.content()).not.toContain(secret);
      expect(await tab.page.getByText("laptop", { exact: true }).count()).toBe(1);
    });

    await step(tab, "ssh-key", async () => {
      await tab.page.goto("/settings/keys");
      await tab.page.getByLabel("Label").fill("work laptop");
      await tab.page.getByLabel("Public key").fill(ed25519Key("grace@laptop"));
      await submit(tab, "Add key");
      await tab.page.getByText("Key added.").waitFor();
      expect(await tab.page.getByText("work laptop").count()).toBe(1);
      expect(await tab.page.getByText(/SHA256:/).count()).toBe(1);
      await accessible(tab);
    });

    await step(tab, "emails", async () => {
      await tab.page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Email addresses" }).click();
      await tab.page.getByRole("heading", { name: "Email addresses" }).waitFor();
      expect(await tab.page.getByText("grace@example.com").count()).toBe(1);
      await accessible(tab);
    });

    await step(tab, "profile", async () => {
      await tab.page.goto("/settings/profile");
      await tab.page.getByLabel("Display name").fill("Amazing Grace");
      await tab.page.getByLabel("Bio").fill("Compilers.\nAlso <b>nanoseconds</b>.");
      await tab.page.getByLabel("Label 1").fill("blog");
      await tab.page.getByLabel("URL 1").fill("https://grace.example/");
      await submit(tab, "Save profile");
      await tab.page.getByText("Profile saved.").waitFor();
      await accessible(tab);
    });

    await step(tab, "push-and-graph", async () => {
      const api = client(server, { token: secret });
      expect((await api.post("/v1/orgs/grace/repos", { name: "compiler", public: true })).status).toBe(201);
      expect((await api.post("/v1/orgs/grace/repos", { name: "secret-stuff", public: false })).status).toBe(201);
      const dir = await initRepo(g);
      await commitFiles(g, dir, { "README.md": "# A-0\n" }, "first");
      await commitFiles(g, dir, { "a.txt": "a\n" }, "second");
      await g.ok(["push", "-q", repoUrl(server, "grace", "compiler", secret), "main"], { cwd: dir });
      await g.ok(["push", "-q", repoUrl(server, "grace", "secret-stuff", secret), "main"], { cwd: dir });
      const deadline = Date.now() + 20_000;
      while ((await client(server).get("/v1/users/grace/contributions")).body.total === 0) {
        if (Date.now() > deadline) throw new Error("the push was never credited");
        await Bun.sleep(50);
      }
      await tab.page.getByRole("link", { name: "grace", exact: true }).first().click();
      await tab.page.getByRole("heading", { name: /Amazing Grace/ }).waitFor();
      expect(await tab.page.getByText("Also <b>nanoseconds</b>.").count()).toBe(1);
      const graph = tab.page.getByRole("img", { name: /commits? from/ });
      await graph.waitFor();
      expect(await tab.page.locator("svg.graph rect.g-l1, svg.graph rect.g-l2, svg.graph rect.g-l3, svg.graph rect.g-l4").count()).toBeGreaterThan(0);
      expect(await tab.page.locator("svg.graph rect").count()).toBe(365);
      expect(await tab.page.getByRole("link", { name: "grace/secret-stuff" }).count()).toBe(1);
      await accessible(tab);
    });
    expect(tab.problems).toEqual([]);
  } finally {
    await tab.close();
  }

  // An outsider (not signed in) never sees the private repository named, on any tab of the page.
  const outsider = await openTab(browser, server.url);
  try {
    await step(outsider, "outsider-view", async () => {
      for (const path of ["/grace", "/grace?tab=repositories"]) {
        await outsider.page.goto(path);
        await outsider.page.getByRole("heading", { name: /Amazing Grace/ }).waitFor();
        expect(await outsider.page.content()).not.toContain("secret-stuff");
        await accessible(outsider);
      }
      expect(await outsider.page.getByRole("link", { name: "grace/compiler" }).count()).toBe(1);
    });
    expect(outsider.problems).toEqual([]);
  } finally {
    await outsider.close();
  }

  // A phone in dark mode: the page still passes, and nothing overflows the viewport but the graph's own scroller.
  const phone = await openTab(browser, server.url, { width: 375, height: 800, colorScheme: "dark" });
  try {
    await step(phone, "phone-dark", async () => {
      await phone.page.goto("/grace");
      await phone.page.getByRole("heading", { name: /Amazing Grace/ }).waitFor();
      await accessible(phone);
      expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
      await phone.page.goto("/signup");
      await accessible(phone);
      expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    });
    expect(phone.problems).toEqual([]);
  } finally {
    await phone.close();
  }
}, 300_000);
