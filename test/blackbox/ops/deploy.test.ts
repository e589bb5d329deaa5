// The deployment recipes in deploy/ (issue 18): the systemd unit runs `svc serve` on a data dir,
// restarts on failure but not on a configuration error, and passes `systemd-analyze verify`
// (skipped, saying so, where systemd-analyze is missing); the Dockerfile is linted (no engine
// here to build it): pinned bases, a non-root user, exec-form entrypoint, the build stage named.
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, tempDir } from "../../helpers/server.ts";

const unit = readFileSync(join(ROOT, "deploy/svc.service"), "utf8");
const dockerfile = readFileSync(join(ROOT, "deploy/Dockerfile"), "utf8");

/** `Key=value` lines of one [Section] of a unit file. */
function section(text: string, name: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const head = /^\[(.+)\]$/.exec(line);
    if (head) current = head[1]!;
    else if (current === name) {
      const i = line.indexOf("=");
      out.set(line.slice(0, i), [...(out.get(line.slice(0, i)) ?? []), line.slice(i + 1)]);
    }
  }
  return out;
}

const systemdAnalyze = Bun.which("systemd-analyze");

describe("deploy/svc.service", () => {
  const service = section(unit, "Service");

  test("runs `svc serve` with a data dir, restarting on failure but not on exit 2", () => {
    expect(service.get("ExecStart")).toEqual(["/usr/local/bin/svc serve"]);
    expect(service.get("Environment")).toContain("SVC_DATA_DIR=/var/lib/svc");
    expect(service.get("StateDirectory")).toEqual(["svc"]);
    expect(service.get("Restart")).toEqual(["on-failure"]);
    expect(service.get("RestartPreventExitStatus")).toEqual(["2"]);
    expect(service.get("KillSignal")).toEqual(["SIGTERM"]);
    expect(service.get("User")).toEqual(["svc"]);
    expect(section(unit, "Install").get("WantedBy")).toEqual(["multi-user.target"]);
  });

  test.skipIf(!systemdAnalyze)(
    "passes systemd-analyze verify without a warning",
    async () => {
      // verify also checks that ExecStart's binary exists: point it at one that does.
      using dir = tempDir("svc-unit-");
      const path = join(dir.path, "svc.service");
      writeFileSync(path, unit.replace("ExecStart=/usr/local/bin/svc", `ExecStart=${process.execPath}`));
      const p = Bun.spawn([systemdAnalyze!, "verify", "--man=no", path], { stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      expect({ code, out: out.trim(), err: err.trim() }).toEqual({ code: 0, out: "", err: "" });
    },
    30_000,
  );

  if (!systemdAnalyze)
    test("systemd-analyze verify: skipped (systemd-analyze is not installed here)", () =>
      void console.warn("deploy/svc.service: systemd-analyze not found; unit checked by its keys only"));
});

/** Dockerfile instructions with their arguments (continuations joined, comments dropped). */
function instructions(text: string): { op: string; args: string }[] {
  const out: { op: string; args: string }[] = [];
  let pending = "";
  for (const raw of text.split("\n")) {
    if (/^\s*#/.test(raw) && !pending) continue;
    const line = raw.replace(/\s+$/, "");
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = "";
    if (!full) continue;
    const [op, ...rest] = full.split(/\s+/);
    out.push({ op: op!.toUpperCase(), args: rest.join(" ") });
  }
  expect(pending).toBe("");
  return out;
}

describe("deploy/Dockerfile (linted: no container engine here)", () => {
  const ins = instructions(dockerfile);
  const KNOWN = new Set([
    "FROM",
    "RUN",
    "CMD",
    "LABEL",
    "EXPOSE",
    "ENV",
    "ADD",
    "COPY",
    "ENTRYPOINT",
    "VOLUME",
    "USER",
    "WORKDIR",
    "ARG",
    "ONBUILD",
    "STOPSIGNAL",
    "HEALTHCHECK",
    "SHELL",
  ]);

  test("only known instructions", () => {
    expect(ins.filter((i) => !KNOWN.has(i.op)).map((i) => i.op)).toEqual([]);
  });

  test("base images are pinned to a tag (never latest); the build stage is named and used", () => {
    const froms = ins.filter((i) => i.op === "FROM").map((i) => i.args);
    expect(froms.length).toBe(2);
    for (const f of froms) expect(f.split(" ")[0]).toMatch(/^[a-z0-9./-]+:[A-Za-z0-9._-]+$/);
    for (const f of froms) expect(f).not.toMatch(/:latest\b/);
    expect(froms[0]).toMatch(/ AS build$/i);
    const copies = ins.filter((i) => i.op === "COPY" && i.args.startsWith("--from="));
    expect(copies.map((c) => c.args)).toEqual(["--from=build /src/dist/svc /usr/local/bin/svc"]);
  });

  test("the image runs `svc serve` as a non-root user, exec form, with the data dir as a volume", () => {
    const last = ins.slice(ins.findLastIndex((i) => i.op === "FROM"));
    const user = last.filter((i) => i.op === "USER").map((i) => i.args);
    expect(user).toEqual(["svc"]);
    expect(JSON.parse(last.find((i) => i.op === "ENTRYPOINT")!.args)).toEqual(["/usr/local/bin/svc"]);
    expect(JSON.parse(last.find((i) => i.op === "CMD")!.args)).toEqual(["serve"]);
    expect(last.find((i) => i.op === "ENV")!.args).toContain("SVC_DATA_DIR=/var/lib/svc");
    expect(last.find((i) => i.op === "ENV")!.args).toContain("SVC_HTTP_ADDR=0.0.0.0:8080");
    expect(JSON.parse(last.find((i) => i.op === "VOLUME")!.args)).toEqual(["/var/lib/svc"]);
    expect(last.find((i) => i.op === "STOPSIGNAL")!.args).toBe("SIGTERM");
  });

  test("apt without recommends and without its lists; nothing fetched by ADD", () => {
    for (const r of ins.filter((i) => i.op === "RUN" && i.args.includes("apt-get install"))) {
      expect(r.args).toContain("--no-install-recommends");
      expect(r.args).toContain("rm -rf /var/lib/apt/lists/*");
      expect(r.args).toContain("apt-get update");
    }
    expect(ins.filter((i) => i.op === "ADD")).toEqual([]);
  });

  test("the build installs through install.sh and compiles with the project's build script", () => {
    const runs = ins.filter((i) => i.op === "RUN").map((i) => i.args);
    expect(runs).toContain("sh install.sh");
    expect(runs.some((r) => r.startsWith("./node_modules/.bin/bun run build"))).toBe(true);
    const ignore = readFileSync(join(ROOT, "deploy/Dockerfile.dockerignore"), "utf8").split("\n");
    for (const p of ["node_modules", "dist", "data", ".git"]) expect(ignore).toContain(p);
  });
});
