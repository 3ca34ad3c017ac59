// The front end of the policies that decode token by token (corl:transformer, corl:onnx-lm): a sampling
// call's requests become rows, one per (request, sample), each with its own seed and settings; identical
// prompts are encoded once (rows that share one share its prefill); the completions come back in request
// order; a stop string cuts the text at its earliest occurrence. The loop itself is loop.ts.
import type { SampleRequest, SamplingOptions } from '../../../core/contracts/policy';
import { CorlError } from '../../../core/errors';
import { mixSeed } from '../../../core/util/rng';

/** One row to decode: sample `k` of request `i` of the call. */
export interface PlannedRow {
  /** Index of its prompt in {@link RowPlan.prompts}. */
  readonly prompt: number;
  readonly temperature: number;
  readonly topP: number;
  readonly maxTokens: number;
  readonly stop: readonly string[];
  /** `mixSeed(seed, i, k)`: a row's completion depends on its seed only, not on the rest of the batch. */
  readonly seed: number;
}

/** The rows of some requests and their distinct prompts, encoded. */
export interface RowPlan<P> {
  readonly prompts: P[];
  /** `n` rows per request, in request order. */
  readonly rows: PlannedRow[];
}

/** The completions per prompt a sampling call asks for: a whole number ≥ 1, else CORL_ERR_CONFIG_INVALID. */
export function checkSampleCount(n: number): void {
  if (!Number.isInteger(n) || n < 1)
    throw new CorlError('CORL_ERR_CONFIG_INVALID', `expected n ≥ 1 completions per prompt, got ${n}`, {
      where: 'sampling.n',
    });
}

/**
 * The rows of `requests`, each given with its index `i` in the whole call (a policy that splits a call
 * between workers plans each part with the call's indices, so seeds do not depend on the split): the
 * request's overrides over the call's options, and `encode` called once per distinct prompt text.
 */
export function planRows<P>(
  requests: Iterable<readonly [number, SampleRequest]>,
  options: SamplingOptions,
  encode: (prompt: string, i: number, request: SampleRequest) => P,
): RowPlan<P> {
  const prompts: P[] = [];
  const index = new Map<string, number>();
  const rows: PlannedRow[] = [];
  for (const [i, req] of requests) {
    const o = { ...options, ...req.overrides };
    let p = index.get(req.prompt);
    if (p === undefined) {
      const encoded = encode(req.prompt, i, req);
      p = prompts.length;
      index.set(req.prompt, p);
      prompts.push(encoded);
    }
    for (let k = 0; k < options.n; k++) {
      rows.push({
        prompt: p,
        temperature: o.temperature,
        topP: o.topP,
        maxTokens: o.maxTokens,
        stop: [...(o.stop ?? [])],
        seed: mixSeed(o.seed, i, k),
      });
    }
  }
  return { prompts, rows };
}

/** `items` (n per request, in request order) as one group of n per request. */
export function perRequest<T>(items: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  for (let at = 0; at < items.length; at += n) out.push(items.slice(at, at + n));
  return out;
}

/** Where the earliest of `stops` begins in `text`, or −1 when none occurs. */
export function stopAt(text: string, stops: readonly string[]): number {
  let cut = -1;
  for (const s of stops) {
    const at = text.indexOf(s);
    if (at >= 0 && (cut < 0 || at < cut)) cut = at;
  }
  return cut;
}

/** `text` without the earliest of `stops` and what follows it (unchanged when none occurs). */
export function cutAtStop(text: string, stops: readonly string[]): string {
  const cut = stopAt(text, stops);
  return cut >= 0 ? text.slice(0, cut) : text;
}
