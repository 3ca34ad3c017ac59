// Checks of a config against its task's loaded data, run when the plugins are created (so `corl
// validate` refuses what `corl train` would refuse before or at its first step).
import type { DiversityStrategy } from '../contracts/diversity-strategy';
import type { TaskData } from '../contracts/task';
import { CorlError } from '../errors';
import type { CorlConfig } from './types';

/** The error of `eval.split: "validation"` on a task without validation problems. */
export function missingValidationSplit(): CorlError {
  return new CorlError(
    'CORL_ERR_TASK_DATA',
    'expected a validation split for eval.split "validation", got a task without one',
    {
      where: 'eval.split',
      hint: 'give the task validation problems (corl:arith: the option "validation"), or evaluate on "test"',
    },
  );
}

/** How many problems an evaluation samples: its split, cut to `eval.maxProblems` when set. */
export function evalCount(config: Pick<CorlConfig, 'eval'>, data: TaskData): number {
  const n = (config.eval.split === 'validation' ? data.validation : data.heldOut)?.length ?? 0;
  return config.eval.maxProblems > 0 ? Math.min(n, config.eval.maxProblems) : n;
}

/**
 * Refuse a config whose data cannot run: an evaluation split the task lacks, or a diversity
 * strategy that has no view of some training problem for some agent (a rephrasing missing from its
 * variants file). Views are pure and cheap, so every training problem is tried for every agent.
 */
export function checkRunData(
  config: Pick<CorlConfig, 'agents' | 'eval' | 'trainer'>,
  data: TaskData,
  diversity: DiversityStrategy,
): void {
  if (config.eval.split === 'validation' && (!data.validation || data.validation.length === 0))
    throw missingValidationSplit();
  if (config.trainer.steps === 0) return;
  const agents = config.agents.length;
  for (const problem of data.train) for (let a = 0; a < agents; a++) diversity.view(problem, a, agents);
}
