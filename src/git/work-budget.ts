// A bound on the work one call may do, counted in units the engine spends as it goes (an object
// listed, a commit or tree read, a KiB copied, inflated or delta-compressed). The upload service
// tries a fetch on the event loop with a small budget and hands it to a worker thread when the
// budget runs out (services/git/upload.ts), so only small fetches ever run on the event loop.

/** Thrown when a WorkBudget runs out; nothing the call produced has been sent yet. */
export class OverBudget extends Error {
  constructor() {
    super("work budget exhausted");
    this.name = "OverBudget";
  }
}

/** Units left; spend() throws OverBudget once they are gone. */
export class WorkBudget {
  constructor(private left: number) {}

  /** Spend `units`; throws OverBudget when the budget is exhausted. */
  spend(units: number): void {
    this.left -= units;
    if (this.left < 0) throw new OverBudget();
  }

  /** Units not spent yet. */
  get remaining(): number {
    return this.left;
  }
}
