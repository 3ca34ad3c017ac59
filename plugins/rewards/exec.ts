import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Problem } from '../../core/contracts/problem';
import type { AnswerKeyInput, RewardContext, RewardResult, RewardSource } from '../../core/contracts/reward-source';
import type { Equivalence } from '../../core/contracts/equivalence';
import type { WorkOptions } from '../../core/contracts/work';
import { CorlError } from '../../core/errors';
import { SharedWork } from '../../core/util/shared-work';
import { definePlugin } from '../../core/registry/define';
import { lastCodeBlock } from './sandbox/code-block';
import { Sandbox, type TestOutcome } from './sandbox/sandbox';
import { voteReward } from './vote';

/** The options both code rewards share: the sandbox, the entry point and the run cache. */
const SANDBOX_PROPERTIES = {
  isolation: {
    enum: ['auto', 'bwrap', 'unsafe-process'],
    default: 'auto',
    description:
      'auto or bwrap: the bubblewrap sandbox (fresh namespaces, a read-only filesystem of the interpreter alone, no network, rlimits), refused with CORL_ERR_SANDBOX_BWRAP_MISSING where bwrap is missing; unsafe-process: no isolation, for trusted code only, with a warning on every run. The former namespace and process modes are removed (use auto)',
  },
  bwrap: {
    type: 'string',
    default: '',
    description: 'bubblewrap executable (empty: /usr/bin/bwrap, else bwrap on PATH)',
  },
  timeoutMs: {
    type: 'integer',
    minimum: 10,
    default: 2000,
    description:
      'wall-clock limit per test input in milliseconds (the released code uses 2 s); enforced from outside, so a loop inside C stops too',
  },
  memoryMb: {
    type: 'integer',
    minimum: 32,
    default: 256,
    description: 'address-space limit of each process of the program in MiB',
  },
  concurrency: { type: 'integer', minimum: 1, default: 2, description: 'programs run at the same time' },
  maxOutput: { type: 'integer', minimum: 1, default: 1000, description: 'characters of each output kept' },
  python: {
    type: 'string',
    default: '',
    description: 'python3 interpreter (empty: /usr/bin/python3, else python3 on PATH)',
  },
  entryPoint: {
    type: 'string',
    default: '',
    description:
      "function called with each test input's arguments; empty: problem.metadata.entryPoint, and without one each input is the program's stdin",
  },
  cacheSize: { type: 'integer', minimum: 1, default: 10_000, description: 'runs remembered (program + inputs)' },
} as const;

