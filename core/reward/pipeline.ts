// The one reward pipeline of `corl train` and `corl serve` (docs/architecture.md, "One training step", 4–5):
// answer keys of a group, its frozen context, the reward source's score, the checks, the agreement of labels.
import type { Equivalence } from '../contracts/equivalence';
import type { Problem } from '../contracts/problem';
import type { RewardSource } from '../contracts/reward-source';
import type { WorkOptions } from '../contracts/work';
import { matches } from '../voting/match';
import type { AnswerKeys } from './answer-keys';
import { CorlError } from '../errors';
import { checkKeys, checkResult, rewardFailure, type CheckedResult } from './checks';
import { plainCopy, buildRewardContext, type GroupToScore } from './context';
import { deepFreeze } from '../contracts/frozen';

/** What a group is scored with: the reward source and the equivalence of the run (or the service, or `corl/testing`). */
export interface ScoringParts {
  readonly reward: RewardSource;
  /** The reward source's name in the config (`reward.use`), for messages. */
  readonly use: string;
  /** The run's equivalence: handed to the reward source, and what labels are compared with. */
  readonly equivalence: Equivalence;
}

/** What a pipeline scores with: the very plugin instances of the run (or the service). */
export interface RewardParts extends ScoringParts {
  /** The run's extractor and equivalence, cached (`AnswerKeys` made with the reward source). */
  readonly keys: AnswerKeys;
}

/** A group's answers: the run extractor's answer and the voting key of each completion. */
export interface GroupAnswers {
  readonly answers: (string | null)[];
  readonly keys: (string | null)[];
}

/** A scored group: the checked result, and whether its label and own label agree (1/0, when both exist). */
export interface ScoredGroup extends CheckedResult {
  readonly agree?: number;
}

/**
 * Answer keys, contexts, scores and checks, one way for every caller. Failures are coded: an
 * uncoded throw of a plugin is CORL_ERR_REWARD_FAILED, output that breaks the contract
 * CORL_ERR_REWARD_OUTPUT (see checks.ts).
 */
export class RewardPipeline {
  constructor(private readonly parts: RewardParts) {}

  /**
   * The answers and voting keys of a group's texts: the reward source's own `answerKeys` when it has
   * them (checked; handed a frozen copy of the problem), else the run's; keys that are no answer
   * are null. `what` names the group in messages.
   */
  async answers(problem: Problem, texts: readonly string[], what: string, work?: WorkOptions): Promise<GroupAnswers> {
    const found = this.extracted(texts, what);
    const answers = found.map((f) => f.answer);
    if (!this.parts.reward.answerKeys) return { answers, keys: found.map((f) => f.key || null) };
    return { answers, keys: await sourceKeys(this.parts, problem, texts, what, work) };
  }

  /**
   * The run extractor's answer of each text, as {@link answers} gives them (from the key cache, so a
   * group whose keys were computed extracts nothing again): what a caller that keeps keys apart from
   * their group, as `corl serve` keeps them for its peers, hands {@link score}.
   */
  rawAnswers(texts: readonly string[], what: string): (string | null)[] {
    return this.extracted(texts, what).map((f) => f.answer);
  }

  private extracted(texts: readonly string[], what: string): { answer: string | null; key: string | null }[] {
    try {
      return texts.map((t) => this.parts.keys.of(t));
    } catch (e) {
      throw rewardFailure(e, `the answer keys of ${what}`);
    }
  }

  /** Score one group: see {@link scoreGroup}. */
  score(group: GroupToScore, what: string, work?: WorkOptions): Promise<ScoredGroup> {
    return scoreGroup(this.parts, group, what, work);
  }

  /** Score several groups: see {@link scoreGroups}. */
  scoreMany(
    groups: readonly GroupToScore[],
    whats: readonly string[],
    what: string,
    work?: WorkOptions,
  ): Promise<ScoredGroup[]> {
    return scoreGroups(this.parts, groups, whats, what, work);
  }
}

