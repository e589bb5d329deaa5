// A real browser for the web interface's tests: Debian's Chromium (installed by
// scripts/install-browser.sh before the suite) driven by playwright-core. Each test gets a fresh
// context (no cookies), the page's console errors and CSP violations are collected, an
// accessibility check runs with axe, and a failing step leaves a screenshot behind.
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? "/usr/bin/chromium";
/** Where screenshots of failed steps go (ignored by git). */
export const SCREENSHOTS = resolve(import.meta.dir, "../../test-results/screenshots");

// Why these flags: the machine has no network beyond loopback; without them Chromium keeps
// dialling Google's hosts at start. --no-sandbox: CI runs as root, where the sandbox cannot start.
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
}

/** A fresh browser context with what went wrong on its pages. */
export interface Tab {
  context: BrowserContext;
  page: Page;
  /** Console errors, page errors and CSP violations seen so far. */
  problems: string[];
  close(): Promise<void>;
}

export async function openTab(
  browser: Browser,
  baseURL: string,
  o: { width?: number; height?: number; colorScheme?: "light" | "dark"; javaScriptEnabled?: boolean } = {},
): Promise<Tab> {
  const context = await browser.newContext({
    baseURL,
    viewport: { width: o.width ?? 1280, height: o.height ?? 900 },
    colorScheme: o.colorScheme ?? "light",
    javaScriptEnabled: o.javaScriptEnabled ?? true,
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    // A failed load is reported below with its address.
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) problems.push(`console: ${m.text()}`);
  });
  // Subresources only: a page answering 404 is what some tests expect.
  page.on("response", (r) => {
    if (r.status() >= 400 && r.request().resourceType() !== "document") problems.push(`${r.status()} ${r.url()}`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  return { context, page, problems, close: () => context.close() };
}

/** Runs `step`; when it throws, saves a full-page screenshot named after it and rethrows. */
export async function step<T>(tab: Tab, name: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const file = join(SCREENSHOTS, `${name.replace(/[^a-z0-9-]+/gi, "_")}-${Date.now()}.png`);
    await tab.page.screenshot({ path: file, fullPage: true }).catch(() => {});
    throw new Error(`${name}: ${error instanceof Error ? error.message : String(error)} (screenshot: ${file})`, { cause: error });
  }
}

/** axe's violations on the current page (WCAG 2 A and AA rules), as readable lines. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
  return result.violations.map(
    (v) =>
      `${v.id} (${v.impact}): ${v.help} — ${v.nodes
        .map((n) => n.target.join(" "))
        .slice(0, 3)
        .join(", ")}`,
  );
}

/** Signs in through the form, as a person would. */
export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/login")), page.getByRole("button", { name: "Sign in" }).click()]);
}
