import { expect } from 'chai';
import type { Check } from '../../../core/testing';

/** Run the check whose title contains `title`; it must pass. */
export async function passes(checks: readonly Check[], title: string): Promise<void> {
  const c = find(checks, title);
  await c.run();
}

/** Run the check whose title contains `title`; it must fail with a message matching `message`. */
export async function fails(checks: readonly Check[], title: string, message: RegExp): Promise<void> {
  const c = find(checks, title);
  let error: unknown;
  try {
    await c.run();
  } catch (e) {
    error = e;
  }
  expect(error, `check "${c.title}" should fail`).to.be.instanceOf(Error);
  expect((error as Error).message).to.match(message);
}

function find(checks: readonly Check[], title: string): Check {
  const found = checks.filter((c) => c.title.includes(title));
  expect(
    found.map((c) => c.title),
    `exactly one check titled like "${title}"`,
  ).to.have.length(1);
  return found[0]!;
}
