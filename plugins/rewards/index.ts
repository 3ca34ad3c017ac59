import { registerAll } from '../../core/plugins/define';
import { groundTruthReward } from './ground-truth';
import { voteReward } from './vote';

export { groundTruthReward, voteReward };
export { pluralityVote, matches, type VoteOutcome, type VoteCluster } from '../../core/voting/plurality';

/** Registers the built-in reward sources. */
export const register = registerAll(voteReward, groundTruthReward);