/**
 * A reward source's own answer keys of a group's texts, checked (keys that are no answer are
 * null); the source is handed a frozen copy of the problem. `what` names the group in messages.
 */
export async function sourceKeys(
  parts: ScoringParts,
  problem: Problem,
  texts: readonly string[],
  what: string,
  work?: WorkOptions,
): Promise<(string | null)[]> {
  const { reward, use } = parts;
  try {
    if (!reward.answerKeys) throw new Error(`"${use}" has no answerKeys`);
    const own = await reward.answerKeys(deepFreeze({ problem: plainCopy(problem), texts: [...texts] }), work);
    return checkKeys(own, texts.length, { use, what, where: 'reward' });
  } catch (e) {
    throw rewardFailure(e, `the answer keys of ${what}`);
  }
}

/**
 * Score one group: its frozen context, the reward source's `score`, the checks, the labels'
 * agreement. `work` goes beside the context to the source and to the equivalence (a request of
 * `corl serve`: whom it is for, and when nobody waits for it any more).
 */
export async function scoreGroup(
  parts: ScoringParts,
  group: GroupToScore,
  what: string,
  work?: WorkOptions,
): Promise<ScoredGroup> {
  const { reward, equivalence } = parts;
  let raw: unknown;
  try {
    raw = await reward.score(buildRewardContext(group, equivalence), work);
  } catch (e) {
    throw rewardFailure(e, `the reward of ${what}`);
  }
  return checked(parts, raw, group, what, work);
}

/**
 * Score several groups (a step's): in one call of the source's `scoreMany` when it has one (a
 * reward in another process makes one round trip), else group by group with `score`. Each result
 * is checked as `score`'s is. `whats[i]` names group i in messages; `what` names them all. `work`,
 * when the caller has one, goes to the source as `score`'s does (the trainer has none: it waits
 * for every group of its step).
 */
export async function scoreGroups(
  parts: ScoringParts,
  groups: readonly GroupToScore[],
  whats: readonly string[],
  what: string,
  work?: WorkOptions,
): Promise<ScoredGroup[]> {
  const { reward, use, equivalence } = parts;
  if (!reward.scoreMany) {
    const out: ScoredGroup[] = [];
    for (const [i, g] of groups.entries()) out.push(await scoreGroup(parts, g, whats[i] ?? what, work));
    return out;
  }
  let raw: unknown;
  try {
    raw = await reward.scoreMany(
      groups.map((g) => buildRewardContext(g, equivalence)),
      work,
    );
  } catch (e) {
    throw rewardFailure(e, `the rewards of ${what}`);
  }
  if (!Array.isArray(raw) || raw.length !== groups.length)
    throw new CorlError(
      'CORL_ERR_REWARD_OUTPUT',
      `expected ${groups.length} results from scoreMany of "${use}" for ${what} (one per group), got ${Array.isArray(raw) ? raw.length : typeof raw}`,
      { where: 'reward' },
    );
  const out: ScoredGroup[] = [];
  for (const [i, g] of groups.entries()) out.push(await checked(parts, raw[i], g, whats[i] ?? what));
  return out;
}

/** The checks of one group's result, and the agreement of its label and own label. */
async function checked(
  parts: ScoringParts,
  raw: unknown,
  group: GroupToScore,
  what: string,
  work?: WorkOptions,
): Promise<ScoredGroup> {
  const { use, equivalence } = parts;
  const result = checkResult(raw, group.completions.length, { use, what, where: 'reward' });
  const { label, ownLabel } = result;
  if (label == null || ownLabel == null) return result;
  let agree: boolean;
  try {
    agree = await matches(label, ownLabel, equivalence, work);
  } catch (e) {
    throw rewardFailure(e, `the label agreement of ${what}`);
  }
  return { ...result, agree: agree ? 1 : 0 };
}
