import { ANSWERS_CODES } from './answers';
import { API_CODES } from './api';
import { BACKEND_CODES } from './backend';
import { CLI_CODES } from './cli';
import { CONFIG_CODES } from './config';
import { EVAL_CODES } from './eval';
import { GRPO_CODES } from './grpo';
import { INTERACTION_CODES } from './interaction';
import { PLAN_CODES } from './plan';
import { PLUGIN_CODES } from './plugin';
import { POLICY_CODES } from './policy';
import { PYTHON_CODES } from './python';
import { REWARD_CODES } from './reward';
import { RUN_CODES } from './run';
import { SANDBOX_CODES } from './sandbox';
import { SCAFFOLD_CODES } from './scaffold';
import { SERVE_CODES } from './serve';
import type { ErrorSpec } from './spec';
import { TASK_CODES } from './task';
import { TENSOR_CODES } from './tensor';
import { TESTING_CODES } from './testing';

export type { ErrorSpec } from './spec';
export { defineCodes } from './spec';

/**
 * The catalog of every error code: one file per area under core/errors/codes/. The reference page
 * docs/reference/errors.md is generated from it (`npm run gen`), and a test fails when they drift.
 */
export const ERROR_CODES = {
  ...CONFIG_CODES,
  ...PLUGIN_CODES,
  ...RUN_CODES,
  ...POLICY_CODES,
  ...GRPO_CODES,
  ...TASK_CODES,
  ...CLI_CODES,
  ...EVAL_CODES,
  ...TENSOR_CODES,
  ...ANSWERS_CODES,
  ...REWARD_CODES,
  ...SANDBOX_CODES,
  ...TESTING_CODES,
  ...SCAFFOLD_CODES,
  ...SERVE_CODES,
  ...BACKEND_CODES,
  ...INTERACTION_CODES,
  ...PLAN_CODES,
  ...PYTHON_CODES,
  ...API_CODES,
} satisfies Record<string, ErrorSpec>;

/** Every code corl raises. */
export type ErrorCode = keyof typeof ERROR_CODES;
