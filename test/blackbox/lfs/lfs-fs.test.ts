// Git LFS on the fs backend: real `git lfs` push and clone over HTTP, svc serving the bytes.
import { lfsScenarios } from "./lfs-scenarios.ts";

lfsScenarios("fs", async () => ({ env: {}, stop: async () => {} }));
