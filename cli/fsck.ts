// `svc fsck [--repo org/name]`: integrity of the stored repositories (services/ops/fsck.ts).
// One line per repository on stdout, orphans after them, a summary on stderr; exit 1 when any
// repository has a problem (orphans alone are reported, not failures).
import { defineCommand } from "citty";
import { openContext } from "../src/runtime.ts";
import { checkRepo, findOrphans, reposToCheck } from "../src/services/ops/fsck.ts";
import { configOrExit } from "./config.ts";
import { Progress, formatBytes, paint } from "./tty.ts";

/** `svc fsck`. */
export const fsckCmd = defineCommand({
  meta: {
    name: "fsck",
    description:
      "Check every live pack and idx (present, recorded size, checksum), that every ref's history is complete and that every CI job log is whole; report orphan files; exit 1 on any problem",
  },
  args: {
    repo: { type: "string", description: "Only this repository (org/name)" },
    "data-dir": { type: "string", description: "Data directory (overrides SVC_DATA_DIR)" },
  },
  async run({ args }) {
    const config = configOrExit({ SVC_DATA_DIR: args["data-dir"] });
    const ctx = await openContext(config);
    const out = paint(process.stdout);
    const err = paint(process.stderr);
    const bar = new Progress("fsck");
    let broken = 0;
    try {
      const repos = await reposToCheck(ctx, args.repo);
      if (args.repo !== undefined && repos.length === 0) {
        process.stderr.write(`${err.red("svc:")} no repository ${args.repo}\n`);
        process.exitCode = 1;
        return;
      }
      for (const [i, repo] of repos.entries()) {
        bar.update(i, repos.length, repo.name, true);
        const r = await checkRepo(ctx, repo, (note) => bar.update(i, repos.length, `${repo.name}: ${note}`));
        bar.clear();
        const lfs = r.lfs ? `, ${r.lfs} LFS object${r.lfs === 1 ? "" : "s"} (${formatBytes(r.lfsBytes)})` : "";
        const counts = `${r.packs} packs, ${r.objects} objects, ${r.refs} refs${r.logs ? `, ${r.logs} job log${r.logs === 1 ? "" : "s"} (${formatBytes(r.logBytes)})` : ""}${lfs}`;
        if (r.problems.length === 0) process.stdout.write(`${r.repo}: ${out.green("ok")} (${counts})\n`);
        else {
          broken++;
          process.stdout.write(`${r.repo}: ${out.red(`${r.problems.length} problem${r.problems.length === 1 ? "" : "s"}`)} (${counts})\n`);
          for (const p of r.problems) process.stdout.write(`  ${p}\n`);
        }
      }
      bar.update(repos.length, repos.length, "orphans", true);
      const orphans = await findOrphans(ctx, repos.length === 1 && args.repo !== undefined ? repos[0]!.id : undefined);
      bar.clear();
      for (const o of orphans) process.stdout.write(`orphan ${o.key} (${formatBytes(o.size)}): ${o.reason}\n`);
      const summary = `fsck: ${repos.length} repositor${repos.length === 1 ? "y" : "ies"} checked, ${broken} with problems, ${orphans.length} orphan file${orphans.length === 1 ? "" : "s"}`;
      process.stderr.write(`${broken ? err.red(summary) : summary}\n`);
      if (broken) process.exitCode = 1;
    } finally {
      bar.clear();
      ctx.close();
    }
    // Explicitly: an S3 client's keep-alive sockets must not hold the process open.
    process.exit(process.exitCode ?? 0);
  },
});
