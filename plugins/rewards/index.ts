import { registerAll } from '../../core/registry/define';
import { execTestsReward, execVoteReward } from './exec';
import { formatReward } from './format';
import { groundTruthReward } from './ground-truth';
import { gtVerifierReward } from './gt-verifier';
import { intrinsicReward } from './intrinsic';
import { learnedVerifierReward, verdictProbability, verifierText } from './learned-verifier';
import { pythonReward } from './python';
import { voteReward } from './vote';
import { weightedReward } from './weighted';

export {
  execTestsReward,
  execVoteReward,
  formatReward,
  groundTruthReward,
  gtVerifierReward,
  intrinsicReward,
  learnedVerifierReward,
  pythonReward,
  verdictProbability,
  verifierText,
  voteReward,
  weightedReward,
};
export { pluralityVote, type VoteOutcome, type VoteCluster } from '../../core/voting/plurality';
export { matches } from '../../core/voting/match';

/** Registers the built-in reward sources. */
export const register = registerAll(
  voteReward,
  groundTruthReward,
  gtVerifierReward,
  learnedVerifierReward,
  intrinsicReward,
  formatReward,
  weightedReward,
  execVoteReward,
  execTestsReward,
  pythonReward,
);
