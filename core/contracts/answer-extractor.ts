import type { InjectionToken } from 'tsyringe';

/**
 * Finds the final answer in a completion. Pure and total: never throws on any string, returns
 * null when nothing parses, and takes time linear in the text's length.
 */
export interface AnswerExtractor {
  /** The raw final answer text (e.g. the content of the last `\boxed{}`), or null. */
  extract(text: string): string | null;
}

/** Injection token of the run's {@link AnswerExtractor}, in the container of every plugin created after it. */
export const ANSWER_EXTRACTOR: InjectionToken<AnswerExtractor> = 'corl.AnswerExtractor';
