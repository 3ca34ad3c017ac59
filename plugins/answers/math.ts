import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { AnswerExtractor } from '../../core/contracts/answer-extractor';
import type { Equivalence } from '../../core/contracts/equivalence';
import type { WorkOptions } from '../../core/contracts/work';
import { SharedWork } from '../../core/util/shared-work';
import { definePlugin } from '../../core/registry/define';
import { keysEqual, ParseCache } from './compare';
import { ALL_RULES, extractMathAnswer, type MathExtractRules } from './extract';
import { DEFAULT_UNITS, normalizeKey, type NormalizeOptions } from './normalize';
import { SymbolicPool, type SymbolicPoolStats } from './symbolic-pool';

export { lastBoxed } from './extract';

const MATH_EXTRACTOR_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    minerva: {
      type: 'boolean',
      default: true,
      description: 'Minerva format "final answer is $X$. I hope it is correct."',
    },
    answerTags: {
      type: 'boolean',
      default: true,
      description: 'the last <answer>...</answer> tag (its content is searched again with the other rules)',
    },
    boxed: { type: 'boolean', default: true, description: 'the last \\boxed{} or \\fbox{} with balanced braces' },
    answerIs: { type: 'boolean', default: true, description: 'the text after the last "answer is" / "answer:"' },
    lastNumber: {
      type: 'boolean',
      default: true,
      description: 'fall back to the last number in the text (the released Co-RL code votes with it)',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** Options of the `corl:math` extractor: which rules run, in priority order (derived from the schema). */
export type MathExtractorOptions = FromSchema<typeof MATH_EXTRACTOR_OPTIONS_SCHEMA>;

/** The final answer of a math completion (rules as in {@link extractMathAnswer}; unset rules are on). */
export function extractMath(text: string, options: Partial<MathExtractorOptions> = {}): string | null {
  return extractMathAnswer(text, { ...ALL_RULES, ...options });
}

/** Canonical key of a math answer with the default normalizer options. */
export function mathKey(answer: string, options?: Partial<NormalizeOptions>): string | null {
  return normalizeKey(answer, { percent: options?.percent ?? 'strip', units: options?.units ?? DEFAULT_UNITS });
}

export const mathExtractor = definePlugin({
  manifest: {
    name: 'corl:math',
    kind: 'extractor',
    description:
      'Final math answer: Minerva "final answer is $X$. I hope", the last <answer> tag, the last balanced \\boxed{}/\\fbox{}, "the answer is", then the last number',
    corl: '^0.1.0',
    options: MATH_EXTRACTOR_OPTIONS_SCHEMA,
  },
  create(options: Partial<MathExtractorOptions>): AnswerExtractor {
    const rules: MathExtractRules = { ...ALL_RULES, ...options };
    return { extract: (text) => extractMathAnswer(text, rules) };
  },
});

/** The defaults of the `corl:math` equivalence, which its schema declares. */
const EQUIVALENCE_DEFAULTS = {
  tolerance: 1e-4,
  percent: 'strip' as const,
  units: [...DEFAULT_UNITS],
  symbolic: true,
  probeIdentity: true,
  timeoutMs: 2000,
  workers: 1,
  heapMb: 256,
  cacheSize: 100_000,
};

const MATH_EQUIVALENCE_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    tolerance: {
      type: 'number',
      minimum: 0,
      default: EQUIVALENCE_DEFAULTS.tolerance,
      description: 'relative tolerance of numeric equality',
    },
    percent: {
      enum: ['strip', 'fraction', 'keep'],
      default: EQUIVALENCE_DEFAULTS.percent,
      description: 'strip: 50% = 50 (the reference); fraction: 50% = 0.5; keep: 50% only equals 50%',
    },
    units: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [...DEFAULT_UNITS],
      description: 'unit words dropped after a number or inside \\text{} (plurals included)',
    },
    symbolic: {
      type: 'boolean',
      default: EQUIVALENCE_DEFAULTS.symbolic,
      description: 'ask the symbolic engine when the fast checks cannot decide',
    },
    probeIdentity: {
      type: 'boolean',
      default: EQUIVALENCE_DEFAULTS.probeIdentity,
      description:
        "accept agreement to 1e-10 at six fixed points (half negative) as identity of expressions with variables, as the engine's own identity test does first; false asks the engine",
    },
    timeoutMs: {
      type: 'integer',
      minimum: 1,
      default: EQUIVALENCE_DEFAULTS.timeoutMs,
      description: 'hard time limit of one symbolic comparison (the worker is terminated); over it counts as not equal',
    },
    workers: {
      type: 'integer',
      minimum: 1,
      maximum: 64,
      default: EQUIVALENCE_DEFAULTS.workers,
      description: 'symbolic worker threads',
    },
    heapMb: {
      type: 'integer',
      minimum: 16,
      default: EQUIVALENCE_DEFAULTS.heapMb,
      description: 'heap limit of each symbolic worker in MiB',
    },
    cacheSize: {
      type: 'integer',
      minimum: 1,
      default: EQUIVALENCE_DEFAULTS.cacheSize,
      description: 'comparisons remembered (and parsed keys)',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** Options of the `corl:math` equivalence, as validated and defaulted by the schema (derived from it). */
export type MathEquivalenceOptions = FromSchema<typeof MATH_EQUIVALENCE_OPTIONS_SCHEMA>;

/**
 * Math answer equivalence: canonical keys (normalize.ts), then structures element-wise, constants
 * by value within a relative tolerance, expressions with variables probed in-process (a difference
 * rejects, agreement to floating precision accepts), and whatever the in-process reader cannot read
 * (sums, complex numbers, relations, nth roots...) or cannot settle goes to the symbolic engine in a
 * worker pool under a hard time limit. Every verdict is cached.
 */
/** Thrown by the fast pass of `equal` where a pair needs the symbolic engine (then compared again, shared and cancellable). */
const NEEDS_SYMBOLIC = Symbol('needs the symbolic engine');
/** In-process comparisons between two turns of the event loop (at most a few ms of long answers). */
const YIELD_EVERY = 64;
const needsSymbolic = (): Promise<boolean> => Promise.reject(NEEDS_SYMBOLIC);

export class MathEquivalence implements Equivalence {
  private readonly options: MathEquivalenceOptions;
  private readonly normalize: NormalizeOptions;
  private readonly parsed: ParseCache;
  private readonly verdicts = new Map<string, boolean>();
  private readonly keys = new Map<string, string | null>();
  /** Comparisons in progress, shared by everyone asking for the same pair. */
  private readonly inflight = new SharedWork<string, boolean>();
  private pool?: SymbolicPool;
  /** Comparisons settled in-process since the event loop last had a turn. */
  private sinceYield = 0;

  constructor(options: Partial<MathEquivalenceOptions> = {}) {
    this.options = { ...EQUIVALENCE_DEFAULTS, ...options };
    this.normalize = { percent: this.options.percent, units: this.options.units };
    this.parsed = new ParseCache(this.options.cacheSize);
  }

  key(answer: string): string | null {
    // answers repeat a lot within a step (the same "42" from many completions): keys are pure, cache them
    let k = this.keys.get(answer);
    if (k === undefined) {
      k = normalizeKey(answer, this.normalize);
      if (answer.length <= 1000) {
        if (this.keys.size >= this.options.cacheSize) this.keys.clear();
        this.keys.set(answer, k);
      }
    }
    return k;
  }

  async equal(a: string, b: string, work?: WorkOptions): Promise<boolean> {
    if (a === b) return true;
    if (typeof a !== 'string' || typeof b !== 'string') return false;
    const pair = a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
    const known = this.verdicts.get(pair);
    if (known !== undefined) return known;
    const [x, y] = a < b ? [a, b] : [b, a]; // the same order whichever way round it was asked
    // A vote over K distinct long answers is K²/2 of these on the main thread: every so many, let
    // other requests (and the work's timer) run, and stop here if nobody waits any more.
    if (++this.sinceYield >= YIELD_EVERY) {
      this.sinceYield = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (work?.signal?.aborted) throw work.signal.reason;
    }
    // Most pairs are settled without the symbolic engine: at once, nothing to share or cancel.
    try {
      const symbolic = this.options.symbolic ? needsSymbolic : undefined;
      return this.remember(pair, await keysEqual(x, y, this.options, this.parsed, symbolic));
    } catch (e) {
      if (e !== NEEDS_SYMBOLIC) throw e;
    }
    // Shared while it runs; cut short only when nobody waits for it (an aborted symbolic comparison
    // rejects, so nothing is remembered of it).
    return this.inflight.run(pair, work, async (w) =>
      this.remember(pair, await keysEqual(x, y, this.options, this.parsed, (u, t) => this.symbolic(u, t, w))),
    );
  }

  private remember(pair: string, v: boolean): boolean {
    if (this.verdicts.size >= this.options.cacheSize) this.verdicts.clear();
    this.verdicts.set(pair, v);
    return v;
  }

  /** Counters of the symbolic pool (zeros before its first use). */
  get symbolicStats(): SymbolicPoolStats {
    return this.pool?.stats ?? { answered: 0, timeouts: 0, crashes: 0, started: 0 };
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }

  private symbolic(a: string, b: string, work?: WorkOptions): Promise<boolean> {
    this.pool ??= new SymbolicPool({
      workers: this.options.workers,
      timeoutMs: this.options.timeoutMs,
      tolerance: this.options.tolerance,
      heapMb: this.options.heapMb,
    });
    return this.pool.compare(a, b, work);
  }
}

export const mathEquivalence = definePlugin({
  manifest: {
    name: 'corl:math',
    kind: 'equivalence',
    description:
      'Math answers: canonical keys, then tuples/intervals/sets element-wise, numbers within a relative tolerance, and symbolic equality (compute-engine, worker pool, hard time limit, cached)',
    corl: '^0.1.0',
    options: MATH_EQUIVALENCE_OPTIONS_SCHEMA,
  },
  create(options: Partial<MathEquivalenceOptions>): Equivalence {
    return new MathEquivalence(options);
  },
});
