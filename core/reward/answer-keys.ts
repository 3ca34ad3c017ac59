import type { AnswerExtractor } from '../contracts/answer-extractor';
import type { Equivalence } from '../contracts/equivalence';

/** Bounds of the cache: distinct texts, and their characters in all (about 2 bytes each in memory). */
export const ANSWER_CACHE_LIMITS = { texts: 200_000, chars: 32 * 1024 * 1024, longestText: 16 * 1024 };

/** Bounds of one {@link AnswerKeys} cache. */
export interface AnswerCacheLimits {
  readonly texts: number;
  readonly chars: number;
  /** Texts longer than this are never cached. */
  readonly longestText: number;
}

/**
 * Answer extraction and canonical keys, computed once per distinct completion text and cached.
 * Small policies repeat themselves a lot; a real model's long completions almost never do, so a
 * text longer than `longestText` is not kept, and the cache is cleared when it holds `texts` texts
 * or `chars` characters (a long-lived `corl serve` would otherwise hold gigabytes of completions).
 */
export class AnswerKeys {
  private readonly cache = new Map<string, { answer: string | null; key: string | null }>();
  private cachedChars = 0;

  constructor(
    private readonly extractor: AnswerExtractor,
    private readonly equivalence: Equivalence,
    private readonly limits: AnswerCacheLimits = ANSWER_CACHE_LIMITS,
  ) {}

  /** Raw answer and key of one text, through the run's extractor and equivalence. */
  of(text: string): { answer: string | null; key: string | null } {
    // A text too long to be cached is never looked up (hashing it costs as much as a miss).
    let hit = text.length <= this.limits.longestText ? this.cache.get(text) : undefined;
    if (!hit) {
      const answer = this.extractor.extract(text);
      const key = answer === null ? null : this.equivalence.key(answer);
      hit = { answer, key: key === '' ? null : key };
      if (text.length <= this.limits.longestText) {
        if (this.cache.size >= this.limits.texts || this.cachedChars + text.length > this.limits.chars) {
          this.cache.clear();
          this.cachedChars = 0;
        }
        this.cache.set(text, hit);
        this.cachedChars += text.length;
      }
    }
    return hit;
  }

  /** What the cache holds now: distinct texts and their characters. */
  cacheSize(): { texts: number; chars: number } {
    return { texts: this.cache.size, chars: this.cachedChars };
  }
}
