/**
 * Long work written once as a generator that yields at points where it may pause, and run either
 * at once (in a worker thread) or over several turns of the event loop (on the API thread, so
 * that other requests are answered meanwhile).
 */
export type Steps<T> = Generator<void, T>;

export function atOnce<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Runs the steps, giving the event loop a turn whenever about `turnMs` has passed since the last. */
export async function inTurns<T>(steps: Steps<T>, turnMs = 8): Promise<T> {
  let turnStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - turnStart >= turnMs) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      turnStart = performance.now();
    }
  }
}
