import { CorlError } from '../errors';

/** A test body: may be async; throwing (an assertion) fails the test. */
export type TestBody = () => void | Promise<void>;

/**
 * The two functions a contract suite needs from a test framework. Mocha's globals fit; so does
 * `node:test` (`import { describe, it } from 'node:test'`).
 */
export interface TestRunner {
  /** Group tests under a title. */
  describe(title: string, body: () => void): unknown;
  /** One test. */
  it(title: string, body: TestBody): unknown;
}

/** Options every contract suite accepts. */
export interface SuiteOptions {
  /** The test framework's `describe` and `it`; defaults to the globals mocha installs. */
  readonly runner?: TestRunner;
  /** Title of the suite's `describe` block; defaults to `<name> satisfies the <kind> contract`. */
  readonly title?: string;
}

/** The runner of a suite: the given one, else mocha's globals; a coded error when there is none. */
export function resolveRunner(runner: TestRunner | undefined): TestRunner {
  if (runner) return runner;
  const g = globalThis as { describe?: TestRunner['describe']; it?: TestRunner['it'] };
  if (typeof g.describe !== 'function' || typeof g.it !== 'function') {
    throw new CorlError(
      'CORL_ERR_TESTING_RUNNER',
      "expected mocha's global describe() and it(), got none (the suite was not loaded by a test runner)",
    );
  }
  return { describe: g.describe, it: g.it };
}
