// README Markdown in real Chromium (issue 33): GitHub-flavoured inline HTML (details, picture,
// img width), task lists, highlighted code and a table of contents whose links scroll to their
// headings without JavaScript; a hostile README runs no script, opens no dialog and breaks no CSP
// rule. Both pages axe-clean in light and dark, and at phone width.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { accessibilityViolations, launchBrowser, openTab, step, type Tab } from "../helpers/browser.ts";
import { commitFiles, createRepo, gitSandbox, initRepo, repoUrl, setupOwner, type GitSandbox } from "../helpers/git.ts";
import { startServer, type RunningServer } from "../helpers/server.ts";
import { DEEP, HOSTILE } from "../fixtures/markdown/hostile.ts";

let server: RunningServer;
let browser: Browser;
let g: GitSandbox;

/** A 2×2 PNG (red), small enough to inline. */
const PNG = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8DAwMDAxMDAAAAjDAMB8yq4LwAAAABJRU5ErkJggg=="), (c) =>
  c.charCodeAt(0),
);

const FILLER = Array.from({ length: 60 }, (_, i) => `Paragraph ${i + 1} of filler, so the page is taller than the window.`).join("\n\n");

const README = `# Docs Demo

## Contents

- [Install](#install)
- [Usage notes](#usage-notes)
- [Install again](#install-1)

<details>
<summary>Screenshots</summary>

Hidden **until opened**.

</details>

<picture>
<source srcset="img/dark.png" media="(prefers-color-scheme: dark)">
<img src="img/light.png" alt="The logo" width="120" height="60">
</picture>

- [ ] write the docs
- [x] ship the code

| Flag | Meaning |
|:-----|--------:|
| \`-v\` | verbose |

Press <kbd>Ctrl</kbd>+<kbd>C</kbd>; H<sub>2</sub>O; ~~old~~.

${FILLER}

## Install

\`\`\`ts
const answer: number = 42; // the answer
\`\`\`

\`\`\`ruby
def greet(name) = puts("hi #{name}")
\`\`\`

${FILLER}

## Usage notes

Use it.

## Install

Twice.
`;

const EVIL = `# Hostile

${Object.values(HOSTILE).join("\n\n")}

${DEEP["10k nested details"]}

${DEEP["10k nested blockquotes"]}
`;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  g = gitSandbox("svc-md-");
  const owner = await setupOwner(server, "mdorg");
  await createRepo(server, owner, "docs", true);
  await createRepo(server, owner, "evil", true);
  const docs = await initRepo(g, "docs");
  await commitFiles(g, docs, { "README.md": README, "img/light.png": PNG, "img/dark.png": PNG }, "docs");
  await g.ok(["push", "-q", repoUrl(server, "mdorg", "docs", owner.token), "HEAD:main"], { cwd: docs });
  const evil = await initRepo(g, "evil");
  await commitFiles(g, evil, { "README.md": EVIL }, "evil");
  await g.ok(["push", "-q", repoUrl(server, "mdorg", "evil", owner.token), "HEAD:main"], { cwd: evil });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  g?.[Symbol.dispose]();
}, 30_000);

/** Whether the element is within the window (scrolled to). */
async function inView(tab: Tab, id: string): Promise<boolean> {
  return tab.page.evaluate((id) => {
    const r = document.getElementById(id)?.getBoundingClientRect();
    return !!r && r.top >= 0 && r.top < window.innerHeight;
  }, id);
}

