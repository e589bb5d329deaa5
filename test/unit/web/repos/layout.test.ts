// The repository layout's markup (issue 33), drawn from RepoChrome alone: the nav's tabs (no
// Changes on a mirror, Settings for admins), the fork and mirror banners and what they say in each
// state, Sync now only where the API's rule allows it, the Watch state, a fork being made, and the
// switcher's links; every value escaped.
import { describe, expect, test } from "bun:test";
import type { RepoBody } from "../../../../src/services/repos/repos.ts";
import type { RepoChrome, RepoFrame } from "../../../../src/services/web/views.ts";
import { chromeKey, refSwitcher, repoTop } from "../../../../src/http/web/repos/repo-layout.ts";
import { emptyRepo } from "../../../../src/http/web/repos/tree-page.ts";
import type { Frame } from "../../../../src/http/web/kit/layout.ts";

const BASE: RepoBody = {
  id: "r1",
  org_id: "o1",
  org: "acme",
  name: "app",
  kind: "native",
  public: true,
  default_branch: "main",
  origin_url: null,
  origin_provider: null,
  origin_installation: null,
  last_sync_at: null,
  last_synced_commit: null,
  sync_error: null,
  created_at: 0,
  clone_url: "http://svc.test/acme/app.git",
  ssh_clone_url: null,
  description: null,
  homepage: null,
  fork_count: 0,
  watcher_count: 0,
  fork_parent: null,
  viewer_admin: false,
  viewer_write: false,
  write_blocked: null,
};
const repo = (over: Partial<RepoBody> = {}): RepoBody => ({ ...BASE, ...over });
const signedIn: Frame = { viewer: { id: "u1", handle: "ada", name: "Ada", avatar: null }, csrf: "tok" };
const anonymous: Frame = { viewer: null, csrf: null };
const text = (h: { value: string }) =>
  h.value
    .replace(/<[^>]+>/g, "")
    .replace(/\s+/g, " ")
    .trim();
const tabs = (h: { value: string }) => /<nav class="tabs repo-tabs" aria-label="Repository">(.*?)<\/nav>/s.exec(h.value)![1]!;

describe("repoTop", () => {
  test("the nav: Changes except on a mirror, Settings for admins, the current tab marked, the open count", () => {
    const c: RepoChrome = { repo: repo({ viewer_admin: true }), openIssues: 1234 };
    const top = repoTop(signedIn, c, "issues");
    expect(text({ value: tabs(top) })).toBe("Code Issues 1.2k open Changes Runs Settings");
    expect(tabs(top)).toMatch(/href="\/acme\/app\/issues" aria-current="page">/);
    const mirror = repoTop(signedIn, { repo: repo({ kind: "mirror", viewer_admin: false }) }, "code");
    expect(text({ value: tabs(mirror) })).toBe("Code Issues Runs");
  });

  test("Watch: a form with the state for a signed-in viewer, a sign-in link for anyone else", () => {
    const off = repoTop(signedIn, { repo: repo({ watcher_count: 2 }), watching: null }, "code").value;
    expect(off).toContain('action="/acme/app/watch"');
    expect(off).toContain('name="watch" value="1"');
    expect(off).toContain('name="csrf" value="tok"');
    const on = repoTop(signedIn, { repo: repo({ watcher_count: 3 }), watching: "all" }, "code");
    expect(text(on)).toContain("Unwatch 3 watchers");
    const anon = repoTop(anonymous, { repo: repo({ watcher_count: 1, fork_count: 1 }) }, "code");
    expect(anon.value).not.toContain("<form");
    expect(anon.value).toContain('href="/login?next=%2Facme%2Fapp"');
    expect(text(anon)).toContain("Watch 1 watcher");
    expect(text(anon)).toContain("Fork 1 fork");
  });

  test("the fork banner: the parent linked when visible, unnamed otherwise, pending and failed said", () => {
    expect(repoTop(signedIn, { repo: repo({ fork_state: "ready", fork_parent: "up/lib" }) }, "code").value).toContain(
      'forked from <a href="/up/lib">up/lib</a>.',
    );
    const hidden = repoTop(signedIn, { repo: repo({ fork_state: "ready", fork_parent: null }) }, "code");
    expect(text(hidden)).toContain("forked from a repository you cannot see");
    expect(text(repoTop(signedIn, { repo: repo({ fork_state: "pending", fork_parent: "up/lib" }) }, "code"))).toContain("still being made");
    expect(repoTop(signedIn, { repo: repo({ fork_state: "failed", fork_parent: "up/lib" }) }, "code").value).toMatch(/role="alert">Making this fork failed/);
    expect(repoTop(signedIn, { repo: repo() }, "code").value).not.toContain("fork-banner");
  });

  test("the mirror banner: origin, last sync, the error escaped in an alert, Sync now only when allowed", () => {
    const r = repo({ kind: "mirror", origin_url: "https://git.example/up/lib.git", last_sync_at: 0, sync_error: "<b>refused</b>" });
    const top = repoTop(signedIn, { repo: r, canSync: true }, "code").value;
    expect(top).toContain('<a class="path" href="https://git.example/up/lib.git" rel="nofollow noreferrer">');
    expect(top).toContain('<time datetime="1970-01-01T00:00:00.000Z">1970-01-01 00:00 UTC</time>');
    expect(top).toContain("Last sync failed: &lt;b&gt;refused&lt;/b&gt;</span>");
    expect(top).toContain('action="/acme/app/sync"');
    expect(repoTop(signedIn, { repo: r, canSync: false }, "code").value).not.toContain('action="/acme/app/sync"');
    expect(repoTop(anonymous, { repo: r, canSync: true }, "code").value).not.toContain('action="/acme/app/sync"');
    // An app mirror's origin is owner/name: text, not a link.
    const app = repoTop(signedIn, { repo: repo({ kind: "mirror", origin_url: "up/lib", origin_provider: "app", last_sync_at: null }) }, "code").value;
    expect(app).toContain('<span class="path">up/lib</span> · not synced yet');
  });

  test("a hostile name, description and homepage stay text", () => {
    const evil = repo({ description: `<script>alert(1)</script>`, homepage: `https://x.example/"><script>` });
    const top = repoTop(signedIn, { repo: evil }, "code").value;
    expect(top).not.toContain("<script>");
    expect(top).toContain('href="https://x.example/&quot;&gt;&lt;script&gt;"');
  });

  test("chromeKey changes with what the layout shows", () => {
    const c: RepoChrome = { repo: repo(), openIssues: 1, watching: null };
    expect(chromeKey(c)).toBe(chromeKey({ ...c }));
    expect(chromeKey({ ...c, watching: "all" })).not.toBe(chromeKey(c));
    expect(chromeKey({ ...c, openIssues: 2 })).not.toBe(chromeKey(c));
    expect(chromeKey({ ...c, repo: repo({ watcher_count: 9 }) })).not.toBe(chromeKey(c));
  });
});

