// Journeys across issue 33's pieces in a real browser. First, as a new user would: the header's
// search box → the repository in the results → a file → Blame → back → the branches page →
// Compare (base and head picked in the pickers) → "Open change" → the change page, then the Runs
// tab and a run page, every repository page under the one layout (the repository's nav). Then
// hostile content pushed with real git and set through the API — a README full of script, event
// handlers, javascript: links, frames, forms and a meta refresh; a description with markup; file,
// branch and tag names that try to break out of their attributes — on the tree, file, blame,
// compare, branches, tags, commits, runs, run, change, search, explore, org and home pages: no
// dialog, no script, no on* attribute or javascript: address from the content, the same CSP
// header on every page, axe clean, in the light theme on a desktop and the dark one at a phone's
// width.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { PAGE_CSP } from "../../src/http/web/kit/layout.ts";
import { HOSTILE } from "../fixtures/markdown/hostile.ts";
import { accessibilityViolations, launchBrowser, openTab, signIn, step, type Tab } from "../helpers/browser.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../helpers/git.ts";
import { client, createUser, login, startServer, type RunningServer } from "../helpers/server.ts";

let server: RunningServer;
let browser: Browser;
let g: GitSandbox;
const PASSWORD = "correct horse battery";
const EMAIL = "ada@forge.example";

// Names that try to leave their attribute or element. Git refuses spaces in ref names, hence the slashes.
const EVIL_FILE = "<img src=x onerror=alert(1)>.txt";
const EVIL_FILE2 = `"><svg onload=alert(2)> it's.md`;
const EVIL_BRANCH = `x"><svg/onload=alert(3)>`;
const EVIL_BRANCH2 = "<img/src=x/onerror=alert(4)>";
const EVIL_TAG = `v1'"><img/src=x/onerror=alert(5)>`;
const EVIL_DESCRIPTION = `An <b>engine</b> <script>alert(6)</script><img src=x onerror=alert(7)> [x](javascript:alert(8)) "quoted" 'single'`;
const EVIL_HOMEPAGE = `https://engine.example/?q="><script>alert(9)</script>&x='<img src=x onerror=alert(10)>`;

/**
 * The README: the cases the brief names, then the Markdown fixture's cases but "unclosed tags"
 * (a link inside a <summary>, the author's own markup kept as written, which axe rightly calls
 * nested-interactive; markdown.test.ts covers it), so axe must pass here with no exception.
 */