const EXEC_VOTE_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    ...SANDBOX_PROPERTIES,
    threshold: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      default: 0,
      description: 'minimum vote share of the winning output tuple',
    },
    rule: {
      enum: ['pool', 'teacher', 'majority'],
      default: 'pool',
      description: 'how several supervisors combine (as in corl:vote)',
    },
    errorKeys: {
      type: 'boolean',
      default: false,
      description:
        'give a program that fails on every input an answer key of error markers (as the released code does); false: no answer',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options of `corl:exec-vote`, as validated and defaulted by the schema (derived from it). */
type ExecVoteOptions = FromSchema<typeof EXEC_VOTE_OPTIONS_SCHEMA>;

const EXEC_TESTS_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    ...SANDBOX_PROPERTIES,
    partial: {
      type: 'boolean',
      default: false,
      description: 'reward the fraction of tests passed; false: 1 only when every test passes',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options of `corl:exec-tests`, as validated and defaulted by the schema (derived from it). */
type ExecTestsOptions = FromSchema<typeof EXEC_TESTS_OPTIONS_SCHEMA>;

/** What {@link CodeRunner} reads: the options the two code rewards share. */
type ExecOptions = ExecVoteOptions | ExecTestsOptions;

/** Runs programs in the sandbox, cached by program and inputs. */
class CodeRunner {
  readonly sandbox: Sandbox;
  /** Outcomes of finished runs (never of a run cut short because nobody waited for it). */
  private readonly cache = new Map<string, readonly TestOutcome[]>();
  /** Runs in progress, shared by everyone asking for the same program and inputs. */
  private readonly running = new SharedWork<string, readonly TestOutcome[]>();
  constructor(
    private readonly options: ExecOptions,
    owner: string,
  ) {
    this.sandbox = new Sandbox({ ...options, owner });
  }

  /**
   * The outcomes of a completion's program on the problem's inputs, or null when it has no code
   * block. A run shared by several callers stops only when all of them stopped waiting (`work`).
   */
  outcomes(text: string, problem: Problem, work?: WorkOptions): Promise<readonly TestOutcome[]> | null {
    const program = lastCodeBlock(text);
    if (program === null) return null;
    const inputs = problem.testInputs;
    if (!inputs || inputs.length === 0) {
      throw new CorlError(
        'CORL_ERR_TASK_DATA',
        `expected testInputs on problem "${problem.id}" for a code reward, got none`,
        { hint: 'give each code problem its test inputs (argument literals, never the expected outputs)' },
      );
    }
    const metaEntry = typeof problem.metadata?.entryPoint === 'string' ? (problem.metadata.entryPoint as string) : '';
    const entry = this.options.entryPoint || metaEntry;
    const mode = entry ? 'call' : 'stdin';
    const key = JSON.stringify([program, mode, entry, inputs]);
    const hit = this.cache.get(key);
    if (hit) return Promise.resolve(hit);
    return this.running.run(key, work, async (w) => {
      const { outcomes } = await this.sandbox.run(program, mode, entry, inputs, w);
      if (this.cache.size >= this.options.cacheSize) this.cache.clear();
      this.cache.set(key, outcomes);
      return outcomes;
    });
  }

  close(): void {
    this.sandbox.close();
  }
}

/** The answer key of a program's outcomes: the tuple of outputs and error markers, as JSON. */
export function outcomeKey(outcomes: readonly TestOutcome[], errorKeys: boolean): string | null {
  if (!errorKeys && outcomes.every((o) => 'err' in o)) return null;
  return JSON.stringify(outcomes.map((o) => ('out' in o ? o.out : `!error:${o.err}`)));
}

/** Keys are canonical tuples: equal exactly when identical. */
const IDENTITY: Equivalence = { key: (a) => a, equal: async (a, b) => a === b };

/**
 * Label-free code reward: the last fenced code block runs on the problem's test inputs only (the
 * expected outputs are never seen), and the tuple of its outputs or error markers is the answer key
 * the cohort votes with; rewards as in corl:vote. Generated code runs in the sandbox.
 */
export const execVoteReward = definePlugin({
  manifest: {
    name: 'corl:exec-vote',
    kind: 'reward',
    description:
      'Label-free code reward: run the last fenced code block on the test inputs (outputs hidden) in a sandbox, vote on the tuple of outputs',
    corl: '^0.1.0',
    readsGroundTruth: false,
    options: EXEC_VOTE_OPTIONS_SCHEMA,
  },
  create(options: ExecVoteOptions): RewardSource {
    const runner = new CodeRunner(options, 'corl:exec-vote');
    const vote = voteReward.create({ threshold: options.threshold, rule: options.rule }, {} as never) as RewardSource;
    return {
      async answerKeys(input: AnswerKeyInput, work?: WorkOptions): Promise<(string | null)[]> {
        const runs = input.texts.map((t) => runner.outcomes(t, input.problem, work));
        return Promise.all(runs.map(async (r) => (r === null ? null : outcomeKey(await r, options.errorKeys))));
      },
      async score(ctx: RewardContext, work?: WorkOptions): Promise<RewardResult> {
        return vote.score({ ...ctx, equivalence: IDENTITY }, work);
      },
      async close() {
        runner.close();
      },
    };
  },
});

/** Whether an output matches an expected `repr` (or stdout) text, ignoring surrounding whitespace. */
function passes(o: TestOutcome, expected: string | undefined): boolean {
  return expected !== undefined && 'out' in o && o.out.trim() === expected.trim();
}

/**
 * The ground-truth twin of corl:exec-vote: the program runs on the test inputs in the sandbox and its
 * outputs are compared with the reference's expected outputs (1 when all pass, or the fraction).
 */
export const execTestsReward = definePlugin({
  manifest: {
    name: 'corl:exec-tests',
    kind: 'reward',
    description:
      'Supervised code reward: run the last fenced code block on the test inputs in a sandbox and compare with the expected outputs',
    corl: '^0.1.0',
    readsGroundTruth: true,
    options: EXEC_TESTS_OPTIONS_SCHEMA,
  },
  create(options: ExecTestsOptions): RewardSource {
    const runner = new CodeRunner(options, 'corl:exec-tests');
    return {
      async score(ctx: RewardContext, work?: WorkOptions): Promise<RewardResult> {
        const expected = ctx.reference?.expectedOutputs;
        if (!expected) {
          throw new CorlError(
            'CORL_ERR_TASK_DATA',
            `expected reference.expectedOutputs for problem "${ctx.problem.id}", got none`,
            { hint: 'corl:exec-tests needs a code task whose references list the expected output of every test input' },
          );
        }
        const rewards: number[] = [];
        let passed = 0;
        let total = 0;
        for (const c of ctx.completions) {
          const run = runner.outcomes(c.text, ctx.problem, work);
          const outcomes = run === null ? null : await run;
          const ok = outcomes === null ? 0 : outcomes.filter((o, i) => passes(o, expected[i])).length;
          const n = ctx.problem.testInputs?.length ?? 0;
          passed += ok;
          total += n;
          rewards.push(options.partial ? (n ? ok / n : 0) : ok === n && n > 0 ? 1 : 0);
        }
        return { rewards, metrics: { 'exec/tests_passed': total ? passed / total : 0 } };
      },
      async close() {
        runner.close();
      },
    };
  },
});
