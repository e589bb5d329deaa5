// The run page's job graph, as columns: a job's column is its topological level, one past the
// deepest of the jobs it needs (jobs needing nothing are in the first). Pure: jobs in, columns out.
// A need naming no job of the run is left out (a run of an older release, or a job the
// planner did not create); a cycle, which the workflow parser refuses, cannot loop here: the need
// that closes it counts as absent. O(jobs + needs); a run has at most 256 jobs.

/** What the graph reads of a job: its workflow job id (shared by a matrix's cells) and what it needs. */
export interface GraphJob {
  /** The workflow job id (`build`), what `needs` names. */
  name: string;
  needs: readonly string[];
}

/** The jobs in columns by level, each column in the jobs' own order; `levelOf` by workflow job id. */
export interface JobColumns<J> {
  columns: J[][];
  levelOf: ReadonlyMap<string, number>;
}

/** Each job's topological level and the columns they make. */
export function jobColumns<J extends GraphJob>(jobs: readonly J[]): JobColumns<J> {
  const needsOf = new Map<string, Set<string>>();
  for (const j of jobs) {
    let set = needsOf.get(j.name);
    if (!set) needsOf.set(j.name, (set = new Set()));
    for (const n of j.needs) set.add(n);
  }
  const level = new Map<string, number>();
  const onPath = new Set<string>();
  // Iterative depth-first walk (no recursion: depth is bounded by the jobs, not the stack).
  for (const start of needsOf.keys()) {
    if (level.has(start)) continue;
    const stack: { name: string; todo: string[] }[] = [{ name: start, todo: [...needsOf.get(start)!] }];
    onPath.add(start);
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const next = top.todo.pop();
      if (next === undefined) {
        let deepest = -1;
        for (const n of needsOf.get(top.name)!) {
          // A need still on the path (the edge closing a cycle) or naming no job has no level yet: absent.
          const l = level.get(n);
          if (l !== undefined) deepest = Math.max(deepest, l);
        }
        level.set(top.name, deepest + 1);
        onPath.delete(top.name);
        stack.pop();
        continue;
      }
      if (!needsOf.has(next) || level.has(next) || onPath.has(next)) continue;
      onPath.add(next);
      stack.push({ name: next, todo: [...needsOf.get(next)!] });
    }
  }
  const columns: J[][] = [];
  for (const j of jobs) {
    const l = level.get(j.name) ?? 0;
    while (columns.length <= l) columns.push([]);
    columns[l]!.push(j);
  }
  return { columns, levelOf: level };
}
