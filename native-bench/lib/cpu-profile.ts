/**
 * @module native-bench/lib/cpu-profile — reads a V8 `.cpuprofile` (from `node --cpu-prof`) and
 * totals self and inclusive time per function.
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface FunctionCost {
  name: string;
  selfMs: number;
  totalMs: number;
}

/** Function label: name, file (last two path parts) and 1-based line. */
function label(f: CallFrame): string {
  const file = f.url === '' ? '' : ` ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
  return `${f.functionName === '' ? '(anonymous)' : f.functionName}${file}`;
}

function parents(profile: CpuProfile): Map<number, number> {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return parent;
}

/** Self and inclusive milliseconds per function, most self time first. */
export function functionCosts(profile: CpuProfile): FunctionCost[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = parents(profile);
  const costs = new Map<string, FunctionCost>();
  const cost = (name: string): FunctionCost => {
    let c = costs.get(name);
    if (!c) costs.set(name, (c = { name, selfMs: 0, totalMs: 0 }));
    return c;
  };
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      if (!node) break;
      const name = label(node.callFrame);
      if (at === id) cost(name).selfMs += ms;
      if (!seen.has(name)) cost(name).totalMs += ms;
      seen.add(name);
    }
  });
  return [...costs.values()].sort((a, b) => b.selfMs - a.selfMs);
}

/** Milliseconds the profile covers. */
export function profileMs(profile: CpuProfile): number {
  return (profile.endTime - profile.startTime) / 1000;
}
