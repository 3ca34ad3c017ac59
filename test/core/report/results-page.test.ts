// The verdict's pointer to three seeds names only a page that exists: corl's docs/results.md as a
// path from where the command runs (a checkout, or a project with corl in node_modules), or nothing.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resultsPage } from '../../../core/report/compare';
import { ROOT } from '../../../scripts/generate';
import { tempDir } from '../../fixtures/configs';

describe('the verdict points only at a results page that exists', () => {
  it('docs/results.md from a checkout; node_modules/corl/docs/results.md from a project; nothing without the file', () => {
    expect(resultsPage(ROOT)).to.equal('docs/results.md');
    const tmp = tempDir('corl-results-page-');
    try {
      const installed = path.join(tmp.dir, 'lab', 'node_modules', 'corl');
      fs.mkdirSync(path.join(installed, 'docs'), { recursive: true });
      fs.writeFileSync(path.join(installed, 'docs', 'results.md'), '# Results\n');
      expect(resultsPage(path.join(tmp.dir, 'lab'), installed)).to.equal('node_modules/corl/docs/results.md');
      expect(resultsPage(path.join(tmp.dir, 'elsewhere'), installed)).to.equal(
        path.join(installed, 'docs', 'results.md'),
      );
      fs.rmSync(path.join(installed, 'docs', 'results.md'));
      expect(resultsPage(path.join(tmp.dir, 'lab'), installed)).to.equal(undefined);
    } finally {
      tmp.cleanup();
    }
  });
});
