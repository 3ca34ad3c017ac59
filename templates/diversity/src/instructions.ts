import { CorlError, definePlugin, type AgentView, type DiversityStrategy } from 'corl';

/** Options of the strategy. */
export interface InstructionsOptions {
  /** Instruction of agent n is `instructions[n mod length]`; an empty string leaves the prompt as it is. */
  instructions: string[];
  /** Where the instruction goes. */
  position: 'prefix' | 'suffix';
  /** Sampling temperature of agent n (absent or null: the run's). */
  temperatures: (number | null)[];
}

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
    options: {
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
    },
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
