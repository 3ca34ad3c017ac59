import type { Equivalence } from '../contracts/equivalence';
import type { WorkOptions } from '../contracts/work';
import { isAnswer } from './match';

/** One cluster of equivalent answers in a vote. */
export interface VoteCluster {
  /** The first key seen in the cluster (its representative). */
  readonly key: string;
  /** How many answers fell into it. */
  count: number;
  /** Rollout position of its first answer; plurality ties go to the smallest. */
  readonly first: number;
}

/** The outcome of a plurality vote. */
export interface VoteOutcome {
  /** The winning key, or null when there is no label (no answers, or share under the threshold). */
  readonly label: string | null;
  /** Top count / number of non-null answers (0 when there are none). */
  readonly share: number;
  /** Number of non-null answers that voted. */
  readonly voters: number;
  /** Number of answers considered, null ones included. */
  readonly total: number;
  /** The clusters, in first-seen order. */
  readonly clusters: readonly VoteCluster[];
}

/**
 * Plurality over the keys that are answers (`isAnswer`: not null, not empty), clustered by equivalence rather than string identity (so `1/2` and
 * `0.5` vote together when the equivalence says they are equal). Equal keys never call `equal`.
 * Ties go to the cluster seen first. `threshold` is the smallest winning share that makes a label:
 * with share = (answers in the winning cluster) / (non-null answers), a share under it gives
 * `label: null` (0: any plurality is a label; 0.5: at least half of the answers; 1: only unanimity).
 * Null and empty keys never vote and never win. Resolves to a {@link VoteOutcome}: `label`,
 * `share`, `voters`, `total` and the `clusters`.
 */
export async function pluralityVote(
  keys: readonly (string | null)[],
  equivalence: Equivalence,
  threshold: number,
  work?: WorkOptions,
): Promise<VoteOutcome> {
  const clusters: VoteCluster[] = [];
  let voters = 0;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (!isAnswer(k)) continue;
    voters++;
    let home: VoteCluster | undefined;
    for (const c of clusters)
      if (c.key === k) {
        home = c;
        break;
      }
    if (!home) {
      for (const c of clusters) {
        if (await equivalence.equal(c.key, k, work)) {
          home = c;
          break;
        }
      }
    }
    if (home) home.count++;
    else clusters.push({ key: k, count: 1, first: i });
  }
  let best: VoteCluster | undefined;
  for (const c of clusters) if (!best || c.count > best.count) best = c; // strict > keeps the first seen on ties
  const share = best && voters > 0 ? best.count / voters : 0;
  const label = best && share >= threshold ? best.key : null;
  return { label, share, voters, total: keys.length, clusters };
}
