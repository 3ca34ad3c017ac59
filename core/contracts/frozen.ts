// What a plugin is handed it cannot change: a reward source's context, a judge's request, a metrics
// sink's records, a run's config and data are deep-frozen copies, so no plugin can write into what
// another reads (the label-free guarantee rests on it: a reward context holds only what its manifest
// entitles it to, and nothing can be added to it afterwards).
import type { Equivalence } from './equivalence';
import type { WorkOptions } from './work';

/** Deep-freeze a JSON-like value in place and return it (without recursion: any depth). */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    // Typed arrays cannot be frozen (their elements stay writable); they are left as they are.
    if (!v || typeof v !== 'object' || Object.isFrozen(v) || ArrayBuffer.isView(v)) continue;
    Object.freeze(v);
    for (const x of Object.values(v as Record<string, unknown>)) stack.push(x);
  }
  return value;
}

const facades = new WeakMap<Equivalence, Equivalence>();

/**
 * An equivalence as a plugin is handed it (a reward context's `equivalence`, an injected
 * `EQUIVALENCE`): a frozen object of `key` and `equal` and nothing else (no caches, no `close`),
 * one per equivalence.
 */
export function equivalenceFacade(equivalence: Equivalence): Equivalence {
  let f = facades.get(equivalence);
  if (!f) {
    f = Object.freeze({
      key: (answer: string) => equivalence.key(answer),
      equal: (a: string, b: string, work?: WorkOptions) => equivalence.equal(a, b, work),
    });
    facades.set(equivalence, f);
  }
  return f;
}
