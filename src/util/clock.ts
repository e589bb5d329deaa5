// The service clock: every timestamp comes from `now()`, which tests replace instead of sleeping.

let clock: () => number = Date.now;

/** Milliseconds since the epoch: every timestamp in the service. */
export const now = () => clock();

/** Replaces the service clock (tests move time forward instead of sleeping); returns the restorer. */
export function setClock(fn: () => number): () => void {
  const previous = clock;
  clock = fn;
  return () => {
    clock = previous;
  };
}
