// git smart HTTP against the local-folder (fs) object store: the shared scenarios.
import { gitScenarios } from "./git-scenarios.ts";

gitScenarios("the fs backend", async () => ({ env: {}, stop: async () => {} }));
