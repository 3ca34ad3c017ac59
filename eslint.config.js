// Lint rules for corl (run by `npm test` through `npm run lint`). Formatting is Prettier's job.
'use strict';
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');

module.exports = tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'templates/**',
      'packages/**',
      'docs/**',
      'models/**',
      'test/fixtures/**/*.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      // Tests and scripts may poke at untyped JSON; the framework itself may not (see below).
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-require-imports': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
      'no-control-regex': 'off',
      // The Ajv keyword callbacks need the validator instance beside ajv's own `this`.
      '@typescript-eslint/no-this-alias': 'off',
    },
  },
  {
    // chai's property assertions (`expect(x).to.be.NaN`) are expressions by design.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-unused-expressions': 'off' },
  },
  {
    // The house rules: no unseeded randomness in the framework (use Rng / mixSeed from core/util/rng.ts),
    // and no `any`: untyped JSON is `unknown` and is narrowed where it is read.
    files: ['core/**/*.ts', 'plugins/**/*.ts', 'entry/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-properties': [
        'error',
        {
          object: 'Math',
          property: 'random',
          message: 'unseeded randomness: use Rng or mixSeed from core/util/rng.ts',
        },
        {
          object: 'crypto',
          property: 'getRandomValues',
          message: 'unseeded randomness: use Rng or mixSeed from core/util/rng.ts',
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='random'][callee.object.name='Math']",
          message: 'unseeded randomness: use Rng or mixSeed from core/util/rng.ts',
        },
      ],
    },
  },
  {
    // Function size (docs/guide/contributing.md, "Function size"): lines without blanks and comments.
    files: ['core/**/*.ts', 'plugins/**/*.ts', 'entry/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }],
      'max-params': ['error', 7],
    },
  },
  {
    // Declarative lists rather than steps: the config schemas and the contract suites' lists of checks.
    files: ['core/config/root-schema.ts', 'core/config/serve-schema.ts', 'core/testing/*.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
  {
    files: ['**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        __dirname: 'readonly',
        console: 'readonly',
      },
    },
  },
);
