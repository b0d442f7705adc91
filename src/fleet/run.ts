/** A run across environments: each environment's work at most `parallel` at a time, each on its own (a
 *  failure is that environment's outcome, never the run's), the outcomes in the order the environments
 *  were given, each handed on as soon as it and every one before it are done. Knows nothing of what the
 *  work is: plan, drift and test --live each give theirs (src/cli/fleet.ts opens each environment's
 *  sign-in and client). No state is shared between environments here: each work gets its name alone. */

export interface FleetObserver<T> {
  /** An environment's work started (the progress line names the environments in flight). */
  started?(name: string): void;
  /** An environment's work ended, in the order they end. */
  finished?(name: string, outcome: T): void;
  /** An environment's outcome, in the order the environments were given: as soon as it and every one
   *  before it are done (a text report streams in a stable order). */
  inOrder?(outcome: T, index: number): void;
}

export interface FleetOptions<T> {
  /** Environments whose work runs at once (at least 1). */
  parallel: number;
  /** One environment's work; what it throws becomes `failed(name, error)`. */
  work: (name: string) => Promise<T>;
  failed: (name: string, error: unknown) => T;
  observer?: FleetObserver<T>;
}

/** Every environment's outcome, in the order of `names`. */
export async function runFleet<T>(names: readonly string[], opts: FleetOptions<T>): Promise<T[]> {
  const outcomes = new Array<T>(names.length);
  const done = new Array<boolean>(names.length).fill(false);
  let next = 0;
  let emitted = 0;
  const one = async (i: number): Promise<void> => {
    const name = names[i] as string;
    opts.observer?.started?.(name);
    let outcome: T;
    try {
      outcome = await opts.work(name);
    } catch (e) {
      outcome = opts.failed(name, e);
    }
    outcomes[i] = outcome;
    done[i] = true;
    opts.observer?.finished?.(name, outcome);
    while (emitted < names.length && done[emitted]) {
      opts.observer?.inOrder?.(outcomes[emitted] as T, emitted);
      emitted++;
    }
  };
  const worker = async (): Promise<void> => {
    while (next < names.length) await one(next++);
  };
  const width = Math.max(1, Math.min(Math.floor(opts.parallel), names.length));
  await Promise.all(Array.from({ length: width }, worker));
  return outcomes;
}
