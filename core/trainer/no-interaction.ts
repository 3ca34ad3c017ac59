import type { DebateScores, Interaction } from '../contracts/interaction';

/**
 * No interaction: the null interaction of a run without `interaction`, zero discussion rounds whose
 * credit is the identity (each answer's reward is the reward source's score of it), so a training step
 * and an evaluation take one path whatever the config.
 */
export const NO_INTERACTION: Interaction = Object.freeze({
  rounds: 0,
  share: 'answer' as const,
  validate(): void {},
  credit: (s: DebateScores): number[][][] => s.scores.map((round) => round.map((group) => [...group])),
});