const README = [
  "# Engine",
  "",
  "<script>alert(11)</script>",
  "",
  '<img src="x" onerror="alert(12)">',
  "",
  '[plain](javascript:alert(13)) [mixed](JaVaScRiPt:alert(14)) <a href="JaVaScRiPt:alert(15)">raw</a>',
  "",
  '<svg onload="alert(16)"><circle r="1"/></svg>',
  "",
  '<iframe src="javascript:alert(17)"></iframe>',
  "",
  '<meta http-equiv="refresh" content="0;url=javascript:alert(18)">',
  "",
  '<form action="/forge/engine/settings/delete" method="post"><input name="confirm" value="forge/engine"><button>Delete</button></form>',
  "",
  "<details><summary>More about the engine</summary>",
  "",
  "It burns fuel.",
  "",
  "</details>",
  "",
  ...Object.entries(HOSTILE)
    .filter(([name]) => name !== "unclosed tags")
    .flatMap(([name, source]) => [`## Case: ${name}`, "", source, ""]),
].join("\n");

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  g = gitSandbox("svc-forge-browser-");
  await createUser(server, { org: "forge", handle: "ada", email: EMAIL, password: PASSWORD });
  const cookie = await login(server, EMAIL, PASSWORD);
  const { token } = await mintTokenWithId(server, cookie, "forge", { scopes: ["repo:write"], label: "ada" });
  const api = client(server, { token });
  expect((await api.post("/v1/orgs/forge/repos", { name: "engine", public: true, description: EVIL_DESCRIPTION, homepage: EVIL_HOMEPAGE })).status).toBe(201);
  // A javascript: homepage never gets stored.
  expect((await api.patch("/v1/orgs/forge/repos/engine", { homepage: "javascript:alert(19)" })).status).toBe(400);
  expect((await api.patch("/v1/orgs/forge/repos/engine", { homepage: "JaVaScRiPt:alert(19)//https://x" })).status).toBe(400);

  const dir = await initRepo(g);
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  await commitFiles(
    g,
    dir,
    {
      "README.md": README,
      "src/app.ts": "export const thrust = 1;\nexport const fuel = 2;\n",
      [EVIL_FILE]: "an image that is not one\n",
      [EVIL_FILE2]: '# "><svg onload=alert(20)>\n',
      ".svc/workflows/ci.yml": "on: push\njobs:\n  build:\n    runs-on: [self-hosted, nowhere]\n    steps:\n      - run: echo hi\n",
    },
    `Seed <img src=x onerror=alert(21)>`,
  );
  await g.ok(["tag", EVIL_TAG], { cwd: dir });
  await g.ok(["checkout", "-q", "-b", "topic"], { cwd: dir });
  await commitFiles(g, dir, { "src/app.ts": "export const thrust = 3;\nexport const fuel = 2;\n" }, "More thrust");
  await g.ok(["checkout", "-q", "-b", "docs", "main"], { cwd: dir });
  await commitFiles(g, dir, { "docs/engine.md": "# Engine docs\n" }, "Document the engine");
  await g.ok(["checkout", "-q", "-b", EVIL_BRANCH, "main"], { cwd: dir });
  await commitFiles(g, dir, { [`evil/${EVIL_FILE}`]: `x"><svg onload=alert(22)>\n` }, `Branch "><svg onload=alert(23)>`);
  await g.ok(["branch", EVIL_BRANCH2], { cwd: dir });
  await g.ok(["checkout", "-q", "main"], { cwd: dir });
  await g.ok(["push", "-q", repoUrl(server, "forge", "engine", token), "main", "topic", "docs", EVIL_BRANCH, EVIL_BRANCH2, `refs/tags/${EVIL_TAG}`], {
    cwd: dir,
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  g?.[Symbol.dispose]();
}, 30_000);

type Look = { colorScheme: "light" | "dark"; width: number; height: number };
const LOOKS: [string, Look][] = [
  ["light desktop", { colorScheme: "light", width: 1280, height: 900 }],
  ["dark phone", { colorScheme: "dark", width: 390, height: 844 }],
];

/** A tab where a dialog of any kind is a problem (and is dismissed so nothing hangs). */
async function tabFor(look: Look): Promise<Tab> {
  const tab = await openTab(browser, server.url, look);
  tab.page.on("dialog", (d) => {
    tab.problems.push(`dialog ${d.type()}: ${d.message()}`);
    void d.dismiss().catch(() => {});
  });
  return tab;
}

/** Axe finds nothing and nothing went wrong on the page so far. */
async function clean(tab: Tab, what: string): Promise<void> {
  expect({ what, violations: await accessibilityViolations(tab.page) }).toEqual({ what, violations: [] });
  expect({ what, problems: tab.problems.filter(expected) }).toEqual({ what, problems: [] });
}

/** Images the hostile README names do not exist in the repository (so an onerror would fire): their 404s are expected. */
function expected(problem: string): boolean {
  return !/^404 .*\/forge\/engine\/raw\/.*\/[a-z]+(\.png)?$/.test(problem);
}

/** Clicks and waits for the page it leads to. */
async function go(page: Page, act: () => Promise<void>): Promise<void> {
  await Promise.all([page.waitForNavigation(), act()]);
}

/** The repository's nav (the one layout) is on the page, with `current` as its current tab. */
async function hasRepoNav(page: Page, current: string): Promise<void> {
  const nav = page.getByRole("navigation", { name: "Repository" });
  expect(await nav.count()).toBe(1);
  const here = ((await nav.locator("[aria-current='page']").allTextContents()) ?? []).map((t) => t.replace(/\s+/g, " ").trim());
  expect(here.length).toBe(1);
  expect(here[0]).toStartWith(current);
}

