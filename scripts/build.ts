// `bun run build`: compiles the whole product (migrations embedded) into one executable, dist/svc.
import { $ } from "bun";

const root = new URL("..", import.meta.url).pathname;
await $`bun build --compile --minify-whitespace --minify-syntax ${root}src/main.ts --outfile ${root}dist/svc`;
console.log("built dist/svc");
