// Worker thread of the symbolic pool: loads the compute engine once, then answers one comparison at a
// time. It has no time limit of its own: the pool terminates it when a comparison runs too long, which
// is the only limit that also stops a synchronous loop inside the engine.
import { parentPort } from 'node:worker_threads';

/** A comparison request. */
export interface SymbolicRequest {
  readonly id: number;
  readonly a: string;
  readonly b: string;
  readonly tolerance: number;
}

/** Its answer: equal or not, and when the engine could not read a key, why. */
export interface SymbolicResponse {
  readonly id: number;
  readonly equal: boolean;
  readonly note?: string;
}

interface BoxedLike {
  readonly isValid: boolean;
  readonly unknowns: ReadonlyArray<string>;
  isIdenticallyEqual(other: BoxedLike): boolean | undefined;
  N(): { valueOf(): unknown; re?: number; im?: number };
}

interface EngineLike {
  parse(latex: string): BoxedLike;
}

/** LaTeX for the engine: percent signs escaped (a bare % starts a LaTeX comment). */
export function engineLatex(key: string): string {
  return key.replace(/(^|[^\\])%/g, '$1\\%');
}

/** Compare two keys with the engine: identity in the free variables, or equal values within the tolerance. */
export function compareWithEngine(
  ce: EngineLike,
  a: string,
  b: string,
  tolerance: number,
): { equal: boolean; note?: string } {
  const A = ce.parse(engineLatex(a));
  const B = ce.parse(engineLatex(b));
  if (!A.isValid || !B.isValid) return { equal: false, note: 'unreadable' };
  if (A.unknowns.length === 0 && B.unknowns.length === 0) {
    // Constants compare by value, relatively at every magnitude (no absolute floor): the engine's own
    // identity test has an absolute tolerance (1e-10), under which 6.626\times10^{-34} "is" 0.
    const x = numeric(A);
    const y = numeric(B);
    if (x !== undefined && y !== undefined && Number.isFinite(x) && Number.isFinite(y)) {
      return { equal: x === y || Math.abs(x - y) <= tolerance * Math.max(Math.abs(x), Math.abs(y)) };
    }
  }
  if (A.isIdenticallyEqual(B) === true) return { equal: true };
  return { equal: false };
}

function numeric(e: BoxedLike): number | undefined {
  const v = e.N();
  if (typeof v.im === 'number' && v.im !== 0) return undefined;
  const x = typeof v.re === 'number' ? v.re : Number(v.valueOf());
  return Number.isNaN(x) ? undefined : x;
}

if (parentPort) {
  const port = parentPort;

  const { ComputeEngine } = require('@cortex-js/compute-engine') as { ComputeEngine: new () => EngineLike };
  const ce = new ComputeEngine();
  port.on('message', (req: SymbolicRequest) => {
    let res: SymbolicResponse;
    try {
      res = { id: req.id, ...compareWithEngine(ce, req.a, req.b, req.tolerance) };
    } catch (e) {
      res = { id: req.id, equal: false, note: `engine error: ${(e as Error)?.message ?? String(e)}`.slice(0, 200) };
    }
    port.postMessage(res);
  });
  port.postMessage({ ready: true });
}