/** Nothing on the page is wider than the screen. */
async function fitsScreen(page: Page, what: string): Promise<void> {
  const widths = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth, view: window.innerWidth }));
  expect({ what, doc: widths.doc <= widths.view ? "fits" : `${widths.doc} > ${widths.view}` }).toEqual({ what, doc: "fits" });
}

/** Reloads until `probe` holds (a run is written by background work after the push). */
async function reloadUntil(page: Page, what: string, probe: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what} not shown within ${ms} ms`);
    await page.reload();
  }
}

for (const [name, look] of LOOKS) {
  test(`${name}: search → repository → file → blame → back → compare → open a change → runs, one layout throughout`, async () => {
    const tab = await tabFor(look);
    const page = tab.page;
    const phone = look.width < 500;
    try {
      await step(tab, `${name}-search`, async () => {
        await signIn(page, EMAIL, PASSWORD);
        await page.goto("/");
        await page.getByRole("search", { name: "Site" }).getByLabel("Search").fill("engine");
        await go(page, () => page.keyboard.press("Enter"));
        expect(new URL(page.url()).pathname).toBe("/search");
        await clean(tab, "search results");
        if (phone) await fitsScreen(page, "search results");
        await go(page, () => page.getByRole("link", { name: "forge/engine", exact: true }).click());
        expect(new URL(page.url()).pathname).toBe("/forge/engine");
        await hasRepoNav(page, "Code");
        await clean(tab, "repository");
        if (phone) await fitsScreen(page, "repository");
      });
      await step(tab, `${name}-file-blame`, async () => {
        await go(page, () => page.getByRole("link", { name: /^src\/?$/ }).click());
        await go(page, () => page.getByRole("link", { name: "app.ts", exact: true }).click());
        expect(new URL(page.url()).pathname).toBe("/forge/engine/blob/main/src/app.ts");
        await hasRepoNav(page, "Code");
        await clean(tab, "file");
        await go(page, () => page.getByRole("link", { name: "Blame", exact: true }).click());
        expect(new URL(page.url()).pathname).toBe("/forge/engine/blame/main/src/app.ts");
        await hasRepoNav(page, "Code");
        expect((await page.locator("main").textContent())?.replace(/\s+/g, " ")).toContain("export const thrust = 1;");
        await clean(tab, "blame");
        if (phone) await fitsScreen(page, "blame");
        await go(page, () => page.goBack().then(() => {}));
        expect(new URL(page.url()).pathname).toBe("/forge/engine/blob/main/src/app.ts");
      });
      await step(tab, `${name}-compare`, async () => {
        await go(page, () =>
          page
            .getByRole("link", { name: /^\d+ branch(es)?$/ })
            .first()
            .click(),
        );
        expect(new URL(page.url()).pathname).toBe("/forge/engine/branches");
        await hasRepoNav(page, "Code");
        await clean(tab, "branches");
        await go(page, () => page.getByRole("link", { name: "Compare docs with main" }).click());
        expect(new URL(page.url()).pathname).toBe("/forge/engine/compare/main...docs");
        await hasRepoNav(page, "Code");
        await page.getByRole("combobox", { name: "Base" }).fill("main");
        await page.getByRole("combobox", { name: "Compare" }).fill("topic");
        await go(page, () => page.getByRole("button", { name: "Compare", exact: true }).click());
        expect(new URL(page.url()).pathname).toBe("/forge/engine/compare/main...topic");
        const text = (await page.locator("main").textContent())?.replace(/\s+/g, " ") ?? "";
        expect(text).toContain("More thrust");
        expect(text).toContain("1 commit ahead");
        await hasRepoNav(page, "Code");
        await clean(tab, "comparison");
        if (phone) await fitsScreen(page, "comparison");
      });
      let change = "";
      await step(tab, `${name}-open-change`, async () => {
        await page.getByLabel("Title").fill(`More thrust (${name})`);
        await go(page, () => page.getByRole("button", { name: "Open change" }).click());
        change = new URL(page.url()).pathname;
        expect(change).toMatch(/^\/forge\/engine\/changes\/\d+$/);
        await page
          .getByRole("heading", { name: `More thrust (${name})` })
          .first()
          .waitFor();
        await hasRepoNav(page, "Changes");
        await clean(tab, "change");
        if (phone) await fitsScreen(page, "change");
      });
      await step(tab, `${name}-runs`, async () => {
        await go(page, () => page.getByRole("navigation", { name: "Repository" }).getByRole("link", { name: "Runs" }).click());
        expect(new URL(page.url()).pathname).toBe("/forge/engine/runs");
        await hasRepoNav(page, "Runs");
        await reloadUntil(page, "a run", async () => (await page.getByRole("link", { name: "ci.yml" }).count()) > 0);
        await clean(tab, "runs");
        await go(page, () => page.getByRole("link", { name: "ci.yml" }).first().click());
        expect(new URL(page.url()).pathname).toMatch(/^\/forge\/engine\/runs\/[^/]+$/);
        await hasRepoNav(page, "Runs");
        await clean(tab, "run");
        if (phone) await fitsScreen(page, "run");
      });
    } finally {
      await tab.close();
    }
  }, 180_000);
}

/** What the page must not carry: any on* attribute, any javascript:/vbscript: address, any script we did not serve. */
async function inert(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const bad: string[] = [];
    const own = new URL(location.href).origin;
    for (const el of Array.from(document.querySelectorAll("*"))) {
      for (const a of Array.from(el.attributes)) {
        const v = a.value.replace(/[\u0000-\u0020]+/g, "").toLowerCase();
        if (a.name.toLowerCase().startsWith("on")) bad.push(`${el.tagName} ${a.name}=${a.value}`);
        if (/^(javascript|vbscript):/.test(v)) bad.push(`${el.tagName} ${a.name}=${a.value}`);
      }
      if (el.tagName === "SCRIPT") {
        const src = (el as HTMLScriptElement).src;
        if (!src || new URL(src).origin !== own) bad.push(`script ${src || el.textContent}`);
      }
      if (["IFRAME", "OBJECT", "EMBED", "BASE"].includes(el.tagName)) bad.push(`${el.tagName} element`);
      if (el.tagName === "META" && el.getAttribute("http-equiv")) bad.push(`meta http-equiv=${el.getAttribute("http-equiv")}`);
    }
    if ((window as unknown as { __pwned?: unknown }).__pwned !== undefined) bad.push("window.__pwned was set");
    return bad;
  });
}

for (const [name, look] of LOOKS) {
  // Signed in on the desktop (a writer sees more: delete-branch forms, the change form, the feed), signed out on the phone.
  const writer = look.width >= 500;
  test(`${name}, ${writer ? "a writer" : "signed out"}: hostile README, description, file, branch and tag names stay inert on every page`, async () => {
    const tab = await tabFor(look);
    const page = tab.page;
    try {
      if (writer) await signIn(page, EMAIL, PASSWORD);
      // The pages, found the way a visitor finds them (links), not by building addresses by hand.
      const pages: [string, string][] = [];
      await step(tab, `${name}-collect`, async () => {
        await page.goto("/forge/engine/branches");
        const evilTree = await page.locator("a.branch-name", { hasText: EVIL_BRANCH }).getAttribute("href");
        const evilCompare = await page.getByRole("link", { name: `Compare ${EVIL_BRANCH} with main` }).getAttribute("href");
        expect(await page.locator("a.branch-name", { hasText: EVIL_BRANCH2 }).count()).toBe(1);
        await page.goto("/forge/engine");
        const fileHref = await page.getByRole("link", { name: EVIL_FILE, exact: true }).getAttribute("href");
        const file2Href = await page.getByRole("link", { name: EVIL_FILE2, exact: true }).getAttribute("href");
        expect([evilTree, evilCompare, fileHref, file2Href].every((h) => typeof h === "string" && h.startsWith("/forge/engine/"))).toBe(true);
        // The run of the push to the hostile branch (written by background work after the push).
        await page.goto("/forge/engine/runs");
        const evilRun = page.locator("tr", { has: page.getByRole("cell", { name: EVIL_BRANCH, exact: true }) }).getByRole("link", { name: "ci.yml" });
        await reloadUntil(page, "the hostile branch's run", async () => (await evilRun.count()) > 0);
        const runHref = await evilRun.first().getAttribute("href");
        expect(runHref).toMatch(/^\/forge\/engine\/runs\/[^/]+$/);
        // Each page and a piece of the hostile content it must show as text.
        pages.push(
          ["/forge/engine", EVIL_FILE2],
          ["/forge/engine/blob/main/README.md", "More about the engine"],
          [fileHref as string, EVIL_FILE],
          [file2Href as string, EVIL_FILE2],
          [(fileHref as string).replace("/blob/", "/blame/"), EVIL_FILE],
          [(file2Href as string).replace("/blob/", "/blame/"), '# "><svg onload=alert(20)>'],
          [evilTree as string, EVIL_BRANCH],
          [evilCompare as string, `evil/${EVIL_FILE}`],
          ["/forge/engine/branches", EVIL_BRANCH2],
          ["/forge/engine/tags", EVIL_TAG],
          ["/forge/engine/commits/main", "Seed <img src=x onerror=alert(21)>"],
          ["/search?q=engine", "An <b>engine</b> <script>alert(6)</script>"],
          ["/explore", "An <b>engine</b> <script>alert(6)</script>"],
          ["/forge", "An <b>engine</b> <script>alert(6)</script>"],
          ["/forge/engine/runs", EVIL_BRANCH2],
          [runHref as string, EVIL_BRANCH],
          // The home page: the writer's activity feed names the pushed branches.
          ["/", writer ? EVIL_BRANCH : ""],
        );
      });
      for (const [path, shown] of pages) {
        await step(tab, `${name}-${path}`, async () => {
          const r = await page.goto(path);
          expect({ path, status: r?.status() }).toEqual({ path, status: 200 });
          expect({ path, csp: r?.headers()["content-security-policy"] }).toEqual({ path, csp: PAGE_CSP });
          expect({ path, bad: await inert(page) }).toEqual({ path, bad: [] });
          expect({ path, shown: ((await page.locator("main").textContent()) ?? "").includes(shown) }).toEqual({ path, shown: true });
          await clean(tab, `${name} ${path}`);
          if (look.width < 500) await fitsScreen(page, path);
        });
      }
      if (writer)
        await step(tab, `${name}-change-from-hostile-branch`, async () => {
          await page.goto(pages.find(([p]) => p.includes("/compare/"))?.[0] ?? "");
          await go(page, () => page.getByRole("button", { name: "Open change" }).click());
          const change = new URL(page.url()).pathname;
          expect(change).toMatch(/^\/forge\/engine\/changes\/\d+$/);
          for (const path of [change, `${change}/files`]) {
            const r = await page.goto(path);
            expect({ path, csp: r?.headers()["content-security-policy"] }).toEqual({ path, csp: PAGE_CSP });
            expect({ path, bad: await inert(page) }).toEqual({ path, bad: [] });
            expect({ path, shown: ((await page.locator("main").textContent()) ?? "").includes(EVIL_BRANCH) }).toEqual({ path, shown: true });
            await clean(tab, `${name} ${path}`);
          }
        });
      await step(tab, `${name}-content-shown-as-text`, async () => {
        await page.goto("/forge/engine");
        const main = (await page.locator("main").textContent()) ?? "";
        // The description is text; the <details> renders and opens.
        expect(main).toContain("An <b>engine</b>");
        const details = page.locator("details", { hasText: "More about the engine" });
        expect(await details.count()).toBe(1);
        await details.locator("summary").click();
        await page.getByText("It burns fuel.").waitFor({ state: "visible" });
        // The README's own form did not survive as a form (the page's forms are ours).
        expect(await page.locator("form[action='/forge/engine/settings/delete']").count()).toBe(0);
        await page.goto("/forge/engine/tags");
        await page.getByText(EVIL_TAG).first().waitFor();
        expect({ bad: await inert(page) }).toEqual({ bad: [] });
        expect(tab.problems.filter(expected)).toEqual([]);
      });
    } finally {
      await tab.close();
    }
  }, 240_000);
}
