import type { DiversityStrategy } from '../../core/contracts/diversity-strategy';
import { definePlugin } from '../../core/registry/define';

/** No input diversity: every agent sees the canonical prompt (agents still sample with their own seeds). */
export const noDiversity = definePlugin({
  manifest: {
    name: 'corl:none',
    kind: 'diversity',
    description: 'Every agent sees the canonical prompt; agents differ only by model and seed',
    corl: '^0.1.0',
    options: { type: 'object', properties: {}, additionalProperties: false },
  },
  create(): DiversityStrategy {
    return { view: (problem) => ({ prompt: problem.prompt, images: problem.images }) };
  },
});
