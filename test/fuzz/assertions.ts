// What every fuzzed input must get: either an answer, or a coded CorlError whose message holds no
// JavaScript stack; never another exception, never a hang.
import { expect } from 'chai';
import { isCorlError } from '../../core/errors';

/** A JavaScript stack line, as a message must never show one. */
export const STACK_LINE = /\n\s+at \S+.*(:\d+:\d+|\(native\)|<anonymous>)/;

/** A short description of a fuzzed input for failure messages. */
export function shown(input: unknown): string {
  let text: string;
  try {
    text = typeof input === 'string' ? JSON.stringify(input) : (JSON.stringify(input) ?? String(input));
  } catch {
    text = String(input);
  }
  return text.length > 600 ? `${text.slice(0, 600)}… (${text.length} characters)` : text;
}

/** Check an outcome: a value, or a coded error with a CORL_ERR_* code and no stack in its message. */
export function codedOrFine(outcome: { error?: unknown }, input: unknown): void {
  if (!('error' in outcome)) return;
  const e = outcome.error;
  expect(isCorlError(e), `not a coded error for ${shown(input)}:\n${String((e as Error)?.stack ?? e)}`).to.equal(true);
  const err = e as { code: string; message: string };
  expect(err.code, shown(input)).to.match(/^CORL_ERR_[A-Z0-9_]+$/);
  expect(err.message, `a stack in the message for ${shown(input)}`).to.not.match(STACK_LINE);
}

/** Run fn, resolving to its value or the error it threw, or failing once `ms` pass (a hang). */
export async function outcomeOf<T>(
  fn: () => Promise<T> | T,
  ms: number,
  input: unknown,
): Promise<{ value?: T; error?: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms (a hang) for ${shown(input)}`)), ms);
  });
  try {
    return { value: await Promise.race([Promise.resolve().then(fn), hang]) };
  } catch (e) {
    if (e instanceof Error && e.message.startsWith(`no answer within ${ms} ms`)) throw e;
    return { error: e };
  } finally {
    clearTimeout(timer);
  }
}