describe("the switcher", () => {
  const f: RepoFrame = {
    repo: repo(),
    choices: [
      { kind: "branch", name: "main" },
      { kind: "branch", name: "feature/x" },
      { kind: "tag", name: "v1" },
    ],
    ref: { short: "feature/x", full: "refs/heads/feature/x" },
    path: "src/a.ts",
  };
  test("each ref links to the same view; branches, tags, history and archives of the shown ref", () => {
    const blame = refSwitcher(f, "blame").value;
    expect(blame).toContain('href="/acme/app/blame/main/src/a.ts"');
    expect(blame).toContain('href="/acme/app/blame/feature/x/src/a.ts" aria-current="true"');
    expect(refSwitcher(f, "blob").value).toContain('href="/acme/app/tree/v1"');
    expect(refSwitcher(f, "commits").value).toContain('href="/acme/app/commits/v1/src/a.ts"');
    expect(blame).toContain('href="/acme/app/archive/feature/x.zip"');
    expect(blame).toContain('href="/acme/app/archive/feature/x.tar.gz"');
    expect(text({ value: blame })).toContain("2 branches");
    expect(text({ value: blame })).toContain("1 tag");
    expect(blame).toContain('href="/acme/app/branches"');
    expect(blame).toContain('href="/acme/app/tags"');
  });
});

describe("the empty repository", () => {
  test("says a token is git's password, links to tokens and keys, shows both remotes", () => {
    const r = repo({ clone_url: "http://svc.test/acme/app.git", ssh_clone_url: "ssh://git@svc.test/acme/app.git", viewer_write: true });
    const page = text(emptyRepo(signedIn, r));
    expect(page).toContain("token as the password");
    expect(page).toContain("git remote add origin http://svc.test/acme/app.git");
    expect(page).toContain("git remote add origin ssh://git@svc.test/acme/app.git");
    const markup = emptyRepo(signedIn, r).value;
    expect(markup).toContain('href="/settings/tokens"');
    expect(markup).toContain('href="/settings/keys"');
  });

  test("a mirror takes no pushes; a fork being made says so", () => {
    expect(text(emptyRepo(signedIn, repo({ kind: "mirror", last_sync_at: null })))).toContain("A mirror takes no pushes");
    expect(text(emptyRepo(signedIn, repo({ fork_state: "pending" })))).toContain("This fork is being made");
    expect(text(emptyRepo(signedIn, repo({ fork_state: "failed" })))).toContain("This fork could not be made");
  });
});
