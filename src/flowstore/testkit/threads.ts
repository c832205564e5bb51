import { readFileSync, readdirSync } from 'node:fs';

export interface ThreadState {
  /** `R` when running, `S` sleeping, … */
  state: string;
  nice: number;
}

/** This process's threads by id, with their state and nice value (Linux /proc: fields 3 and 19 of a task's stat). */
export function threadStates(): Map<number, ThreadState> {
  return new Map(
    readdirSync('/proc/self/task').map((task) => {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
      // The command name in parentheses may hold spaces: the fields start after its closing one.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [Number(task), { state: fields[0]!, nice: Number(fields[16]) }] as const;
    }),
  );
}
