// The program in a completion: the last fenced code block (```python ... ```), linear scan.

/** Languages whose fences count as Python (an untagged fence counts too). */
const PYTHON_TAGS = new Set(['', 'python', 'py', 'python3']);

/**
 * The content of the last complete fenced code block whose language tag is Python or absent, or
 * null. An unclosed last fence (a truncated completion) is ignored.
 */
export function lastCodeBlock(text: string): string | null {
  if (typeof text !== 'string') return null;
  const fences: number[] = [];
  for (let at = text.indexOf('```'); at >= 0; at = text.indexOf('```', at + 3)) {
    // a fence opens or closes a line
    let b = at;
    while (b > 0 && (text[b - 1] === ' ' || text[b - 1] === '\t')) b--;
    if (b === 0 || text[b - 1] === '\n') fences.push(at);
    while (text[at + 3] === '`') at++;
  }
  let best: string | null = null;
  for (let k = 0; k + 1 < fences.length; k += 2) {
    const open = fences[k]!;
    const nl = text.indexOf('\n', open);
    if (nl < 0 || nl > fences[k + 1]!) continue;
    const tag = text
      .slice(open + 3, nl)
      .trim()
      .toLowerCase();
    if (!PYTHON_TAGS.has(tag)) continue;
    const body = text.slice(nl + 1, fences[k + 1]!);
    if (body.trim()) best = body;
  }
  return best;
}
