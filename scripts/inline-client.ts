// The Python adapters of docs/integrations are self-contained: each carries a verbatim copy of the
// client block of corl_client.py (between its `# -- corl_client: begin.` and `# -- corl_client: end.`
// lines), because the trainers load an adapter by file path (verl's load_module, OpenRLHF's
// agent_func_path) or by import_module in a fresh worker, with nothing put on sys.path, so an
// adapter cannot import a module beside it. `npm run gen` writes the copies; a test fails when one
// differs from corl_client.py.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The folder of the Python client and adapters, relative to the repository root. */
export const INTEGRATIONS_DIR = 'docs/integrations';
/** The one source of the client. */
export const CLIENT_FILE = 'corl_client.py';
/** Every adapter that carries the client, loaded by its trainer as a file or a top-level module. */
export const ADAPTER_FILES = ['verl_reward_loop.py', 'trl_reward.py', 'openrlhf_agent.py', 'slime_rm.py'] as const;

const BEGIN = /^# -- corl_client: begin\..*$/m;
const END = /^# -- corl_client: end\.\n/m;

/** The client block of a file's text: from its begin line through its end line, or why not. */
function clientBlock(text: string, file: string): { start: number; end: number } {
  const b = BEGIN.exec(text);
  const e = END.exec(text);
  if (!b || !e || e.index < b.index)
    throw new Error(
      `expected one "# -- corl_client: begin." line and a later "# -- corl_client: end." line in ${file}, got ${b ? 'no end line after it' : 'no begin line'}: put the two lines where the client belongs (after the module docstring) and run npm run gen`,
    );
  return { start: b.index, end: e.index + e[0].length };
}

/** Each adapter with its client block replaced by corl_client.py's: path relative to `root` → content. */
export function inlinedAdapters(root: string): Record<string, string> {
  const client = fs.readFileSync(path.join(root, INTEGRATIONS_DIR, CLIENT_FILE), 'utf8');
  const src = clientBlock(client, CLIENT_FILE);
  const block = client.slice(src.start, src.end);
  const out: Record<string, string> = {};
  for (const name of ADAPTER_FILES) {
    const rel = `${INTEGRATIONS_DIR}/${name}`;
    const text = fs.readFileSync(path.join(root, rel), 'utf8');
    const at = clientBlock(text, rel);
    out[rel] = text.slice(0, at.start) + block + text.slice(at.end);
  }
  return out;
}
