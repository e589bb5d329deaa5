// `bun run build`: compiles the whole product (migrations embedded) into one executable, dist/svc.
import { $ } from "bun";

const root = new URL("..", import.meta.url).pathname;
// Thread modules are extra entry points (the highlighting thread, the pool of src/threads.ts): a Worker's file is bundled only when
// it is named here (src/http/web/repos/highlight.ts finds it under the same path).
await $`bun build --compile --minify-whitespace --minify-syntax ${root}src/main.ts ${root}src/http/web/repos/highlight-worker.ts ${root}src/thread-main.ts --outfile ${root}dist/svc`;
console.log("built dist/svc");
