/**
 * Edit distance with adjacent transpositions (optimal string alignment: "stpes" is one edit from
 * "steps"). Small strings only: names and field names.
 */
export function editDistance(a: string, b: string): number {
  const m = a.length;
  const n = b.length;
  let before: number[] = [];
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  for (let i = 1; i <= m; i++) {
    const cur = [i];
    for (let j = 1; j <= n; j++) {
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      cur[j] = d;
    }
    before = prev;
    prev = cur;
  }
  return prev[n]!;
}

/**
 * The candidate closest to `word`, if it is plausibly a typo of it: the same but for case
 * ("batchsize" for "batchSize"), or within a third of its length in edits (at least 1; a swap of
 * two neighbouring letters is one edit).
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    if (c === word) continue;
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

/** Offsets of line starts, for offset → line/column. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

/** 1-based line and column of an offset. */
export function lineColumn(starts: readonly number[], offset: number): { line: number; column: number } {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - starts[lo]! + 1 };
}

/** A fraction as a percentage with one decimal, or "-" when missing. */
export function pct(v: number | undefined): string {
  return v === undefined || !Number.isFinite(v) ? '-' : `${(v * 100).toFixed(1)}%`;
}

/** A UTC date and time as a folder name's suffix: `20261206-154000`. */
export function timeStamp(date: Date = new Date()): string {
  return date.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}
