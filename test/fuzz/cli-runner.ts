// `corl` run in this process (core/cli/main.ts's main, as bin/corl.js runs it), its output captured.
import { main } from '../../core/cli/main';

export interface CliOutcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Run `corl ...args` in `cwd`; resolves to its exit code and what it wrote. Fails past `ms` (a hang). */
export async function corlInProcess(args: readonly string[], cwd: string, ms: number): Promise<CliOutcome> {
  const out: string[] = [];
  const err: string[] = [];
  const write = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  const here = process.cwd();
  const capture =
    (into: string[]) =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      into.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      done?.();
      return true;
    };
  process.stdout.write = capture(out) as typeof process.stdout.write;
  process.stderr.write = capture(err) as typeof process.stderr.write;
  process.chdir(cwd);
  let timer: NodeJS.Timeout | undefined;
  try {
    const hang = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`corl ${args.join(' ')}: no exit within ${ms} ms (a hang)`)), ms);
    });
    const code = await Promise.race([main(['node', 'corl', ...args]), hang]);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    clearTimeout(timer);
    process.chdir(here);
    process.stdout.write = write.out as typeof process.stdout.write;
    process.stderr.write = write.err as typeof process.stderr.write;
  }
}
