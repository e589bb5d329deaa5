// The entry point: `bun src/main.ts <command>` behaves exactly like the compiled `svc` binary.
import { runCli } from "../cli/index.ts";

await runCli(process.argv.slice(2));
