import * as path from 'node:path';
import Mocha from 'mocha';

const { EVENT_SUITE_BEGIN, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING, EVENT_RUN_END } =
  Mocha.Runner.constants;

/**
 * The test run's reporter: one line per spec file (its path, then a dot per passing test, `!` per failure,
 * `,` per pending), then mocha's usual summary with the failures in full. Names where a long run is
 * without printing every test title.
 */
class FileReporter extends Mocha.reporters.Base {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    let current: string | undefined;
    const out = (s: string): void => {
      process.stdout.write(s);
    };
    runner.on(EVENT_SUITE_BEGIN, (suite: Mocha.Suite) => {
      if (!suite.file || suite.file === current) return;
      current = suite.file;
      out(`\n  ${path.relative(process.cwd(), suite.file)} `);
    });
    runner.on(EVENT_TEST_PASS, () => out('.'));
    runner.on(EVENT_TEST_FAIL, () => out('!'));
    runner.on(EVENT_TEST_PENDING, () => out(','));
    runner.once(EVENT_RUN_END, () => {
      out('\n');
      this.epilogue();
    });
  }
}

export = FileReporter;
