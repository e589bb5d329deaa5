// The `needs` graph of a workflow's jobs (issue 29): unknown jobs and cycles are errors naming
// the entry that causes them; the order is Kahn's algorithm, O(jobs + edges). Pure.

/** One job's id and what it needs, each with an opaque position the caller turns into line:col. */
export interface NeedsOf<P> {
  id: string;
  /** Position of the job's `needs` (or the job) for a cycle error. */
  at: P;
  needs: { id: string; at: P }[];
}

/** Why the graph is refused: the message and the position it names. */
export type GraphProblem<P> = { at: P; message: string };

/** Checks the graph; answers the jobs in a dependency order (needs first), or the first problem. */
export function orderJobs<P>(jobs: NeedsOf<P>[]): { ok: true; order: string[] } | ({ ok: false } & GraphProblem<P>) {
  const index = new Map<string, number>();
  for (let i = 0; i < jobs.length; i++) index.set(jobs[i]!.id, i);
  const indegree = new Array<number>(jobs.length).fill(0);
  const dependents: number[][] = jobs.map(() => []);
  for (let i = 0; i < jobs.length; i++) {
    const seen = new Set<string>();
    for (const n of jobs[i]!.needs) {
      const to = index.get(n.id);
      if (to === undefined) return { ok: false, at: n.at, message: `jobs.${jobs[i]!.id}.needs names unknown job ${JSON.stringify(n.id)}` };
      if (to === i) return { ok: false, at: n.at, message: `jobs.${jobs[i]!.id} needs itself` };
      if (seen.has(n.id)) continue;
      seen.add(n.id);
      indegree[i]!++;
      dependents[to]!.push(i);
    }
  }
  const queue: number[] = [];
  for (let i = 0; i < jobs.length; i++) if (indegree[i] === 0) queue.push(i);
  const order: string[] = [];
  for (let h = 0; h < queue.length; h++) {
    const i = queue[h]!;
    order.push(jobs[i]!.id);
    for (const d of dependents[i]!) if (--indegree[d]! === 0) queue.push(d);
  }
  if (order.length === jobs.length) return { ok: true, order };
  // A cycle: walk needs from the first job left (in file order) until a job repeats.
  const left = (i: number) => indegree[i]! > 0;
  let i = jobs.findIndex((_, k) => left(k));
  const path: number[] = [];
  const onPath = new Map<number, number>();
  while (!onPath.has(i)) {
    onPath.set(i, path.length);
    path.push(i);
    const next = jobs[i]!.needs.map((n) => index.get(n.id)!).find((k) => left(k));
    i = next!;
  }
  const cycle = path.slice(onPath.get(i)!);
  // Name the cycle from its first job in file order.
  const first = cycle.reduce((a, b) => (a < b ? a : b));
  const start = cycle.indexOf(first);
  const ordered = [...cycle.slice(start), ...cycle.slice(0, start)];
  const names = [...ordered, ordered[0]!].map((k) => jobs[k]!.id);
  return { ok: false, at: jobs[first]!.at, message: `jobs ${names.join(" → ")} form a cycle` };
}
