import { defineCodes } from './spec';

export const TESTING_CODES = defineCodes({
  CORL_ERR_TESTING_RUNNER: {
    cause:
      'A contract suite from `corl/testing` was called outside a test runner: no global `describe`/`it` (mocha) and no `runner` option.',
    fix: 'call the suite from a mocha test file (`npx mocha`), or pass `runner: { describe, it }` from your test framework (e.g. node:test)',
  },
  CORL_ERR_TESTING_SETUP: {
    cause:
      'A contract suite was given inconsistent inputs: a plugin of another kind, a plugin with required options but no `options`, or a `register` that does not register the plugin.',
    fix: "pass the plugin definition of the suite's kind and valid `options` for it, as shown in docs/guide/writing-a-reward-plugin.md",
  },
});
