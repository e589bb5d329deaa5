// Wakes the lander the moment a change is queued (the composition root installs the wake-up).
let wake: (() => void) | null = null;

/** Installs (or clears) the lander's wake-up. */
export function onLandQueued(fn: (() => void) | null): void {
  wake = fn;
}

/** Wakes the lander; call after the land request's transaction committed. */
export function pokeLander(): void {
  wake?.();
}
