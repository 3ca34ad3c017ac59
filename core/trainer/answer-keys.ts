import type { AnswerExtractor } from '../contracts/answer-extractor';
import type { Equivalence } from '../contracts/equivalence';
import type { GroundTruth, Problem } from '../contracts/problem';
import type { RewardSource } from '../contracts/reward-source';

const LIMIT = 200_000;

/**
 * Answer extraction and canonical keys, computed once per distinct completion text and cached
 * (small policies repeat themselves a lot; the cache is bounded and cleared when full).
 */
export class AnswerKeys {
  private readonly cache = new Map<string, { answer: string | null; key: string | null }>();
  private readonly refKeys = new Map<string, string | null>();

  constructor(private readonly extractor: AnswerExtractor, private readonly equivalence: Equivalence, private readonly reward?: RewardSource) {}

  /** Raw answer and key of one text, through the run's extractor and equivalence. */
  of(text: string): { answer: string | null; key: string | null } {
    let hit = this.cache.get(text);
    if (!hit) {
      const answer = this.extractor.extract(text);
      const key = answer === null ? null : this.equivalence.key(answer);
      hit = { answer, key: key === '' ? null : key };
      if (this.cache.size >= LIMIT) this.cache.clear();
      this.cache.set(text, hit);
    }
    return hit;
  }

  /** Keys through the run's extractor and equivalence (evaluation, monitoring). */
  async forCompletions(_problem: Problem, texts: readonly string[]): Promise<(string | null)[]> {
    return texts.map((t) => this.of(t).key);
  }

  /** The keys the reward source votes with: its own `answerKeys` when it has one, else the run's. */
  async forReward(problem: Problem, texts: readonly string[]): Promise<(string | null)[]> {
    if (this.reward?.answerKeys) return this.reward.answerKeys({ problem, texts });
    return this.forCompletions(problem, texts);
  }

  /** Canonical key of a problem's reference answer (null when it has none). */
  referenceKey(problemId: string, gt: GroundTruth): string | null {
    if (!this.refKeys.has(problemId)) {
      const ref = gt.get(problemId);
      this.refKeys.set(problemId, ref ? this.equivalence.key(ref.answer) : null);
    }
    return this.refKeys.get(problemId)!;
  }
}