for (const scheme of ["light", "dark"] as const)
  for (const width of [1280, 390])
    test(`a README with inline HTML, task list, code and a table of contents (${scheme}, ${width} px)`, async () => {
      const tab = await openTab(browser, server.url, { colorScheme: scheme, width });
      try {
        await step(tab, `md-readme-${scheme}-${width}`, async () => {
          await tab.page.goto("/mdorg/docs");
          const md = tab.page.locator(".markdown");
          await md.getByRole("heading", { name: "Docs Demo" }).waitFor();
          // Inline HTML renders as elements, not text.
          expect(await md.locator("details > summary", { hasText: "Screenshots" }).count()).toBe(1);
          expect(await md.getByText("until opened").isVisible()).toBe(false);
          await md.locator("details > summary").click();
          expect(await md.getByText("until opened").isVisible()).toBe(true);
          const img = md.getByRole("img", { name: "The logo" });
          expect(await img.getAttribute("width")).toBe("120");
          expect(await img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth > 0)).toBe(true);
          expect(await md.locator("picture source").getAttribute("srcset")).toBe("/mdorg/docs/raw/main/img/dark.png");
          expect((await md.locator("kbd").allTextContents()).join("+")).toBe("Ctrl+C");
          // Task list: disabled checkboxes named by their item.
          const todo = md.getByRole("checkbox", { name: "write the docs" });
          const done = md.getByRole("checkbox", { name: "ship the code" });
          expect([await todo.isChecked(), await done.isChecked(), await todo.isDisabled(), await done.isDisabled()]).toEqual([false, true, true, true]);
          // Highlighted fences: speed-highlight (TypeScript) and highlight.js (Ruby).
          expect(await md.locator("code.language-ts span.k").first().textContent()).toBe("const");
          expect(await md.locator("code.language-ruby span.k").first().textContent()).toBe("def");
          expect(await md.locator("th[align=left]").count()).toBe(1);
          // Each heading has an id under user-content- and a permalink named for it.
          expect(await md.getByRole("link", { name: "Permalink: Usage notes" }).getAttribute("href")).toBe("#user-content-usage-notes");
          expect(await accessibilityViolations(tab.page)).toEqual([]);
        });
        await step(tab, `md-toc-${scheme}-${width}`, async () => {
          expect(await inView(tab, "user-content-usage-notes")).toBe(false);
          await tab.page.getByRole("link", { name: "Usage notes", exact: true }).click();
          await tab.page.waitForURL((u) => u.hash === "#user-content-usage-notes");
          expect(await inView(tab, "user-content-usage-notes")).toBe(true);
          await tab.page.getByRole("link", { name: "Install again" }).click();
          await tab.page.waitForURL((u) => u.hash === "#user-content-install-1");
          expect(await inView(tab, "user-content-install-1")).toBe(true);
        });
        expect(tab.problems).toEqual([]);
      } finally {
        await tab.close();
      }
    }, 90_000);

for (const scheme of ["light", "dark"] as const)
  test(`a hostile README stays inert: no script, no dialog, no CSP violation (${scheme})`, async () => {
    for (const width of [1280, 390]) {
      const tab = await openTab(browser, server.url, { colorScheme: scheme, width });
      const dialogs: string[] = [];
      tab.page.on("dialog", (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      try {
        await step(tab, `md-hostile-${scheme}-${width}`, async () => {
          await tab.page.goto("/mdorg/evil");
          await tab.page.locator(".markdown").getByRole("heading", { name: "Hostile" }).waitFor();
          // Let every image try to load (their onerror would fire now) and the details be opened.
          await tab.page.waitForLoadState("load");
          for (const s of await tab.page
            .locator(".markdown summary")
            .all()
            .then((all) => all.slice(0, 5)))
            await s.click();
          expect(await tab.page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
          expect(
            await tab.page
              .locator(".markdown script, .markdown style, .markdown iframe, .markdown form, .markdown svg, .markdown object, .markdown embed")
              .count(),
          ).toBe(0);
          expect(await tab.page.locator("base, meta[http-equiv]").count()).toBe(0);
          expect(await tab.page.locator(".markdown [href^='javascript' i], .markdown [src^='javascript' i], .markdown [src^='data' i]").count()).toBe(0);
          expect(await tab.page.locator(".markdown #main, .markdown [name=main]").count()).toBe(0);
          // Why nested-interactive is left out: the corpus's unclosed tags put a link inside a
          // <summary>, the author's own markup (kept as written, like GitHub); all else must pass.
          expect((await accessibilityViolations(tab.page)).filter((v) => !v.startsWith("nested-interactive "))).toEqual([]);
        });
        expect(dialogs).toEqual([]);
        // Images the hostile README names do not exist in the repository: their 404s are expected.
        expect(tab.problems.filter((p) => !/^404 .*\/mdorg\/evil\/raw\/main\//.test(p))).toEqual([]);
      } finally {
        await tab.close();
      }
    }
  }, 120_000);
