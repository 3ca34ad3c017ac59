import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { CorlError, definePlugin, type AgentView, type DiversityStrategy } from 'corl';

/** Options of the strategy: a JSON Schema, which corl validates and defaults a config's options against before `create` runs. */
const INSTRUCTIONS_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    instructions: {
      type: 'array',
      items: { type: 'string' },
      minItems: 1,
      default: ['', 'Think step by step, then give the answer in \\boxed{}. '],
      description: 'instruction per agent, cycled; "" leaves the prompt unchanged',
    },
    position: { enum: ['prefix', 'suffix'], default: 'prefix', description: 'put the instruction before or after the prompt' },
    temperatures: {
      type: 'array',
      items: { anyOf: [{ type: 'number', minimum: 0 }, { type: 'null' }] },
      default: [],
      description: 'sampling temperature per agent (null or missing: the run\'s)',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options type, derived from the schema (json-schema-to-ts), so the two cannot drift. */
export type InstructionsOptions = FromSchema<typeof INSTRUCTIONS_OPTIONS_SCHEMA>;

/**
 * Input diversity by instruction: each agent sees the problem with its own instruction added (and,
 * optionally, samples at its own temperature), so agents make less correlated mistakes. Views are a
 * pure function of (problem, agent, cohort size), as the DiversityStrategy contract requires.
 */
export const exampleDiversity = definePlugin({
  manifest: {
    name: 'example:diversity',
    kind: 'diversity',
    description: 'Each agent sees the prompt with its own instruction added, optionally at its own temperature',
    corl: '^0.1.0',
    options: INSTRUCTIONS_OPTIONS_SCHEMA,
  },
  create(options: InstructionsOptions): DiversityStrategy {
    if (options.instructions.every((s) => s === '') && options.temperatures.every((t) => t === null)) {
      throw new CorlError('CORL_ERR_PLUGIN_OPTIONS', 'expected at least one non-empty instruction or temperature, got none (every agent would see the same view; use "corl:none" for that)', {
        where: 'options.instructions',
      });
    }
    return {
      view(problem, agent): AgentView {
        const instruction = options.instructions[agent % options.instructions.length]!;
        const prompt = options.position === 'prefix' ? instruction + problem.prompt : problem.prompt + instruction;
        const temperature = options.temperatures[agent];
        return {
          prompt,
          ...(problem.images ? { images: problem.images } : {}),
          ...(temperature !== undefined && temperature !== null ? { overrides: { temperature } } : {}),
        };
      },
    };
  },
});
