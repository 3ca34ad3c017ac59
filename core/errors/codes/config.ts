import { defineCodes } from './spec';

export const CONFIG_CODES = defineCodes({
  CORL_ERR_CONFIG_NOT_FOUND: {
    cause: 'The config file given with -c/--config does not exist or cannot be read.',
    fix: 'check the path (relative paths are resolved from the current folder), or copy one of configs/*.json',
  },
  CORL_ERR_CONFIG_PARSE: {
    cause: 'The config file is not valid JSON (comments and trailing commas are accepted).',
    fix: 'fix the syntax at the line and column given',
  },
  CORL_ERR_CONFIG_INVALID: {
    cause:
      'The config does not match the schema: an unknown field, a wrong type, a value out of range, an unknown plugin name, or invalid plugin options. Every problem is listed with its JSON path, line and column.',
    fix: 'fix each listed field; `corl list` shows every plugin with its options, and schema/corl.schema.json gives editors autocompletion',
  },
  CORL_ERR_CONFIG_LABEL_FREE: {
    cause:
      'The config says `labelFree: true` but a reward source it selects reads ground truth, or was trained on labelled data (a learned verifier: manifest `trainedOnLabels`).',
    fix: 'remove that source, or set `labelFree: false` (the run will then be reported as supervised)',
  },
  CORL_ERR_CONFIG_GRADING: {
    cause:
      'The run grades answers against references (monitoring, evaluation, or a reward source that reads ground truth) with `grading` (default: `equivalence`), and that equivalence is label-free: not a built-in, and its manifest does not declare `readsReferences`. A label-free equivalence is never handed a reference.',
    fix: 'set `grading` to a built-in equivalence (e.g. "corl:math"), or declare `readsReferences: true` in the manifest of the equivalence if the run may trust it with references',
  },
  CORL_ERR_CONFIG_MEMORY: {
    cause:
      "A training step or an evaluation of the config cannot fit in memory: agents × batch × group completions of up to maxTokens tokens (or held-out problems × samples) need more JavaScript heap than the process has, or the policies' sampling caches (their manifest `memory`) more than the machine has. The estimate is a lower bound.",
    fix: 'lower the field named (trainer.groupSize, trainer.batchSize, eval.samples, eval.maxProblems or a maxTokens)',
  },
  CORL_ERR_CONFIG_PATH: {
    cause:
      'A path in the config (a checkpoint, a model folder, a data file) names nothing: no file or folder there, a package reference (`package:<package>/<path>`) whose package is not installed or that leaves it, or a malformed one. Every such path is listed with its field, its agent and where it was looked for.',
    fix: "fix the path: relative paths are resolved from the config file's folder; the models that ship with corl are `package:corl/models/...` wherever corl is installed",
  },
  CORL_ERR_CONFIG_TOPOLOGY: {
    cause:
      'The topology cannot serve the configured number of agents (for example `corl:ring` with one agent, or an adjacency matrix of the wrong size).',
    fix: 'add agents, or pick a topology that fits (`corl:self` for a single agent)',
  },
});
