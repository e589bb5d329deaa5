// People in a real browser (issue 33): upload a picture on the profile settings and see it in the
// header (and a refused SVG say why); the org page with its description and its people with their
// pictures for a member, none of them for a visitor; the home feed with pictures. Every page passes
// axe in light and dark, fits a phone's width, and raises no console error, CSP violation or
// failed load (pictures included).
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { accessibilityViolations, launchBrowser, openTab, signIn, step, type Tab } from "../helpers/browser.ts";
import { client, createUser, login, mintToken, startServer, type RunningServer } from "../helpers/server.ts";
import { PNG, SVG_WITH_SCRIPT } from "../helpers/images.ts";
import { commitFiles, gitSandbox, initRepo, repoUrl, type GitSandbox } from "../helpers/git.ts";

let server: RunningServer;
let browser: Browser;
let g: GitSandbox;
const ada = { email: "ada@nimbus.example.com", password: "" };

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  g = gitSandbox("svc-browser-people-");
  const a = await createUser(server, { org: "nimbus", handle: "ada", email: ada.email, name: "Ada Lovelace" });
  ada.password = a.password;
  await createUser(server, { org: "nimbus", handle: "bo", email: "bo@nimbus.example.com", name: "Bo", role: "member" });
  const cookie = await login(server, a.email, a.password);
  const token = await mintToken(server, cookie, "nimbus", { scopes: ["repo:write", "org:admin"], label: "setup" });
  const api = client(server, { token });
  expect(
    (await api.patch("/v1/orgs/nimbus/profile", { description: "Clouds, <b>not</b> scripts", location: "Lisbon", website: "https://nimbus.example.com" }))
      .status,
  ).toBe(200);
  expect((await api.post("/v1/orgs/nimbus/repos", { name: "website", public: true })).status).toBe(201);
  const dir = await initRepo(g);
  await commitFiles(g, dir, { "index.html": "<h1>hi</h1>\n" }, "Front page");
  await g.ok(["push", "-q", repoUrl(server, "nimbus", "website", token), "HEAD:refs/heads/main"], { cwd: dir });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  g?.[Symbol.dispose]();
}, 30_000);

async function accessible(tab: Tab): Promise<void> {
  expect(await accessibilityViolations(tab.page)).toEqual([]);
}

/** Every picture on the page has loaded (a broken one has no natural width). */
async function picturesLoaded(tab: Tab): Promise<void> {
  await tab.page.waitForFunction(() => [...document.images].every((i) => i.complete));
  const broken = await tab.page.evaluate(() => [...document.images].filter((i) => i.naturalWidth === 0).map((i) => i.src));
  expect(broken).toEqual([]);
}

/** Nothing sticks out sideways (the page fits the viewport's width). */
async function fitsWidth(tab: Tab): Promise<void> {
  const { scroll, client: width } = await tab.page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
  }));
  expect(scroll).toBeLessThanOrEqual(width);
}

test("upload a picture and see it in the header; a refused SVG says why; the org page lists its people with pictures", async () => {
  const tab = await openTab(browser, server.url);
  try {
    await step(tab, "sign-in-identicon", async () => {
      await signIn(tab.page, ada.email, ada.password);
      const src = await tab.page.locator("header.top img.avatar").getAttribute("src");
      expect(src).toBe("/avatars/ada?v=i");
      await picturesLoaded(tab);
    });

    await step(tab, "refused-svg", async () => {
      await tab.page.goto("/settings/profile");
      await accessible(tab);
      await tab.page.getByLabel("Upload a picture").setInputFiles({ name: "evil.svg", mimeType: "image/svg+xml", buffer: Buffer.from(SVG_WITH_SCRIPT) });
      await Promise.all([tab.page.waitForNavigation(), tab.page.getByRole("button", { name: "Upload picture" }).click()]);
      await tab.page.getByRole("alert").filter({ hasText: "only PNG, JPEG or WebP pictures are accepted" }).waitFor();
      await accessible(tab);
    });

    await step(tab, "upload-png", async () => {
      await tab.page.getByLabel("Upload a picture").setInputFiles({ name: "me.png", mimeType: "image/png", buffer: Buffer.from(PNG) });
      await Promise.all([tab.page.waitForURL("**/settings/profile?done=avatar"), tab.page.getByRole("button", { name: "Upload picture" }).click()]);
      await tab.page.getByRole("status").filter({ hasText: "Picture saved." }).waitFor();
      const src = await tab.page.locator("header.top img.avatar").getAttribute("src");
      expect(src).toMatch(/^\/avatars\/ada\?v=[0-9a-f]{16}$/);
      await picturesLoaded(tab);
      // The header's picture is the uploaded PNG, 3×2 pixels.
      expect(
        await tab.page.locator("header.top img.avatar").evaluate((i) => [(i as HTMLImageElement).naturalWidth, (i as HTMLImageElement).naturalHeight]),
      ).toEqual([3, 2]);
      await tab.page.getByRole("button", { name: "Remove picture" }).waitFor();
      await accessible(tab);
    });

    await step(tab, "org-page", async () => {
      await tab.page.goto("/nimbus");
      await tab.page.getByText("Clouds, <b>not</b> scripts").waitFor();
      const people = tab.page.getByRole("region", { name: "People" });
      await people.getByRole("link", { name: /Ada Lovelace/ }).waitFor();
      await people.getByRole("link", { name: /Bo/ }).waitFor();
      expect(await people.locator("img.avatar").count()).toBe(2);
      await picturesLoaded(tab);
      await accessible(tab);
    });

    await step(tab, "home-feed", async () => {
      await tab.page.goto("/");
      await tab.page.getByRole("heading", { name: "Recent activity" }).waitFor();
      expect(await tab.page.locator("ul.activity img.avatar").count()).toBeGreaterThan(0);
      await picturesLoaded(tab);
      await accessible(tab);
    });
    expect(tab.problems).toEqual([]);
  } finally {
    await tab.close();
  }
}, 120_000);

test("a visitor sees the org's description and repositories but not its people", async () => {
  const tab = await openTab(browser, server.url);
  try {
    await step(tab, "visitor-org", async () => {
      await tab.page.goto("/nimbus");
      await tab.page.getByRole("link", { name: "nimbus/website" }).waitFor();
      expect(await tab.page.getByRole("region", { name: "People" }).count()).toBe(0);
      await picturesLoaded(tab);
      await accessible(tab);
    });
    expect(tab.problems).toEqual([]);
  } finally {
    await tab.close();
  }
}, 60_000);

test("dark mode on a phone: settings, org page, home and the person's page fit and pass axe", async () => {
  const tab = await openTab(browser, server.url, { width: 390, height: 844, colorScheme: "dark" });
  try {
    await signIn(tab.page, ada.email, ada.password);
    for (const path of ["/settings/profile", "/nimbus", "/", "/ada", "/ada?tab=followers"]) {
      await step(tab, `phone-dark-${path}`, async () => {
        await tab.page.goto(path);
        await picturesLoaded(tab);
        await fitsWidth(tab);
        await accessible(tab);
      });
    }
    expect(tab.problems).toEqual([]);
  } finally {
    await tab.close();
  }
}, 120_000);
