/**
 * @module app/cleanup — one stack of undo steps for the composition root, run in the reverse order
 * of what they undo (fastify's `onClose` order; the semantics of `AsyncDisposableStack`, which
 * Node 22 lacks): each resource opened at start-up pushes its release, a failed start runs the
 * stack for what was opened so far, and `stop()` runs it for everything. Every step runs even when
 * an earlier one fails; the first failure is thrown once all have run.
 */

interface Step {
  name: string;
  undo: () => unknown;
}

export class CleanupStack {
  #steps: Step[] = [];
  #disposed: Promise<void> | null = null;

  /** Pushes `undo`, run once, after the steps pushed after it. */
  defer(name: string, undo: () => unknown): void {
    if (this.#disposed) throw new Error(`cleanup stack already disposed (deferring ${name})`);
    let ran = false;
    this.#steps.push({
      name,
      undo: () => {
        if (ran) return undefined;
        ran = true;
        return undo();
      },
    });
  }

  /** Runs every step, newest first, once (a second call returns the first's promise). */
  disposeAsync(): Promise<void> {
    this.#disposed ??= this.#run();
    return this.#disposed;
  }

  async #run(): Promise<void> {
    const errors: Array<{ name: string; err: unknown }> = [];
    for (const step of this.#steps.splice(0).reverse()) {
      try {
        await step.undo();
      } catch (err) {
        errors.push({ name: step.name, err });
      }
    }
    const first = errors[0];
    if (first === undefined) return;
    if (errors.length === 1) throw first.err;
    const names = errors.map((e) => e.name).join(', ');
    throw new AggregateError(
      errors.map((e) => e.err),
      `${errors.length} steps of the shutdown failed (${names})`,
    );
  }
}
