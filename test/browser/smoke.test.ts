// The browser harness itself: Debian's Chromium starts, signs in through the form, and the pages
// it sees run no inline script, break no CSP rule and pass the accessibility check.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { accessibilityViolations, launchBrowser, openTab, signIn, step } from "../helpers/browser.ts";
import { createUser, startServer, type RunningServer } from "../helpers/server.ts";

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
}, 30_000);

test("sign in through the form, see the home page, sign out; no console errors, no accessibility violations", async () => {
  const user = await createUser(server, { org: "acme", handle: "ada", email: "ada@example.com", password: "correct horse battery" });
  const tab = await openTab(browser, server.url);
  try {
    await step(tab, "welcome", async () => {
      await tab.page.goto("/");
      expect(await tab.page.getByRole("link", { name: "Sign in" }).count()).toBeGreaterThan(0);
      expect(await accessibilityViolations(tab.page)).toEqual([]);
    });
    await step(tab, "sign-in", async () => {
      await signIn(tab.page, user.email, "correct horse battery");
      await tab.page.getByRole("heading", { name: /Welcome/ }).waitFor();
      expect(await accessibilityViolations(tab.page)).toEqual([]);
    });
    await step(tab, "sign-out", async () => {
      await Promise.all([tab.page.waitForURL("**/"), tab.page.getByRole("button", { name: "Sign out" }).click()]);
      expect(await tab.page.getByRole("link", { name: "Sign in" }).count()).toBeGreaterThan(0);
    });
    expect(tab.problems).toEqual([]);
  } finally {
    await tab.close();
  }
}, 60_000);
