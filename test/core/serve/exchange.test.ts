// What the exchange keeps (issue 30, items 4 and 5): steps go with the slowest agent of the agents
// that read each other, /get_reward ids with each agent's newest `keepGroups`; replaying the
// records of what it holds rebuilds the same state.
import { expect } from 'chai';
import { Exchange, readingParts, type ExchangeOptions } from '../../../core/serve/exchange';
import { groupHash } from '../../../core/serve/fingerprint';
import type { JournalRecord } from '../../../core/serve/journal';
import { Scorer, type PostedGroup } from '../../../core/serve/scorer';
import { buildServeRuntime, loadServeConfigValue, type ServeRuntime } from '../../../core/serve/setup';

/** A group with no completions, and its fingerprint (the records below hold it); `other` has one completion. */
const same = (id: string): PostedGroup => ({ id, prompt: '', completions: [] });
const other = (id: string): PostedGroup => ({ id, prompt: '', completions: [{ text: 'x' }] });
const H = groupHash(same(''));
const keys = (a: string, s: number, g: string, n = 'groups'): JournalRecord => ({
  t: 'keys',
  n,
  a,
  s,
  g,
  h: H,
  k: ['1'],
});

async function runtime(agents: string[], topology: string): Promise<ServeRuntime> {
  const served = await loadServeConfigValue({
    agents: agents.map((name) => ({ name })),
    topology,
    reward: 'corl:vote',
    serve: { journal: false },
  });
  return buildServeRuntime(served);
}

function exchange(rt: ServeRuntime, options: Partial<ExchangeOptions>): { ex: Exchange; appended: JournalRecord[] } {
  const appended: JournalRecord[] = [];
  const ex = new Exchange(
    rt,
    new Scorer(rt),
    { append: async (r) => void appended.push(...r) },
    { namespace: 'groups', waitMs: 0, fallback: 'self', ...options },
  );
  return { ex, appended };
}

const held = (ex: Exchange) => ex.snapshot().map(({ record: r }) => `${r.a}${r.s}${r.g}`);

