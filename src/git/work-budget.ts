// A bound on the work one call may do, counted in units the engine spends as it goes (an object
// listed, a commit or tree read, a KiB copied, inflated or delta-compressed), and in time. The upload service
// tries a fetch on the event loop with a small budget and hands it to a worker thread when the
// budget runs out (services/git/upload.ts), so only small fetches ever run on the event loop.

/** Thrown when a WorkBudget runs out; nothing the call produced has been sent yet. */
export class OverBudget extends Error {
  constructor() {
    super("work budget exhausted");
    this.name = "OverBudget";
  }
}

/**
 * Units left and a deadline; spend() throws OverBudget once either is gone. The units bound the
 * work however the clock runs; the deadline catches work the units underrate (a tree read can
 * cost anything from microseconds to a hundred, by the length of its delta chain).
 */
export class WorkBudget {
  private readonly deadline: number;

  constructor(
    private left: number,
    ms = Number.POSITIVE_INFINITY,
  ) {
    this.deadline = performance.now() + ms;
  }

  /** Spend `units`; throws OverBudget when the budget is exhausted or the time is up. */
  spend(units: number): void {
    this.left -= units;
    if (this.left < 0 || performance.now() > this.deadline) throw new OverBudget();
  }

  /** Units not spent yet. */
  get remaining(): number {
    return this.left;
  }
}
