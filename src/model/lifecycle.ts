/**
 * @module model/lifecycle — a state machine over a union of states: a table of the legal moves,
 * and one guarded way to change state, after grpc-js's `transitionToState` (subchannel.ts): a move
 * the table does not allow from the current state is refused (false, nothing changes), and every
 * move is logged, except entering the states its owner calls routine.
 */

/** For each state, the states it may move to. */
export type Transitions<S extends string> = Readonly<Record<S, readonly S[]>>;

export interface LifecycleOptions<S extends string> {
  /** Names the machine in its log lines (`shard 3`). */
  name: string;
  initial: NoInfer<S>;
  /** Where a move is logged. */
  log: (line: string) => void;
  /** States whose entry is not logged (a start, a clean stop): the rest are worth a line. */
  routine?: readonly NoInfer<S>[];
}

export class Lifecycle<S extends string> {
  readonly #table: Transitions<S>;
  readonly #o: LifecycleOptions<S>;
  #state: S;

  constructor(table: Transitions<S>, o: LifecycleOptions<S>) {
    this.#table = table;
    this.#o = o;
    this.#state = o.initial;
  }

  get state(): S {
    return this.#state;
  }

  /** Whether the state is one of `states`. */
  is(...states: readonly S[]): boolean {
    return states.includes(this.#state);
  }

  /** Moves to `to` when the table allows it from here; `why` goes into the log line. */
  transition(to: S, why = ''): boolean {
    const from = this.#state;
    if (!this.#table[from].includes(to)) return false;
    this.#state = to;
    if (!this.#o.routine?.includes(to))
      this.#o.log(`${this.#o.name}: ${from} → ${to}${why === '' ? '' : `: ${why}`}`);
    return true;
  }
}

/** Every legal move of a table, `from → to`, in the table's order (for diagrams and their tests). */
export function moves<S extends string>(table: Transitions<S>): Array<[S, S]> {
  return (Object.keys(table) as S[]).flatMap((from) => table[from].map((to): [S, S] => [from, to]));
}
