import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../fixtures/configs';
import { ADAPTER_FILES, CLIENT_FILE, INTEGRATIONS_DIR, inlinedAdapters } from '../../scripts/inline-client';
import { ROOT } from '../../scripts/generate';

const BLOCK = /^# -- corl_client: begin\.[\s\S]*?^# -- corl_client: end\.\n/m;

describe('scripts/inline-client (one source of the Python client, inlined in each adapter)', () => {
  it('every adapter of docs/integrations carries the client block of corl_client.py, byte for byte', () => {
    const dir = path.join(ROOT, INTEGRATIONS_DIR);
    const py = fs.readdirSync(dir).filter((f) => f.endsWith('.py') && f !== CLIENT_FILE);
    // A new adapter must be listed, so that it gets the client too.
    expect([...py].sort()).to.deep.equal([...ADAPTER_FILES].sort());
    const client = BLOCK.exec(fs.readFileSync(path.join(dir, CLIENT_FILE), 'utf8'))![0];
    expect(client).to.contain('class AsyncCorlClient').and.contain('def sample_body(');
    for (const f of ADAPTER_FILES) {
      const text = fs.readFileSync(path.join(dir, f), 'utf8');
      expect(BLOCK.exec(text)?.[0] === client, `${f}: run npm run gen`).to.equal(true);
      expect(text, f).to.not.match(/^\s*(from|import) corl_client\b/m);
    }
  });

  it('rewrites a stale copy and keeps the rest of the adapter; an adapter without the marker lines is refused by name', () => {
    const tmp = tempDir('corl-inline-');
    try {
      const dir = path.join(tmp.dir, INTEGRATIONS_DIR);
      fs.mkdirSync(dir, { recursive: true });
      const client =
        '"""doc"""\n\n__all__ = []\n\n# -- corl_client: begin. x\nimport os\nA = 1\n# -- corl_client: end.\n';
      fs.writeFileSync(path.join(dir, CLIENT_FILE), client);
      for (const f of ADAPTER_FILES)
        fs.writeFileSync(
          path.join(dir, f),
          `"""${f}"""\n\n# -- corl_client: begin. x\nA = 0\n# -- corl_client: end.\n\nB = 2\n`,
        );
      const out = inlinedAdapters(tmp.dir);
      expect(out[`${INTEGRATIONS_DIR}/trl_reward.py`]).to.equal(
        '"""trl_reward.py"""\n\n# -- corl_client: begin. x\nimport os\nA = 1\n# -- corl_client: end.\n\nB = 2\n',
      );
      fs.writeFileSync(path.join(dir, 'slime_rm.py'), '"""slime"""\nB = 2\n');
      expect(() => inlinedAdapters(tmp.dir)).to.throw(/docs\/integrations\/slime_rm\.py, got no begin line/);
    } finally {
      tmp.cleanup();
    }
  });
});