describe('serve/exchange: what is kept', () => {
  const rts: ServeRuntime[] = [];
  after(async () => {
    for (const rt of rts) await rt.close();
  });
  async function rt(agents: string[], topology: string): Promise<ServeRuntime> {
    const r = await runtime(agents, topology);
    rts.push(r);
    return r;
  }

  it('the agents that read each other: a ring is one part, corl:self one part per agent', async () => {
    expect(readingParts((await rt(['a', 'b', 'c'], 'corl:ring')).topology, 3)).to.deep.equal([0, 0, 0]);
    expect(readingParts((await rt(['a', 'b', 'c'], 'corl:self')).topology, 3)).to.deep.equal([0, 1, 2]);
  });

  it('steps are dropped behind the slowest agent of a part, never by one agent running ahead', async () => {
    const window = { keepSteps: 2, maxStepsAhead: 100, startStep: 0 };
    const ring = exchange(await rt(['a', 'b'], 'corl:ring'), { window });
    // a runs to step 9, b stays at step 3: b's floor keeps steps 2 and 3 (and everything after).
    for (let s = 0; s <= 9; s++) ring.ex.restore(keys('a', s, 'x'));
    for (let s = 0; s <= 3; s++) ring.ex.restore(keys('b', s, 'x'));
    expect(held(ring.ex)).to.deep.equal(['a2x', 'a3x', 'a4x', 'a5x', 'a6x', 'a7x', 'a8x', 'a9x', 'b2x', 'b3x']);
    expect(ring.ex.reaches()).to.deep.equal({ a: 9, b: 3 });
    expect(ring.ex.newest).to.equal(9);
    // Under corl:self each agent has its own window: b's lag holds nothing of a's.
    const self = exchange(await rt(['a', 'b'], 'corl:self'), { window });
    for (let s = 0; s <= 9; s++) self.ex.restore(keys('a', s, 'x'));
    self.ex.restore(keys('b', 0, 'x'));
    expect(held(self.ex)).to.deep.equal(['a8x', 'a9x', 'b0x']);
  });

  it("/get_reward ids stay while among some agent's newest keepGroups, all rounds of an id together", async () => {
    const r = await rt(['a', 'b'], 'corl:ring');
    const { ex } = exchange(r, { namespace: 'get_reward', keepGroups: 2, keepRounds: 2 });
    const gr = (a: string, s: number, g: string) => ex.restore(keys(a, s, g, 'get_reward'));
    gr('a', 0, 'p');
    gr('b', 0, 'p');
    gr('a', 1, 'p');
    gr('b', 1, 'p');
    gr('a', 2, 'p'); // keepRounds 2: round 0 of p goes
    gr('a', 0, 'q');
    gr('a', 0, 'r'); // a's newest are q, r; b still holds p
    expect(held(ex)).to.deep.equal(['a1p', 'b1p', 'a2p', 'a0q', 'a0r']);
    gr('b', 0, 's');
    gr('b', 0, 't'); // b lets p go too: p leaves, all its rounds
    expect(held(ex)).to.deep.equal(['a0q', 'a0r', 'b0s', 'b0t']);
    // p starts again at round 0 for both (neither remembers it)
    expect(ex.nextRound(0, same('p'))).to.equal(0);
    expect(ex.nextRound(0, other('q'))).to.equal(1);
    expect(ex.nextRound(0, same('q'))).to.equal(0); // unanswered with the same completions: resumed
    // An agent's newest round of an id stays however far the others ran: its round count survives.
    gr('a', 0, 'u');
    gr('b', 0, 'u');
    for (let k = 1; k <= 5; k++) gr('a', k, 'u');
    expect(held(ex).filter((h) => h.endsWith('u'))).to.deep.equal(['a0u', 'b0u', 'a4u', 'a5u']);
    // b joins the round of u in which a still waits, not its own count (1): rounds match by problem.
    // a left round 4 unanswered and moved past it (nothing waits there now): its newest, 5, waits.
    expect(ex.nextRound(1, other('u'))).to.equal(5);
    // A thousand distinct labels hold at most agents x keepGroups ids.
    for (let i = 0; i < 1000; i++) gr('a', 0, `label-${i}`);
    expect(ex.size).to.equal(2 + 1 + 3); // a's two newest labels; b's t and u (rounds 0, 4 and 5 of u)
  });

  it('two groups of one agent choosing their rounds at once get two rounds (the choice and the keys go together)', async () => {
    const r = await rt(['a', 'b'], 'corl:ring');
    const { ex } = exchange(r, { namespace: 'get_reward', keepGroups: 8, keepRounds: 4 });
    const g = (answer: string): PostedGroup => ({ id: 'p', prompt: '', completions: [{ text: `\\boxed{${answer}}` }] });
    // Both compute their keys before either chooses: chosen from the same state they would both take
    // round 0, and the second would be a conflict there.
    const [one, two] = await Promise.all([ex.postRound(0, g('1'), 0), ex.postRound(0, g('2'), 0)]);
    expect([one.round, two.round]).to.deep.equal([0, 1]);
    expect([one.answer.source, two.answer.source]).to.deep.equal(['self', 'self']);
    // b's group, later: a's two are answered (fallback), so neither is joined: a new round.
    expect(ex.nextRound(1, g('1'))).to.equal(2);
  });

  it('replaying the records of what is held rebuilds the same state (a compacted journal restarts as the service was)', async () => {
    const r = await rt(['a', 'b'], 'corl:ring');
    const window = { keepSteps: 3, maxStepsAhead: 100, startStep: 0 };
    const one = exchange(r, { window });
    const records: JournalRecord[] = [];
    for (let s = 0; s < 12; s++) {
      records.push(keys('a', s, `g${s % 4}`), keys('a', s, 'h'));
      if (s % 2 === 0) records.push(keys('b', s, 'h'));
      records.push({ t: 'answer', n: 'groups', a: 'a', s, g: 'h', h: H, r: { id: 'h', rewards: [1] } });
    }
    for (const rec of records) one.ex.restore(rec);
    const two = exchange(r, { window });
    for (const { record } of one.ex.snapshot()) two.ex.restore(record);
    expect(two.ex.snapshot().map((x) => x.record)).to.deep.equal(one.ex.snapshot().map((x) => x.record));
    expect(two.ex.reaches()).to.deep.equal(one.ex.reaches());
    // b is at step 10: steps 8 and later are kept, answers with their keys, in the order recorded
    expect(held(two.ex)[0]).to.equal('a8g0');
    const rounds = exchange(r, { namespace: 'get_reward', keepGroups: 3, keepRounds: 2 });
    for (let i = 0; i < 20; i++) rounds.ex.restore(keys(i % 3 ? 'a' : 'b', i % 5, `p${i % 7}`, 'get_reward'));
    const again = exchange(r, { namespace: 'get_reward', keepGroups: 3, keepRounds: 2 });
    for (const { record } of rounds.ex.snapshot()) again.ex.restore(record);
    expect(held(again.ex)).to.deep.equal(held(rounds.ex));
    for (const g of ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6'])
      for (const a of [0, 1])
        expect(again.ex.nextRound(a, same(g)), `${a} ${g}`).to.equal(rounds.ex.nextRound(a, same(g)));
  });
});
