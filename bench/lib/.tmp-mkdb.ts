import { startSvc, bootstrap } from "./svc.ts";
const s = await startSvc("/tmp/benchdb", { SVC_LOG: "warn" });
await bootstrap(s, { org: "bench", repo: "widgets" });
await s.stop();
