import { registerAll } from '../../core/registry/define';
import { execTestsReward, execVoteReward } from './exec';
import { formatReward } from './format';
import { groundTruthReward } from './ground-truth';
import { intrinsicReward } from './intrinsic';
import { voteReward } from './vote';
import { weightedReward } from './weighted';

export {
  execTestsReward,
  execVoteReward,
  formatReward,
  groundTruthReward,
  intrinsicReward,
  voteReward,
  weightedReward,
};
export { pluralityVote, matches, type VoteOutcome, type VoteCluster } from '../../core/voting/plurality';

/** Registers the built-in reward sources. */
export const register = registerAll(
  voteReward,
  groundTruthReward,
  intrinsicReward,
  formatReward,
  weightedReward,
  execVoteReward,
  execTestsReward,
);
