// The README's quick start, run as written (issue 18: a newcomer's walk must work end to end):
// the shell block is taken from README.md, pointed at a test server, and run with bash -e in a
// temp HOME. Needs curl and jq (the README says so); skipped with a message when one is missing.
// Issue 24: it leaves nothing in the directory it runs from (the checkout) and changes no global
// git configuration; the password never appears on a command line.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, cleanEnv, startServer, tempDir, type RunningServer } from "../../helpers/server.ts";

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const tools = ["bash", "curl", "jq", "git"].filter((t) => !Bun.which(t));

/** The first ```sh block after `heading`. */
function shellBlock(heading: string): string {
  const from = readme.indexOf(heading);
  expect(from).toBeGreaterThanOrEqual(0);
  const start = readme.indexOf("```sh\n", from) + "```sh\n".length;
  return readme.slice(start, readme.indexOf("```", start));
}

describe("README quick start", () => {
  test("the README says up front what the web interface covers, and uses no cookie jar in the checkout", () => {
    const intro = readme.slice(0, readme.indexOf("## Two commands"));
    expect(intro).toContain("web interface");
    const block = shellBlock("## Quick start");
    expect(block).toContain("mktemp");
    expect(block).not.toMatch(/-c jar\b/);
    expect(block).toContain("jq -er .token");
    // No token in a remote URL: a credential helper holds it.
    expect(block).not.toMatch(/https?:\/\/[^ ]*\$TOKEN@/);
    // A one-shot credential helper given with -c: no global git config change, nothing stored.
    expect(block).toContain('git -c credential.helper="$HELPER" push');
    expect(block).not.toContain("--global");
    expect(block).not.toContain("credential approve");
    // The password reaches user-create on stdin, never as an argument.
    expect(block).toContain("--password-stdin");
    expect(block).not.toMatch(/--password ['"]/);
    // The repositories go to a temp directory.
    expect(block).toMatch(/WORK=\$\(mktemp -d\) && cd "\$WORK"/);
  });

  test("README.md and docs/ link only to files in this repository, and docs/api.md names no file outside it", () => {
    const docs = ["README.md", "docs/api.md", "docs/architecture.md"];
    for (const doc of docs) {
      const text = readFileSync(join(ROOT, doc), "utf8");
      for (const m of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        expect({ doc, target, exists: existsSync(join(ROOT, doc, "..", target)) }).toEqual({ doc, target, exists: true });
      }
    }
    const api = readFileSync(join(ROOT, "docs/api.md"), "utf8");
    expect(api).not.toMatch(/shared\/|SPEC|DECISIONS|\/work\//);
  });

  if (tools.length)
    test(`the walk itself: skipped (${tools.join(", ")} not installed)`, () => void console.warn(`README walk skipped: missing ${tools.join(", ")}`));

  describe.skipIf(tools.length > 0)("run as written against a server", () => {
    let server: RunningServer;
    let home: ReturnType<typeof tempDir>;
    beforeAll(async () => {
      server = await startServer();
      home = tempDir("svc-readme-");
    }, 30_000);
    afterAll(async () => {
      await server?.[Symbol.asyncDispose]();
      home?.[Symbol.dispose]();
    });

    test("every step succeeds: account, token, repository, push and clone through the credential helper", async () => {
      const host = new URL(server.url).host;
      const script = shellBlock("## Quick start")
        .replaceAll("127.0.0.1:8080", host)
        .replaceAll("npx bun src/main.ts", `"${BUN}" "${join(ROOT, "src/main.ts")}"`);
      const work = join(home.path, "checkout");
      const tmp = join(home.path, "tmp");
      mkdirSync(work);
      mkdirSync(tmp);
      const env = {
        ...cleanEnv(),
        SVC_DATA_DIR: server.dataDir,
        SVC_LOG: "warn",
        HOME: home.path,
        XDG_CONFIG_HOME: join(home.path, ".config"),
        XDG_CACHE_HOME: join(home.path, ".cache"),
        TMPDIR: tmp,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_TERMINAL_PROMPT: "0",
        GIT_AUTHOR_NAME: "Ada",
        GIT_AUTHOR_EMAIL: "ada@example.com",
        GIT_COMMITTER_NAME: "Ada",
        GIT_COMMITTER_EMAIL: "ada@example.com",
      };
      for (const k of Object.keys(env))
        if (
          k.startsWith("GIT_") &&
          !(k in { GIT_CONFIG_NOSYSTEM: 1, GIT_TERMINAL_PROMPT: 1, GIT_AUTHOR_NAME: 1, GIT_AUTHOR_EMAIL: 1, GIT_COMMITTER_NAME: 1, GIT_COMMITTER_EMAIL: 1 })
        )
          delete (env as Record<string, string>)[k];
      const p = Bun.spawn(["bash", "-euo", "pipefail", "-c", `${script}\ngit -C widgets-copy log --format=%s`], {
        cwd: work,
        env,
        stdout: "pipe",
        stderr: "pipe",
      });
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      expect({ code, err: code === 0 ? "" : err }).toEqual({ code: 0, err: "" });
      expect(out).toContain('"name":"widgets"');
      expect(out.trimEnd().endsWith("}first")).toBe(true);
      // Nothing left in the directory it ran from; no global git configuration written.
      expect(readdirSync(work)).toEqual([]);
      expect(existsSync(join(home.path, ".gitconfig")) || existsSync(join(home.path, ".config", "git", "config"))).toBe(false);
      // The repositories are in one temp directory, and the token landed in no git config file.
      const [temp] = readdirSync(tmp).filter((n) => existsSync(join(tmp, n, "widgets")));
      expect(temp).toBeString();
      expect(readFileSync(join(tmp, temp!, "widgets", ".git", "config"), "utf8")).not.toContain("svc_");
      expect(readFileSync(join(tmp, temp!, "widgets-copy", ".git", "config"), "utf8")).not.toContain("svc_");
    }, 60_000);
  });
});
